//! [`AnyRedisLimiter`]: a [`RedisLimiter`] whose algorithm is chosen at run time.

use super::error::RedisError;
use super::limiter::RedisLimiter;
use super::telemetry::RedisStats;
use super::time::{RedisTime, TimeSource};
use crate::algorithm::{AlgorithmKind, FixedWindow, Gcra, LeakyBucket, SlidingLog};
use crate::algorithm::{SlidingWindow, TokenBucket};
use crate::backend::{Backend, Call, Joint, Op, Receipt, Reservation};
use crate::decision::Decision;
use crate::dynamic::dispatch;
use crate::quota::Quota;
use std::time::Duration;

/// A [`RedisLimiter`] of whichever algorithm a configuration names, as
/// [`AnyKeyedLimiter`](crate::dynamic::AnyKeyedLimiter) is in process: one `match` per call
/// picks the typed limiter it holds, which decides exactly as it would alone (same scripts,
/// same keys, so it shares state with a typed limiter of the same algorithm, quota and
/// prefix).
///
/// ```no_run
/// use sluicegate::algorithm::AlgorithmKind;
/// use sluicegate::redis::{AnyRedisLimiter, RedisError};
/// use sluicegate::Quota;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let kind: AlgorithmKind = "sliding-window".parse()?;
/// let per_user = AnyRedisLimiter::builder(Quota::per_minute(100), kind, "redis://127.0.0.1/")
///     .prefix("api:")
///     .connect()
///     .await?;
/// let decision = per_user.check("user:42").await?;
/// # let _ = decision;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[allow(missing_docs)] // the variants are the six algorithms
pub enum AnyRedisLimiter<C: TimeSource = RedisTime> {
    Gcra(RedisLimiter<Gcra, C>),
    TokenBucket(RedisLimiter<TokenBucket, C>),
    LeakyBucket(RedisLimiter<LeakyBucket, C>),
    FixedWindow(RedisLimiter<FixedWindow, C>),
    SlidingWindow(RedisLimiter<SlidingWindow, C>),
    SlidingLog(RedisLimiter<SlidingLog, C>),
}

/// # Checking requests
///
/// Each does what [`RedisLimiter`]'s method of the same name does.
impl<C: TimeSource> AnyRedisLimiter<C> {
    /// Decides one request for `key`, consuming one unit when it is allowed.
    pub async fn check(&self, key: &str) -> Result<Decision, RedisError> {
        self.decide_op(key, 1, Op::Check).await
    }

    /// Decides a request of cost `n` for `key` ([`RedisError::Capacity`] when `n` can never
    /// fit).
    pub async fn check_n(&self, key: &str, n: u32) -> Result<Decision, RedisError> {
        self.decide_op(key, n, Op::Check).await
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    pub async fn peek(&self, key: &str) -> Result<Decision, RedisError> {
        self.decide_op(key, 1, Op::Peek).await
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    pub async fn peek_n(&self, key: &str, n: u32) -> Result<Decision, RedisError> {
        self.decide_op(key, n, Op::Peek).await
    }

    /// Records `n` units for `key` whatever the answer.
    pub async fn hit(&self, key: &str, n: u32) -> Result<Decision, RedisError> {
        self.decide_op(key, n, Op::Hit).await
    }

    /// [`check_n`](Self::check_n), [`peek_n`](Self::peek_n) or [`hit`](Self::hit), as `op`
    /// says: for a caller that receives the operation as a value (a language binding).
    pub async fn decide_op(&self, key: &str, cost: u32, op: Op) -> Result<Decision, RedisError> {
        dispatch!(Self, self, limiter => limiter.decide(key, cost, op).await)
    }
}

/// # Inspecting
impl<C: TimeSource> AnyRedisLimiter<C> {
    /// The algorithm deciding.
    pub fn algorithm(&self) -> AlgorithmKind {
        match self {
            AnyRedisLimiter::Gcra(_) => AlgorithmKind::Gcra,
            AnyRedisLimiter::TokenBucket(_) => AlgorithmKind::TokenBucket,
            AnyRedisLimiter::LeakyBucket(_) => AlgorithmKind::LeakyBucket,
            AnyRedisLimiter::FixedWindow(_) => AlgorithmKind::FixedWindow,
            AnyRedisLimiter::SlidingWindow(_) => AlgorithmKind::SlidingWindow,
            AnyRedisLimiter::SlidingLog(_) => AlgorithmKind::SlidingLog,
        }
    }

    /// The quota each key gets.
    pub fn quota(&self) -> Quota {
        dispatch!(Self, self, limiter => limiter.quota())
    }

    /// The largest cost one check can be allowed.
    pub fn max_cost(&self) -> u32 {
        dispatch!(Self, self, limiter => limiter.max_cost())
    }

    /// The name in metrics and logs.
    pub fn name(&self) -> &str {
        dispatch!(Self, self, limiter => limiter.name())
    }

    /// The prefix every Redis key of this limiter starts with.
    pub fn prefix(&self) -> &str {
        dispatch!(Self, self, limiter => limiter.prefix())
    }

    /// The Redis key that holds `key`'s state ([`RedisLimiter::redis_key`]).
    pub fn redis_key(&self, key: &str) -> String {
        dispatch!(Self, self, limiter => limiter.redis_key(key))
    }

    /// What the limiter has done so far.
    pub fn stats(&self) -> RedisStats {
        dispatch!(Self, self, limiter => limiter.stats())
    }

    /// False while Redis is known to be unreachable.
    pub fn is_available(&self) -> bool {
        dispatch!(Self, self, limiter => limiter.is_available())
    }

    /// Keys the deny cache holds now.
    pub fn deny_cache_len(&self) -> usize {
        dispatch!(Self, self, limiter => limiter.deny_cache_len())
    }

    /// Forgets `key`; see [`RedisLimiter::reset`].
    pub async fn reset(&self, key: &str) -> Result<bool, RedisError> {
        dispatch!(Self, self, limiter => limiter.reset(key).await)
    }

    /// The per-call timeout.
    pub fn timeout(&self) -> Duration {
        dispatch!(Self, self, limiter => limiter.timeout())
    }
}

/// Through the seam exactly as the typed limiter it holds.
impl<C: TimeSource> Backend<str> for AnyRedisLimiter<C> {
    fn quota(&self) -> Quota {
        AnyRedisLimiter::quota(self)
    }

    fn max_cost(&self) -> u32 {
        AnyRedisLimiter::max_cost(self)
    }

    fn decide<'a>(&'a self, key: &'a str, cost: u32, op: Op) -> Call<'a> {
        dispatch!(Self, self, limiter => Backend::decide(limiter, key, cost, op))
    }

    fn reserve<'a>(&'a self, key: &'a str, cost: u32) -> Call<'a, Reservation> {
        dispatch!(Self, self, limiter => Backend::reserve(limiter, key, cost))
    }

    fn joint<'a>(&'a self, key: &'a str) -> Option<Joint<'a>> {
        dispatch!(Self, self, limiter => Backend::joint(limiter, key))
    }

    fn undo<'a>(&'a self, key: &'a str, receipt: Receipt) -> Call<'a, bool> {
        dispatch!(Self, self, limiter => Backend::undo(limiter, key, receipt))
    }

    fn reset<'a>(&'a self, key: &'a str) -> Call<'a, bool> {
        dispatch!(Self, self, limiter => Backend::reset(limiter, key))
    }
}
