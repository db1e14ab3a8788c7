//! The names of every metric sluicegate emits, in one place, following Prometheus
//! conventions: a `sluicegate_` prefix, base units in the name (`_seconds`, `_bytes`),
//! `_total` on counters, and labels for the dimensions.
//!
//! | metric | type | labels | meaning |
//! |---|---|---|---|
//! | `sluicegate_decisions_total` | counter | `limiter`, `decision` = `allowed` \| `denied` | checks decided (peeks not counted) |
//! | `sluicegate_keys` | gauge | `limiter` | keys held by a keyed limiter |
//! | `sluicegate_memory_bytes` | gauge | `limiter` | bytes the limiter holds |
//! | `sluicegate_swept_keys_total` | counter | `limiter` | idle keys dropped by sweeps |
//! | `sluicegate_table_full_total` | counter | `limiter` | requests denied because the key table was full (`max_keys`) |
//! | `sluicegate_redis_call_duration_seconds` | histogram | `limiter` | time of one Redis round trip |
//! | `sluicegate_redis_errors_total` | counter | `limiter`, `kind` = `timeout` \| `unavailable` \| `script` \| `wrong_type` \| ... (`RedisError::label`) | Redis calls that failed |
//! | `sluicegate_redis_fallbacks_total` | counter | `limiter`, `mode` = `allow` \| `deny` \| `local` | requests decided by the fallback while Redis could not answer |
//! | `sluicegate_redis_deny_cache_hits_total` | counter | `limiter` | denials answered from the local deny cache without a round trip |

/// Counter: checks decided, labelled `limiter` and `decision` ([`ALLOWED`] or [`DENIED`]).
pub const DECISIONS_TOTAL: &str = "sluicegate_decisions_total";
/// Gauge: keys held by a keyed limiter, labelled `limiter`.
pub const KEYS: &str = "sluicegate_keys";
/// Gauge: bytes a limiter holds, labelled `limiter`.
pub const MEMORY_BYTES: &str = "sluicegate_memory_bytes";
/// Counter: idle keys dropped by sweeps, labelled `limiter`.
pub const SWEPT_KEYS_TOTAL: &str = "sluicegate_swept_keys_total";
/// Counter: requests denied because the key table was full, labelled `limiter`.
pub const TABLE_FULL_TOTAL: &str = "sluicegate_table_full_total";
/// Histogram: seconds one Redis call took, labelled `limiter`.
pub const REDIS_CALL_DURATION_SECONDS: &str = "sluicegate_redis_call_duration_seconds";
/// Counter: Redis calls that failed, labelled `limiter` and `kind`.
pub const REDIS_ERRORS_TOTAL: &str = "sluicegate_redis_errors_total";
/// Counter: requests decided by the fallback mode while Redis could not answer, labelled
/// `limiter` and `mode`.
pub const REDIS_FALLBACKS_TOTAL: &str = "sluicegate_redis_fallbacks_total";
/// Counter: denials answered from the local deny cache, labelled `limiter`.
pub const REDIS_DENY_CACHE_HITS_TOTAL: &str = "sluicegate_redis_deny_cache_hits_total";

/// Label: the limiter's name, given when it was registered.
pub const LIMITER: &str = "limiter";
/// Label of [`DECISIONS_TOTAL`]: [`ALLOWED`] or [`DENIED`].
pub const DECISION: &str = "decision";
/// Label of [`REDIS_ERRORS_TOTAL`]: what kind of failure.
pub const KIND: &str = "kind";
/// Label of [`REDIS_FALLBACKS_TOTAL`]: the fallback mode, `allow`, `deny` or `local`.
pub const MODE: &str = "mode";
/// Value of [`DECISION`] for allowed checks.
pub const ALLOWED: &str = "allowed";
/// Value of [`DECISION`] for denied checks.
pub const DENIED: &str = "denied";
