//! Limiters whose algorithm is chosen at run time: [`AnyLimiter`] and [`AnyKeyedLimiter`].
//!
//! [`Limiter`](crate::Limiter) and [`KeyedLimiter`](crate::KeyedLimiter) name their algorithm
//! as a type parameter, so the hot path is monomorphic. When the algorithm comes from a
//! configuration file or a command line instead (an [`AlgorithmKind`](crate::policy::AlgorithmKind), or a whole
//! [`Policy`](crate::policy::Policy)), these two enums hold one of the six generic limiters
//! and dispatch every call with one `match`: the branch always goes the same way for a given
//! limiter, so the processor predicts it and the dispatch costs well under a nanosecond
//! (`benches/dispatch.rs` measures it beside the generic limiters).
//!
//! Both decide exactly as the generic limiter they hold (the property tests in
//! `tests/dynamic_*.rs` run random traces through both), implement the
//! [`Backend`](crate::backend::Backend) seam, and report through
//! [`Observed`](crate::telemetry::Observed).
//!
//! ```
//! use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
//! use sluicegate::policy::{AlgorithmKind, Policy};
//!
//! // The algorithm is a value, e.g. read from a configuration file.
//! let kind: AlgorithmKind = "sliding-window".parse()?;
//! let global = AnyLimiter::<sluicegate::clock::TscClock>::new("100/minute".parse()?, kind)?;
//! assert!(global.check().is_allowed());
//! assert_eq!(global.algorithm(), AlgorithmKind::SlidingWindow);
//!
//! let policy: Policy = "name=users; quota=2/second; algorithm=token-bucket".parse()?;
//! let per_user = AnyKeyedLimiter::<String>::from_policy(&policy)?;
//! assert!(per_user.check("alice").is_allowed());
//! assert!(per_user.check("alice").is_allowed());
//! assert!(per_user.check("alice").is_denied());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod backend;
mod builder;
mod direct;
mod keyed;
mod observed;

pub use builder::AnyKeyedBuilder;
pub use direct::AnyLimiter;
pub use keyed::{AnyKeyed, AnyKeyedLimiter};

/// Runs `$body` on whichever limiter `$value` (an enum with one variant per algorithm, each
/// holding that algorithm's limiter) holds, bound as `$inner`: the one `match` every call
/// of the dynamic limiters goes through.
macro_rules! dispatch {
    ($enum:ident, $value:expr, $inner:ident => $body:expr) => {
        match $value {
            $enum::Gcra($inner) => $body,
            $enum::TokenBucket($inner) => $body,
            $enum::LeakyBucket($inner) => $body,
            $enum::FixedWindow($inner) => $body,
            $enum::SlidingWindow($inner) => $body,
            $enum::SlidingLog($inner) => $body,
        }
    };
}
pub(crate) use dispatch;

/// Builds `$make` (an expression generic over the algorithm type `$algorithm`) for `$kind`,
/// wrapped in `$enum`'s variant for that algorithm.
macro_rules! for_kind {
    ($enum:ident, $kind:expr, $algorithm:ident => $make:expr) => {{
        use $crate::algorithm as algo;
        use $crate::policy::AlgorithmKind as Kind;
        match $kind {
            Kind::Gcra => {
                type $algorithm = algo::Gcra;
                $make.map($enum::Gcra)
            }
            Kind::TokenBucket => {
                type $algorithm = algo::TokenBucket;
                $make.map($enum::TokenBucket)
            }
            Kind::LeakyBucket => {
                type $algorithm = algo::LeakyBucket;
                $make.map($enum::LeakyBucket)
            }
            Kind::FixedWindow => {
                type $algorithm = algo::FixedWindow;
                $make.map($enum::FixedWindow)
            }
            Kind::SlidingWindow => {
                type $algorithm = algo::SlidingWindow;
                $make.map($enum::SlidingWindow)
            }
            Kind::SlidingLog => {
                type $algorithm = algo::SlidingLog;
                $make.map($enum::SlidingLog)
            }
        }
    }};
}
pub(crate) use for_kind;
