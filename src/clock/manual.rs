//! [`ManualClock`]: time that moves only when told to, for tests.

use super::Clock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A clock you move by hand. Starts at 0, which window algorithms take as the UNIX epoch
/// (so a per-minute window spans `[0, 60 s)`); clones share one time.
///
/// It may be set backwards, to test that limiters tolerate a clock that steps back.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::clock::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let shared = clock.clone();
/// clock.advance(Duration::from_millis(10));
/// assert_eq!(shared.now(), 10_000_000);
/// shared.set(Duration::from_secs(1));
/// assert_eq!(clock.now(), 1_000_000_000);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock at 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// A clock at `since_epoch`.
    pub fn starting_at(since_epoch: Duration) -> Self {
        let clock = Self::new();
        clock.set(since_epoch);
        clock
    }

    /// Moves time forward by `by` (saturating at `u64::MAX` nanoseconds).
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        let _ = self
            .nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_add(by))
            });
    }

    /// Sets the time to `since_epoch` (saturating at `u64::MAX` nanoseconds); may go backwards.
    pub fn set(&self, since_epoch: Duration) {
        self.set_nanos(u64::try_from(since_epoch.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Sets the time to `nanos` since the epoch; may go backwards.
    pub fn set_nanos(&self, nanos: u64) {
        self.nanos.store(nanos, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> u64 {
        self.nanos.load(Ordering::SeqCst)
    }

    fn unix_offset(&self) -> u64 {
        0
    }
}
