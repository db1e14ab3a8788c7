//! [`AnyKeyedBuilder`]: the knobs of an [`AnyKeyedLimiter`](super::AnyKeyedLimiter): a
//! [`KeyedBuilder`]'s, with the algorithm as a value.

use super::for_kind;
use super::keyed::{AnyKeyedLimiter, Keyed};
use crate::algorithm::{AlgorithmKind, Gcra};
use crate::clock::Clock;
use crate::error::QuotaError;
use crate::keyed::{table_setters, ClockSource, KeyedBuilder, TableOptions};
use crate::quota::Quota;
use std::fmt;
use std::hash::{BuildHasher, Hash};

/// Builds an [`AnyKeyedLimiter`]: a [`KeyedBuilder`]'s knobs (clock, hasher, shard count,
/// initial capacity, `max_keys`, name), with the algorithm as a value. Start with
/// [`AnyKeyedLimiter::builder`].
///
/// ```
/// use sluicegate::dynamic::AnyKeyedLimiter;
/// use sluicegate::clock::ManualClock;
/// use sluicegate::policy::AlgorithmKind;
/// use sluicegate::Quota;
///
/// let limiter = AnyKeyedLimiter::<String>::builder(Quota::per_minute(60), AlgorithmKind::SlidingLog)
///     .clock(ManualClock::new())
///     .shards(4)
///     .initial_capacity(1_000)
///     .max_keys(10_000)
///     .build()?;
/// assert_eq!(limiter.shards(), 4);
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
pub struct AnyKeyedBuilder<K, C, S> {
    algorithm: AlgorithmKind,
    /// Every other knob; its algorithm parameter is replaced when building.
    inner: KeyedBuilder<K, Gcra, C, S>,
}

impl<K, C: Clock, S> AnyKeyedBuilder<K, C, S> {
    pub(super) fn new(quota: Quota, algorithm: AlgorithmKind, hasher: S) -> Self
    where
        C: Default,
    {
        Self::from_source(quota, algorithm, ClockSource::Default(C::default), hasher)
    }

    pub(crate) fn from_source(
        quota: Quota,
        algorithm: AlgorithmKind,
        clock: ClockSource<C>,
        hasher: S,
    ) -> Self {
        AnyKeyedBuilder {
            algorithm,
            inner: KeyedBuilder::from_source(quota, clock, hasher),
        }
    }

    /// Reads time from `clock`.
    pub fn clock<C2: Clock>(self, clock: C2) -> AnyKeyedBuilder<K, C2, S> {
        AnyKeyedBuilder {
            algorithm: self.algorithm,
            inner: self.inner.clock(clock),
        }
    }

    /// Hashes keys with `hasher`; see [`KeyedBuilder::hasher`].
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> AnyKeyedBuilder<K, C, S2> {
        AnyKeyedBuilder {
            algorithm: self.algorithm,
            inner: self.inner.hasher(hasher),
        }
    }

    /// Runs `algorithm` instead of the one given to `builder`.
    pub fn algorithm(mut self, algorithm: AlgorithmKind) -> Self {
        self.algorithm = algorithm;
        self
    }

    table_setters!(inner.options);

    /// Every knob at once (for the tiers' builder).
    pub(crate) fn options(self, options: TableOptions) -> Self {
        self.map(|inner| inner.options(options))
    }

    fn map(
        self,
        change: impl FnOnce(KeyedBuilder<K, Gcra, C, S>) -> KeyedBuilder<K, Gcra, C, S>,
    ) -> Self {
        AnyKeyedBuilder {
            algorithm: self.algorithm,
            inner: change(self.inner),
        }
    }

    /// Builds the limiter, or says why the algorithm cannot run the quota.
    pub fn build(self) -> Result<AnyKeyedLimiter<K, C, S>, QuotaError>
    where
        K: Hash + Eq + Clone + Send + Sync,
        S: BuildHasher,
    {
        let inner = self.inner;
        for_kind!(Keyed, self.algorithm, A => inner.running::<A>().build()).map(AnyKeyedLimiter)
    }
}

impl<K, C: fmt::Debug, S> fmt::Debug for AnyKeyedBuilder<K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyKeyedBuilder")
            .field("algorithm", &self.algorithm)
            .field("inner", &self.inner)
            .finish()
    }
}
