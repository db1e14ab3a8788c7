//! [`Packed`]: an algorithm whose whole state is one `u64`, as a pure transition, and [`Op`],
//! what a step is asked to do.

use super::Op;
use crate::decision::Decision;
use crate::error::QuotaError;
use crate::quota::Quota;
use std::fmt;

/// An algorithm whose whole state is one `u64`: a pure transition the CAS cell applies.
pub trait Packed: Send + Sync + Sized + 'static {
    /// The algorithm's name, for errors and `Debug`.
    const NAME: &'static str;
    /// The quota, preprocessed for the hot path.
    type Params: Copy + fmt::Debug + Send + Sync;

    /// Validates `quota` for this algorithm. `unix_offset` is the clock's
    /// [`unix_offset`](crate::clock::Clock::unix_offset), for window alignment.
    fn params(quota: &Quota, unix_offset: u64) -> Result<Self::Params, QuotaError>;
    /// The largest cost a single check can ever be allowed.
    fn max_cost(params: &Self::Params) -> u32;
    /// The packed fresh state.
    fn fresh(params: &Self::Params) -> u64;
    /// The decision on `state` for `cost` at `now`, and the state to write if it is allowed
    /// and changes anything. Pure. Every state it returns is at most
    /// [`MAX_STATE`](crate::algorithm::MAX_STATE).
    fn transition(
        state: u64,
        now: u64,
        cost: u32,
        params: &Self::Params,
    ) -> (Option<u64>, Decision);
    /// Records a request of `cost` at `now` whatever the answer (a *hit*): the decision says
    /// whether it was within the limit. Within the limit it is exactly
    /// [`transition`](Packed::transition); beyond it the state goes into debt, as far as the
    /// algorithm's header says (saturating, never wrapping), and the decision is the denial a
    /// single request would get right after the hit. `None` when nothing changes (cost 0).
    fn hit(state: u64, now: u64, cost: u32, params: &Self::Params) -> (Option<u64>, Decision);
    /// True when `state` carries no information at `now`: it decides every future request
    /// exactly as the fresh state would.
    fn is_fresh(state: u64, now: u64, params: &Self::Params) -> bool;
    /// Nanoseconds after its last write within which any state not in debt is fresh again (a
    /// full refill, or the windows it counts in).
    fn idle_after(params: &Self::Params) -> u64;
    /// `state` (under `from`) carried over to `to` at `now`, by the rule in the algorithm's
    /// header: what the key has consumed stays consumed, rounded toward denial. Pure.
    fn convert(state: u64, now: u64, from: &Self::Params, to: &Self::Params) -> u64;
}

/// The pure step an op takes: [`Packed::hit`] for hits, [`Packed::transition`] otherwise.
#[inline(always)]
pub(crate) fn step<P: Packed>(
    state: u64,
    now: u64,
    cost: u32,
    params: &P::Params,
    op: Op,
) -> (Option<u64>, Decision) {
    match op {
        Op::Hit => P::hit(state, now, cost, params),
        Op::Check | Op::Peek => P::transition(state, now, cost, params),
    }
}
