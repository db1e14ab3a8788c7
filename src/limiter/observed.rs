//! [`Limiter`] as telemetry reads it.

use super::Limiter;
use crate::clock::Clock;
use crate::quota::Quota;
use crate::state::Algorithm;
use crate::telemetry::{Counts, Observed};

/// A direct limiter counts its checks with the `metrics` feature (in per-thread records, as
/// keyed limiters do); without it, only its quota and memory are reported.
impl<A: Algorithm, C: Clock> Observed for Limiter<A, C> {
    fn counts(&self) -> Option<Counts> {
        #[cfg(feature = "metrics")]
        return Some(Counts {
            allowed: self.allowed(),
            denied: self.denied(),
        });
        #[cfg(not(feature = "metrics"))]
        None
    }

    fn keys(&self) -> Option<usize> {
        None
    }

    fn memory_bytes(&self) -> Option<usize> {
        Some(Limiter::memory_bytes(self))
    }

    fn quota(&self) -> Option<Quota> {
        Some(Limiter::quota(self))
    }
}
