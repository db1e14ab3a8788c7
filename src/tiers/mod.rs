//! Different quotas for different classes of key in one limiter: free users 10 a minute, pro
//! 100, enterprise 1000, the tier chosen per request.
//!
//! A [`TieredLimiter`] holds one keyed table per tier, each with its own quota (and, if you
//! like, its own algorithm), behind one call: `check(&tier, &key)`. Tiers are any `Eq` type,
//! typically your own enum of plans or a `String` from configuration (checked by `&str`).
//!
//! ```
//! use sluicegate::tiers::TieredLimiter;
//! use sluicegate::Quota;
//!
//! #[derive(Debug, Clone, Copy, PartialEq, Eq)]
//! enum Plan { Free, Pro, Enterprise }
//!
//! let limits = TieredLimiter::<Plan, u64>::builder()
//!     .tier(Plan::Free, Quota::per_minute(10))
//!     .tier(Plan::Pro, Quota::per_minute(100))
//!     .tier(Plan::Enterprise, Quota::per_minute(1000))
//!     .build()?;
//! let user = 42;
//! assert_eq!(limits.check(&Plan::Free, &user)?.remaining(), 9);
//! assert_eq!(limits.check(&Plan::Pro, &user)?.remaining(), 99);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # A key that changes tier
//!
//! A key's state belongs to its tier. When a key moves to another tier (an upgrade, a
//! downgrade), its requests are counted in the new tier's table from then on, starting from
//! that tier's full allowance; what it spent in the old tier stays there, and is dropped
//! once it is back to fresh and swept. A key that moves back finds its old state as it left
//! it, minus what time has replenished. So within one period a key that switches tiers can
//! get at most the sum of the allowances of the tiers it used, never more: the tier is the
//! server's decision (a plan in a database), not the client's, so this bound is what matters.
//!
//! # Backends
//!
//! The [`Backend`](crate::backend::Backend) seam takes one quota per backend, so a tiered
//! limit enters it one tier at a time: [`TieredLimiter::tier`] returns the tier's
//! [`AnyKeyedLimiter`](crate::dynamic::AnyKeyedLimiter), which is a `Backend`.

mod builder;
mod error;
mod limiter;

pub use builder::TieredBuilder;
pub use error::{TierError, UnknownTier};

pub use limiter::TieredLimiter;
