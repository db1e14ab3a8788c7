//! Why a tiered check or build failed.

use crate::error::{CapacityError, QuotaError};
use std::fmt;

/// The tier asked for is not one of the limiter's tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownTier;

impl fmt::Display for UnknownTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the tier is not one of the limiter's tiers")
    }
}

impl std::error::Error for UnknownTier {}

/// Why a tiered `check_n` or `peek_n` could not decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TierError {
    /// The tier is not one of the limiter's tiers.
    UnknownTier,
    /// The cost exceeds what the tier can ever admit at once.
    Capacity(CapacityError),
}

impl From<UnknownTier> for TierError {
    fn from(_: UnknownTier) -> Self {
        TierError::UnknownTier
    }
}

impl From<CapacityError> for TierError {
    fn from(error: CapacityError) -> Self {
        TierError::Capacity(error)
    }
}

impl fmt::Display for TierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TierError::UnknownTier => UnknownTier.fmt(f),
            TierError::Capacity(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for TierError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TierError::UnknownTier => None,
            TierError::Capacity(error) => Some(error),
        }
    }
}

/// Why a [`TieredLimiter`](super::TieredLimiter) could not be built. Tiers are named by
/// their `Debug` form.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TierBuildError {
    /// No tier was given.
    NoTiers,
    /// The same tier was given twice.
    DuplicateTier(String),
    /// A tier's algorithm cannot run its quota.
    Quota {
        /// The tier.
        tier: String,
        /// Why.
        error: QuotaError,
    },
}

impl fmt::Display for TierBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TierBuildError::NoTiers => f.write_str("a tiered limiter needs at least one tier"),
            TierBuildError::DuplicateTier(tier) => write!(f, "tier {tier} is given twice"),
            TierBuildError::Quota { tier, error } => write!(f, "tier {tier}: {error}"),
        }
    }
}

impl std::error::Error for TierBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TierBuildError::Quota { error, .. } => Some(error),
            _ => None,
        }
    }
}
