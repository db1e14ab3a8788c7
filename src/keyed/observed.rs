//! [`KeyedLimiter`] as telemetry reads it.

use super::KeyedLimiter;
use crate::clock::Clock;
use crate::quota::Quota;
use crate::state::Algorithm;
use crate::telemetry::{Counts, Observed};
use std::hash::{BuildHasher, Hash};

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
