//! [`Throttle`]: at most one warning per interval, counting the ones it holds back.

use crate::sync::{AtomicU64, Ordering::Relaxed};

/// How often a throttled event may be emitted.
// `pub` for the loom model's export only (`telemetry::Throttle` under `--cfg loom`).
#[cfg_attr(not(loom), allow(unreachable_pub))]
pub const INTERVAL_NANOS: u64 = 1_000_000_000;

/// Lets one event through per interval (one second) and counts the others, so the next
/// event can say how many were suppressed. Lock-free: a load and, once per interval, a CAS; a
/// suppressed event costs one `fetch_add` (warnings are the cold path; the checks that do not
/// warn never touch it). Model-checked with loom (`loom-tests/tests/telemetry.rs`). Public as
/// `sluicegate::telemetry::Throttle` (feature `tracing`) for programs that throttle their own
/// warnings the same way:
///
/// ```
/// # #[cfg(feature = "tracing")] {
/// use sluicegate::telemetry::Throttle;
///
/// let throttle = Throttle::new();
/// let second = 1_000_000_000; // `now` in nanoseconds, on a clock that only goes forward
/// assert_eq!(throttle.admit(0), Some(0)); // log it: nothing was held back
/// assert_eq!(throttle.admit(1), None); // within the second: held back, and counted
/// assert_eq!(throttle.admit(second), Some(1)); // log it, saying 1 was suppressed
/// # }
/// ```
#[derive(Debug)]
#[cfg_attr(not(loom), allow(unreachable_pub))]
pub struct Throttle {
    /// The earliest time (on the caller's clock) the next event may go out.
    next: AtomicU64,
    /// Events held back since the last one that went out.
    suppressed: AtomicU64,
}

#[cfg_attr(not(loom), allow(unreachable_pub))]
impl Throttle {
    /// A throttle that lets the first event through.
    pub fn new() -> Throttle {
        Throttle {
            next: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// `Some(events suppressed since the last one)` when an event at `now` (nanoseconds on
    /// the limiter's clock) may go out; `None`, counting it, when it must not. Of several
    /// threads at once, exactly one wins the interval.
    pub fn admit(&self, now: u64) -> Option<u64> {
        let next = self.next.load(Relaxed);
        if now >= next
            && self
                .next
                .compare_exchange(next, now.saturating_add(INTERVAL_NANOS), Relaxed, Relaxed)
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Relaxed));
        }
        self.suppressed.fetch_add(1, Relaxed);
        None
    }
}

impl Default for Throttle {
    fn default() -> Throttle {
        Throttle::new()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn one_event_per_second_reporting_the_rest() {
        let throttle = Throttle::new();
        assert_eq!(throttle.admit(0), Some(0));
        assert_eq!(throttle.admit(1), None);
        assert_eq!(throttle.admit(INTERVAL_NANOS - 1), None);
        assert_eq!(throttle.admit(INTERVAL_NANOS), Some(2));
        assert_eq!(throttle.admit(INTERVAL_NANOS + 5), None);
        // A long quiet spell: the next event goes out at once.
        assert_eq!(throttle.admit(100 * INTERVAL_NANOS), Some(1));
        // A clock stepping back never lets an extra event out.
        assert_eq!(throttle.admit(50 * INTERVAL_NANOS), None);
        assert_eq!(throttle.admit(101 * INTERVAL_NANOS), Some(1));
    }

    #[test]
    fn racing_threads_let_one_event_out_and_lose_no_count() {
        let throttle = Throttle::new();
        let admitted: Vec<Option<u64>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| (0..1000).map(|_| throttle.admit(7)).collect::<Vec<_>>()))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        assert_eq!(admitted.iter().filter(|a| a.is_some()).count(), 1);
        assert_eq!(throttle.admit(7 + INTERVAL_NANOS), Some(3999));
    }
}
