//! [`all_of`]: one request against several limits on any backends, all-or-nothing.

use super::{Backend, BackendError, Op, Receipt};
use crate::composite::Summary;
use crate::decision::Decision;
use crate::error::CapacityError;
use std::fmt;

/// One limit of [`all_of`]: a backend and the key to decide there.
pub struct Member<'a, Q: ?Sized> {
    backend: &'a dyn Backend<Q>,
    key: &'a Q,
}

impl<'a, Q: ?Sized> Member<'a, Q> {
    /// `key`'s limit on `backend`.
    pub fn new(backend: &'a dyn Backend<Q>, key: &'a Q) -> Self {
        Member { backend, key }
    }
}

impl<Q: ?Sized> Clone for Member<'_, Q> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q: ?Sized> Copy for Member<'_, Q> {}

impl<Q: ?Sized> fmt::Debug for Member<'_, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Member")
            .field("quota", &self.backend.quota())
            .finish_non_exhaustive()
    }
}

/// Decides one request of `cost` against every member: allowed only if all allow, and then all
/// consume (`Op::Check`); a denial consumes nothing. `Op::Peek` answers the same without
/// consuming; `Op::Hit` records the cost on every member and is within the limit only if it is
/// within every member's.
///
/// The rule is [`Composite`](crate::Composite)'s, over the seam: every member is peeked
/// first, so a denial writes nothing anywhere; then the members are reserved in order, and if
/// one changed since its peek and now denies, the earlier ones are
/// [undone](Backend::undo), exactly unless something else was recorded on them in between
/// (then those units stay consumed: a race errs toward denying, never toward admitting). An
/// error from any member undoes the reservations made before it and is returned.
///
/// The decision reports the tightest `remaining` (and that member's `limit`), the longest
/// `retry_after` (when every member admits the request again), `reset_after` and `wait`. With
/// in-process members only, the returned future is complete when it is first polled.
pub async fn all_of<Q: ?Sized>(
    members: &[Member<'_, Q>],
    cost: u32,
    op: Op,
) -> Result<Decision, BackendError> {
    if let [only] = members {
        return only.backend.decide(only.key, cost, op).await;
    }
    if op == Op::Check {
        let capacity = members.iter().map(|m| m.backend.max_cost()).min();
        if let Some(capacity) = capacity.filter(|&c| cost > c) {
            return Err(CapacityError::new(cost, capacity).into());
        }
    }
    let mut found = Vec::with_capacity(members.len());
    let probe = if op == Op::Hit { Op::Hit } else { Op::Peek };
    for member in members {
        found.push(member.backend.decide(member.key, cost, probe).await?);
    }
    if op != Op::Check || found.iter().any(Decision::is_denied) {
        // A denial reports where each member stands now: the peeks that allowed counted the
        // cost as consumed. An admission (a peek's, or a hit's) reports what is left after it.
        let allowed = found.iter().all(Decision::is_allowed);
        let unconsumed = if allowed || op == Op::Hit { 0 } else { cost };
        return Ok(summarize(&found, unconsumed, allowed));
    }
    let mut receipts: Vec<Receipt> = Vec::with_capacity(members.len());
    for (i, member) in members.iter().enumerate() {
        let reserved = match member.backend.reserve(member.key, cost).await {
            Ok(reserved) => reserved,
            Err(error) => {
                undo(members, receipts).await;
                return Err(error);
            }
        };
        if reserved.decision.is_denied() {
            undo(members, receipts).await;
            found[i] = reserved.decision;
            return Ok(summarize(&found, cost, false));
        }
        found[i] = reserved.decision;
        receipts.push(reserved.receipt);
    }
    Ok(summarize(&found, 0, true))
}

/// Undoes `receipts` (the first members' reservations), latest first.
async fn undo<Q: ?Sized>(members: &[Member<'_, Q>], receipts: Vec<Receipt>) {
    for (member, receipt) in members.iter().zip(receipts).rev() {
        // A failed undo leaves the units consumed: the documented direction of error.
        let _ = member.backend.undo(member.key, receipt).await;
    }
}

/// The composite decision from each member's. `unconsumed` is the cost that the allowed
/// decisions count as consumed but that was not (they were peeks), added back to their
/// `remaining`.
fn summarize(decisions: &[Decision], unconsumed: u32, allowed: bool) -> Decision {
    let mut summary = Summary::default();
    for d in decisions {
        let back = if d.is_allowed() { unconsumed } else { 0 };
        summary.add_remaining_value(d.remaining().saturating_add(back), d.limit());
        summary.add_times(d);
    }
    summary.decision(allowed)
}
