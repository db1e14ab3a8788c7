//! Log events through `tracing` (feature `tracing`), for the limiters' cold branches:
//! a denial at `debug`; a full key table and backend errors at `warn`, each throttled to
//! one event a second per limiter and kind, reporting how many were suppressed. Every event
//! names its limiter and shows a [`KeyHash`](super::KeyHash), never the key.
//!
//! Without the feature, [`LimiterLog`] is a zero-sized type whose methods are empty and
//! inline: a limiter can hold one and call it unconditionally, at no cost.
//!
//! | level | message | fields |
//! |---|---|---|
//! | `debug` | `request denied` | `limiter`, `key` (hash; absent for a direct limiter), `retry_after_ms` (absent when the table was full) |
//! | `warn` | `key table full: a new key was denied` | `limiter`, `key` (hash), `suppressed` |
//! | `warn` | `backend error` | `limiter`, `error`, `suppressed` |

#[cfg(feature = "tracing")]
mod events;
#[cfg(all(test, feature = "tracing"))]
mod tests;
#[cfg(feature = "tracing")]
mod throttle;

use crate::decision::Decision;
use std::fmt;
use std::hash::Hash;

#[cfg(feature = "tracing")]
pub(crate) use events::{backend_error, denied, table_full};
#[cfg(feature = "tracing")]
#[cfg_attr(not(loom), allow(unreachable_pub))]
pub use throttle::Throttle;
#[cfg(all(loom, feature = "tracing"))]
pub use throttle::INTERVAL_NANOS;

/// What a limiter needs to log: its name and one throttle per warning kind. Zero-sized, and
/// every method empty, without the `tracing` feature.
#[derive(Debug)]
pub(crate) struct LimiterLog {
    #[cfg(feature = "tracing")]
    name: Box<str>,
    #[cfg(feature = "tracing")]
    table_full: Throttle,
    #[cfg(feature = "tracing")]
    backend_error: Throttle,
}

impl LimiterLog {
    /// Events for the limiter called `name` (the label its metrics carry too).
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub(crate) fn new(name: &str) -> LimiterLog {
        LimiterLog {
            #[cfg(feature = "tracing")]
            name: name.into(),
            #[cfg(feature = "tracing")]
            table_full: Throttle::new(),
            #[cfg(feature = "tracing")]
            backend_error: Throttle::new(),
        }
    }

    /// `debug`: `decision` denied a request for `key`. Call it from the deny branch.
    #[inline(always)]
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub(crate) fn denied<Q: Hash + ?Sized>(&self, key: &Q, decision: &Decision) {
        #[cfg(feature = "tracing")]
        if tracing::level_enabled!(tracing::Level::DEBUG) {
            // By value: a reference would keep the decision in memory on the hot path,
            // where reading it back stalls on store forwarding (+7 ns a denial, measured).
            denied(&self.name, Some(key), *decision);
        }
    }

    /// `debug`: `decision` denied a request of a direct limiter (no key).
    #[inline(always)]
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub(crate) fn denied_direct(&self, decision: &Decision) {
        #[cfg(feature = "tracing")]
        if tracing::level_enabled!(tracing::Level::DEBUG) {
            denied::<()>(&self.name, None, *decision);
        }
    }

    /// `warn`, throttled: `key` was refused a slot because the table was full at `now`
    /// (nanoseconds on the limiter's clock).
    #[inline(always)]
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub(crate) fn table_full<Q: Hash + ?Sized>(&self, now: u64, key: &Q) {
        #[cfg(feature = "tracing")]
        table_full(&self.table_full, &self.name, now, key);
    }

    /// `warn`, throttled: the backend failed with `error` at `now`.
    #[inline(always)]
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    // Only remote backends fail this way.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn backend_error(&self, now: u64, error: &dyn fmt::Display) {
        #[cfg(feature = "tracing")]
        backend_error(&self.backend_error, &self.name, now, error);
    }
}
