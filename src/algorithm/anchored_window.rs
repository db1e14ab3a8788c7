//! The anchored [`FixedWindow`](super::FixedWindow) (an [anchored](crate::Quota::anchored)
//! quota): each key's window starts at that key's first request.
//!
//! Rule: a request of cost `n` at `t` is admitted iff the key's count plus `n` is at most
//! `limit`, the count being that of the key's window `[s, s + period)` holding `t`. When no
//! window holds `t` (none yet, or the last one ended at or before `t`), a request of cost
//! `n > 0` starts one at `s = t` rounded down to the anchor's resolution (below); a cost of 0
//! starts nothing. This is express-rate-limit's `windowMs` and Redis's `INCR` + `EXPIRE`:
//! clients come back when their own window ends, not all at once at the clock's edge.
//!
//! Layout (`c = bits(limit)`, `shift = c - 1`):
//! ```text
//! [63 .. c]   s >> shift, the window's start in units of 2^shift ns
//! [c-1 .. 0]  requests admitted in that window
//! ```
//! Fresh: any state whose count is 0.
//!
//! Resolution: a start is kept in units of 2^(c-1) ns so that 146 years of starts fit beside
//! the count: exact to the nanosecond for a limit of 1, 64 ns for a limit of 100, 512 ns for
//! 1,000, 0.5 ms for a million. A window may so end up to one unit before `t + period` (it is
//! still one period long, and holds `t`); quotas whose unit exceeds 1/64 of the period are
//! refused. On Redis the start is the
//! request's whole microsecond (Redis's clock); on the microsecond grid both agree.
//!
//! Hits (recorded whatever the answer): the count saturates at `limit`, as in the aligned
//! window. A clock stepping back (`t < s`) counts as within the state's window.
//!
//! Reconfiguration: the window keeps its start (at the new resolution) and its count,
//! saturating at the new limit; it ends one new period after its start, which may already
//! have passed (then the key is fresh).

use super::window::Windows;
use crate::decision::{Decision, Details};
use crate::error::QuotaError;

/// An anchored window's fixed numbers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchor {
    period: u64,
    limit: u32,
    bits: u32,
    shift: u32,
}

impl Anchor {
    /// The anchor for `limit` per `period` ns, counts in `bits`, or why its resolution is too
    /// coarse for the period.
    pub(crate) fn new(period: u64, limit: u32, bits: u32) -> Result<Anchor, QuotaError> {
        let shift = bits.saturating_sub(1);
        if (1u64 << shift) > period / 64 {
            return Err(QuotaError::Unsupported {
                algorithm: "FixedWindow",
                reason: format!(
                    "an anchored window of {limit} per {period} ns keeps its start in units of \
                     {} ns (to fit beside counts up to {limit}), more than 1/64 of the \
                     period; use a longer period, the aligned fixed window, or Gcra",
                    1u64 << shift
                ),
            });
        }
        Ok(Anchor {
            period,
            limit,
            bits,
            shift,
        })
    }

    #[inline(always)]
    pub(crate) fn transition(&self, state: u64, now: u64, cost: u32) -> (Option<u64>, Decision) {
        if cost == 0 {
            return (None, self.decide(true, now, state, cost));
        }
        let (start, count) = self.current(state, now);
        let count = count + u64::from(cost);
        if count > u64::from(self.limit) {
            return (None, self.decide(false, now, state, cost));
        }
        let next = self.pack(start, count);
        (Some(next), self.decide(true, now, next, cost))
    }

    /// A hit beyond the limit: the window saturates at `limit`.
    pub(crate) fn saturate(&self, state: u64, now: u64) -> (Option<u64>, Decision) {
        let (start, _) = self.current(state, now);
        let next = self.pack(start, u64::from(self.limit));
        let decision = self.decide(false, now, next, 1);
        ((next != state).then_some(next), decision)
    }

    /// The count of the window holding `now` (0: fresh).
    pub(crate) fn count(&self, state: u64, now: u64) -> u32 {
        self.current(state, now).1 as u32
    }

    /// `state` under `self` carried to `to` at `now` (see the module's header).
    pub(crate) fn convert(&self, state: u64, now: u64, to: &Anchor) -> u64 {
        let (start, count) = self.current(state, now);
        if count == 0 || now >= start.saturating_add(to.period) {
            return 0;
        }
        to.pack(start, count.min(u64::from(to.limit)))
    }

    /// The window's start and count as seen at `now`; a window that has ended (or none)
    /// reads as a fresh one starting at `now`.
    #[inline(always)]
    fn current(&self, state: u64, now: u64) -> (u64, u64) {
        let count = state & ((1 << self.bits) - 1);
        let start = (state >> self.bits) << self.shift;
        if count == 0 || now >= start + self.period {
            ((now >> self.shift) << self.shift, 0)
        } else {
            (start, count)
        }
    }

    #[inline(always)]
    fn pack(&self, start: u64, count: u64) -> u64 {
        ((start >> self.shift) << self.bits) | count
    }

    #[inline(always)]
    fn decide(&self, allowed: bool, now: u64, state: u64, cost: u32) -> Decision {
        let words = [now, state, self.period, u64::from(self.shift)];
        Decision::lazy(allowed, self.limit, cost, self.bits, words, explain)
    }
}

/// Rebuilds the numbers from `[now, state, period, shift]`, with the count width in `small`.
fn explain(d: &Decision) -> Details {
    let [now, state, period, shift] = *d.words();
    let anchor = Anchor {
        period,
        limit: d.limit(),
        bits: d.small(),
        shift: shift as u32,
    };
    let (start, count) = anchor.current(state, now);
    let window_end = Windows::until(now, i128::from(start) + i128::from(period));
    Details {
        remaining: d.limit().saturating_sub(count as u32),
        retry_after: window_end,
        reset_after: if count == 0 { 0 } else { window_end },
        wait: 0,
    }
}
