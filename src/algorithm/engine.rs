//! The machinery behind [`Algorithm`](super::Algorithm): how a limiter runs an algorithm.
//!
//! Public only inside this private module, which seals the public trait.

use crate::decision::Decision;
use crate::error::QuotaError;
use crate::quota::Quota;
use crate::sync::AtomicU64;
use std::fmt;

/// Whether a check consumes, only looks, or records unconditionally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Consume the cost when allowed.
    Consume,
    /// Answer as `Consume` would, writing nothing.
    Peek,
    /// Record the cost whatever the answer (see [`Packed::hit`]).
    Hit,
}

/// A keyed state that is no longer where the lookup found it (swept, or migrated to a larger
/// array): look the key up again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale;

/// The word a consuming check replaced, and what it wrote: enough to undo that check exactly
/// if nothing has written since (see [`Engine::undo`]). `generation` names the quota it was
/// made under (bumped by every reconfiguration), so an undo never applies it to a state
/// converted to another quota since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swap {
    pub(crate) before: u64,
    pub(crate) after: u64,
    pub(crate) generation: u32,
}

impl Swap {
    /// A swap of `before` for `after` in generation 0; see [`in_generation`](Self::in_generation).
    pub(crate) fn new(before: u64, after: u64) -> Swap {
        Swap {
            before,
            after,
            generation: 0,
        }
    }

    /// The same swap, made under the quota of `generation`.
    pub(crate) fn in_generation(self, generation: u32) -> Swap {
        Swap { generation, ..self }
    }
}

/// The outcome of trying to sweep one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// The state carries information (or is already gone); the key stays.
    Kept,
    /// The word is now a tombstone; `Some(word)` owns memory to free after a grace period.
    Swept(Option<u64>),
}

/// What a limiter needs from an algorithm: its parameters, its concurrent state, a check.
pub trait Engine: Send + Sync + Sized + 'static {
    /// The algorithm's name, for errors and `Debug`.
    const NAME: &'static str;
    /// The quota, preprocessed for the hot path.
    type Params: Copy + fmt::Debug + Send + Sync;
    /// One direct limiter's concurrent state.
    type Cell: fmt::Debug + Send + Sync;

    /// Validates `quota` for this algorithm. `unix_offset` is the clock's
    /// [`unix_offset`](crate::clock::Clock::unix_offset), for window alignment.
    fn params(quota: &Quota, unix_offset: u64) -> Result<Self::Params, QuotaError>;
    /// The largest cost a single check can ever be allowed.
    fn capacity(params: &Self::Params) -> u32;
    /// A fresh state: a full bucket, an empty window, an empty log.
    fn new_cell(params: &Self::Params) -> Self::Cell;
    /// A cell for `params` that checks wait on (they get [`Stale`]) until
    /// [`reconfigure`](Self::reconfigure) fills it with what `old` holds.
    fn pending_cell(old: &Self::Cell, params: &Self::Params) -> Self::Cell;
    /// Decides a request of `cost` at `now` (already clamped), consuming it unless peeking;
    /// `cost` never exceeds `capacity` (except for hits). When it consumed, also returns the
    /// swap it made. [`Stale`] when the cell was frozen by a reconfiguration, or is pending.
    fn check(
        cell: &Self::Cell,
        params: &Self::Params,
        now: u64,
        cost: u32,
        mode: Mode,
    ) -> Result<(Decision, Option<Swap>), Stale>;
    /// Reverts `swap` if the cell still holds what it wrote; false (changing nothing) if
    /// another check has written since.
    fn undo(cell: &Self::Cell, swap: Swap) -> bool;
    /// Freezes `old` (every later check of it gets [`Stale`]) and fills the pending `new` with
    /// its state carried over from `from` to `to` at `now`. One reconfiguration at a time.
    fn reconfigure(
        old: &Self::Cell,
        new: &Self::Cell,
        from: &Self::Params,
        to: &Self::Params,
        now: u64,
    );

    // Keyed tables keep one word per key (see `table::word`): a packed state plus `OFFSET`,
    // or for the sliding log a pointer to the key's ring.

    /// The word a new key starts with, having already decided (and, when allowed or hit,
    /// recorded) its first request of `cost`: the key is published with this word, so the
    /// first check of a new key costs no CAS. Allocates what the word owns.
    fn keyed_insert(
        params: &Self::Params,
        now: u64,
        cost: u32,
        mode: Mode,
    ) -> (u64, Decision, Option<Swap>);
    /// The decision for a key that has no state yet, as if it were fresh; writes nothing.
    fn keyed_fresh_decision(params: &Self::Params, now: u64, cost: u32) -> Decision;
    /// Decides through a key's word, or reports that the word no longer holds its state.
    fn keyed_check(
        word: &AtomicU64,
        params: &Self::Params,
        now: u64,
        cost: u32,
        mode: Mode,
    ) -> Result<(Decision, Option<Swap>), Stale>;
    /// [`undo`](Engine::undo) through a key's word.
    fn keyed_undo(word: &AtomicU64, swap: Swap) -> bool;
    /// Moves a key's word into another array: `place` gets the word the key has there (again
    /// whenever a racing check changes the old one), then the old word is frozen (`MOVED`).
    /// A growth (`convert` is `None`) moves the word as it is; a reconfiguration converts it
    /// from the first params to the second at the given time. Returns memory the old word
    /// owned that must now be retired. Nothing happens to a word that holds no state. Runs
    /// under the shard lock.
    fn keyed_migrate(
        word: &AtomicU64,
        convert: Option<(&Self::Params, &Self::Params, u64)>,
        place: impl FnMut(u64),
    ) -> Option<u64>;
    /// Replaces the word by a tombstone if the state is fresh at `now`, never losing a
    /// concurrent update. Only one sweeper runs per key at a time.
    fn keyed_sweep(word: &AtomicU64, params: &Self::Params, now: u64) -> Sweep;
    /// Nanoseconds after its last write within which any state not in debt is fresh again (a
    /// full refill, or the windows it counts in): keyed tables sweep a shard at most once per
    /// this, since sooner no key can have become idle since the last sweep.
    fn idle_after(params: &Self::Params) -> u64;
    /// Frees what a live word (or one returned by [`Sweep::Swept`]) owns.
    ///
    /// # Safety
    /// The word must come from [`keyed_fresh`](Engine::keyed_fresh) and no thread may still
    /// use it.
    unsafe fn keyed_release(word: u64);
    /// Heap bytes a live word owns beside its slot.
    fn keyed_heap_bytes(params: &Self::Params) -> usize;
}

/// An algorithm whose whole state is one `u64`: a pure transition the CAS cell applies.
pub trait Packed: Send + Sync + Sized + 'static {
    /// See [`Engine::NAME`].
    const NAME: &'static str;
    /// See [`Engine::Params`].
    type Params: Copy + fmt::Debug + Send + Sync;

    /// See [`Engine::params`].
    fn params(quota: &Quota, unix_offset: u64) -> Result<Self::Params, QuotaError>;
    /// See [`Engine::capacity`].
    fn capacity(params: &Self::Params) -> u32;
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
    /// See [`Engine::idle_after`].
    fn idle_after(params: &Self::Params) -> u64;
    /// `state` (under `from`) carried over to `to` at `now`, by the rule in the algorithm's
    /// header: what the key has consumed stays consumed, rounded toward denial. Pure.
    fn convert(state: u64, now: u64, from: &Self::Params, to: &Self::Params) -> u64;
}

/// The pure step a mode takes: [`Packed::hit`] for hits, [`Packed::transition`] otherwise.
#[inline(always)]
pub(crate) fn step<P: Packed>(
    state: u64,
    now: u64,
    cost: u32,
    params: &P::Params,
    mode: Mode,
) -> (Option<u64>, Decision) {
    match mode {
        Mode::Hit => P::hit(state, now, cost, params),
        Mode::Consume | Mode::Peek => P::transition(state, now, cost, params),
    }
}

/// Implements [`Engine`] for a [`Packed`] algorithm on a [`StateCell`](crate::cell::StateCell).
macro_rules! packed_engine {
    ($algorithm:ty) => {
        impl $crate::algorithm::engine::Engine for $algorithm {
            const NAME: &'static str = <$algorithm as $crate::algorithm::engine::Packed>::NAME;
            type Params = <$algorithm as $crate::algorithm::engine::Packed>::Params;
            type Cell = $crate::cell::StateCell;

            fn params(
                quota: &$crate::quota::Quota,
                unix_offset: u64,
            ) -> Result<Self::Params, $crate::error::QuotaError> {
                <$algorithm as $crate::algorithm::engine::Packed>::params(quota, unix_offset)
            }

            fn capacity(params: &Self::Params) -> u32 {
                <$algorithm as $crate::algorithm::engine::Packed>::capacity(params)
            }

            fn new_cell(params: &Self::Params) -> Self::Cell {
                $crate::cell::StateCell::new(
                    <$algorithm as $crate::algorithm::engine::Packed>::fresh(params),
                )
            }

            fn pending_cell(_old: &Self::Cell, _params: &Self::Params) -> Self::Cell {
                $crate::cell::StateCell::pending()
            }

            #[inline(always)]
            fn check(
                cell: &Self::Cell,
                params: &Self::Params,
                now: u64,
                cost: u32,
                mode: $crate::algorithm::engine::Mode,
            ) -> Result<
                (
                    $crate::decision::Decision,
                    Option<$crate::algorithm::engine::Swap>,
                ),
                $crate::algorithm::engine::Stale,
            > {
                cell.apply::<$algorithm>(params, now, cost, mode)
            }

            fn undo(cell: &Self::Cell, swap: $crate::algorithm::engine::Swap) -> bool {
                cell.undo(swap)
            }

            fn reconfigure(
                old: &Self::Cell,
                new: &Self::Cell,
                from: &Self::Params,
                to: &Self::Params,
                now: u64,
            ) {
                old.move_into::<$algorithm>(new, from, to, now)
            }

            fn keyed_insert(
                params: &Self::Params,
                now: u64,
                cost: u32,
                mode: $crate::algorithm::engine::Mode,
            ) -> (
                u64,
                $crate::decision::Decision,
                Option<$crate::algorithm::engine::Swap>,
            ) {
                use $crate::table::word::OFFSET;
                let fresh = <$algorithm as $crate::algorithm::engine::Packed>::fresh(params);
                let (next, decision) =
                    $crate::algorithm::engine::step::<$algorithm>(fresh, now, cost, params, mode);
                match next {
                    Some(next) => {
                        let swap =
                            $crate::algorithm::engine::Swap::new(fresh + OFFSET, next + OFFSET);
                        (next + OFFSET, decision, Some(swap))
                    }
                    None => (fresh + OFFSET, decision, None),
                }
            }

            fn keyed_fresh_decision(
                params: &Self::Params,
                now: u64,
                cost: u32,
            ) -> $crate::decision::Decision {
                let fresh = <$algorithm as $crate::algorithm::engine::Packed>::fresh(params);
                <$algorithm as $crate::algorithm::engine::Packed>::transition(
                    fresh, now, cost, params,
                )
                .1
            }

            #[inline(always)]
            fn keyed_check(
                word: &$crate::sync::AtomicU64,
                params: &Self::Params,
                now: u64,
                cost: u32,
                mode: $crate::algorithm::engine::Mode,
            ) -> Result<
                (
                    $crate::decision::Decision,
                    Option<$crate::algorithm::engine::Swap>,
                ),
                $crate::algorithm::engine::Stale,
            > {
                $crate::cell::apply::<$algorithm>(word, params, now, cost, mode)
            }

            fn keyed_undo(
                word: &$crate::sync::AtomicU64,
                swap: $crate::algorithm::engine::Swap,
            ) -> bool {
                $crate::cell::undo(word, swap)
            }

            fn keyed_migrate(
                word: &$crate::sync::AtomicU64,
                convert: Option<(&Self::Params, &Self::Params, u64)>,
                place: impl FnMut(u64),
            ) -> Option<u64> {
                $crate::cell::migrate::<$algorithm>(word, convert, place);
                None
            }

            fn keyed_sweep(
                word: &$crate::sync::AtomicU64,
                params: &Self::Params,
                now: u64,
            ) -> $crate::algorithm::engine::Sweep {
                $crate::cell::sweep::<$algorithm>(word, params, now)
            }

            fn idle_after(params: &Self::Params) -> u64 {
                <$algorithm as $crate::algorithm::engine::Packed>::idle_after(params)
            }

            unsafe fn keyed_release(_word: u64) {}

            fn keyed_heap_bytes(_params: &Self::Params) -> usize {
                0
            }
        }
    };
}
pub(crate) use packed_engine;
