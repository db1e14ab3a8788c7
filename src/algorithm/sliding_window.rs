//! [`SlidingWindow`]: the sliding window counter (weighted previous window).
//!
//! Rule: with `prev` the count of the previous wall-clock window, `curr` the count of the
//! current one and `elapsed` the time since the current window started, the estimate
//! `prev * (period - elapsed) / period + curr` must stay below `limit` for every unit of a
//! request: a request of cost `n` is admitted iff
//! `prev * (period - elapsed) + (curr + n - 1) * period < limit * period`,
//! evaluated in exact integer (u128) arithmetic. Windows align to wall-clock multiples of the
//! period, as in [`FixedWindow`](super::FixedWindow). The weight models the previous window's
//! requests as spread evenly over it, each counting for one period (half-open): at the first
//! instant of a window the previous one still weighs fully, so with `1/day` a lone request is
//! next admitted one nanosecond into the following day.
//!
//! Hits (recorded whatever the answer): each window's count saturates at `limit`, so a hit
//! beyond the limit records a full window: the current window denies until it ends, and the
//! debt carried into the next window is at most one full window (it weighs `limit` there,
//! fading as usual).
//!
//! Reconfiguration: with the same period, both windows' counts carry over, saturating at the
//! new limit. With a new period, what still counts now (the weighted estimate, rounded up)
//! becomes the count of the new window holding `now`, which keeps it at least as long as the
//! old windows would have. As with hits, counts above a smaller new limit are held as that
//! limit (the counts' bits are sized by it): should the limit grow again while they count,
//! the excess is forgotten.
//!
//! Layout (`c = bits(limit)`):
//! ```text
//! [63 .. 2c]    window index (counted from the window holding the clock's epoch)
//! [2c-1 .. c]   prev: requests admitted in the window before it
//! [c-1 .. 0]    curr: requests admitted in it
//! ```
//! Fresh: 0.
//!
//! Ranges: the index needs `64 - 2c` bits to cover 146 years of windows, so the period must
//! be at least about `limit^2 / 4` ns: per second up to 32,767, per minute up to 262,143, per
//! hour up to 2,097,151, per day up to 16,777,215. Larger quotas are refused at construction.
//! Precision: exact.

use super::window::{count_bits, Windows};
use super::Packed;
use crate::decision::{Decision, Details};
use crate::error::QuotaError;
use crate::quota::Quota;

/// A sliding window counter: the previous window's count, weighted by how much of it still
/// overlaps the trailing period, plus the current window's.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::SlidingWindow, clock::ManualClock};
///
/// let clock = ManualClock::new();
/// let limiter = Limiter::<SlidingWindow, _>::with_clock(Quota::per_minute(10), clock.clone())?;
/// limiter.check_n(10)?;                        // window [0:00, 1:00) is full
/// clock.set(Duration::from_secs(90));          // halfway through the next window
/// // 10 * 30/60 = 5 of them still count, so 5 requests fit: `peek` answers as a check
/// // would, counting itself, and `check_n(0)` reports without counting anything.
/// assert_eq!(limiter.peek().remaining(), 4);
/// assert_eq!(limiter.check_n(0)?.remaining(), 5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SlidingWindow;

/// A quota preprocessed for the sliding window.
#[derive(Debug, Clone, Copy)]
pub struct SlidingWindowParams {
    windows: Windows,
    limit: u32,
    bits: u32,
    /// `2^bits - 1`: a count's field, precomputed for the hot path.
    mask: u64,
}

/// A state unpacked and rolled forward to the window of `now`.
#[derive(Debug, Clone, Copy)]
struct View {
    index: u64,
    elapsed: u64,
    prev: u64,
    curr: u64,
}

impl View {
    fn of(state: u64, bits: u32, windows: &Windows, now: u64) -> View {
        let mask = (1 << bits) - 1;
        let (index, prev, curr) = (state >> (2 * bits), (state >> bits) & mask, state & mask);
        let (now_index, elapsed) = windows.locate(now);
        match now_index.checked_sub(index) {
            Some(0) => View {
                index,
                elapsed,
                prev,
                curr,
            },
            Some(1) => View {
                index: now_index,
                elapsed,
                prev: curr,
                curr: 0,
            },
            Some(_) => View {
                index: now_index,
                elapsed,
                prev: 0,
                curr: 0,
            },
            // A clock stepping back counts as the start of the state's window, where the
            // previous window weighs the most.
            None => View {
                index,
                elapsed: 0,
                prev,
                curr,
            },
        }
    }

    /// `prev * (period - elapsed) + (curr + n - 1) * period < limit * period`, as
    /// `prev * (period - elapsed) < (limit - curr - n + 1) * period`: one multiply fewer.
    #[inline(always)]
    fn admits(&self, n: u32, limit: u32, period: u64) -> bool {
        let Some(room) = u64::from(limit).checked_sub(self.curr + u64::from(n) - 1) else {
            return false;
        };
        let fading = u128::from(self.prev) * u128::from(period - self.elapsed);
        fading < u128::from(room) * u128::from(period)
    }
}

impl Packed for SlidingWindow {
    const NAME: &'static str = "SlidingWindow";
    type Params = SlidingWindowParams;

    fn params(quota: &Quota, unix_offset: u64) -> Result<SlidingWindowParams, QuotaError> {
        let windows = Windows::new(quota.period_nanos(), unix_offset);
        let bits = count_bits(quota.limit());
        let what = format!("two counts up to {}", quota.limit());
        let limit = u64::from(quota.limit());
        windows.check_layout(2 * bits, (limit << bits) | limit, Self::NAME, &what)?;
        Ok(SlidingWindowParams {
            windows,
            limit: quota.limit(),
            bits,
            mask: (1 << bits) - 1,
        })
    }

    fn max_cost(params: &SlidingWindowParams) -> u32 {
        params.limit
    }

    fn fresh(_params: &SlidingWindowParams) -> u64 {
        0
    }

    #[inline(always)]
    fn transition(
        state: u64,
        now: u64,
        cost: u32,
        p: &SlidingWindowParams,
    ) -> (Option<u64>, Decision) {
        let decide = |allowed, state| {
            let words = [now, state, p.windows.period(), p.windows.phase()];
            Decision::lazy(allowed, p.limit, cost, p.bits, words, explain)
        };
        if cost == 0 {
            return (None, decide(true, state));
        }
        // A flood's usual state: the current window alone already holds the limit. While `now`
        // is still in that window the answer is no, without dividing `now` into windows or
        // weighing the previous one.
        let (index, curr) = (state >> (2 * p.bits), state & p.mask);
        if curr + u64::from(cost) > u64::from(p.limit) && p.windows.contains(index, now) {
            return (None, decide(false, state));
        }
        let view = View::of(state, p.bits, &p.windows, now);
        if !view.admits(cost, p.limit, p.windows.period()) {
            return (None, decide(false, state));
        }
        let bits = p.bits;
        let next = (view.index << (2 * bits)) | (view.prev << bits) | (view.curr + u64::from(cost));
        (Some(next), decide(true, next))
    }

    #[inline]
    fn hit(state: u64, now: u64, cost: u32, p: &SlidingWindowParams) -> (Option<u64>, Decision) {
        let within = Self::transition(state, now, cost, p);
        if within.1.is_allowed() {
            return within;
        }
        let view = View::of(state, p.bits, &p.windows, now);
        let curr = (view.curr + u64::from(cost)).min(u64::from(p.limit));
        let bits = p.bits;
        let next = (view.index << (2 * bits)) | (view.prev << bits) | curr;
        let words = [now, next, p.windows.period(), p.windows.phase()];
        let decision = Decision::lazy(false, p.limit, 1, p.bits, words, explain);
        ((next != state).then_some(next), decision)
    }

    fn convert(state: u64, now: u64, from: &SlidingWindowParams, to: &SlidingWindowParams) -> u64 {
        let view = View::of(state, from.bits, &from.windows, now);
        if view.prev == 0 && view.curr == 0 {
            return 0;
        }
        let (limit, bits) = (u64::from(to.limit), to.bits);
        if from.windows.same_as(&to.windows) {
            let (prev, curr) = (view.prev.min(limit), view.curr.min(limit));
            return (view.index << (2 * bits)) | (prev << bits) | curr;
        }
        let period = u128::from(from.windows.period());
        let fading = u128::from(view.prev) * (period - u128::from(view.elapsed));
        let estimate = fading.div_ceil(period) as u64 + view.curr;
        (to.windows.locate(now).0 << (2 * bits)) | estimate.min(limit)
    }

    fn idle_after(p: &SlidingWindowParams) -> u64 {
        // Counted in its window, then weighing in the next.
        p.windows.period().saturating_mul(2)
    }

    fn is_fresh(state: u64, now: u64, p: &SlidingWindowParams) -> bool {
        let view = View::of(state, p.bits, &p.windows, now);
        view.prev == 0 && view.curr == 0
    }
}

/// Rebuilds the numbers from `[now, state, period, phase]`, with the count width in `small`.
fn explain(d: &Decision) -> Details {
    let [now, state, period, phase] = *d.words();
    let windows = Windows::new(period, phase);
    let view = View::of(state, d.small(), &windows, now);
    let (limit, p) = (i128::from(d.limit()), i128::from(period));
    // Single requests still admitted: the r-th is admitted iff (r - 1) * period < headroom.
    let headroom = limit * p
        - i128::from(view.prev) * (p - i128::from(view.elapsed))
        - i128::from(view.curr) * p;
    let remaining = if headroom > 0 {
        (headroom + p - 1) / p
    } else {
        0
    };
    let reset_at = match (view.curr, view.prev) {
        (0, 0) => None,
        (0, _) => Some(windows.start(view.index + 1)),
        _ => Some(windows.start(view.index + 2)),
    };
    Details {
        remaining: u32::try_from(remaining).unwrap_or(u32::MAX),
        retry_after: if d.is_allowed() {
            0
        } else {
            Windows::until(now, retry_at(&view, &windows, d.cost(), d.limit()))
        },
        reset_after: reset_at.map_or(0, |at| Windows::until(now, at)),
        wait: 0,
    }
}

/// The first clock time at which a request of cost `n` is admitted, if nothing else arrives:
/// later in this window as `prev` fades, or in the next (where `curr` becomes the fading
/// count), or at the latest at the start of the one after.
fn retry_at(view: &View, windows: &Windows, n: u32, limit: u32) -> i128 {
    let period = i128::from(windows.period());
    // The earliest elapsed time `e >= from` in a window with counts (fading, current) at which
    // `fading * (period - e) < (limit - current - n + 1) * period`.
    let earliest = |fading: u64, current: u64, from: u64| -> Option<i128> {
        let room = i128::from(limit) - i128::from(current) - i128::from(n) + 1;
        if room <= 0 {
            return None;
        }
        let from = i128::from(from);
        if fading == 0 {
            return Some(from);
        }
        let fading = i128::from(fading);
        let threshold = period + 1 - (room * period + fading - 1) / fading;
        let e = threshold.max(from);
        (e < period).then_some(e)
    };
    let start = windows.start(view.index);
    if let Some(e) = earliest(view.prev, view.curr, view.elapsed) {
        return start + e;
    }
    if let Some(e) = earliest(view.curr, 0, 0) {
        return start + period + e;
    }
    start + 2 * period
}
