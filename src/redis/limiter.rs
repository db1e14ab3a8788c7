//! [`RedisLimiter`]: one quota per key, shared by every server through Redis.

use super::composite::Handle;
use super::deny_cache::DenyCache;
use super::error::RedisError;
use super::inner::Inner;
use super::telemetry::{RedisStats, Stopwatch};
use super::time::{RedisTime, TimeSource};
use super::undo::Undo;
use crate::backend::{Op, Receipt, Reservation};
use crate::decision::Decision;
use crate::quota::Quota;
use crate::state::Algorithm;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A rate limiter whose state lives in Redis, so that every server sharing that Redis
/// enforces one limit per key: "100 per minute per user" across the whole fleet.
///
/// Every decision is one round trip running the algorithm's Lua script (`EVALSHA`),
/// atomic on the server, with the same rule and the same numbers as the in-process
/// limiters: `remaining`, an exact `retry_after`, `reset_after`, `wait`. By default the
/// script reads Redis's own clock (`TIME`), so the servers' clocks never matter; a client
/// [`Clock`](crate::clock::Clock) can be given instead ([`RedisBuilder::clock`](super::RedisBuilder::clock)), which
/// tests use with a [`ManualClock`](crate::clock::ManualClock). Keys expire by themselves
/// once their state is fresh again. See the [module documentation](super) for keys, units,
/// failure handling and the deny cache.
///
/// Cloning is cheap and clones share everything (connection, cache, counters). The limiter
/// is `Send + Sync + 'static` and its futures are `Send`, so it can be used from
/// `tokio::spawn`ed tasks. It needs a tokio runtime.
///
/// ```no_run
/// use sluicegate::redis::{RedisError, RedisLimiter};
/// use sluicegate::{algorithm::SlidingWindow, Quota};
///
/// # async fn run() -> Result<(), RedisError> {
/// let per_user =
///     RedisLimiter::<SlidingWindow>::connect(Quota::per_minute(100), "redis://127.0.0.1/")
///         .await?;
/// let decision = per_user.check("user:42").await?;
/// if decision.is_denied() {
///     println!("retry in {:?}", decision.retry_after());
/// }
/// # Ok(())
/// # }
/// ```
pub struct RedisLimiter<A: Algorithm, C: TimeSource = RedisTime> {
    pub(crate) inner: Arc<Inner<A, C>>,
    /// `inner` again, as group decisions know it (whatever `A` and `C`).
    pub(crate) handle: Handle,
}

impl<A: Algorithm, C: TimeSource> RedisLimiter<A, C> {
    pub(crate) fn from_inner(inner: Inner<A, C>) -> Self {
        let inner = Arc::new(inner);
        RedisLimiter {
            handle: Arc::clone(&inner) as Handle,
            inner,
        }
    }
}

impl<A: Algorithm, C: TimeSource> Clone for RedisLimiter<A, C> {
    fn clone(&self) -> Self {
        RedisLimiter {
            inner: Arc::clone(&self.inner),
            handle: Arc::clone(&self.handle),
        }
    }
}

impl<A: Algorithm, C: TimeSource> fmt::Debug for RedisLimiter<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &*self.inner;
        f.debug_struct("RedisLimiter")
            .field("name", &inner.name)
            .field("quota", &inner.quota)
            .field("prefix", &inner.keys.prefix())
            .field("time", &inner.time)
            .field("link", &inner.sender.link)
            .field("deny_cache", &inner.deny_cache)
            .field("fallback", &inner.standby)
            .finish()
    }
}

/// # Checking requests
impl<A: Algorithm, C: TimeSource> RedisLimiter<A, C> {
    /// Decides one request for `key`, consuming one unit when it is allowed.
    pub async fn check(&self, key: &str) -> Result<Decision, RedisError> {
        self.decide(key, 1, Op::Check).await
    }

    /// Decides a request of cost `n` for `key`. A cost above the capacity (the burst, or the
    /// limit for the windows and the log) is [`RedisError::Capacity`] before any round
    /// trip: no wait would ever admit it.
    pub async fn check_n(&self, key: &str, n: u32) -> Result<Decision, RedisError> {
        self.decide(key, n, Op::Check).await
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    pub async fn peek(&self, key: &str) -> Result<Decision, RedisError> {
        self.decide(key, 1, Op::Peek).await
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    pub async fn peek_n(&self, key: &str, n: u32) -> Result<Decision, RedisError> {
        self.decide(key, n, Op::Peek).await
    }

    /// Records `n` units for `key` whatever the answer (work already done, or a cost known
    /// only afterwards), and says whether they were within the limit. Beyond it the state
    /// goes into debt as each algorithm's script header says, and the decision is the
    /// denial a single request would get right after. Any `n` is accepted. A hit always
    /// asks Redis, never the deny cache.
    pub async fn hit(&self, key: &str, n: u32) -> Result<Decision, RedisError> {
        self.decide(key, n, Op::Hit).await
    }

    /// Decides `op` for a request of `cost` on `key`.
    pub(crate) async fn decide(
        &self,
        key: &str,
        cost: u32,
        op: Op,
    ) -> Result<Decision, RedisError> {
        let inner = &*self.inner;
        inner.fits(cost, op)?;
        let (sent, at) = inner.instant();
        if let Some(cached) = inner.cached(key, cost, op, at) {
            return Ok(cached);
        }
        match inner.run(inner.keys.name(key), op, cost, sent).await {
            Ok(numbers) => {
                inner.learn(key, cost, op, at, &numbers);
                Ok(numbers.decision(inner.quota.limit()))
            }
            Err(error) => inner.failed(key, cost, op, error),
        }
    }

    /// A consuming check that also returns what undoing it takes.
    pub(crate) async fn reserve(&self, key: &str, cost: u32) -> Result<Reservation, RedisError> {
        let inner = &*self.inner;
        inner.fits(cost, Op::Check)?;
        let (sent, at) = inner.instant();
        if let Some(decision) = inner.cached(key, cost, Op::Check, at) {
            return Ok(Reservation {
                decision,
                receipt: Receipt::none(),
            });
        }
        let redis_key = inner.keys.name(key);
        match inner.reserve(&redis_key, cost, sent).await {
            Ok((numbers, extra)) => {
                inner.learn(key, cost, Op::Check, at, &numbers);
                let receipt = if numbers.allowed && !extra.is_empty() {
                    Receipt::new(Undo::from_reply(&inner.params, redis_key, &extra)?)
                } else {
                    Receipt::none()
                };
                Ok(Reservation {
                    decision: numbers.decision(inner.quota.limit()),
                    receipt,
                })
            }
            Err(error) => inner.failed_reservation(key, cost, error),
        }
    }

    /// Reverts a reservation if nothing was recorded on the key since.
    pub(crate) async fn undo(&self, key: &str, receipt: Receipt) -> Result<bool, RedisError> {
        let inner = &*self.inner;
        let Some(undo) = receipt.downcast::<Undo>() else {
            return Ok(false);
        };
        if let Undo::Local(receipt) = undo {
            return Ok(inner.standby.undo(key, receipt));
        }
        let watch = Stopwatch::start();
        let result = undo.run(&inner.sender.link).await;
        inner.telemetry.call(watch);
        if let (Ok(true), Some(cache)) = (&result, &inner.deny_cache) {
            // A denial cached since the reservation may be admitted again now.
            cache.forget(key);
        }
        result.inspect_err(|error| inner.telemetry.error(error))
    }
}

/// # Inspecting
impl<A: Algorithm, C: TimeSource> RedisLimiter<A, C> {
    /// The quota each key gets.
    pub fn quota(&self) -> Quota {
        self.inner.quota
    }

    /// The largest cost one check can be allowed: the burst, or the limit for the windows
    /// and the log.
    pub fn max_cost(&self) -> u32 {
        self.inner.max_cost
    }

    /// The limiter's name, the `limiter` label of its metrics and logs (the prefix unless
    /// [`RedisBuilder::name`](super::RedisBuilder::name) set one).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The prefix every Redis key of this limiter starts with.
    pub fn prefix(&self) -> &str {
        self.inner.keys.prefix()
    }

    /// The Redis key that holds `key`'s state: `<prefix>{<key>}`, the algorithm's letter and
    /// five characters fingerprinting the quota, with braces and `%` in `key`
    /// percent-escaped so the hash tag is exactly `key`.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), sluicegate::redis::RedisError> {
    /// use sluicegate::redis::RedisLimiter;
    /// use sluicegate::{algorithm::Gcra, Quota};
    ///
    /// let limiter = RedisLimiter::<Gcra>::connect(
    ///     Quota::per_minute(100).with_burst(20),
    ///     "redis://127.0.0.1/",
    /// )
    /// .await?;
    /// assert_eq!(limiter.redis_key("user:42"), "sluicegate:{user:42}gbewwN");
    /// # Ok(())
    /// # }
    /// ```
    pub fn redis_key(&self, key: &str) -> String {
        self.inner.keys.name(key)
    }

    /// What the limiter has done so far.
    pub fn stats(&self) -> RedisStats {
        let mut stats = self.inner.telemetry.stats();
        (stats.batches, stats.largest_batch) = self.inner.sender.stats();
        stats
    }

    /// False while Redis is known to be unreachable (calls fail fast, or the fallback
    /// answers); true otherwise.
    pub fn is_available(&self) -> bool {
        self.inner.sender.link.health.is_up()
    }

    /// Keys the deny cache holds now.
    pub fn deny_cache_len(&self) -> usize {
        self.inner.deny_cache.as_ref().map_or(0, DenyCache::len)
    }

    /// The per-call timeout.
    pub fn timeout(&self) -> Duration {
        self.inner.sender.link.timeout()
    }
}
