//! The letter the Lua scripts know each algorithm by (every one of the six runs on Redis).

use crate::algorithm::AlgorithmKind;

/// The letter the scripts dispatch on (entry.lua's `deciders`).
pub(crate) fn script_code(kind: AlgorithmKind) -> &'static str {
    match kind {
        AlgorithmKind::Gcra => "g",
        AlgorithmKind::TokenBucket => "t",
        AlgorithmKind::LeakyBucket => "l",
        AlgorithmKind::FixedWindow => "f",
        AlgorithmKind::SlidingWindow => "w",
        AlgorithmKind::SlidingLog => "s",
    }
}
