//! The one all-or-nothing protocol: a request against several limits, on any backends, allowed
//! only if every limit allows it, and then consumed on every one; a denial consumes nothing.
//! [`Composite`](crate::Composite), [`all_of`] and [`all_of_each`] (and through them the HTTP
//! layer and the service) are thin uses of it.
//!
//! The steps are in [the seam's docs](super#the-all-or-nothing-protocol).

use super::summary::Summary;
use super::{BackendError, Joint, Member, Part, Receipt};
use crate::algorithm::Op;
use crate::decision::Decision;
use smallvec::SmallVec;

/// Each member's decision, inline for the usual few members.
pub(crate) type Found = SmallVec<[Decision; 4]>;

/// Decides one request of `cost` (each member's own, where it has one) against every
/// member: allowed only if all allow, and then all consume (`Op::Check`); a denial consumes
/// nothing. `Op::Peek` answers the same without consuming; `Op::Hit` records the cost on every
/// member and is within the limit only if it is within every member's. The steps are the
/// [protocol's](crate::backend#the-all-or-nothing-protocol).
///
/// The decision reports the tightest `remaining` (and that member's `limit`), the longest
/// `retry_after` (when every member admits the request again), `reset_after` and `wait`. With
/// in-process members only, the returned future is complete when it is first polled; with
/// every member on one Redis node, it is one script.
pub async fn all_of<Q: ?Sized + Sync>(
    members: &[Member<'_, Q>],
    cost: u32,
    op: Op,
) -> Result<Decision, BackendError> {
    let mut found = Found::new();
    let allowed = decide(members, member_part, cost, op, &mut found).await?;
    Ok(summarize(members, member_part, &found, cost, op, allowed))
}

/// [`all_of`], reporting each member's own decision rather than their summary: `decisions`
/// gets one per member, in order, and the result says whether the request was allowed (by
/// every member). On an admission they are the members' consuming decisions; on a denial,
/// each member's answer to the request as it stands (a peek, for members that allowed).
/// Each member weighs the request at its own cost ([`Member::with_cost`]), 1 otherwise. A
/// failure names the member ([`BackendError::member`]), so a caller may decide the others
/// again without it.
pub async fn all_of_each<Q: ?Sized + Sync>(
    members: &[Member<'_, Q>],
    op: Op,
    decisions: &mut Vec<Decision>,
) -> Result<bool, BackendError> {
    decisions.clear();
    let mut found = Found::new();
    let allowed = decide(members, member_part, 1, op, &mut found).await?;
    decisions.extend(found);
    Ok(allowed)
}

/// [`all_of_each`] of a consuming check (`Op::Check`) that, when it admits, also keeps each
/// member's receipt in `kept`, in order: what giving the whole request back later takes
/// ([`Backend::undo`](super::Backend::undo) on each member). The HTTP decision's refunds use it.
#[cfg(feature = "http")]
pub(crate) async fn reserve_each<Q: ?Sized + Sync>(
    members: &[Member<'_, Q>],
    decisions: &mut Vec<Decision>,
    kept: &mut Receipts,
) -> Result<bool, BackendError> {
    decisions.clear();
    let mut found = Found::new();
    let allowed = reserve(members, member_part, 1, &mut found, kept).await?;
    decisions.extend(found);
    Ok(allowed)
}

/// A member as the protocol sees it.
fn member_part<'a, Q: ?Sized + Sync>(member: &'a Member<'_, Q>) -> &'a dyn Part {
    member
}

/// The decision [`all_of`] reports from each member's in `found`: on a denial, a member that
/// allowed counted its cost as consumed, which it was not, so that is added back.
pub(crate) fn summarize<T>(
    parts: &[T],
    view: impl Fn(&T) -> &dyn Part,
    found: &[Decision],
    cost: u32,
    op: Op,
    allowed: bool,
) -> Decision {
    if let ([_], [only]) = (parts, found) {
        return *only;
    }
    let mut summary = Summary::default();
    for (part, d) in parts.iter().zip(found) {
        let back = if !allowed && op != Op::Hit && d.is_allowed() {
            view(part).cost(cost)
        } else {
            0
        };
        summary.add_remaining_value(d.remaining().saturating_add(back), d.limit());
        summary.add_times(d);
    }
    summary.decision(allowed)
}

/// Each admitting part's receipt, in order: what undoing a whole request later takes.
pub(crate) type Receipts = SmallVec<[Receipt; 4]>;

/// The protocol: each part's decision into `found`, and whether all allow.
pub(crate) async fn decide<T>(
    parts: &[T],
    view: impl Fn(&T) -> &dyn Part,
    cost: u32,
    op: Op,
    found: &mut Found,
) -> Result<bool, BackendError> {
    run(parts, view, cost, op, found, None).await
}

/// [`decide`] of a consuming check that, when it admits, keeps in `kept` every part's
/// receipt, in order, so that the request can be given back later ([`Part::undo`]). The
/// joint step is left out (a group's script answers no receipts): the parts are peeked, then
/// reserved one by one. Nothing is kept on a denial or an error (nothing stays consumed).
#[cfg(feature = "http")]
pub(crate) async fn reserve<T>(
    parts: &[T],
    view: impl Fn(&T) -> &dyn Part,
    cost: u32,
    found: &mut Found,
    kept: &mut Receipts,
) -> Result<bool, BackendError> {
    kept.clear();
    run(parts, view, cost, Op::Check, found, Some(kept)).await
}

/// The protocol's steps, keeping the receipts when `keep` is given (only under `Op::Check`).
async fn run<T>(
    parts: &[T],
    view: impl Fn(&T) -> &dyn Part,
    cost: u32,
    op: Op,
    found: &mut Found,
    keep: Option<&mut Receipts>,
) -> Result<bool, BackendError> {
    let failed = |member: usize| move |error: BackendError| error.of_member(member);
    found.clear();
    if op != Op::Hit {
        for (i, part) in parts.iter().map(&view).enumerate() {
            op.within_capacity(part.cost(cost), part.max_cost())
                .map_err(|e| failed(i)(e.into()))?;
        }
    }
    if let [only] = parts {
        let only = view(only);
        let Some(kept) = keep else {
            let decision = only.decide(only.cost(cost), op).await.map_err(failed(0))?;
            found.push(decision);
            return Ok(decision.is_allowed());
        };
        let reserved = only.reserve(only.cost(cost)).await.map_err(failed(0))?;
        let allowed = reserved.decision.is_allowed();
        found.push(reserved.decision);
        if allowed {
            kept.push(reserved.receipt);
        }
        // A reservation is not counted by its backend, as a check is.
        count(parts, &view, op, allowed);
        return Ok(allowed);
    }
    if keep.is_none() {
        if let Some(group) = decide_jointly(parts, &view, cost, op).await {
            let decisions = group.map_err(failed(0))?;
            found.extend(decisions);
            let allowed = found.iter().all(Decision::is_allowed);
            count(parts, &view, op, allowed);
            return Ok(allowed);
        }
    }
    let probe = if op == Op::Hit { Op::Hit } else { Op::Peek };
    for (i, part) in parts.iter().map(&view).enumerate() {
        let decision = part.decide(part.cost(cost), probe).await;
        found.push(decision.map_err(failed(i))?);
    }
    let allowed = found.iter().all(Decision::is_allowed);
    if op != Op::Check || !allowed {
        count(parts, &view, op, allowed);
        return Ok(allowed);
    }
    let mut receipts = Receipts::new();
    for (i, part) in parts.iter().map(&view).enumerate() {
        let reserved = match part.reserve(part.cost(cost)).await {
            Ok(reserved) => reserved,
            Err(error) => {
                undo(parts, &view, receipts).await;
                return Err(failed(i)(error));
            }
        };
        found[i] = reserved.decision;
        if reserved.decision.is_denied() {
            undo(parts, &view, receipts).await;
            count(parts, &view, op, false);
            return Ok(false);
        }
        receipts.push(reserved.receipt);
    }
    count(parts, &view, op, true);
    if let Some(kept) = keep {
        *kept = receipts;
    }
    Ok(true)
}

/// Step 3: when every part is in one store that decides groups, that store's answer.
async fn decide_jointly<T>(
    parts: &[T],
    view: &impl Fn(&T) -> &dyn Part,
    cost: u32,
    op: Op,
) -> Option<Result<Vec<Decision>, BackendError>> {
    let first = view(parts.first()?).joint()?;
    let mut group: SmallVec<[(Joint<'_>, u32); 4]> = SmallVec::new();
    for part in parts.iter().map(view) {
        let joint = part.joint()?;
        if joint.store.identity() != first.store.identity() {
            return None;
        }
        group.push((joint, part.cost(cost)));
    }
    let call = first.store.decide_group(&group, op)?;
    Some(call.await)
}

/// Counts a check's outcome on every part.
fn count<T>(parts: &[T], view: &impl Fn(&T) -> &dyn Part, op: Op, allowed: bool) {
    if op == Op::Check {
        for part in parts.iter().map(view) {
            part.count(allowed);
        }
    }
}

/// Undoes `receipts` (the first parts' reservations), latest first.
async fn undo<T>(parts: &[T], view: &impl Fn(&T) -> &dyn Part, receipts: Receipts) {
    for (part, receipt) in parts.iter().map(view).zip(receipts).rev() {
        // A failed undo leaves the units consumed: the documented direction of error.
        let _ = part.undo(receipt).await;
    }
}
