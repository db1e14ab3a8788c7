//! [`all_of`]: one request against several Redis limits (per user and global, of any
//! algorithms and quotas), all-or-nothing.
//!
//! When every key lives on one node (one standalone Redis, or one hash slot of a cluster:
//! limits on the same key share its slot, since the key is the hash tag), the whole decision
//! is one script: every limit is decided before anything is written, and a check writes only
//! if every limit admits. A denial consumes nothing anywhere, with no race at all.
//!
//! Otherwise (keys in different slots of a cluster, or limiters on different Redis servers),
//! it is [`backend::all_of`](crate::backend::all_of): every limit is peeked, then reserved in
//! order, and if one changed in between and now denies, the earlier reservations are undone
//! (exactly, unless something was recorded on them meanwhile; then those units stay
//! consumed). A race there errs toward denying, never toward admitting.

use super::algorithm::{sealed::Scripted, RedisAlgorithm};
use super::error::RedisError;
use super::keys::hash_slot;
use super::limiter::RedisLimiter;
use super::link::{Arg, Link};
use super::reply;
use super::scripts::SCRIPTS;
use super::time::TimeSource;
use crate::backend::{self, Backend, BackendError, Op};
use crate::composite::Summary;
use crate::decision::Decision;
use crate::error::CapacityError;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// One limit of [`all_of`]: a Redis limiter and the key to decide there.
#[derive(Clone, Copy)]
pub struct RedisMember<'a> {
    limiter: &'a dyn Part,
    key: &'a str,
}

impl<'a> RedisMember<'a> {
    /// `key`'s limit on `limiter`.
    pub fn new<A: RedisAlgorithm, C: TimeSource>(
        limiter: &'a RedisLimiter<A, C>,
        key: &'a str,
    ) -> Self {
        RedisMember { limiter, key }
    }
}

impl fmt::Debug for RedisMember<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisMember")
            .field("limiter", &self.limiter.name())
            .finish_non_exhaustive()
    }
}

/// What the composite needs of each limiter, whatever its algorithm and clock.
pub(crate) trait Part: Backend<str> {
    fn name(&self) -> &str;
    fn link(&self) -> &Arc<Link>;
    fn redis_key(&self, key: &str) -> String;
    /// The algorithm's letter, the instant to send and the encoded parameters for `cost`.
    fn block(&self, cost: u32) -> (&'static str, Option<u64>, [u8; 32]);
    fn limit(&self) -> u32;
    /// True when an outage is answered by a fallback rather than returned.
    fn has_fallback(&self) -> bool;
    /// The fallback's decision (counted as one).
    fn fallback(&self, key: &str, cost: u32, op: Op) -> Option<Decision>;
    fn record_call(&self, started: Instant);
    fn record_error(&self, error: &RedisError);
}

impl<A: RedisAlgorithm, C: TimeSource> Part for RedisLimiter<A, C> {
    fn name(&self) -> &str {
        RedisLimiter::name(self)
    }

    fn link(&self) -> &Arc<Link> {
        &self.inner.link
    }

    fn redis_key(&self, key: &str) -> String {
        self.inner.keys.name(key)
    }

    fn block(&self, cost: u32) -> (&'static str, Option<u64>, [u8; 32]) {
        let (sent, _) = self.inner.instant();
        (<A as Scripted>::KIND.code(), sent, self.inner.params(cost))
    }

    fn limit(&self) -> u32 {
        self.inner.quota.limit()
    }

    fn has_fallback(&self) -> bool {
        self.inner.standby.is_active()
    }

    fn fallback(&self, key: &str, cost: u32, op: Op) -> Option<Decision> {
        let decision = self.inner.standby.decide(key, cost, op, self.limit())?;
        self.inner.telemetry.fallback();
        Some(decision)
    }

    fn record_call(&self, started: Instant) {
        self.inner.telemetry.call(started.elapsed());
    }

    fn record_error(&self, error: &RedisError) {
        self.inner.telemetry.error(error);
    }
}

/// Decides one request of `cost` against every member: allowed only if all allow, and then
/// all consume (`Op::Check`); a denial consumes nothing. `Op::Peek` answers the same without
/// consuming; `Op::Hit` records the cost on every member and is within the limit only if it
/// is within every member's. One script when every key is on one node, reserve-then-undo
/// otherwise (see [composites](super#composites)); the deny cache is not consulted.
///
/// The decision reports the tightest `remaining` (and that member's `limit`), the longest
/// `retry_after`, `reset_after` and `wait`, as [`backend::all_of`] does. A check above any
/// member's capacity is [`RedisError::Capacity`] before any round trip. When Redis cannot
/// answer and every member has a [`Fallback`](super::Fallback), the fallbacks decide
/// (peeked first, so that a denial consumes nothing among them); otherwise the error is
/// returned.
///
/// ```no_run
/// use sluicegate::backend::Op;
/// use sluicegate::redis::{all_of, RedisLimiter, RedisMember};
/// use sluicegate::{algorithm::{Gcra, SlidingWindow}, Quota};
///
/// # async fn run() -> Result<(), sluicegate::redis::RedisError> {
/// let url = "redis://127.0.0.1/";
/// let per_user = RedisLimiter::<Gcra>::builder(Quota::per_second(5), url)
///     .prefix("user:")
///     .connect()
///     .await?;
/// let per_user_daily = RedisLimiter::<SlidingWindow>::builder(Quota::per_day(10_000), url)
///     .prefix("daily:")
///     .connect()
///     .await?;
/// // Both keys are "u42": one hash slot, one script.
/// let members = [
///     RedisMember::new(&per_user, "u42"),
///     RedisMember::new(&per_user_daily, "u42"),
/// ];
/// let decision = all_of(&members, 1, Op::Check).await?;
/// # Ok(())
/// # }
/// ```
pub async fn all_of(
    members: &[RedisMember<'_>],
    cost: u32,
    op: Op,
) -> Result<Decision, RedisError> {
    if op != Op::Hit {
        let capacity = members.iter().map(|m| m.limiter.max_cost()).min();
        if let Some(capacity) = capacity.filter(|&c| cost > c) {
            return Err(CapacityError::new(cost, capacity).into());
        }
    }
    let keys: Vec<String> = members.iter().map(|m| m.limiter.redis_key(m.key)).collect();
    if members.len() < 2 || !on_one_node(members, &keys) {
        let seam: Vec<backend::Member<'_, str>> = members
            .iter()
            .map(|m| backend::Member::new(m.limiter as &dyn Backend<str>, m.key))
            .collect();
        return backend::all_of(&seam, cost, op).await.map_err(from_backend);
    }
    match in_one_script(members, &keys, cost, op).await {
        Ok(decision) => Ok(decision),
        Err(error) => {
            for member in members {
                member.limiter.record_error(&error);
            }
            if error.is_outage() && members.iter().all(|m| m.limiter.has_fallback()) {
                Ok(fall_back(members, cost, op))
            } else {
                Err(error)
            }
        }
    }
}

/// True when one script can reach every key: same Redis, and on a cluster the same slot.
fn on_one_node(members: &[RedisMember<'_>], keys: &[String]) -> bool {
    let first = members[0].limiter.link();
    let same_redis = members
        .iter()
        .all(|m| m.limiter.link().identity() == first.identity());
    if !same_redis {
        return false;
    }
    if !first.is_cluster() {
        return true;
    }
    let slot = hash_slot(keys[0].as_bytes());
    keys.iter().all(|key| hash_slot(key.as_bytes()) == slot)
}

/// The composite script: every limit decided, then written only if all admit.
async fn in_one_script(
    members: &[RedisMember<'_>],
    keys: &[String],
    cost: u32,
    op: Op,
) -> Result<Decision, RedisError> {
    let code = match op {
        Op::Check => "c",
        Op::Peek => "p",
        Op::Hit => "h",
    };
    let blocks: Vec<_> = members.iter().map(|m| m.limiter.block(cost)).collect();
    let mut args = Vec::with_capacity(2 + 3 * members.len());
    args.push(Arg::Str(code));
    args.push(Arg::Int(u64::from(cost)));
    for (algorithm, now, params) in &blocks {
        args.push(Arg::Str(algorithm));
        args.push(now.map_or(Arg::Str(""), Arg::Int));
        args.push(Arg::Bytes(params));
    }
    let first = members[0].limiter;
    let started = Instant::now();
    let result = first.link().eval(&SCRIPTS.composite, keys, &args).await;
    first.record_call(started);
    let (all, numbers) = reply::composite(result?, members.len())?;
    let decisions: Vec<Decision> = members
        .iter()
        .zip(&numbers)
        .map(|(member, numbers)| numbers.decision(member.limiter.limit()))
        .collect();
    Ok(summarize(&decisions, cost, op, all))
}

/// While Redis is down: the members' fallbacks, peeked first so that a denial consumes
/// nothing among them either.
fn fall_back(members: &[RedisMember<'_>], cost: u32, op: Op) -> Decision {
    let probe = if op == Op::Hit { Op::Hit } else { Op::Peek };
    let mut found: Vec<Decision> = members
        .iter()
        .filter_map(|m| m.limiter.fallback(m.key, cost, probe))
        .collect();
    let all = found.iter().all(Decision::is_allowed);
    if op == Op::Check && all {
        found = members
            .iter()
            .filter_map(|m| m.limiter.fallback(m.key, cost, Op::Check))
            .collect();
        let admitted = found.iter().all(Decision::is_allowed);
        return summarize(&found, cost, Op::Check, admitted);
    }
    summarize(&found, cost, op, all)
}

/// The composite decision, as [`backend::all_of`] reports it: the members' decisions count
/// an allowed cost as consumed, which a denial or a peek did not do, so it is added back.
fn summarize(decisions: &[Decision], cost: u32, op: Op, allowed: bool) -> Decision {
    let unconsumed = if allowed || op == Op::Hit { 0 } else { cost };
    let mut summary = Summary::default();
    for d in decisions {
        let back = if d.is_allowed() { unconsumed } else { 0 };
        summary.add_remaining_value(d.remaining().saturating_add(back), d.limit());
        summary.add_times(d);
    }
    summary.decision(allowed)
}

/// A seam error back into ours (it carries our own error as its source).
fn from_backend(error: BackendError) -> RedisError {
    let inner = error.inner();
    if let Some(redis) = inner.downcast_ref::<RedisError>() {
        return redis.clone();
    }
    if let Some(capacity) = inner.downcast_ref::<CapacityError>() {
        return RedisError::Capacity(*capacity);
    }
    RedisError::Script {
        message: error.to_string(),
    }
}
