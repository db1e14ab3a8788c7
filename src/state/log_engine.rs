//! [`SlidingLog`] in memory: a [`LogRing`] per direct limiter, and in a keyed table a word
//! pointing to the key's boxed ring.

use super::engine::Engine;
use super::log_ring::LogRing;
use super::outcome::{Stale, Swap, Sweep};
use super::table::word;
use crate::algorithm::sliding_log::SlidingLogParams;
use crate::algorithm::{AlgorithmKind, Op, SlidingLog};
use crate::decision::Decision;
use crate::error::QuotaError;
use crate::quota::Quota;
use crate::sync::{AtomicU64, Ordering};

impl Engine for SlidingLog {
    const KIND: AlgorithmKind = AlgorithmKind::SlidingLog;
    type Params = SlidingLogParams;
    type Cell = LogRing;

    fn params(quota: &Quota, _unix_offset: u64) -> Result<SlidingLogParams, QuotaError> {
        quota.refuse_anchored(Self::NAME)?;
        SlidingLog::validate(quota)
    }

    fn max_cost(params: &SlidingLogParams) -> u32 {
        params.limit
    }

    fn new_cell(params: &SlidingLogParams) -> LogRing {
        LogRing::new(params.limit)
    }

    fn pending_cell(old: &LogRing, params: &SlidingLogParams) -> LogRing {
        // Long enough for every entry the old ring holds.
        let length = u32::try_from(old.len()).unwrap_or(u32::MAX);
        LogRing::pending(length.max(params.limit))
    }

    #[inline]
    fn check(
        cell: &LogRing,
        params: &SlidingLogParams,
        now: u64,
        cost: u32,
        mode: Op,
    ) -> Result<(Decision, Option<Swap>), Stale> {
        cell.check(params, now, cost, mode)
    }

    fn undo(cell: &LogRing, params: &SlidingLogParams, swap: Swap) -> bool {
        cell.undo(params, swap)
    }

    fn reconfigure(
        old: &LogRing,
        new: &LogRing,
        _from: &SlidingLogParams,
        to: &SlidingLogParams,
        now: u64,
    ) {
        let seq = old
            .freeze()
            .expect("only a reconfiguration freezes a direct limiter's ring, one at a time");
        new.fill_from(old, seq, to, now);
    }

    fn keyed_insert(
        params: &SlidingLogParams,
        now: u64,
        cost: u32,
        mode: Op,
    ) -> (u64, Decision, Option<Swap>) {
        let ring = LogRing::new(params.limit);
        let (decision, swap) = match ring.check(params, now, cost, mode) {
            Ok(outcome) => outcome,
            Err(Stale) => unreachable!("a new ring is not retired"),
        };
        (Box::into_raw(Box::new(ring)) as u64, decision, swap)
    }

    fn keyed_fresh_decision(params: &SlidingLogParams, now: u64, cost: u32) -> Decision {
        SlidingLog::fresh_decision(params, now, cost)
    }

    #[inline]
    fn keyed_check(
        word: &AtomicU64,
        params: &SlidingLogParams,
        now: u64,
        cost: u32,
        mode: Op,
    ) -> Result<(Decision, Option<Swap>), Stale> {
        let ring = word.load(Ordering::Acquire);
        if !word::is_live(ring) {
            return Err(Stale);
        }
        // SAFETY: a live word points to a ring that is freed only after a grace period
        // following its sweep, and the table pins the caller for the whole check.
        let outcome = unsafe { &*(ring as *const LogRing) }.check(params, now, cost, mode);
        if outcome.is_err() {
            // The ring is dead but its sweeper may not have tombstoned the word yet: help, so
            // that no check ever waits on a descheduled sweeper. (Sweeps and migrations run
            // under the shard lock, and a dead ring's word is tombstoned before that lock is
            // released, so nothing else can be changing this word.)
            let _ =
                word.compare_exchange(ring, word::TOMBSTONE, Ordering::AcqRel, Ordering::Relaxed);
        }
        outcome
    }

    fn keyed_undo(word: &AtomicU64, params: &SlidingLogParams, swap: Swap) -> bool {
        let ring = word.load(Ordering::Acquire);
        // SAFETY: as in `keyed_check`; the caller is still pinned from its check.
        word::is_live(ring) && unsafe { &*(ring as *const LogRing) }.undo(params, swap)
    }

    fn keyed_migrate(
        word: &AtomicU64,
        convert: Option<(&SlidingLogParams, &SlidingLogParams, u64)>,
        mut place: impl FnMut(u64),
    ) -> Option<u64> {
        let ring = word.load(Ordering::Acquire);
        if !word::is_live(ring) {
            return None;
        }
        let Some((_from, to, now)) = convert else {
            // A growth: the ring moves as it is. Checks never change a live ring's word.
            place(ring);
            word.store(word::MOVED, Ordering::Release);
            return None;
        };
        // SAFETY: as in `keyed_sweep`.
        let old = unsafe { &*(ring as *const LogRing) };
        let Some(seq) = old.freeze() else {
            return None; // retired by a sweep: no state
        };
        let new = LogRing::carried_over(old, seq, to, now);
        place(Box::into_raw(Box::new(new)) as u64);
        // A check that met the frozen ring may have tombstoned the word already (it helps
        // retired rings out); either way the key now lives on in the new array.
        let _ = word.compare_exchange(ring, word::MOVED, Ordering::AcqRel, Ordering::Relaxed);
        Some(ring)
    }

    fn keyed_sweep(word: &AtomicU64, params: &SlidingLogParams, now: u64) -> Sweep {
        let ring = word.load(Ordering::Acquire);
        if !word::is_live(ring) {
            return Sweep::Kept;
        }
        // SAFETY: as in `keyed_check`; the sweeper holds the shard lock and is pinned.
        if !unsafe { &*(ring as *const LogRing) }.try_retire(params, now) {
            return Sweep::Kept;
        }
        // Only sweeps and migrations (both under the shard lock) and checks helping this very
        // store change a log's word.
        word.store(word::TOMBSTONE, Ordering::Release);
        Sweep::Swept(Some(ring))
    }

    fn idle_after(params: &SlidingLogParams) -> u64 {
        params.period
    }

    unsafe fn keyed_release(word: u64) {
        // SAFETY: the caller guarantees `word` came from `keyed_insert` and is unused.
        drop(unsafe { Box::from_raw(word as *mut LogRing) });
    }

    fn keyed_heap_bytes(params: &SlidingLogParams) -> usize {
        std::mem::size_of::<LogRing>() + params.limit as usize * std::mem::size_of::<u64>()
    }
}
