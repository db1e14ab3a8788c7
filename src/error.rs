//! The two errors a caller can meet: a quota that cannot be built or run, and a request that
//! can never fit.

use std::fmt;
use std::time::Duration;

/// Why a [`Quota`](crate::Quota) could not be built, parsed, or run by an algorithm.
///
/// Every variant's `Display` says what was wrong in a sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuotaError {
    /// The limit was zero: a quota must admit at least one request per period.
    ZeroLimit,
    /// The period was zero.
    ZeroPeriod,
    /// The burst was zero: a quota must admit at least one request at once.
    ZeroBurst,
    /// The period is longer than [`Quota::MAX_PERIOD`](crate::Quota::MAX_PERIOD).
    PeriodTooLong {
        /// The period that was asked for.
        period: Duration,
        /// The longest period supported.
        max: Duration,
    },
    /// A quota string could not be parsed.
    Parse {
        /// The string as given.
        input: String,
        /// 1-based column (in characters) where the problem starts.
        column: usize,
        /// What was expected or wrong there.
        reason: String,
    },
    /// The algorithm cannot run this quota exactly within its packed state; the reason names
    /// the limit it hit and, where one exists, an algorithm that can.
    Unsupported {
        /// The algorithm's name, e.g. `"TokenBucket"`.
        algorithm: &'static str,
        /// Why, in a sentence.
        reason: String,
    },
}

impl fmt::Display for QuotaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuotaError::ZeroLimit => f.write_str("a quota's limit must be at least 1 request"),
            QuotaError::ZeroPeriod => f.write_str("a quota's period must be longer than zero"),
            QuotaError::ZeroBurst => f.write_str("a quota's burst must be at least 1 request"),
            QuotaError::PeriodTooLong { period, max } => write!(
                f,
                "a quota's period of {period:?} is too long: the longest supported is {max:?}"
            ),
            QuotaError::Parse {
                input,
                column,
                reason,
            } => write!(f, "invalid quota {input:?}: {reason} at column {column}"),
            QuotaError::Unsupported { algorithm, reason } => {
                write!(f, "{algorithm} cannot run this quota: {reason}")
            }
        }
    }
}

impl std::error::Error for QuotaError {}

/// A request whose cost exceeds what the limiter can ever admit at once.
///
/// Returned by `check_n` instead of a denial, because waiting would never help: no amount of
/// time refills a bucket beyond its capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapacityError {
    requested: u32,
    capacity: u32,
}

impl CapacityError {
    pub(crate) fn new(requested: u32, capacity: u32) -> Self {
        CapacityError {
            requested,
            capacity,
        }
    }

    /// The cost that was asked for.
    pub fn requested(&self) -> u32 {
        self.requested
    }

    /// The most the limiter can admit at once (the quota's burst, or its limit for the
    /// window algorithms).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a request of cost {} can never be admitted: the capacity is {}",
            self.requested, self.capacity
        )
    }
}

impl std::error::Error for CapacityError {}
