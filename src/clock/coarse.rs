//! [`CoarseClock`]: one atomic load per read, kept fresh by a shared upkeep thread.

// `pub` items here are reachable only by the loom models (through `cfg(loom)` re-exports).
#![cfg_attr(not(loom), allow(unreachable_pub))]

use super::epoch::epoch;
use super::Clock;
use crate::sync::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The latest TSC reading, in nanoseconds since the shared epoch, published by the upkeep thread.
#[cfg(not(loom))]
static RECENT: Recent = Recent::new();
#[cfg(loom)]
loom::lazy_static! {
    static ref RECENT: Recent = Recent::new();
}

/// The published reading: one writer (the upkeep thread) publishing with `fetch_max`, any
/// number of readers each with one relaxed load. Its atomic comes through the sync shim, so
/// the loom models check that readings never go back, even when the TSC does.
#[derive(Debug, Default)]
#[doc(hidden)]
pub struct Recent(AtomicU64);

impl Recent {
    /// Nothing published yet: 0.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Recent(AtomicU64::new(0))
    }

    /// Nothing published yet: 0.
    #[cfg(loom)]
    pub fn new() -> Self {
        Recent(AtomicU64::new(0))
    }

    /// Publishes `reading`, unless a later one is out already.
    pub fn publish(&self, reading: u64) {
        self.0.fetch_max(reading, Ordering::Relaxed);
    }

    /// The latest reading published.
    #[inline]
    pub fn read(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The interval the upkeep thread runs at, or why it could not be started.
static UPKEEP: OnceLock<Result<Duration, String>> = OnceLock::new();

/// Reads a timestamp that one background thread refreshes every `interval` (1 ms by default).
///
/// A read is one relaxed atomic load (about 0.5 ns), against ~24 ns for [`TscClock`] on this
/// repository's benchmark VM: the cheapest way to put a clock on a hot path, at the price of
/// resolution. Readings lag real time by at most one interval, so a limiter sees time pass in
/// steps: it never admits more than it should, but it may admit a little later. Prefer it
/// when the quota's emission interval (`period / limit`) is well above the interval.
///
/// The upkeep thread (named `sluicegate-clock`) is started once per process, on the first
/// `CoarseClock` built, however many limiters exist; the first caller's interval wins. It
/// samples the TSC through `quanta` on the same epoch as [`TscClock`], and publishes into this
/// crate's own atomic rather than quanta's global `recent()`: reading it costs ~0.5 ns instead
/// of ~2.5 ns, and another library's quanta upkeep settings cannot slow it down.
///
/// [`TscClock`]: super::TscClock
///
/// ```
/// use sluicegate::clock::{Clock, CoarseClock};
/// let clock = CoarseClock::default();
/// let before = clock.now();
/// // The upkeep thread moves it within a few intervals; allow a loaded machine far longer.
/// let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
/// while clock.now() == before && std::time::Instant::now() < deadline {
///     std::thread::sleep(clock.interval());
/// }
/// assert!(clock.now() > before);
/// ```
#[derive(Debug, Clone)]
pub struct CoarseClock {
    unix_offset: u64,
    interval: Duration,
}

impl CoarseClock {
    /// The upkeep interval used unless the first `CoarseClock` asks for another.
    pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(1);

    /// The shortest interval accepted; shorter requests are raised to it.
    pub const MIN_INTERVAL: Duration = Duration::from_micros(10);

    /// A coarse clock, starting the upkeep thread at [`Self::DEFAULT_INTERVAL`] if it is not
    /// running yet.
    ///
    /// # Panics
    /// If the operating system refuses to start the upkeep thread; see [`Self::try_with_interval`].
    pub fn new() -> Self {
        Self::with_interval(Self::DEFAULT_INTERVAL)
    }

    /// A coarse clock, starting the upkeep thread at `interval` if it is not running yet (if it
    /// is, the running interval is kept: see [`Self::interval`]).
    ///
    /// # Panics
    /// If the operating system refuses to start the upkeep thread; see [`Self::try_with_interval`].
    pub fn with_interval(interval: Duration) -> Self {
        Self::try_with_interval(interval).unwrap_or_else(|reason| panic!("{reason}"))
    }

    /// Like [`Self::with_interval`], but returns why the upkeep thread could not be started
    /// instead of panicking.
    pub fn try_with_interval(interval: Duration) -> Result<Self, String> {
        let interval = UPKEEP
            .get_or_init(|| start_upkeep(interval.max(Self::MIN_INTERVAL)))
            .clone()?;
        Ok(CoarseClock {
            unix_offset: epoch().unix_offset,
            interval,
        })
    }

    /// The interval the upkeep thread refreshes the time at: this clock's resolution.
    pub fn interval(&self) -> Duration {
        self.interval
    }
}

impl Default for CoarseClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for CoarseClock {
    #[inline]
    fn now(&self) -> u64 {
        RECENT.read()
    }

    fn unix_offset(&self) -> u64 {
        self.unix_offset
    }
}

/// Publishes one reading synchronously, so no reader ever sees the initial 0, then spawns the
/// thread that keeps publishing.
fn start_upkeep(interval: Duration) -> Result<Duration, String> {
    let epoch = epoch();
    RECENT.publish(epoch.elapsed_nanos());
    std::thread::Builder::new()
        .name("sluicegate-clock".into())
        .spawn(move || loop {
            std::thread::sleep(interval);
            // The only writer: `fetch_max` keeps readings monotonic even if the TSC is not.
            RECENT.publish(epoch.elapsed_nanos());
        })
        .map(|_| interval)
        .map_err(|error| format!("sluicegate: cannot start the CoarseClock upkeep thread: {error}"))
}
