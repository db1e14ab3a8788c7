//! [`AnyLimiter`] and [`AnyKeyedLimiter`] as telemetry reads them.

use super::{AnyKeyedLimiter, AnyLimiter};
use crate::clock::Clock;
use crate::quota::Quota;
use crate::telemetry::{Counts, Observed};
use std::hash::{BuildHasher, Hash};

impl<K, C, S> Observed for AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    fn counts(&self) -> Option<Counts> {
        Some(Counts {
            allowed: self.allowed(),
            denied: self.denied(),
        })
    }

    fn keys(&self) -> Option<usize> {
        Some(self.len())
    }

    fn memory_bytes(&self) -> Option<usize> {
        Some(AnyKeyedLimiter::memory_bytes(self))
    }

    fn swept_keys(&self) -> Option<u64> {
        Some(AnyKeyedLimiter::swept_keys(self))
    }

    fn table_full(&self) -> Option<u64> {
        Some(self.table_full_denials())
    }

    fn quota(&self) -> Option<Quota> {
        Some(AnyKeyedLimiter::quota(self))
    }
}

/// As [`Limiter`](crate::Limiter)'s.
impl<C: Clock> Observed for AnyLimiter<C> {
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
        Some(AnyLimiter::memory_bytes(self))
    }

    fn quota(&self) -> Option<Quota> {
        Some(AnyLimiter::quota(self))
    }
}
