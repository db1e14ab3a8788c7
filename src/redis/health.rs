//! [`Health`]: whether a standalone link is worth calling, and the probe that finds out when
//! it is again.
//!
//! A circuit breaker: a connection error, or three timeouts in a row, mark the link down;
//! while it is down every call fails at once with `Unavailable` (so a fallback answers
//! without waiting out a timeout per request), and one background task sends `PING` every
//! [`PROBE_INTERVAL`] until Redis answers, then marks it up. A lazily built limiter starts
//! down with its probe running, so it can be built while Redis is down.

use super::error::RedisError;
use super::link::Link;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Weak};
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

    /// A call failed with `error`: trips the breaker on an outage.
    pub(crate) fn failed(&self, error: &RedisError, link: &Arc<Link>) {
        let trip = match error {
            RedisError::Unavailable { .. } => true,
            RedisError::Timeout { .. } => {
                self.timeouts.fetch_add(1, Relaxed) + 1 >= TIMEOUTS_TO_TRIP
            }
            _ => false,
        };
        if trip && !self.always_up {
            self.up.store(false, Relaxed);
            self.start_probe(link);
        }
    }

    /// Starts the probe unless one is running. Needs a tokio runtime.
    pub(crate) fn start_probe(&self, link: &Arc<Link>) {
        if !self.always_up && !self.probing.swap(true, Relaxed) {
            tokio::spawn(probe(Arc::downgrade(link)));
        }
    }
}

/// Pings until Redis answers, then marks the link up; ends early when the limiter is gone.
async fn probe(link: Weak<Link>) {
    loop {
        let Some(strong) = link.upgrade() else {
            return;
        };
        let ping = tokio::time::timeout(strong.connect_timeout(), strong.ping()).await;
        if matches!(ping, Ok(Ok(()))) {
            let health = &strong.health;
            // Stop probing first: a failure racing this gets a probe of its own.
            health.probing.store(false, Relaxed);
            health.timeouts.store(0, Relaxed);
            health.up.store(true, Relaxed);
            return;
        }
        drop(strong);
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
}
