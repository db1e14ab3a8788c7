//! [`AnyLimiter`] and [`AnyKeyedLimiter`] as telemetry reads them: whatever the generic
//! limiter they hold reports.

use super::direct::Direct;
use super::keyed::Keyed;
use super::{dispatch, AnyKeyedLimiter, AnyLimiter};
use crate::clock::Clock;
use crate::quota::Quota;
use crate::telemetry::{Counts, Observed};
use std::hash::{BuildHasher, Hash};

/// Delegates every figure of [`Observed`] to `$inner`.
macro_rules! delegate_observed {
    ($self:ident => $inner:expr) => {
        fn counts(&$self) -> Option<Counts> {
            $inner.counts()
        }

        fn keys(&$self) -> Option<usize> {
            $inner.keys()
        }

        fn memory_bytes(&$self) -> Option<usize> {
            $inner.memory_bytes()
        }

        fn swept_keys(&$self) -> Option<u64> {
            $inner.swept_keys()
        }

        fn table_full(&$self) -> Option<u64> {
            $inner.table_full()
        }

        fn quota(&$self) -> Option<Quota> {
            $inner.quota()
        }
    };
}

impl<K, C, S> AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    fn observed(&self) -> &dyn Observed {
        dispatch!(Keyed, &self.0, limiter => limiter)
    }
}

impl<K, C, S> Observed for AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    delegate_observed!(self => self.observed());
}

impl<C: Clock> AnyLimiter<C> {
    fn observed(&self) -> &dyn Observed {
        dispatch!(Direct, self.inner(), limiter => limiter)
    }
}

impl<C: Clock> Observed for AnyLimiter<C> {
    delegate_observed!(self => self.observed());
}
