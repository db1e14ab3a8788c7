//! [`AnyClock`]: the TSC or a [`ManualClock`], chosen at run time.

use super::{Clock, ManualClock, TscClock};

/// A clock chosen at run time: real time ([`TscClock`]) or a test's [`ManualClock`]. What a
/// limiter takes when whether time is real is only known when it is built (a language
/// binding's `clock=` option, a test harness), so that one limiter type serves both; a read
/// costs one well-predicted branch more than the clock it holds.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::clock::{AnyClock, Clock, ManualClock};
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let manual = ManualClock::new();
/// let clock = AnyClock::from(Some(manual.clone())); // `None`: the TSC
/// let limiter = KeyedLimiter::<String, sluicegate::algorithm::Gcra, AnyClock>::with_clock(
///     Quota::per_second(1),
///     clock,
/// )?;
/// assert!(limiter.check("k").is_allowed());
/// manual.advance(Duration::from_secs(1));
/// assert!(limiter.check("k").is_allowed());
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Debug, Clone)]
pub enum AnyClock {
    /// Real time.
    Tsc(TscClock),
    /// Time moved by hand.
    Manual(ManualClock),
}

impl Default for AnyClock {
    /// Real time.
    fn default() -> Self {
        AnyClock::Tsc(TscClock::new())
    }
}

impl From<Option<ManualClock>> for AnyClock {
    /// The manual clock when there is one, real time otherwise.
    fn from(manual: Option<ManualClock>) -> Self {
        manual.map_or_else(AnyClock::default, AnyClock::Manual)
    }
}

impl From<ManualClock> for AnyClock {
    fn from(manual: ManualClock) -> Self {
        AnyClock::Manual(manual)
    }
}

impl From<TscClock> for AnyClock {
    fn from(tsc: TscClock) -> Self {
        AnyClock::Tsc(tsc)
    }
}

impl Clock for AnyClock {
    #[inline]
    fn now(&self) -> u64 {
        match self {
            AnyClock::Tsc(clock) => clock.now(),
            AnyClock::Manual(clock) => clock.now(),
        }
    }

    fn unix_offset(&self) -> u64 {
        match self {
            AnyClock::Tsc(clock) => clock.unix_offset(),
            AnyClock::Manual(clock) => clock.unix_offset(),
        }
    }
}
