//! The process-wide epoch shared by [`TscClock`](super::TscClock) and
//! [`CoarseClock`](super::CoarseClock), so the two read the same timeline.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// The first TSC reading of the process and the wall-clock time it was taken at.
#[derive(Debug)]
pub(super) struct Epoch {
    pub(super) clock: quanta::Clock,
    pub(super) raw: u64,
    pub(super) unix_offset: u64,
}

impl Epoch {
    /// Nanoseconds since the epoch, from the TSC.
    pub(super) fn elapsed_nanos(&self) -> u64 {
        self.clock.delta_as_nanos(self.raw, self.clock.raw())
    }
}

/// The epoch, captured on first use.
pub(super) fn epoch() -> &'static Epoch {
    static EPOCH: OnceLock<Epoch> = OnceLock::new();
    EPOCH.get_or_init(|| {
        // `quanta::Clock::new` calibrates the TSC against the OS clock once per process.
        let clock = quanta::Clock::new();
        let raw = clock.raw();
        let unix_offset = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                since.as_nanos().min(u128::from(u64::MAX >> 2)) as u64
            });
        Epoch {
            clock,
            raw,
            unix_offset,
        }
    })
}
