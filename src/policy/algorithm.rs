//! Parsing an [`AlgorithmKind`] from its kebab-case name, and asking it whether it runs a
//! quota.

use crate::algorithm::{
    AlgorithmKind, FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use crate::error::QuotaError;
use crate::quota::Quota;
use crate::state::engine::Engine;
use std::str::FromStr;

impl AlgorithmKind {
    /// Whether this algorithm runs `quota` in process, with the error building a limiter of it
    /// would give (a range it cannot hold exactly, an anchored quota without windows), without
    /// building one: for checking configuration before it is used. Decided as for a clock at
    /// the UNIX epoch; a clock's offset moves the aligned windows' range by at most one window.
    ///
    /// ```
    /// use sluicegate::{policy::AlgorithmKind, Quota};
    /// let anchored = Quota::per_minute(5).anchored();
    /// assert!(AlgorithmKind::FixedWindow.check_quota(&anchored).is_ok());
    /// assert!(AlgorithmKind::Gcra.check_quota(&anchored).is_err());
    /// ```
    pub fn check_quota(self, quota: &Quota) -> Result<(), QuotaError> {
        fn check<A: Engine>(quota: &Quota) -> Result<(), QuotaError> {
            A::params(quota, 0).map(drop)
        }
        match self {
            AlgorithmKind::Gcra => check::<Gcra>(quota),
            AlgorithmKind::TokenBucket => check::<TokenBucket>(quota),
            AlgorithmKind::LeakyBucket => check::<LeakyBucket>(quota),
            AlgorithmKind::FixedWindow => check::<FixedWindow>(quota),
            AlgorithmKind::SlidingWindow => check::<SlidingWindow>(quota),
            AlgorithmKind::SlidingLog => check::<SlidingLog>(quota),
        }
    }
}

impl FromStr for AlgorithmKind {
    type Err = super::PolicyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase().replace('_', "-");
        AlgorithmKind::ALL
            .into_iter()
            .find(|kind| kind.name() == wanted)
            .ok_or_else(|| super::PolicyError::UnknownAlgorithm(text.trim().to_owned()))
    }
}
