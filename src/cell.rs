//! The one CAS loop that applies any packed algorithm to an `AtomicU64`.

use crate::algorithm::engine::{step, Mode, Packed, Stale, Swap, Sweep};
use crate::decision::Decision;
use crate::sync::{AtomicU64, Ordering};
use crate::table::word::{self, OFFSET};

/// Applies `P`'s transition (or, for a hit, [`Packed::hit`]) to the state held in `word` as
/// `state + OFFSET_`: load, compute, `compare_exchange_weak`, and on failure recompute from the
/// value that won. A denial (or a peek, or a transition that changes nothing) returns without
/// writing, so a flood of denied requests leaves the cache line shared instead of bouncing it
/// between cores.
///
/// A direct limiter stores the bare state (`OFFSET_ = 0`: never stale); a keyed table stores it
/// above its markers and gets [`Stale`] when the word turns out to be one (the key was swept
/// or migrated since it was found).
///
/// Linearizable: every returned decision is the transition of the state as it was at one
/// instant (the successful CAS, or the load that produced a write-free answer). A write also
/// returns the [`Swap`] it made, which a composite check may [`undo`].
#[inline(always)]
pub(crate) fn apply<P: Packed, const OFFSET_: u64>(
    word: &AtomicU64,
    params: &P::Params,
    now: u64,
    cost: u32,
    mode: Mode,
) -> Result<(Decision, Option<Swap>), Stale> {
    let mut current = word.load(Ordering::Acquire);
    loop {
        if current < OFFSET_ {
            return Err(Stale);
        }
        let (next, decision) = step::<P>(current - OFFSET_, now, cost, params, mode);
        let next = match (next, mode) {
            (Some(next), Mode::Consume | Mode::Hit) => next + OFFSET_,
            _ => return Ok((decision, None)),
        };
        match word.compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                let swap = Swap {
                    before: current,
                    after: next,
                };
                return Ok((decision, Some(swap)));
            }
            Err(actual) => current = actual,
        }
    }
}

/// Reverts `swap` if `word` still holds what it wrote. Exact: nothing that happened since can
/// have depended on it, because nothing has written since. (Subtracting the cost instead
/// would not be exact: a request admitted on top of it may have been charged from it.)
pub(crate) fn undo(word: &AtomicU64, swap: Swap) -> bool {
    word.compare_exchange(swap.after, swap.before, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
}

/// Tombstones a keyed word whose state is fresh at `now`. The CAS fails if any check changed
/// the state since it was read as fresh, so no admission is ever lost to a sweep.
pub(crate) fn sweep<P: Packed>(word: &AtomicU64, params: &P::Params, now: u64) -> Sweep {
    let mut current = word.load(Ordering::Acquire);
    loop {
        if !word::is_live(current) || !P::is_fresh(current - OFFSET, now, params) {
            return Sweep::Kept;
        }
        match word.compare_exchange(
            current,
            word::TOMBSTONE,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return Sweep::Swept(None),
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
    ) -> (Decision, Option<Swap>) {
        match apply::<P, 0>(&self.state, params, now, cost, mode) {
            Ok(outcome) => outcome,
            // SAFETY: with an offset of 0, `current < 0` never holds, so `apply` never returns
            // `Err` (spelled out because the optimizer keeps a panic branch for `unreachable!`).
            Err(Stale) => unsafe { std::hint::unreachable_unchecked() },
        }
    }

    /// See [`undo`].
    pub(crate) fn undo(&self, swap: Swap) -> bool {
        undo(&self.state, swap)
    }

    /// The negative control for the loom models: load, compute, *store* (no CAS), so two
    /// racing checks can both be admitted from the same state. Never used outside them.
    #[cfg(loom)]
    pub(crate) fn apply_racy<P: Packed>(
        &self,
        params: &P::Params,
        now: u64,
        cost: u32,
    ) -> Decision {
        let current = self.state.load(Ordering::Acquire);
        let (next, decision) = P::transition(current, now, cost, params);
        if let Some(next) = next {
            self.state.store(next, Ordering::Release);
        }
        decision
    }
}
