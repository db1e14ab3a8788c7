//! The one CAS loop that applies any packed algorithm to an `AtomicU64`.

use crate::algorithm::{step, Op, Packed};
use crate::decision::Decision;
use crate::state::outcome::{Stale, Swap, Sweep};
use crate::state::table::word::{self, MOVED, OFFSET, PENDING};
use crate::sync::SpinWait;
use crate::sync::{AtomicU64, Ordering};

/// Applies `P`'s transition (or, for a hit, [`Packed::hit`]) to the state held in `word` as
/// `state + OFFSET`: load, compute, `compare_exchange_weak`, and on failure recompute from the
/// value that won. A denial (or a peek, or a transition that changes nothing) returns without
/// writing, so a flood of denied requests leaves the cache line shared instead of bouncing it
/// between cores.
///
/// Direct cells and keyed tables both store the state above a few markers (see
/// [`word`](crate::state::table::word)), and get [`Stale`] when the word turns out to be one: the
/// key was swept or migrated, or the cell was frozen by a reconfiguration.
///
/// Linearizable: every returned decision is the transition of the state as it was at one
/// instant (the successful CAS, or the load that produced a write-free answer). A write also
/// returns the [`Swap`] it made, which a composite check may [`undo`].
#[inline(always)]
pub(crate) fn apply<P: Packed>(
    word: &AtomicU64,
    params: &P::Params,
    now: u64,
    cost: u32,
    mode: Op,
) -> Result<(Decision, Option<Swap>), Stale> {
    let mut current = word.load(Ordering::Acquire);
    loop {
        if current < OFFSET {
            return Err(Stale);
        }
        let (next, decision) = step::<P>(current - OFFSET, now, cost, params, mode);
        let next = match (next, mode) {
            (Some(next), Op::Check | Op::Hit) => next + OFFSET,
            _ => return Ok((decision, None)),
        };
        match word.compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                return Ok((decision, Some(Swap::new(current, next))));
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

/// Moves a keyed word (see [`Engine::keyed_migrate`](crate::state::engine::Engine::keyed_migrate)):
/// `place` the word as it is or converted, then CAS the old word to `MOVED`, placing again if
/// a check changed it in between. Only checks race here, and they only ever replace a live
/// word by another live word.
pub(crate) fn migrate<P: Packed>(
    word: &AtomicU64,
    convert: Option<(&P::Params, &P::Params, u64)>,
    mut place: impl FnMut(u64),
) {
    let mut current = word.load(Ordering::Acquire);
    while word::is_live(current) {
        place(match convert {
            Some((from, to, now)) => P::convert(current - OFFSET, now, from, to) + OFFSET,
            None => current,
        });
        match word.compare_exchange(current, MOVED, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(changed) => current = changed,
        }
    }
}

/// A packed algorithm's state as a direct limiter holds it: the state plus [`OFFSET`], so that
/// a reconfiguration can freeze it (`MOVED`) or leave a new cell to be filled (`PENDING`).
#[derive(Debug)]
pub struct StateCell {
    state: AtomicU64,
}

impl StateCell {
    /// A cell holding `fresh`.
    pub(crate) fn new(fresh: u64) -> Self {
        StateCell {
            state: AtomicU64::new(fresh + OFFSET),
        }
    }

    /// A cell that checks wait on until [`move_into`](Self::move_into) fills it.
    pub(crate) fn pending() -> Self {
        StateCell {
            state: AtomicU64::new(PENDING),
        }
    }

    /// See [`apply`]; [`Stale`] once frozen by a reconfiguration, or while pending.
    #[inline(always)]
    pub(crate) fn apply<P: Packed>(
        &self,
        params: &P::Params,
        now: u64,
        cost: u32,
        mode: Op,
    ) -> Result<(Decision, Option<Swap>), Stale> {
        apply::<P>(&self.state, params, now, cost, mode)
    }

    /// See [`undo`].
    pub(crate) fn undo(&self, swap: Swap) -> bool {
        undo(&self.state, swap)
    }

    /// Freezes this cell and fills the pending `new` with the state converted from `from` to
    /// `to` at `now`. The freeze comes first, so no check can land on this cell after the
    /// value carried over was read; checks of `new` wait the few instructions until it is
    /// filled.
    pub(crate) fn move_into<P: Packed>(
        &self,
        new: &StateCell,
        from: &P::Params,
        to: &P::Params,
        now: u64,
    ) {
        let spin = SpinWait::new();
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            if !word::is_live(current) {
                // Another generation's pending cell not filled yet: cannot happen under the
                // reconfiguration lock, but waiting is the safe answer.
                spin.wait();
                current = self.state.load(Ordering::Acquire);
                continue;
            }
            match self
                .state
                .compare_exchange(current, MOVED, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(changed) => current = changed,
            }
        }
        let carried = P::convert(current - OFFSET, now, from, to);
        new.state.store(carried + OFFSET, Ordering::Release);
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
        let (next, decision) = P::transition(current - OFFSET, now, cost, params);
        if let Some(next) = next {
            self.state.store(next + OFFSET, Ordering::Release);
        }
        decision
    }
}
