//! Wall-clock-aligned windows shared by [`FixedWindow`](super::FixedWindow) and
//! [`SlidingWindow`](super::SlidingWindow).
//!
//! Windows are `[i * period, (i + 1) * period)` in UNIX time, so a per-minute window resets
//! at :00. The clock's epoch is `unix_offset` ns after the UNIX epoch; only its remainder
//! modulo the period (the *phase*) matters, and window indices count from the window holding
//! the clock's epoch: index `i` covers clock time `[i*period - phase, (i+1)*period - phase)`.

use super::divide::Divisor;
use super::{MAX_NANOS, MAX_STATE};
use crate::error::QuotaError;

/// Locates clock readings in their window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Windows {
    period: Divisor,
    phase: u64,
}

impl Windows {
    pub(crate) fn new(period: u64, unix_offset: u64) -> Windows {
        let period = Divisor::new(period).expect("quota periods are between 1 ns and 2^58 ns");
        Windows {
            phase: unix_offset % period.get(),
            period,
        }
    }

    pub(crate) fn period(&self) -> u64 {
        self.period.get()
    }

    pub(crate) fn phase(&self) -> u64 {
        self.phase
    }

    /// True when both locate every reading in the same windows (same period and phase).
    pub(crate) fn same_as(&self, other: &Windows) -> bool {
        self.period() == other.period() && self.phase == other.phase
    }

    /// The largest index any clock reading maps to.
    pub(crate) fn max_index(&self) -> u64 {
        self.locate(MAX_NANOS).0
    }

    /// Refuses layouts whose largest state, the largest index shifted above `counts_bits` of
    /// counts that reach `counts_max`, exceeds [`MAX_STATE`].
    pub(crate) fn check_layout(
        &self,
        counts_bits: u32,
        counts_max: u64,
        algorithm: &'static str,
        what: &str,
    ) -> Result<(), QuotaError> {
        let top = (u128::from(self.max_index()) << counts_bits) + u128::from(counts_max);
        if top <= u128::from(MAX_STATE) {
            return Ok(());
        }
        Err(QuotaError::Unsupported {
            algorithm,
            reason: format!(
                "{what} leave {} bits for the window index, too few for {} windows of {} ns \
                 in the 146-year time range",
                64 - counts_bits,
                self.max_index(),
                self.period()
            ),
        })
    }

    /// True when window `index` holds clock reading `now` (one multiply, no division).
    #[inline(always)]
    pub(crate) fn contains(&self, index: u64, now: u64) -> bool {
        (now + self.phase).wrapping_sub(index * self.period()) < self.period()
    }

    /// `(index, elapsed ns since the window started)` for a clock reading `now <= MAX_NANOS`.
    #[inline]
    pub(crate) fn locate(&self, now: u64) -> (u64, u64) {
        self.period.div_rem(now + self.phase)
    }

    /// Clock time at which window `index` starts (negative for a window that began before the
    /// clock's epoch).
    pub(crate) fn start(&self, index: u64) -> i128 {
        i128::from(index) * i128::from(self.period()) - i128::from(self.phase)
    }

    /// Nanoseconds from `now` until clock time `at`, zero if `at` has passed.
    pub(crate) fn until(now: u64, at: i128) -> u64 {
        u64::try_from((at - i128::from(now)).max(0)).unwrap_or(u64::MAX)
    }
}

/// Bits needed to hold any count from 0 to `limit`.
pub(crate) fn count_bits(limit: u32) -> u32 {
    u32::BITS - limit.leading_zeros()
}
