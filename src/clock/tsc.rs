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
    /// Nanoseconds per 2^40 ticks, as quanta's calibration gives them: a multiply and a fixed
    /// 40-bit shift replace quanta's variable shift on every read (identity where quanta falls
    /// back to the OS clock, whose ticks are nanoseconds).
    nanos_per_2_40_ticks: u64,
    unix_offset: u64,
}

impl TscClock {
    /// A clock reading the shared process epoch.
    pub fn new() -> Self {
        let epoch = epoch();
        TscClock {
            nanos_per_2_40_ticks: epoch.clock.delta_as_nanos(0, 1 << 40),
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
        let ticks = u128::from(self.clock.raw().saturating_sub(self.base));
        ((ticks * u128::from(self.nanos_per_2_40_ticks)) >> 40) as u64
    }

    fn unix_offset(&self) -> u64 {
        self.unix_offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One comparison; a preemption between two reads can skew it on a loaded machine.
    fn one_comparison(clock: &TscClock) -> Result<(), String> {
        let (ours, theirs) = (clock.now(), epoch().elapsed_nanos());
        // Read back to back: the two conversions agree to well under a millisecond.
        if ours.abs_diff(theirs) >= 1_000_000 {
            return Err(format!("{ours} vs {theirs}"));
        }
        let start = (std::time::Instant::now(), clock.now());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (wall, tsc) = (start.0.elapsed().as_nanos() as u64, clock.now() - start.1);
        if tsc.abs_diff(wall) >= wall / 20 {
            return Err(format!("TSC {tsc} ns vs OS {wall} ns over a sleep"));
        }
        Ok(())
    }

    #[test]
    fn agrees_with_quanta_and_the_os_clock() {
        let clock = TscClock::new();
        // A wrong conversion fails every attempt; scheduling noise fails one at most rarely.
        let failures: Vec<String> = (0..5).map_while(|_| one_comparison(&clock).err()).collect();
        assert!(failures.len() < 5, "{failures:?}");
    }
}
