//! [`FixedWindow`]: at most `limit` admitted per wall-clock-aligned window of `period`, or,
//! for an [anchored](crate::Quota::anchored) quota, per window starting at each key's first
//! request (its rule and layout: [`anchored_window`](super::anchored_window)).
//!
//! Rule: windows are `[i * period, (i + 1) * period)` in UNIX time (a per-minute window resets
//! at :00; see [`window`](super::window)); a request of cost `n` is admitted iff the window's
//! count plus `n` is at most `limit`. The count resets when a new window starts. The classic
//! weakness is kept on purpose, as this is what the algorithm is: up to `2 * limit` may pass
//! across a window edge (see the tour example).
//!
//! Layout (`c = bits(limit)`):
//! ```text
//! [63 .. c]   window index (counted from the window holding the clock's epoch)
//! [c-1 .. 0]  requests admitted in that window
//! ```
//! Fresh: 0 (window 0, count 0: equivalent to any window with count 0).
//!
//! Hits (recorded whatever the answer): the count saturates at `limit`. A window at its limit
//! denies every request until it ends, whatever it would have counted beyond, so within a
//! quota this loses nothing.
//!
//! Reconfiguration: the current window's count carries over, saturating at the new limit. With
//! a new period the windows are not the same ones: the count is moved into the window holding
//! `now`, which keeps it at least until a window of the new length ends. The one thing not
//! carried: a count above a smaller new limit is held as that limit (the count's bits are
//! sized by the limit), so if the limit grows again within the same window, the excess is
//! forgotten.
//!
//! Ranges: exact for any quota whose window indices over 146 years fit beside the count:
//! `(2^62 / period) < 2^(64 - c)`, i.e. the period may be as short as about
//! `limit / 4` ns. Precision: exact integer arithmetic.

use super::anchored_window::Anchor;
use super::window::{count_bits, Windows};
use super::Packed;
use crate::decision::{Decision, Details};
use crate::error::QuotaError;
use crate::quota::Quota;

/// A fixed window counter, aligned to wall-clock multiples of the period; with an
/// [anchored](crate::Quota::anchored) quota, each key's window starts at its first request.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::FixedWindow, clock::ManualClock};
///
/// let clock = ManualClock::new(); // 0 = the UNIX epoch, so windows start at whole minutes
/// let limiter = Limiter::<FixedWindow, _>::with_clock(Quota::per_minute(3), clock.clone())?;
/// clock.set(Duration::from_secs(59));
/// assert!(limiter.check_n(3)?.is_allowed());
/// assert!(limiter.check().is_denied());
/// clock.set(Duration::from_secs(60)); // a new window
/// assert!(limiter.check_n(3)?.is_allowed());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Anchored, the window runs one period from the first request:
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::FixedWindow, clock::ManualClock};
///
/// let clock = ManualClock::new();
/// let quota = Quota::per_minute(3).anchored();
/// let limiter = Limiter::<FixedWindow, _>::with_clock(quota, clock.clone())?;
/// clock.set(Duration::from_secs(59));
/// assert!(limiter.check_n(3)?.is_allowed());
/// clock.set(Duration::from_secs(60)); // the clock's edge: still the same window
/// let denied = limiter.check();
/// assert_eq!(denied.retry_after(), Some(Duration::from_secs(59)));
/// clock.set(Duration::from_secs(119)); // one minute after the first request
/// assert!(limiter.check().is_allowed());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedWindow;

/// A quota preprocessed for the fixed window.
#[derive(Debug, Clone, Copy)]
pub struct FixedWindowParams {
    windows: Windows,
    limit: u32,
    bits: u32,
    /// Set for an anchored quota: its windows start at each key's first request.
    anchor: Option<Anchor>,
}

impl Packed for FixedWindow {
    const NAME: &'static str = "FixedWindow";
    type Params = FixedWindowParams;

    fn params(quota: &Quota, unix_offset: u64) -> Result<FixedWindowParams, QuotaError> {
        let windows = Windows::new(quota.period_nanos(), unix_offset);
        let bits = count_bits(quota.limit());
        let anchor = if quota.is_anchored() {
            Some(Anchor::new(quota.period_nanos(), quota.limit(), bits)?)
        } else {
            let what = format!("counts up to {}", quota.limit());
            windows.check_layout(bits, u64::from(quota.limit()), Self::NAME, &what)?;
            None
        };
        Ok(FixedWindowParams {
            windows,
            limit: quota.limit(),
            bits,
            anchor,
        })
    }

    fn max_cost(params: &FixedWindowParams) -> u32 {
        params.limit
    }

    fn fresh(_params: &FixedWindowParams) -> u64 {
        0
    }

    #[inline(always)]
    fn transition(
        state: u64,
        now: u64,
        cost: u32,
        p: &FixedWindowParams,
    ) -> (Option<u64>, Decision) {
        if let Some(anchor) = &p.anchor {
            return anchor.transition(state, now, cost);
        }
        let decide = |allowed, state| {
            let words = [now, state, p.windows.period(), p.windows.phase()];
            Decision::lazy(allowed, p.limit, cost, p.bits, words, explain)
        };
        if cost == 0 {
            return (None, decide(true, state));
        }
        let (index, count) = current(state, p.bits, p.windows.locate(now).0);
        let count = count + u64::from(cost);
        if count > u64::from(p.limit) {
            return (None, decide(false, state));
        }
        let next = (index << p.bits) | count;
        (Some(next), decide(true, next))
    }

    #[inline]
    fn hit(state: u64, now: u64, cost: u32, p: &FixedWindowParams) -> (Option<u64>, Decision) {
        let within = Self::transition(state, now, cost, p);
        if within.1.is_allowed() {
            return within;
        }
        if let Some(anchor) = &p.anchor {
            return anchor.saturate(state, now);
        }
        let (index, _) = current(state, p.bits, p.windows.locate(now).0);
        let next = (index << p.bits) | u64::from(p.limit);
        let words = [now, next, p.windows.period(), p.windows.phase()];
        let decision = Decision::lazy(false, p.limit, 1, p.bits, words, explain);
        ((next != state).then_some(next), decision)
    }

    fn convert(state: u64, now: u64, from: &FixedWindowParams, to: &FixedWindowParams) -> u64 {
        match (&from.anchor, &to.anchor) {
            (Some(from), Some(to)) => return from.convert(state, now, to),
            (None, None) => {}
            // Between the two kinds of window, the count moves into the new kind's window
            // holding `now` (aligned: now's window; anchored: one starting now).
            _ => {
                let count = Self::current_count(state, now, from);
                let into = Self::transition(Self::fresh(to), now, count.min(to.limit), to).0;
                return into.unwrap_or(0);
            }
        }
        let (index, count) = current(state, from.bits, from.windows.locate(now).0);
        if count == 0 {
            return 0;
        }
        let index = if from.windows.same_as(&to.windows) {
            index
        } else {
            to.windows.locate(now).0
        };
        (index << to.bits) | count.min(u64::from(to.limit))
    }

    fn idle_after(p: &FixedWindowParams) -> u64 {
        p.windows.period()
    }

    fn is_fresh(state: u64, now: u64, p: &FixedWindowParams) -> bool {
        Self::current_count(state, now, p) == 0
    }
}

impl FixedWindow {
    /// The count of the window holding `now` (0 when it is a fresh one).
    fn current_count(state: u64, now: u64, p: &FixedWindowParams) -> u32 {
        if let Some(anchor) = &p.anchor {
            return anchor.count(state, now);
        }
        current(state, p.bits, p.windows.locate(now).0).1 as u32
    }
}

/// The state's window and count as seen from window `now_index`: a later window starts at 0;
/// an earlier one (a clock stepping back) counts as the state's own window.
#[inline(always)]
fn current(state: u64, bits: u32, now_index: u64) -> (u64, u64) {
    let (index, count) = (state >> bits, state & ((1 << bits) - 1));
    if now_index > index {
        (now_index, 0)
    } else {
        (index, count)
    }
}

/// Rebuilds the numbers from `[now, state, period, phase]`, with the count width in `small`.
fn explain(d: &Decision) -> Details {
    let [now, state, period, phase] = *d.words();
    let windows = Windows::new(period, phase);
    let (index, count) = current(state, d.small(), windows.locate(now).0);
    let window_end = Windows::until(now, windows.start(index + 1));
    Details {
        remaining: d.limit().saturating_sub(count as u32),
        retry_after: window_end,
        reset_after: if count == 0 { 0 } else { window_end },
        wait: 0,
    }
}
