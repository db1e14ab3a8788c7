//! Where time comes from: [`Clock`], its three implementations, and [`AnyClock`], one of
//! two chosen at run time.
//!
//! Time is a `u64` of nanoseconds since the clock's epoch, read once per check. Every limiter
//! treats a reading earlier than its state's time (its latest admission; for the windows, that
//! admission's window) as equal to it, so a clock that steps backwards (TSC skew between
//! cores) never panics and never lets a request through that the quota, measured on the
//! timeline of the admissions, would refuse. A denial writes nothing, so it cannot record the
//! reading that was denied: a request whose reading lags by `s` is judged as if it arrived `s`
//! earlier, as with any clock that lags.
//!
//! | clock | source | cost per read (this repo's 2-core Xeon VM) | resolution |
//! |---|---|---|---|
//! | [`TscClock`] | the TSC through `quanta` | ~24 ns (`rdtsc` itself is ~22 ns under this hypervisor) | ~1 ns |
//! | [`TscClock`] on aarch64 | the generic timer, `CNTVCT_EL0` (see [`TscClock`]) | one `mrs` (not measured here: no arm64 hardware) | 1 ns to ~40 ns, the counter's tick |
//! | [`CoarseClock`] | one atomic kept fresh by an upkeep thread | ~0.5 ns | the upkeep interval, 1 ms by default |
//! | [`ManualClock`] | a shared counter you move | one atomic load | exact; for tests |

mod any;
mod coarse;
mod epoch;
mod manual;
mod tsc;

pub use any::AnyClock;
pub use coarse::CoarseClock;
pub use manual::ManualClock;
pub use tsc::TscClock;

/// `CoarseClock`'s published reading, for the loom models (`loom-tests/`) only.
#[cfg(loom)]
#[doc(hidden)]
pub use coarse::Recent as CoarseReading;

/// A source of time for limiters.
///
/// `now` must be cheap: it is called once per check. Readings should not decrease, but a
/// limiter stays correct (never over-admits, never panics) if they do.
pub trait Clock: Clone + Send + Sync + std::fmt::Debug + 'static {
    /// Nanoseconds since this clock's epoch.
    fn now(&self) -> u64;

    /// Nanoseconds from the UNIX epoch to this clock's epoch, so that window algorithms can
    /// align their windows to wall-clock multiples of the period (a per-minute window resets
    /// at :00). Read once, when a limiter is built.
    fn unix_offset(&self) -> u64;
}
