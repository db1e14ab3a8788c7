//! What the limiters tell the outside: dashboards ([`Snapshot`], [`KeyState`]), metrics
//! through the `metrics` facade (feature `metrics`: `Publisher`) and logs through `tracing`
//! (feature `tracing`).
//!
//! Nothing here runs on the check path. Keyed limiters already count their checks in
//! per-thread records; snapshots and the publisher read those counts when asked (or every
//! interval, from one background thread) and push them as absolute values, so a check never
//! makes an atomic read-modify-write or a facade call for telemetry. With the features off
//! all of it compiles away.
//!
//! # Metrics
//!
//! Every name is a constant in [`names`], which also has the table of metrics and labels.
//! With the `metrics` feature, register limiters with a `Publisher` under a name (the
//! `limiter` label), then publish on demand or `spawn` one thread that publishes every
//! interval:
//!
//! ```
//! # #[cfg(feature = "metrics")] {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use sluicegate::telemetry::Publisher;
//! use sluicegate::{KeyedLimiter, Quota};
//!
//! let per_user = Arc::new(KeyedLimiter::<u64>::new(Quota::per_second(10))?);
//! let publisher = Publisher::new();
//! publisher.register("per-user", &per_user); // held weakly: dropping the limiter unregisters it
//! publisher.publish(); // now, through whatever recorder is installed
//! let thread = publisher.spawn(Duration::from_secs(10))?; // and every 10 s until dropped
//! # drop(thread);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Logs
//!
//! With the `tracing` feature, limiters log under the target `sluicegate`: a denial at
//! `debug` (`request denied`), a full key table (`key table full: a new key was denied`) and
//! backend errors (`backend error`) at `warn`, each warning at most once a second per
//! limiter and kind with a `suppressed` count of those held back. Events name the limiter
//! (`limiter`) and show a [`KeyHash`] of the key (`key`), never the key itself.

mod key_hash;
mod log;
/// The limiters' log throttle, for programs that log their own warnings the same way (at
/// most one a second per kind, with a count of those held back): `sluicegate-server` does.
#[cfg(all(not(loom), feature = "tracing"))]
pub use log::Throttle;
/// For `loom-tests` only: the throttle's model checks it directly.
#[cfg(all(loom, feature = "tracing"))]
#[doc(hidden)]
pub use log::{Throttle, INTERVAL_NANOS};
#[cfg(feature = "metrics")]
mod metrics;
pub mod names;
mod observed;
mod snapshot;

pub use key_hash::{key_hash, KeyHash};
#[cfg(feature = "metrics")]
pub use metrics::{describe, PublishThread, Publisher};
pub use observed::{Counts, Observed};
pub use snapshot::{KeyState, Snapshot};

pub(crate) use log::LimiterLog;
