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
//!   the HTTP layer, composites and waiting take an in-process limiter or a shared one alike,
//!   and the one all-or-nothing protocol every composite uses ([`backend::all_of`]).
//! - [`dynamic`]: [`AnyLimiter`](dynamic::AnyLimiter) and
//!   [`AnyKeyedLimiter`](dynamic::AnyKeyedLimiter), the algorithm chosen at run time;
//!   [`tiers`]: a quota per customer tier.
//! - [`redis`] (feature `redis`): [`RedisLimiter`](redis::RedisLimiter), the same limits
//!   shared by many servers, decided atomically by Lua scripts on Redis's clock.
//! - [`http`] (feature `http`): [`RateLimitLayer`](http::RateLimitLayer), the tower layer for
//!   axum, tonic and hyper, with the `RateLimit` headers and client keys that cannot be spoofed;
//!   and [`http::spec`], the front-end specification every front end (the layer's users, the
//!   Node and Python middlewares, `sluicegate-server`) translates its options into: limits,
//!   tiers, client-address rules, Redis, headers, bodies, read from JSON or YAML and checked
//!   in one place.
//! - [`wait`] (feature `tokio`): waiting for an admission instead of being refused, and
//!   [`WaitQueue`](wait::WaitQueue), waiting in line with `max_queue` and `max_wait`.
//! - [`telemetry`]: logs (feature `tracing`), metrics (feature `metrics`) and snapshots.
//!
//! The rate-limit service for Envoy and other languages, `sluicegate-server`, is the
//! repository's `server/` crate, built on this one.
//!
//! # Errors
//!
//! Each error says what went wrong in a sentence and is matched where it can happen:
//!
//! - building a limiter: [`QuotaError`] (a zero, overflowing or unsupported quota);
//! - deciding a cost: [`CapacityError`] (`check_n` of more than can ever fit at once);
//! - anything decided through the seam, in process or remote, one limit or a composite:
//!   [`BackendError`](backend::BackendError), whose [`kind`](backend::BackendError::kind)
//!   says capacity, timeout, unavailable or rejected, with the backend's own error (a
//!   `RedisError`) as its source and, in a composite, the failing
//!   [`member`](backend::BackendError::member);
//! - the rest belongs to one module each: `policy::PolicyError` (parsing a policy),
//!   `tiers::TierError` (building a tiered limiter, or a tiered `check_n`; a `check` that can
//!   only miss a tier says just that, `UnknownTier`), `redis::RedisError` (what `RedisLimiter`'s
//!   own methods return), and the HTTP layer's two: `http::KeyError` (a request without its
//!   key) and `http::BuildError`, the one configuration error of every front end (a layer's
//!   limits, a front-end specification, a network of trusted proxies), which holds every
//!   problem found, each naming its option by path.
//!
//! Each algorithm is a pure transition on one packed `u64` (the sliding log excepted), applied
//! by a single compare-and-swap loop; a denial writes nothing. Every algorithm's header in the
//! source documents its rule, bit layout, supported range and precision; quotas outside the
//! range are refused with a [`QuotaError`] when the limiter is built, never mis-enforced. Every
//! concurrent path is model-checked with loom (`loom-tests/` in the repository).
//!
//! The rest of this page is the manual: each part of the library in turn, with examples.
#![doc = include_str!("../docs/manual.md")]
#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]

pub mod algorithm;
pub mod backend;
pub mod clock;
#[cfg(feature = "serde")]
mod config;
mod decision;
pub mod dynamic;
mod error;
#[cfg(feature = "http")]
pub mod http;
mod keyed;
mod limiter;
pub mod policy;
mod quota;
#[cfg(feature = "redis")]
pub mod redis;
mod sync;
// Under `--cfg loom` the `redis` feature does not build (its async stack needs loom features
// of its own), so the loom models reach the Redis layer's lock-based bookkeeping, the same
// source files, through this module instead.
#[cfg(all(loom, not(feature = "redis")))]
#[doc(hidden)]
#[path = "redis/loom_only.rs"]
pub mod redis;
mod state;
pub mod telemetry;
pub mod tiers;
#[cfg(feature = "tokio")]
pub mod wait;

pub use backend::{Composite, Limit};
pub use decision::{Decision, Numbers, TABLE_FULL_RETRY_AFTER};
pub use error::{CapacityError, QuotaError};
pub use keyed::{KeyedBuilder, KeyedLimiter};
pub use limiter::Limiter;
pub use quota::Quota;
pub use state::Algorithm;

/// The README's examples, compiled and run as doctests so they cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
