//! [`RedisAlgorithm`]: the algorithms that run on Redis (all six), and the letter the Lua
//! scripts know each by.

use crate::algorithm::{Algorithm, AlgorithmKind};

/// An [`Algorithm`] that runs on Redis, as a Lua script of its own: every one of the six.
pub trait RedisAlgorithm: Algorithm {}

impl<A: Algorithm> RedisAlgorithm for A {}

/// The letter the composite script dispatches on.
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
