//! [`Health`]: whether a standalone link is worth calling, and when to probe it.
//!
//! A circuit breaker: a connection error, or three timeouts in a row, mark the link down;
//! while it is down every call fails at once with `Unavailable` (so a fallback answers
//! without waiting out a timeout per request), and one background task (the link's probe)
//! sends `PING` every [`PROBE_INTERVAL`] until Redis answers, then marks it up. A lazily
//! built limiter starts down with its probe running, so it can be built while Redis is down
//! (its link holds the first calls until that probe's first answer).
//!
//! This is the breaker's state only: it knows nothing of connections. The link runs the
//! probe when [`Health::failed`] or [`Health::claim_probe`] says one is wanted.

use super::error::RedisError;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::time::Duration;

/// How often the probe asks a link that is down.
pub(crate) const PROBE_INTERVAL: Duration = Duration::from_millis(100);

/// Timeouts in a row that mark a link down (one slow call is not an outage).
const TIMEOUTS_TO_TRIP: u32 = 3;

/// The breaker's state.
#[derive(Debug)]
pub(crate) struct Health {
    up: AtomicBool,
    probing: AtomicBool,
    timeouts: AtomicU32,
    /// No breaker (clusters: the connection fails over per node by itself).
    always_up: bool,
}

impl Health {
    pub(crate) fn new(start_down: bool, always_up: bool) -> Health {
        Health {
            up: AtomicBool::new(!start_down),
            probing: AtomicBool::new(false),
            timeouts: AtomicU32::new(0),
            always_up,
        }
    }

    /// True when calls should go to Redis.
    #[inline]
    pub(crate) fn is_up(&self) -> bool {
        self.always_up || self.up.load(Relaxed)
    }

    /// A call was answered.
    #[inline]
    pub(crate) fn succeeded(&self) {
        if self.timeouts.load(Relaxed) != 0 {
            self.timeouts.store(0, Relaxed);
        }
    }

    /// A call failed with `error`: trips the breaker on an outage. True when the caller
    /// must start the probe (the breaker tripped and no probe is running).
    #[must_use = "a tripped breaker stays down until a probe runs"]
    pub(crate) fn failed(&self, error: &RedisError) -> bool {
        let trip = match error {
            RedisError::Unavailable { .. } => true,
            RedisError::Timeout { .. } => {
                self.timeouts.fetch_add(1, Relaxed) + 1 >= TIMEOUTS_TO_TRIP
            }
            _ => false,
        };
        if trip && !self.always_up {
            self.up.store(false, Relaxed);
            return self.claim_probe();
        }
        false
    }

    /// True when the caller must start the probe: there is a breaker and no probe is
    /// running (from now on one is counted as running).
    #[must_use = "a claimed probe must be started"]
    pub(crate) fn claim_probe(&self) -> bool {
        !self.always_up && !self.probing.swap(true, Relaxed)
    }

    /// The probe got an answer: the link is up and the probe ends.
    pub(crate) fn recovered(&self) {
        // Stop probing first: a failure racing this gets a probe of its own.
        self.probing.store(false, Relaxed);
        self.timeouts.store(0, Relaxed);
        self.up.store(true, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout() -> RedisError {
        RedisError::Timeout {
            after: Duration::from_millis(1),
        }
    }

    #[test]
    fn three_timeouts_in_a_row_or_one_connection_error_trip_it() {
        let health = Health::new(false, false);
        assert!(!health.failed(&timeout()) && !health.failed(&timeout()));
        health.succeeded();
        assert!(!health.failed(&timeout()) && !health.failed(&timeout()));
        assert!(health.is_up());
        assert!(
            health.failed(&timeout()),
            "the third timeout starts the probe"
        );
        assert!(!health.is_up());
        assert!(!health.failed(&timeout()), "one probe at a time");
        assert!(!health.claim_probe());
        health.recovered();
        assert!(health.is_up());
        assert!(health.failed(&RedisError::unavailable("refused")));
        assert!(!health.is_up());
    }

    #[test]
    fn without_a_breaker_it_is_always_up_and_never_probes() {
        let health = Health::new(false, true);
        for _ in 0..5 {
            assert!(!health.failed(&RedisError::unavailable("refused")));
        }
        assert!(health.is_up() && !health.claim_probe());
    }
}
