//! The letter the Lua scripts know each algorithm by (every one of the six runs on Redis, and
//! the anchored fixed window has a letter of its own).

use crate::algorithm::AlgorithmKind;
use crate::quota::Quota;

/// The letter the scripts dispatch on (entry.lua's `deciders`) for `kind` running `quota`.
pub(crate) fn script_code(kind: AlgorithmKind, quota: &Quota) -> &'static str {
    match kind {
        AlgorithmKind::FixedWindow if quota.is_anchored() => "a",
        AlgorithmKind::Gcra => "g",
        AlgorithmKind::TokenBucket => "t",
        AlgorithmKind::LeakyBucket => "l",
        AlgorithmKind::FixedWindow => "f",
        AlgorithmKind::SlidingWindow => "w",
        AlgorithmKind::SlidingLog => "s",
    }
}
