//! The service's metrics, through the `metrics` facade (rendered by the Prometheus exporter
//! at `/metrics`), named as envoyproxy/ratelimit names them.

use crate::config::Config;
use crate::engine::Status;
use crate::proto::RateLimitRequest;
use metrics::{counter, histogram};
use std::time::Duration;

/// A status is "near" its limit when less than this share of the limit remains.
const NEAR_SHARE: f64 = 0.2;

/// Counts one decided request: per descriptor whose rule matched, its hits (the cost) into
/// `total_hits` and one of `over_limit` / `within_limit`, and `near_limit` / `shadow_mode`
/// where they apply. `rules` has each descriptor's rule and cost.
pub fn record(
    request: &RateLimitRequest,
    config: &Config,
    rules: &[Option<(usize, u32)>],
    statuses: &[Status],
) {
    for ((descriptor, found), status) in request.descriptors.iter().zip(rules).zip(statuses) {
        let Some((rule, cost)) = *found else {
            continue;
        };
        let rule = &config.rules[rule];
        let key = if rule.detailed_metric {
            descriptor
                .entries
                .iter()
                .map(|e| format!("{}_{}", e.key, e.value))
                .collect::<Vec<_>>()
                .join(".")
        } else {
            rule.key.clone()
        };
        let labels = [("domain", rule.domain.clone()), ("key", key)];
        let hits = u64::from(cost);
        counter!("ratelimit_service_rate_limit_total_hits", &labels).increment(hits);
        if status.over {
            counter!("ratelimit_service_rate_limit_over_limit", &labels).increment(hits);
            if rule.shadow_mode {
                counter!("ratelimit_service_rate_limit_shadow_mode", &labels).increment(hits);
            }
        } else {
            counter!("ratelimit_service_rate_limit_within_limit", &labels).increment(hits);
            let near = status.limit.as_ref().is_some_and(|limit| {
                limit.quota_limit > 0
                    && f64::from(status.remaining) < f64::from(limit.quota_limit) * NEAR_SHARE
            });
            if near {
                counter!("ratelimit_service_rate_limit_near_limit", &labels).increment(hits);
            }
        }
    }
}

/// Counts a backend (Redis) failure.
pub fn backend_error() {
    counter!("ratelimit_service_backend_errors_total").increment(1);
}

/// Counts a config load, `ok` or `failed`.
pub fn config_load(ok: bool) {
    let result = if ok { "ok" } else { "failed" };
    counter!("ratelimit_service_config_load_total", "result" => result).increment(1);
}

/// Records one call's latency; `api` is `grpc` or `json`.
pub fn latency(api: &'static str, took: Duration) {
    histogram!("ratelimit_service_should_rate_limit_seconds", "api" => api)
        .record(took.as_secs_f64());
}
