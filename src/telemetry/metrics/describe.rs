//! Units and help texts for every metric in [`names`](crate::telemetry::names).

use crate::telemetry::names;
use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};

/// Describes every sluicegate metric (unit and help text) to the installed recorder, for
/// exporters that print them (Prometheus's `# HELP`). [`Publisher::publish`] calls it; call
/// it yourself if you only emit the Redis metrics.
///
/// [`Publisher::publish`]: super::Publisher::publish
pub fn describe() {
    describe_counter!(
        names::DECISIONS_TOTAL,
        Unit::Count,
        "Checks decided by a rate limiter, by decision (peeks not counted)."
    );
    describe_gauge!(
        names::KEYS,
        Unit::Count,
        "Keys held by a keyed rate limiter."
    );
    describe_gauge!(
        names::MEMORY_BYTES,
        Unit::Bytes,
        "Bytes held by a rate limiter."
    );
    describe_counter!(
        names::SWEPT_KEYS_TOTAL,
        Unit::Count,
        "Idle keys dropped by sweeps."
    );
    describe_counter!(
        names::TABLE_FULL_TOTAL,
        Unit::Count,
        "Requests denied because the key table was full."
    );
    describe_histogram!(
        names::REDIS_CALL_DURATION_SECONDS,
        Unit::Seconds,
        "Duration of one Redis call."
    );
    describe_counter!(
        names::REDIS_ERRORS_TOTAL,
        Unit::Count,
        "Redis calls that failed, by kind."
    );
    describe_counter!(
        names::REDIS_FALLBACKS_TOTAL,
        Unit::Count,
        "Requests decided by the fallback mode while Redis could not answer."
    );
    describe_counter!(
        names::REDIS_DENY_CACHE_HITS_TOTAL,
        Unit::Count,
        "Denials answered from the local deny cache without a Redis call."
    );
}
