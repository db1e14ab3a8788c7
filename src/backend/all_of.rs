//! [`all_of`] and [`all_of_each`]: one request against several limits on any backends,
//! all-or-nothing.

use super::{Backend, BackendError, Op, Receipt};
use crate::composite::Summary;
use crate::decision::Decision;
use crate::error::CapacityError;
use std::fmt;

/// One limit of [`all_of`]: a backend, the key to decide there, and optionally a cost of its
/// own (otherwise the call's).
pub struct Member<'a, Q: ?Sized> {
    backend: &'a dyn Backend<Q>,
    key: &'a Q,
    cost: Option<u32>,
}

impl<'a, Q: ?Sized> Member<'a, Q> {
    /// `key`'s limit on `backend`.
    pub fn new(backend: &'a dyn Backend<Q>, key: &'a Q) -> Self {
        Member {
            backend,
            key,
            cost: None,
        }
    }

    /// This member weighs the request at `cost` whatever the call's cost (a request of 3 KiB
    /// for a bytes limit beside a cost of 1 for a requests limit).
    pub fn with_cost(self, cost: u32) -> Self {
        Member {
            cost: Some(cost),
            ..self
        }
    }

    fn cost(&self, default: u32) -> u32 {
        self.cost.unwrap_or(default)
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
            .field("cost", &self.cost)
            .finish_non_exhaustive()
    }
}

/// A member of [`all_of_each`] failed: which one (its index), and why.
#[derive(Debug)]
pub struct MemberError {
    /// The failing member's index in the slice.
    pub member: usize,
    /// What went wrong.
    pub error: BackendError,
}

impl fmt::Display for MemberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "limit {}: {}", self.member, self.error)
    }
}

impl std::error::Error for MemberError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Decides one request of `cost` (each member's own, where it has one) against every
/// member: allowed only if all allow, and then all consume (`Op::Check`); a denial consumes
/// nothing. `Op::Peek` answers the same without consuming; `Op::Hit` records the cost on every
/// member and is within the limit only if it is within every member's.
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
        return only.backend.decide(only.key, only.cost(cost), op).await;
    }
    let mut each = Vec::with_capacity(members.len());
    let allowed = decide(members, cost, op, &mut each)
        .await
        .map_err(|failed| failed.error)?;
    // A denial reports where each member stands now: the peeks that allowed counted their
    // cost as consumed. An admission (a peek's, or a hit's) reports what is left after it.
    let mut summary = Summary::default();
    for (member, d) in members.iter().zip(&each) {
        let unconsumed = !allowed && op != Op::Hit && d.is_allowed();
        let back = if unconsumed { member.cost(cost) } else { 0 };
        summary.add_remaining_value(d.remaining().saturating_add(back), d.limit());
        summary.add_times(d);
    }
    Ok(summary.decision(allowed))
}

/// [`all_of`], reporting each member's own decision rather than their summary: `decisions`
/// gets one per member, in order, and the result says whether the request was allowed (by
/// every member). On an admission they are the members' consuming decisions; on a denial,
/// each member's answer to the request as it stands (a peek, for members that allowed).
/// Each member weighs the request at its own cost ([`Member::with_cost`]), 1 otherwise. A
/// failure names the member, so a caller may decide the others again without it.
pub async fn all_of_each<Q: ?Sized>(
    members: &[Member<'_, Q>],
    op: Op,
    decisions: &mut Vec<Decision>,
) -> Result<bool, MemberError> {
    decisions.clear();
    decide(members, 1, op, decisions).await
}

/// The protocol behind both: each member's decision into `found`, and whether all allow.
async fn decide<Q: ?Sized>(
    members: &[Member<'_, Q>],
    cost: u32,
    op: Op,
    found: &mut Vec<Decision>,
) -> Result<bool, MemberError> {
    let failed = |member: usize| move |error: BackendError| MemberError { member, error };
    if op == Op::Check {
        for (i, member) in members.iter().enumerate() {
            let (cost, capacity) = (member.cost(cost), member.backend.max_cost());
            if cost > capacity {
                return Err(failed(i)(CapacityError::new(cost, capacity).into()));
            }
        }
    }
    if let [only] = members {
        // One member's own check is already all-or-nothing.
        let call = only.backend.decide(only.key, only.cost(cost), op);
        let decision = call.await.map_err(failed(0))?;
        found.push(decision);
        return Ok(decision.is_allowed());
    }
    let probe = if op == Op::Hit { Op::Hit } else { Op::Peek };
    for (i, member) in members.iter().enumerate() {
        let call = member.backend.decide(member.key, member.cost(cost), probe);
        found.push(call.await.map_err(failed(i))?);
    }
    let allowed = found.iter().all(Decision::is_allowed);
    if op != Op::Check || !allowed {
        return Ok(allowed);
    }
    let mut receipts: Vec<Receipt> = Vec::with_capacity(members.len());
    for (i, member) in members.iter().enumerate() {
        let reserved = match member.backend.reserve(member.key, member.cost(cost)).await {
            Ok(reserved) => reserved,
            Err(error) => {
                undo(members, receipts).await;
                return Err(failed(i)(error));
            }
        };
        found[i] = reserved.decision;
        if reserved.decision.is_denied() {
            undo(members, receipts).await;
            return Ok(false);
        }
        receipts.push(reserved.receipt);
    }
    Ok(true)
}

/// Undoes `receipts` (the first members' reservations), latest first.
async fn undo<Q: ?Sized>(members: &[Member<'_, Q>], receipts: Vec<Receipt>) {
    for (member, receipt) in members.iter().zip(receipts).rev() {
        // A failed undo leaves the units consumed: the documented direction of error.
        let _ = member.backend.undo(member.key, receipt).await;
    }
}
