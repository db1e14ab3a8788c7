//! The one CAS loop that applies any packed algorithm to an `AtomicU64`.

use crate::algorithm::engine::{Mode, Packed};
use crate::decision::Decision;
use crate::sync::{AtomicU64, Ordering};

/// Applies `P`'s transition to `state`: load, compute, `compare_exchange_weak`, and on
/// failure recompute from the value that won. A denial (or a peek, or a transition that
/// changes nothing) returns without writing, so a flood of denied requests leaves the cache
/// line shared instead of bouncing it between cores.
///
/// Linearizable: every returned decision is the transition of the state as it was at one
/// instant (the successful CAS, or the load that produced a write-free answer).
#[inline]
pub(crate) fn apply<P: Packed>(
    state: &AtomicU64,
    params: &P::Params,
    now: u64,
    cost: u32,
    mode: Mode,
) -> Decision {
    let mut current = state.load(Ordering::Acquire);
    loop {
        let (next, decision) = P::transition(current, now, cost, params);
        let next = match (next, mode) {
            (Some(next), Mode::Consume) => next,
            _ => return decision,
        };
        match state.compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return decision,
            Err(actual) => current = actual,
        }
    }
}

/// A packed algorithm's state as a direct limiter holds it.
#[derive(Debug)]
pub struct StateCell {
    state: AtomicU64,
}

impl StateCell {
    /// A cell holding `fresh`.
    pub(crate) fn new(fresh: u64) -> Self {
        StateCell {
            state: AtomicU64::new(fresh),
        }
    }

    /// See [`apply`].
    #[inline]
    pub(crate) fn apply<P: Packed>(
        &self,
        params: &P::Params,
        now: u64,
        cost: u32,
        mode: Mode,
    ) -> Decision {
        apply::<P>(&self.state, params, now, cost, mode)
    }
}
