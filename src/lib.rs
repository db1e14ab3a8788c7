//! # sluicegate
//!
//! A lock-free, in-process rate-limiter engine: "may this request go ahead?" answered in
//! nanoseconds, with the numbers a response needs (`remaining`, `retry_after`,
//! `reset_after`), by any of six algorithms behind one API.
//!
//! ```
//! use std::time::Duration;
//! use sluicegate::{Limiter, Quota};
//! use sluicegate::algorithm::{Gcra, SlidingWindow};
//! use sluicegate::clock::ManualClock;
//!
//! // 100 requests per minute, at most 20 at once.
//! let quota: Quota = "100/minute burst 20".parse()?;
//! let limiter = Limiter::<Gcra>::new(quota)?;
//! let decision = limiter.check();
//! assert!(decision.is_allowed());
//! assert_eq!(decision.remaining(), 19);
//!
//! // Tests drive time by hand.
//! let clock = ManualClock::new();
//! let windowed = Limiter::<SlidingWindow, _>::with_clock(Quota::per_second(2), clock.clone())?;
//! assert!(windowed.check_n(2)?.is_allowed());
//! let denied = windowed.check();
//! assert!(denied.is_denied());
//! clock.advance(denied.retry_after().unwrap());
//! assert!(windowed.check().is_allowed());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - [`Quota`]: `limit` per `period`, with a `burst`; built, or parsed from `"100/minute"`.
//! - [`algorithm`]: [`Gcra`](algorithm::Gcra) (the default), [`TokenBucket`](algorithm::TokenBucket),
//!   [`LeakyBucket`](algorithm::LeakyBucket) (shaping: tells you how long to
//!   [`wait`](Decision::wait)), [`FixedWindow`](algorithm::FixedWindow),
//!   [`SlidingWindow`](algorithm::SlidingWindow) and [`SlidingLog`](algorithm::SlidingLog).
//! - [`clock`]: [`TscClock`](clock::TscClock) (precise), [`CoarseClock`](clock::CoarseClock)
//!   (one atomic load) and [`ManualClock`](clock::ManualClock) (tests).
//! - [`Limiter`]: one state; [`KeyedLimiter`]: a state per key (users, IPs, tokens), in a
//!   sharded lock-free table with bounded memory; [`Composite`]: several limits at once.
//! - [`Decision`]: the answer.
//! - [`backend`]: the seam every backend implements ([`Backend`](backend::Backend)), so that
//!   the HTTP layer, composites and waiting take an in-process limiter or a shared one alike.
//!
//! Each algorithm is a pure transition on one packed `u64` (the sliding log excepted), applied
//! by a single compare-and-swap loop; a denial writes nothing. Every algorithm's header in the
//! source documents its rule, bit layout, supported range and precision; quotas outside the
//! range are refused with a [`QuotaError`] when the limiter is built, never mis-enforced. Every
//! concurrent path is model-checked with loom (`loom-tests/` in the repository).
#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]

pub mod algorithm;
pub mod backend;
mod cell;
pub mod clock;
mod composite;
#[cfg(feature = "serde")]
pub mod config;
mod decision;
pub mod dynamic;
mod error;
#[cfg(feature = "http")]
pub mod http;
mod keyed;
mod limiter;
mod log_ring;
pub mod policy;
mod quota;
mod reclaim;
#[cfg(feature = "redis")]
pub mod redis;
mod sync;
mod table;
pub mod telemetry;
pub mod tiers;
#[cfg(feature = "tokio")]
pub mod wait;

pub use composite::{Composite, Keyed, Limit};
pub use decision::{Decision, Numbers};
pub use error::{CapacityError, QuotaError};
pub use keyed::{KeyedBuilder, KeyedLimiter};
pub use limiter::Limiter;
pub use quota::Quota;

/// The README's examples, compiled and run as doctests so they cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
