//! [`TscClock`]: the TSC, read through `quanta`.

use super::epoch::epoch;
use super::Clock;

/// Reads the CPU's time-stamp counter through `quanta`, scaled to nanoseconds.
///
/// Precise (about 1 ns resolution) and monotonic on one core; the most expensive of the clocks
/// (about 24 ns a read on this repository's benchmark VM, where `rdtsc` itself costs ~22 ns;
/// about 7–10 ns on bare metal). Falls back to the OS monotonic clock where there is no usable
/// TSC. All `TscClock`s share one process-wide epoch, taken on first use.
///
/// ```
/// use sluicegate::clock::{Clock, TscClock};
/// let clock = TscClock::default();
/// let a = clock.now();
/// assert!(clock.now() >= a);
/// ```
#[derive(Debug, Clone)]
pub struct TscClock {
    clock: quanta::Clock,
    base: u64,
    unix_offset: u64,
}

impl TscClock {
    /// A clock reading the shared process epoch.
    pub fn new() -> Self {
        let epoch = epoch();
        TscClock {
            clock: epoch.clock.clone(),
            base: epoch.raw,
            unix_offset: epoch.unix_offset,
        }
    }
}

impl Default for TscClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TscClock {
    #[inline]
    fn now(&self) -> u64 {
        // A reading behind the epoch (skew across cores) comes back as 0, never as a wrap.
        self.clock.delta_as_nanos(self.base, self.clock.raw())
    }

    fn unix_offset(&self) -> u64 {
        self.unix_offset
    }
}
