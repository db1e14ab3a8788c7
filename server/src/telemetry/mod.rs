//! The service's metrics, through the `metrics` facade (rendered by the Prometheus exporter
//! at `/metrics`), named as envoyproxy/ratelimit names them; and the service's warnings,
//! throttled.

mod bad_input;
mod detailed;
mod throttled;

pub use bad_input::{refused, Api, BadInput};
pub use detailed::{DetailedSeries, Series};
pub use throttled::admit;

use crate::config::{Config, Rule};
use crate::proto::{RateLimitDescriptor, RateLimitRequest};
use crate::status::Status;
use metrics::{counter, histogram, Counter};
use sluicegate::telemetry::Throttle;
use std::sync::LazyLock;
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
    pub(crate) fn new(domain: &str, key: &str) -> RuleCounters {
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
/// `counters` each rule's; `detailed` the bounded series of `detailed_metric` rules.
pub fn record<'a>(
    request: &RateLimitRequest,
    counters: &[RuleCounters],
    detailed: &DetailedSeries,
    matched: impl Iterator<Item = Option<(usize, &'a Rule, u32)>>,
    statuses: &[Status],
) {
    for ((descriptor, found), status) in request.descriptors.iter().zip(matched).zip(statuses) {
        let Some((index, rule, cost)) = found else {
            continue;
        };
        let hits = u64::from(cost);
        if rule.detailed_metric {
            // The request's own values label the counters, up to the bound per rule.
            if let Series::Own(own) = detailed.series(rule, detailed_key(descriptor)) {
                own.count(rule, status, hits);
                continue;
            }
        }
        if let Some(counters) = counters.get(index) {
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

/// Counts a backend (Redis) failure, and logs it at `warn` at most once a second with how
/// many were held back (while Redis is down, every request fails alike).
pub fn backend_error(error: &dyn std::fmt::Display) {
    static THROTTLE: LazyLock<Throttle> = LazyLock::new(Throttle::new);
    counter!("ratelimit_service_backend_errors_total").increment(1);
    if let Some(suppressed) = throttled::admit(&THROTTLE) {
        tracing::warn!(%error, suppressed, "the backend could not decide");
    }
}

/// Counts a descriptor refused because every override limiter still carries state (see
/// `--max-override-limiters`), and logs it at `warn` at most once a second.
pub fn overrides_full(max: usize) {
    static THROTTLE: LazyLock<Throttle> = LazyLock::new(Throttle::new);
    counter!("ratelimit_service_override_limiters_full_total").increment(1);
    if let Some(suppressed) = throttled::admit(&THROTTLE) {
        tracing::warn!(
            max,
            suppressed,
            "a new limit override was over the limit: all {max} override limiters carry state"
        );
    }
}

/// Counts a connection closed at once because its listener already had
/// `--max-connections` open, and logs it at `warn` at most once a second per listener.
pub fn connection_refused(listener: &'static str, max: usize) {
    static THROTTLES: LazyLock<[Throttle; 2]> =
        LazyLock::new(|| [Throttle::new(), Throttle::new()]);
    counter!("ratelimit_service_connections_refused_total", "listener" => listener).increment(1);
    let throttle = &THROTTLES[usize::from(listener == "http")];
    if let Some(suppressed) = throttled::admit(throttle) {
        tracing::warn!(
            listener,
            max,
            suppressed,
            "a connection was closed at once: {max} are open on this listener already"
        );
    }
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
