//! The log events themselves (feature `tracing`), all with target `sluicegate`.

use super::throttle::Throttle;
use crate::decision::Decision;
use crate::telemetry::key_hash;
use std::fmt;
use std::hash::Hash;

/// The target of every event, whatever module emits it: filter with `sluicegate=debug`.
pub(crate) const TARGET: &str = "sluicegate";

/// `debug`: a request was denied, for `key` (`None` for a direct limiter, which has none).
/// Not throttled: debug is opted into, and then every denial is what one asked to see.
#[cold]
#[inline(never)]
pub(crate) fn denied<Q: Hash + ?Sized>(limiter: &str, key: Option<&Q>, decision: Decision) {
    tracing::debug!(
        target: TARGET,
        limiter,
        key = key.map(|key| tracing::field::display(key_hash(key))),
        retry_after_ms = decision.retry_after().map(|wait| wait.as_nanos().div_ceil(1_000_000) as u64),
        "request denied"
    );
}

/// `warn`, at most once a second per `throttle`: a new key was denied because the table was
/// full.
#[cold]
pub(crate) fn table_full<Q: Hash + ?Sized>(throttle: &Throttle, limiter: &str, now: u64, key: &Q) {
    if !tracing::enabled!(target: TARGET, tracing::Level::WARN) {
        return;
    }
    if let Some(suppressed) = throttle.admit(now) {
        tracing::warn!(
            target: TARGET,
            limiter,
            key = %key_hash(key),
            suppressed,
            "key table full: a new key was denied"
        );
    }
}

/// `warn`, at most once a second per `throttle`: the backend could not decide.
#[cold]
pub(crate) fn backend_error(
    throttle: &Throttle,
    limiter: &str,
    now: u64,
    error: &dyn fmt::Display,
) {
    if !tracing::enabled!(target: TARGET, tracing::Level::WARN) {
        return;
    }
    if let Some(suppressed) = throttle.admit(now) {
        tracing::warn!(target: TARGET, limiter, error = %error, suppressed, "backend error");
    }
}
