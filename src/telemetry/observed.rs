//! [`Observed`]: what a limiter tells dashboards and metrics about itself.

use crate::algorithm::Algorithm;
use crate::clock::Clock;
use crate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use crate::keyed::KeyedLimiter;
use crate::limiter::Limiter;
use crate::quota::Quota;
use std::hash::{BuildHasher, Hash};

/// Checks decided so far: allowed and denied (peeks are not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Counts {
    /// Checks allowed.
    pub allowed: u64,
    /// Checks denied.
    pub denied: u64,
}

/// A limiter's figures, read without touching its hot path: [`Snapshot`](super::Snapshot)
/// and the metrics `Publisher` (feature `metrics`) read limiters through this trait.
///
/// Every figure is optional: a limiter reports what it keeps. Keyed limiters count their
/// checks in per-thread records, summed when read, so reading costs the reader a walk over
/// those records and costs the checks nothing.
///
/// Implemented for every limiter of this crate; implement it for your own wrappers to
/// publish them the same way.
pub trait Observed: Send + Sync {
    /// Checks allowed and denied so far, if this limiter counts them.
    fn counts(&self) -> Option<Counts>;

    /// Keys currently held, for a keyed limiter.
    fn keys(&self) -> Option<usize>;

    /// Bytes the limiter holds, if it measures them.
    fn memory_bytes(&self) -> Option<usize>;

    /// Idle keys dropped by sweeps so far, if counted.
    fn swept_keys(&self) -> Option<u64> {
        None
    }

    /// Requests denied because the key table was full, if counted.
    fn table_full(&self) -> Option<u64> {
        None
    }

    /// The quota every key gets, when there is one.
    fn quota(&self) -> Option<Quota> {
        None
    }
}

impl<K, A, C, S> Observed for KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
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
        Some(KeyedLimiter::memory_bytes(self))
    }

    fn swept_keys(&self) -> Option<u64> {
        Some(KeyedLimiter::swept_keys(self))
    }

    fn table_full(&self) -> Option<u64> {
        Some(self.table_full_denials())
    }

    fn quota(&self) -> Option<Quota> {
        Some(KeyedLimiter::quota(self))
    }
}

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

/// As [`Limiter`]'s.
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
