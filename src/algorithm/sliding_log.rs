//! [`SlidingLog`]: the exact sliding log.
//!
//! Rule: a request of cost `n` at `now` is admitted iff fewer than `limit - n + 1` admitted
//! units have timestamps in `(now - period, now]`; each admitted unit is logged with `now`,
//! rejected requests are not logged. So no trailing `period` ever holds more than `limit`
//! admitted units, exactly.
//!
//! Layout: not one word. A ring of `limit` timestamps (one per admitted unit, `ts + 1`, 0 =
//! never written) plus a head word `seq << 1 | writing`, where `seq` counts every unit ever
//! admitted, so unit `j` lives in slot `j % limit`; the state layer's `LogRing`
//! does the concurrency. Timestamps are non-decreasing in `seq` (a reading earlier than the
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

use crate::decision::{Decision, Details};
use crate::error::QuotaError;
use crate::quota::Quota;

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

impl SlidingLog {
    /// The algorithm's name, for errors and `Debug`.
    pub(crate) const NAME: &'static str = "SlidingLog";

    /// Validates `quota`: the ring holds one timestamp per unit of the limit.
    pub(crate) fn validate(quota: &Quota) -> Result<SlidingLogParams, QuotaError> {
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

    /// The decision for a log that holds nothing yet, writing nothing.
    pub(crate) fn fresh_decision(params: &SlidingLogParams, now: u64, cost: u32) -> Decision {
        let empty = Snapshot {
            seq: 0,
            timestamp: |_| unreachable!("an empty log has no entries to read"),
        };
        decide(&empty, params, now, cost).2
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
