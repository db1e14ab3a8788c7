//! [`SlidingLog`]: the exact sliding log.
//!
//! Rule: a request of cost `n` at `now` is admitted iff fewer than `limit - n + 1` admitted
//! units have timestamps in `(now - period, now]`; each admitted unit is logged with `now`,
//! rejected requests are not logged. So no trailing `period` ever holds more than `limit`
//! admitted units, exactly.
//!
//! Layout: not one word. A ring of `limit` timestamps (one per admitted unit, `ts + 1`, 0 =
//! never written) plus a head word `seq << 1 | writing`, where `seq` counts every unit ever
//! admitted, so unit `j` lives in slot `j % limit`; see [`LogRing`](crate::log_ring::LogRing)
//! for the concurrency. Timestamps are non-decreasing in `seq` (a reading earlier than the
//! newest entry counts as the newest), so the decision reads one slot: the `n`-th oldest
//! entry of the last `limit` must have expired. O(1) per check, O(limit) space;
//! `remaining` costs a galloping search, O(log remaining) reads.
//!
//! Hits (recorded whatever the answer) log every unit. Only the newest `limit` entries are
//! ever read (they are the newest, so they expire last), so a hit of more than `limit` writes
//! just those: hits stay exact.
//!
//! Reconfiguration: every entry still live under the new period carries over with its time,
//! into a ring at least as long as the new limit (longer if more entries are live: decisions
//! read its newest `limit`, and the rest keep counting should the limit grow again). A longer
//! period makes entries the old one had let expire count again, as far as the old ring still
//! held them.
//!
//! Ranges: `limit` up to [`SlidingLog::MAX_LIMIT`] (a 128 MiB ring); exact for every period.

use super::engine::{Engine, Mode, Stale, Swap, Sweep};
use crate::decision::{Decision, Details};
use crate::error::QuotaError;
use crate::log_ring::LogRing;
use crate::quota::Quota;
use crate::sync::{AtomicU64, Ordering};
use crate::table::word;

/// The exact sliding log: remembers the time of every admitted request of the last `period`.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::SlidingLog, clock::ManualClock};
///
/// let clock = ManualClock::new();
/// let limiter = Limiter::<SlidingLog, _>::with_clock(Quota::per_second(2), clock.clone())?;
/// assert!(limiter.check().is_allowed());          // at 0 ms
/// clock.advance(Duration::from_millis(300));
/// assert!(limiter.check().is_allowed());          // at 300 ms
/// let denied = limiter.check();
/// assert_eq!(denied.retry_after(), Some(Duration::from_millis(700))); // when the 0 ms entry expires
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SlidingLog;

impl SlidingLog {
    /// The largest limit: 2^24 timestamps, a 128 MiB ring per log.
    pub const MAX_LIMIT: u32 = 1 << 24;
}

/// A quota preprocessed for the log.
#[derive(Debug, Clone, Copy)]
pub struct SlidingLogParams {
    pub(crate) limit: u32,
    pub(crate) period: u64,
}

impl Engine for SlidingLog {
    const NAME: &'static str = "SlidingLog";
    type Params = SlidingLogParams;
    type Cell = LogRing;

    fn params(quota: &Quota, _unix_offset: u64) -> Result<SlidingLogParams, QuotaError> {
        let limit = quota.limit();
        if limit > Self::MAX_LIMIT {
            return Err(QuotaError::Unsupported {
                algorithm: Self::NAME,
                reason: format!(
                    "it keeps one 8-byte timestamp per admitted request, and a limit of {limit} \
                     would need {} MiB per log; the largest limit is {}",
                    (u64::from(limit) * 8) >> 20,
                    Self::MAX_LIMIT
                ),
            });
        }
        Ok(SlidingLogParams {
            limit,
            period: quota.period_nanos(),
        })
    }

    fn capacity(params: &SlidingLogParams) -> u32 {
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
        mode: Mode,
    ) -> Result<(Decision, Option<Swap>), Stale> {
        cell.check(params, now, cost, mode)
    }

    fn undo(cell: &LogRing, swap: Swap) -> bool {
        cell.undo(swap)
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
        mode: Mode,
    ) -> (u64, Decision, Option<Swap>) {
        let ring = LogRing::new(params.limit);
        let (decision, swap) = match ring.check(params, now, cost, mode) {
            Ok(outcome) => outcome,
            Err(Stale) => unreachable!("a new ring is not retired"),
        };
        (Box::into_raw(Box::new(ring)) as u64, decision, swap)
    }

    fn keyed_fresh_decision(params: &SlidingLogParams, now: u64, cost: u32) -> Decision {
        let empty = Snapshot {
            seq: 0,
            timestamp: |_| unreachable!("an empty log has no entries to read"),
        };
        decide(&empty, params, now, cost).2
    }

    #[inline]
    fn keyed_check(
        word: &AtomicU64,
        params: &SlidingLogParams,
        now: u64,
        cost: u32,
        mode: Mode,
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

    fn keyed_undo(word: &AtomicU64, swap: Swap) -> bool {
        let ring = word.load(Ordering::Acquire);
        // SAFETY: as in `keyed_check`; the caller is still pinned from its check.
        word::is_live(ring) && unsafe { &*(ring as *const LogRing) }.undo(swap)
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

/// A consistent view of the log taken by [`LogRing`]: `seq` units logged so far, and a way to
/// read the timestamp of any of the last `limit`.
pub(crate) struct Snapshot<F: Fn(u64) -> u64> {
    pub(crate) seq: u64,
    pub(crate) timestamp: F,
}

/// The decision on a snapshot: whether to admit, the time to log, and the details.
pub(crate) fn decide<F: Fn(u64) -> u64>(
    log: &Snapshot<F>,
    p: &SlidingLogParams,
    now: u64,
    cost: u32,
) -> (bool, u64, Decision) {
    let (limit, seq) = (u64::from(p.limit), log.seq);
    let newest = seq.checked_sub(1).map(|j| (log.timestamp)(j));
    // Logged times never decrease: a reading behind the newest entry counts as the newest.
    let now_eff = newest.map_or(now, |newest| newest.max(now));
    let live = |j: u64| (log.timestamp)(j) + p.period > now_eff;
    // The `cost`-th oldest of the last `limit` entries must have expired; unit j lives until
    // timestamp + period (half-open). A cost above the limit (only hits have one) never fits,
    // and has no logged entry to wait for.
    let blocking = (seq + u64::from(cost))
        .checked_sub(limit + 1)
        .filter(|&j| j < seq);
    let allowed = cost == 0 || (u64::from(cost) <= limit && blocking.is_none_or(|j| !live(j)));

    let after = if allowed { seq + u64::from(cost) } else { seq };
    let window_start = after.saturating_sub(limit);
    // A denial knows its blocking entry is live; an admission knows everything before the
    // window has expired, which `window_start` already says.
    let hint = blocking.filter(|_| !allowed).unwrap_or(u64::MAX);
    let first_live = first_live(window_start, seq, hint, live);
    let remaining = limit - (after - first_live.min(after));
    let newest_after = if allowed && cost > 0 {
        Some(now_eff)
    } else {
        newest
    };
    let details = Details {
        remaining: remaining as u32,
        retry_after: blocking.map_or(0, |j| ((log.timestamp)(j) + p.period).saturating_sub(now)),
        reset_after: newest_after.map_or(0, |t| (t + p.period).saturating_sub(now)),
        wait: 0,
    };
    (allowed, now_eff, Decision::eager(allowed, p.limit, details))
}

/// The first index in `[lo, hi)` whose entry is live, or `hi`; entries are ordered (expired
/// ones first). Probes `hint`, then gallops from both ends at once, so the cost grows with the
/// distance from the answer to the nearer end (few live entries, or few expired ones), not
/// with the size of the log.
fn first_live(lo: u64, hi: u64, hint: u64, live: impl Fn(u64) -> bool) -> u64 {
    // Invariant: every index below `a` is expired; `b` is live or `hi`.
    let (mut a, mut b) = (lo, hi);
    if (a..b).contains(&hint) {
        if live(hint) {
            b = hint;
        } else {
            a = hint + 1;
        }
    }
    let mut step = 1;
    while b - a > 2 * step {
        let low = a + step - 1;
        if live(low) {
            b = low;
            break;
        }
        a = low + 1;
        let high = b - step;
        if !live(high) {
            a = high + 1;
            break;
        }
        b = high;
        step *= 2;
    }
    while a < b {
        let mid = a + (b - a) / 2;
        if live(mid) {
            b = mid;
        } else {
            a = mid + 1;
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::first_live;

    #[test]
    fn first_live_finds_the_boundary_from_any_hint() {
        for len in 0..40u64 {
            for boundary in 0..=len {
                for hint in 0..=len + 2 {
                    let live = |j: u64| j >= boundary;
                    assert_eq!(
                        first_live(0, len, hint, live),
                        boundary,
                        "{len} {boundary} {hint}"
                    );
                }
            }
        }
        let live = |j: u64| j >= 7;
        assert_eq!(first_live(5, 12, 9, live), 7);
        assert_eq!(first_live(8, 12, 8, live), 8);
    }
}
