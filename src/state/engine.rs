//! [`Algorithm`] and the machinery behind it: how a limiter runs an algorithm's pure rule on
//! state in memory (a CAS cell, a keyed table's word, the sliding log's ring).
//!
//! [`Engine`] is public only inside this crate-private module, which seals the public trait.

use crate::algorithm::{
    AlgorithmKind, FixedWindow, Gcra, LeakyBucket, Op, SlidingWindow, TokenBucket,
};
use crate::decision::Decision;
use crate::error::QuotaError;
use crate::quota::Quota;
use crate::state::outcome::{Stale, Swap, Sweep};
use crate::sync::AtomicU64;
use std::fmt;

/// A rate-limiting algorithm: one of [`Gcra`], [`TokenBucket`], [`LeakyBucket`],
/// [`FixedWindow`], [`SlidingWindow`] and [`SlidingLog`](crate::algorithm::SlidingLog).
///
/// Sealed: the machinery behind it is private, so the set of algorithms can grow without
/// breaking anyone.
pub trait Algorithm: Engine {}

impl<A: Engine> Algorithm for A {}

/// What a limiter needs from an algorithm: its parameters, its concurrent state, a check.
pub trait Engine: Send + Sync + Sized + 'static {
    /// Which of the six this is.
    const KIND: AlgorithmKind;
    /// The algorithm's name, for errors and `Debug`.
    const NAME: &'static str = Self::KIND.type_name();
    /// The quota, preprocessed for the hot path.
    type Params: Copy + fmt::Debug + Send + Sync;
    /// One direct limiter's concurrent state.
    type Cell: fmt::Debug + Send + Sync;

    /// Validates `quota` for this algorithm. `unix_offset` is the clock's
    /// [`unix_offset`](crate::clock::Clock::unix_offset), for window alignment.
    fn params(quota: &Quota, unix_offset: u64) -> Result<Self::Params, QuotaError>;
    /// The largest cost a single check can ever be allowed.
    fn max_cost(params: &Self::Params) -> u32;
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
        mode: Op,
    ) -> Result<(Decision, Option<Swap>), Stale>;
    /// Reverts `swap` (made under `params`) if the cell still holds what it wrote; false
    /// (changing nothing) if another check has written since.
    fn undo(cell: &Self::Cell, params: &Self::Params, swap: Swap) -> bool;
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
        mode: Op,
    ) -> (u64, Decision, Option<Swap>);
    /// The decision for a key that has no state yet, as if it were fresh; writes nothing.
    fn keyed_fresh_decision(params: &Self::Params, now: u64, cost: u32) -> Decision;
    /// Decides through a key's word, or reports that the word no longer holds its state.
    fn keyed_check(
        word: &AtomicU64,
        params: &Self::Params,
        now: u64,
        cost: u32,
        mode: Op,
    ) -> Result<(Decision, Option<Swap>), Stale>;
    /// [`undo`](Engine::undo) through a key's word.
    fn keyed_undo(word: &AtomicU64, params: &Self::Params, swap: Swap) -> bool;
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
    /// The word must come from [`keyed_insert`](Engine::keyed_insert) (or a migration of
    /// one) and no thread may still use it.
    unsafe fn keyed_release(word: u64);
    /// Heap bytes a live word owns beside its slot.
    fn keyed_heap_bytes(params: &Self::Params) -> usize;
}

/// Implements [`Engine`] for a [`Packed`](crate::algorithm::Packed) algorithm on a
/// [`StateCell`](crate::state::cell::StateCell).
macro_rules! packed_engine {
    ($algorithm:ident) => {
        impl $crate::state::engine::Engine for $algorithm {
            const KIND: $crate::algorithm::AlgorithmKind =
                $crate::algorithm::AlgorithmKind::$algorithm;
            type Params = <$algorithm as $crate::algorithm::Packed>::Params;
            type Cell = $crate::state::cell::StateCell;

            fn params(
                quota: &$crate::quota::Quota,
                unix_offset: u64,
            ) -> Result<Self::Params, $crate::error::QuotaError> {
                // Only the fixed window has windows to anchor.
                if !matches!(Self::KIND, $crate::algorithm::AlgorithmKind::FixedWindow) {
                    quota.refuse_anchored(Self::NAME)?;
                }
                <$algorithm as $crate::algorithm::Packed>::params(quota, unix_offset)
            }

            fn max_cost(params: &Self::Params) -> u32 {
                <$algorithm as $crate::algorithm::Packed>::max_cost(params)
            }

            fn new_cell(params: &Self::Params) -> Self::Cell {
                $crate::state::cell::StateCell::new(
                    <$algorithm as $crate::algorithm::Packed>::fresh(params),
                )
            }

            fn pending_cell(_old: &Self::Cell, _params: &Self::Params) -> Self::Cell {
                $crate::state::cell::StateCell::pending()
            }

            #[inline(always)]
            fn check(
                cell: &Self::Cell,
                params: &Self::Params,
                now: u64,
                cost: u32,
                mode: $crate::algorithm::Op,
            ) -> Result<
                (
                    $crate::decision::Decision,
                    Option<$crate::state::outcome::Swap>,
                ),
                $crate::state::outcome::Stale,
            > {
                cell.apply::<$algorithm>(params, now, cost, mode)
            }

            fn undo(
                cell: &Self::Cell,
                _params: &Self::Params,
                swap: $crate::state::outcome::Swap,
            ) -> bool {
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
                mode: $crate::algorithm::Op,
            ) -> (
                u64,
                $crate::decision::Decision,
                Option<$crate::state::outcome::Swap>,
            ) {
                use $crate::state::table::word::OFFSET;
                let fresh = <$algorithm as $crate::algorithm::Packed>::fresh(params);
                let (next, decision) =
                    $crate::algorithm::step::<$algorithm>(fresh, now, cost, params, mode);
                match next {
                    Some(next) => {
                        let swap = $crate::state::outcome::Swap::new(fresh + OFFSET, next + OFFSET);
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
                let fresh = <$algorithm as $crate::algorithm::Packed>::fresh(params);
                <$algorithm as $crate::algorithm::Packed>::transition(fresh, now, cost, params).1
            }

            #[inline(always)]
            fn keyed_check(
                word: &$crate::sync::AtomicU64,
                params: &Self::Params,
                now: u64,
                cost: u32,
                mode: $crate::algorithm::Op,
            ) -> Result<
                (
                    $crate::decision::Decision,
                    Option<$crate::state::outcome::Swap>,
                ),
                $crate::state::outcome::Stale,
            > {
                $crate::state::cell::apply::<$algorithm>(word, params, now, cost, mode)
            }

            fn keyed_undo(
                word: &$crate::sync::AtomicU64,
                _params: &Self::Params,
                swap: $crate::state::outcome::Swap,
            ) -> bool {
                $crate::state::cell::undo(word, swap)
            }

            fn keyed_migrate(
                word: &$crate::sync::AtomicU64,
                convert: Option<(&Self::Params, &Self::Params, u64)>,
                place: impl FnMut(u64),
            ) -> Option<u64> {
                $crate::state::cell::migrate::<$algorithm>(word, convert, place);
                None
            }

            fn keyed_sweep(
                word: &$crate::sync::AtomicU64,
                params: &Self::Params,
                now: u64,
            ) -> $crate::state::outcome::Sweep {
                $crate::state::cell::sweep::<$algorithm>(word, params, now)
            }

            fn idle_after(params: &Self::Params) -> u64 {
                <$algorithm as $crate::algorithm::Packed>::idle_after(params)
            }

            unsafe fn keyed_release(_word: u64) {}

            fn keyed_heap_bytes(_params: &Self::Params) -> usize {
                0
            }
        }
    };
}

packed_engine!(Gcra);
packed_engine!(LeakyBucket);
packed_engine!(TokenBucket);
packed_engine!(FixedWindow);
packed_engine!(SlidingWindow);
