//! What a [`RedisLimiter`](super::RedisLimiter) tells the outside: [`RedisStats`] (always),
//! metrics through the `metrics` facade (feature `metrics`) and throttled warnings through
//! `tracing` (feature `tracing`, via [`LimiterLog`](crate::telemetry::LimiterLog)).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `sluicegate_redis_call_duration_seconds` | histogram | `limiter` |
//! | `sluicegate_redis_errors_total` | counter | `limiter`, `kind` (`timeout`, `unavailable`, `rejected`) |
//! | `sluicegate_redis_fallbacks_total` | counter | `limiter`, `mode` (`allow`, `deny`, `local`) |
//! | `sluicegate_redis_deny_cache_hits_total` | counter | `limiter` |

use super::error::RedisError;
use crate::telemetry::LimiterLog;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Instant;

/// Counts of what a limiter did since it was built (its clones share them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RedisStats {
    /// Decisions sent to Redis (alone or in a batch, including those that failed).
    pub calls: u64,
    /// Requests Redis could not decide (a call that failed, or one failed at once while
    /// Redis was known to be down), whatever the fallback then answered.
    pub errors: u64,
    /// Requests the fallback decided because Redis could not.
    pub fallbacks: u64,
    /// Denials answered by the local deny cache, without a round trip.
    pub deny_cache_hits: u64,
    /// Batch scripts sent on this limiter's connection: each carried two calls or more that
    /// had queued while another call was in flight (calls of clones, and composite groups
    /// this limiter's connection carried, included).
    pub batches: u64,
    /// The most calls one batch carried.
    pub largest_batch: u64,
}

/// The counters and handles behind one limiter's telemetry.
#[derive(Debug)]
pub(crate) struct Telemetry {
    calls: AtomicU64,
    errors: AtomicU64,
    fallbacks: AtomicU64,
    deny_cache_hits: AtomicU64,
    log: LimiterLog,
    #[cfg(feature = "metrics")]
    name: String,
    #[cfg(feature = "metrics")]
    duration: metrics::Histogram,
    #[cfg(feature = "metrics")]
    fallback_counter: metrics::Counter,
    #[cfg(feature = "metrics")]
    cache_counter: metrics::Counter,
}

impl Telemetry {
    /// Telemetry for the limiter `name`, whose fallback mode is labelled `mode`.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn new(name: &str, mode: &'static str) -> Telemetry {
        #[cfg(feature = "metrics")]
        use crate::telemetry::names;
        Telemetry {
            calls: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            deny_cache_hits: AtomicU64::new(0),
            log: LimiterLog::new(name),
            #[cfg(feature = "metrics")]
            name: name.to_owned(),
            #[cfg(feature = "metrics")]
            duration: metrics::histogram!(
                names::REDIS_CALL_DURATION_SECONDS,
                names::LIMITER => name.to_owned()
            ),
            #[cfg(feature = "metrics")]
            fallback_counter: metrics::counter!(
                names::REDIS_FALLBACKS_TOTAL,
                names::LIMITER => name.to_owned(),
                names::MODE => mode
            ),
            #[cfg(feature = "metrics")]
            cache_counter: metrics::counter!(
                names::REDIS_DENY_CACHE_HITS_TOTAL,
                names::LIMITER => name.to_owned()
            ),
        }
    }

    /// A call to Redis, timed by `watch`, returned.
    #[inline]
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn call(&self, watch: Stopwatch) {
        self.calls.fetch_add(1, Relaxed);
        #[cfg(feature = "metrics")]
        self.duration.record(watch.started.elapsed().as_secs_f64());
    }

    /// A call failed: counted, and logged at most once a second (never with the key).
    #[cold]
    pub(crate) fn error(&self, error: &RedisError) {
        self.errors.fetch_add(1, Relaxed);
        #[cfg(feature = "metrics")]
        {
            use crate::backend::BackendErrorKind;
            // The kinds of the telemetry table (`names`): what a dashboard tells apart.
            let kind = match error.kind() {
                BackendErrorKind::Timeout => "timeout",
                BackendErrorKind::Unavailable => "unavailable",
                _ => "rejected",
            };
            metrics::counter!(
                crate::telemetry::names::REDIS_ERRORS_TOTAL,
                crate::telemetry::names::LIMITER => self.name.clone(),
                crate::telemetry::names::KIND => kind
            )
            .increment(1);
        }
        self.log.backend_error(monotonic_nanos(), error);
    }

    /// The fallback decided a request.
    #[cold]
    pub(crate) fn fallback(&self) {
        self.fallbacks.fetch_add(1, Relaxed);
        #[cfg(feature = "metrics")]
        self.fallback_counter.increment(1);
    }

    /// The deny cache answered a request.
    #[inline]
    pub(crate) fn deny_cache_hit(&self) {
        self.deny_cache_hits.fetch_add(1, Relaxed);
        #[cfg(feature = "metrics")]
        self.cache_counter.increment(1);
    }

    pub(crate) fn stats(&self) -> RedisStats {
        RedisStats {
            calls: self.calls.load(Relaxed),
            errors: self.errors.load(Relaxed),
            fallbacks: self.fallbacks.load(Relaxed),
            deny_cache_hits: self.deny_cache_hits.load(Relaxed),
            batches: 0,
            largest_batch: 0,
        }
    }
}

/// Times a call for the duration histogram. Without `metrics` it reads no clock: clock reads
/// took 4-6% of the client's CPU a batched decision, two of them this histogram's
/// (BENCHMARKS.md, "K-batching").
#[derive(Clone, Copy)]
pub(crate) struct Stopwatch {
    #[cfg(feature = "metrics")]
    started: Instant,
}

impl Stopwatch {
    #[inline]
    pub(crate) fn start() -> Stopwatch {
        Stopwatch {
            #[cfg(feature = "metrics")]
            started: Instant::now(),
        }
    }
}

/// Nanoseconds on a process-wide monotonic clock, for the log's throttle (a limiter on a
/// `ManualClock` still logs at most once a second of real time).
fn monotonic_nanos() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
