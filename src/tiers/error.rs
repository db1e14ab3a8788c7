//! Why a tiered check or build failed: one error for the module, and [`UnknownTier`] for the
//! operations that can fail no other way.

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

/// Why a tiered limiter could not be built ([`TieredBuilder::build`](super::TieredBuilder::build)),
/// or a tiered `check_n` or `peek_n` could not decide. Tiers are named by their `Debug` form.
/// (`check`, `peek` and `hit`, which can only miss a tier, say just that: [`UnknownTier`].)
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TierError {
    /// The tier is not one of the limiter's tiers.
    UnknownTier,
    /// The cost exceeds what the tier can ever admit at once.
    Capacity(CapacityError),
    /// Building: no tier was given.
    NoTiers,
    /// Building: the same tier was given twice.
    DuplicateTier(String),
    /// Building: a tier's algorithm cannot run its quota.
    Quota {
        /// The tier.
        tier: String,
        /// Why.
        error: QuotaError,
    },
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
            TierError::NoTiers => f.write_str("a tiered limiter needs at least one tier"),
            TierError::DuplicateTier(tier) => write!(f, "tier {tier} is given twice"),
            TierError::Quota { tier, error } => write!(f, "tier {tier}: {error}"),
        }
    }
}

impl std::error::Error for TierError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TierError::Capacity(error) => Some(error),
            TierError::Quota { error, .. } => Some(error),
            TierError::UnknownTier | TierError::NoTiers | TierError::DuplicateTier(_) => None,
        }
    }
}
