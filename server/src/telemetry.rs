//! The service's metrics, through the `metrics` facade (rendered by the Prometheus exporter
//! at `/metrics`), named as envoyproxy/ratelimit names them.

use crate::config::{Config, Rule};
use crate::proto::{RateLimitDescriptor, RateLimitRequest};
use crate::status::Status;
use metrics::{counter, histogram, Counter};
use std::time::Duration;

/// A status is "near" its limit when less than this share of the limit remains.
const NEAR_SHARE: f64 = 0.2;

/// One rule's counters, registered once (when its config loads) so that counting a request
/// looks nothing up.
#[derive(Debug, Clone)]
pub struct RuleCounters {
    total_hits: Counter,
    over_limit: Counter,
    near_limit: Counter,
    within_limit: Counter,
    shadow_mode: Counter,
}

impl RuleCounters {
    /// The counters labelled with `domain` and `key`.
    fn new(domain: &str, key: &str) -> RuleCounters {
        let labels = [("domain", domain.to_owned()), ("key", key.to_owned())];
        RuleCounters {
            total_hits: counter!("ratelimit_service_rate_limit_total_hits", &labels),
            over_limit: counter!("ratelimit_service_rate_limit_over_limit", &labels),
            near_limit: counter!("ratelimit_service_rate_limit_near_limit", &labels),
            within_limit: counter!("ratelimit_service_rate_limit_within_limit", &labels),
            shadow_mode: counter!("ratelimit_service_rate_limit_shadow_mode", &labels),
        }
    }

    /// Every rule's counters, indexed like [`Config::rules`].
    pub fn for_config(config: &Config) -> Vec<RuleCounters> {
        config
            .rules
            .iter()
            .map(|rule| RuleCounters::new(&rule.domain, &rule.key))
            .collect()
    }

    /// Counts one descriptor's `hits` with its `status`.
    fn count(&self, rule: &Rule, status: &Status, hits: u64) {
        self.total_hits.increment(hits);
        if status.over {
            self.over_limit.increment(hits);
            if rule.shadow_mode {
                self.shadow_mode.increment(hits);
            }
            return;
        }
        self.within_limit.increment(hits);
        let near = status.limit.as_ref().is_some_and(|limit| {
            limit.quota_limit > 0
                && f64::from(status.remaining) < f64::from(limit.quota_limit) * NEAR_SHARE
        });
        if near {
            self.near_limit.increment(hits);
        }
    }
}

/// Counts one decided request: per descriptor whose rule matched, its hits (the cost) into
/// `total_hits` and one of `over_limit` / `within_limit`, and `near_limit` / `shadow_mode`
/// where they apply. `matched` has each descriptor's rule (its index and itself) and cost;
/// `counters` each rule's.
pub fn record<'a>(
    request: &RateLimitRequest,
    counters: &[RuleCounters],
    matched: impl Iterator<Item = Option<(usize, &'a Rule, u32)>>,
    statuses: &[Status],
) {
    for ((descriptor, found), status) in request.descriptors.iter().zip(matched).zip(statuses) {
        let Some((index, rule, cost)) = found else {
            continue;
        };
        let hits = u64::from(cost);
        if rule.detailed_metric {
            // The request's own values label the counters: looked up per request.
            RuleCounters::new(&rule.domain, &detailed_key(descriptor)).count(rule, status, hits);
        } else if let Some(counters) = counters.get(index) {
            counters.count(rule, status, hits);
        }
    }
}

/// A `detailed_metric` key: the request's entries as `key_value`, joined by dots.
fn detailed_key(descriptor: &RateLimitDescriptor) -> String {
    descriptor
        .entries
        .iter()
        .map(|e| format!("{}_{}", e.key, e.value))
        .collect::<Vec<_>>()
        .join(".")
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
