//! [`Jitter`]: a random extra delay, so that clients told to come back at the same instant
//! do not all come back at that instant.

use std::cell::Cell;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// A random extra delay added to each wait for a denied request, uniform in `[min, max]`.
///
/// When many tasks wait on one limit, they are all told the same `retry_after`; without
/// jitter they wake together, one wins, and the rest sleep again: a thundering herd. A jitter
/// of about one emission interval spreads them out.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::wait::Jitter;
///
/// let jitter = Jitter::up_to(Duration::from_millis(10));
/// assert!(jitter.sample() <= Duration::from_millis(10));
/// assert_eq!(Jitter::NONE.sample(), Duration::ZERO);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Jitter {
    min: Duration,
    max: Duration,
}

impl Jitter {
    /// No extra delay.
    pub const NONE: Jitter = Jitter {
        min: Duration::ZERO,
        max: Duration::ZERO,
    };

    /// Between zero and `max`.
    pub fn up_to(max: Duration) -> Self {
        Jitter::new(Duration::ZERO, max)
    }

    /// Between `min` and `max` (in either order).
    pub fn new(min: Duration, max: Duration) -> Self {
        Jitter {
            min: min.min(max),
            max: min.max(max),
        }
    }

    /// One random delay.
    pub fn sample(&self) -> Duration {
        let span = (self.max - self.min).as_nanos();
        if span == 0 {
            return self.min;
        }
        let offset = u128::from(next_random()) % (span + 1);
        // `offset <= span`, and `span` came from a `Duration`.
        self.min + Duration::from_nanos(u64::try_from(offset).unwrap_or(u64::MAX))
    }
}

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

/// A random seed per thread, from the standard library's randomly keyed hasher.
fn seed() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0x9e37_79b9_7f4a_7c15);
    hasher.finish() | 1
}

/// xorshift64*: statistically fine for spreading wake-ups, and no dependency.
fn next_random() -> u64 {
    STATE.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_stay_in_range_and_vary() {
        let jitter = Jitter::new(Duration::from_millis(20), Duration::from_millis(10));
        let samples: Vec<Duration> = (0..1000).map(|_| jitter.sample()).collect();
        assert!(samples
            .iter()
            .all(|s| (Duration::from_millis(10)..=Duration::from_millis(20)).contains(s)));
        let distinct: std::collections::HashSet<_> = samples.iter().collect();
        assert!(distinct.len() > 900, "{} distinct of 1000", distinct.len());
        let fixed = Jitter::new(Duration::from_millis(3), Duration::from_millis(3));
        assert_eq!(fixed.sample(), Duration::from_millis(3));
    }
}
