//! [`TscClock`]: the CPU's own counter, read through `quanta`.

use super::epoch::epoch;
use super::Clock;

/// Reads the CPU's time-stamp counter through `quanta`, scaled to nanoseconds.
///
/// Precise (about 1 ns resolution) and monotonic on one core; the most expensive of the clocks
/// (about 24 ns a read on this repository's benchmark VM, where `rdtsc` itself costs ~22 ns;
/// about 7–10 ns on bare metal). Falls back to the OS monotonic clock where there is no usable
/// TSC. All `TscClock`s share one process-wide epoch, taken on first use.
///
/// Which counter is fixed when the crate is built, by the target's architecture:
/// - x86-64: the TSC (`rdtsc`) when the CPU says it is invariant, else the OS monotonic clock
///   (quanta asks CPUID once, at the first clock);
/// - aarch64 (Linux, macOS, Windows): the generic timer's virtual count, `CNTVCT_EL0`, always.
///   The architecture gives every core one count at a constant rate (`CNTFRQ_EL0`), so there
///   is no skew between cores to allow for; its resolution is one tick: 1 ns where the rate is
///   1 GHz (required since Armv8.6), about 40 ns at the 24-25 MHz of Apple M1 or Ampere Altra,
///   finer than the emission interval of any quota below 25 million a second;
/// - anything else (and iOS): the OS monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`).
///
/// quanta calibrates a counter's rate against the OS clock once per process; [`CoarseClock`]
/// samples the same counter on the same epoch.
///
/// [`CoarseClock`]: super::CoarseClock
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

    /// On aarch64 the clock is the generic timer's virtual count, with no run-time check: a
    /// raw reading taken between two direct reads of `CNTVCT_EL0` lies between them (the OS
    /// clock, the fallback elsewhere, counts nanoseconds since boot: a different number), and
    /// the rate quanta calibrated is the one `CNTFRQ_EL0` states, to 1%.
    #[cfg(all(target_arch = "aarch64", not(target_os = "ios")))]
    #[test]
    fn reads_the_aarch64_generic_timer() {
        fn register_cntvct() -> u64 {
            let count: u64;
            // `isb` on both sides: the read is neither hoisted nor delayed past its neighbours.
            // SAFETY: EL0 may read the virtual counter on every OS quanta supports here.
            unsafe { core::arch::asm!("isb", "mrs {}, cntvct_el0", "isb", out(reg) count) };
            count
        }
        fn register_cntfrq() -> u64 {
            let hertz: u64;
            // SAFETY: as above; CNTFRQ_EL0 is readable from EL0.
            unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) hertz) };
            hertz
        }
        let clock = TscClock::new();
        let before = register_cntvct();
        let raw = clock.clock.raw();
        let after = register_cntvct();
        assert!(
            before <= raw && raw <= after,
            "quanta's raw reading {raw} is not CNTVCT_EL0 ({before}..={after})"
        );
        let hertz = register_cntfrq();
        assert!(hertz > 0, "CNTFRQ_EL0 reads 0");
        let stated = (1_000_000_000u128 << 40) / u128::from(hertz);
        let calibrated = u128::from(clock.nanos_per_2_40_ticks);
        assert!(
            calibrated.abs_diff(stated) * 100 < stated,
            "calibrated {calibrated} vs {stated} (ns per 2^40 ticks at CNTFRQ_EL0 = {hertz} Hz)"
        );
    }

    #[test]
    fn agrees_with_quanta_and_the_os_clock() {
        let clock = TscClock::new();
        // A wrong conversion fails every attempt; scheduling noise fails one at most rarely.
        let failures: Vec<String> = (0..5).map_while(|_| one_comparison(&clock).err()).collect();
        assert!(failures.len() < 5, "{failures:?}");
    }
}
