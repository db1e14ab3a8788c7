//! [`AnyKeyedBuilder`]: the knobs of an [`AnyKeyedLimiter`](super::AnyKeyedLimiter).

use super::for_kind;
use super::keyed::{AnyKeyedLimiter, Keyed};
use crate::clock::{Clock, ManualClock};
use crate::error::QuotaError;
use crate::keyed::{KeyedBuilder, KeyedLimiter};
use crate::policy::AlgorithmKind;
use crate::quota::Quota;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

/// Where the clock will come from: one given, or the type's default made at `build` (so a
/// default [`CoarseClock`](crate::clock::CoarseClock) replaced by `.clock(...)` never starts).
enum ClockSource<C> {
    Given(C),
    Default(fn() -> C),
}

/// Builds an [`AnyKeyedLimiter`]: the same knobs as [`KeyedBuilder`] (clock, hasher, shard
/// count, initial capacity, `max_keys`), with the algorithm as a value. Start with
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
    quota: Quota,
    algorithm: AlgorithmKind,
    clock: ClockSource<C>,
    hasher: S,
    shards: Option<usize>,
    initial_keys: Option<usize>,
    max_keys: Option<usize>,
    keys: PhantomData<fn() -> K>,
}

impl<K, C: Clock, S> AnyKeyedBuilder<K, C, S> {
    pub(super) fn new(quota: Quota, algorithm: AlgorithmKind, hasher: S) -> Self
    where
        C: Default,
    {
        Self::from_source(quota, algorithm, ClockSource::Default(C::default), hasher)
    }

    pub(crate) fn with_clock(quota: Quota, algorithm: AlgorithmKind, clock: C, hasher: S) -> Self {
        Self::from_source(quota, algorithm, ClockSource::Given(clock), hasher)
    }

    fn from_source(
        quota: Quota,
        algorithm: AlgorithmKind,
        clock: ClockSource<C>,
        hasher: S,
    ) -> Self {
        AnyKeyedBuilder {
            quota,
            algorithm,
            clock,
            hasher,
            shards: None,
            initial_keys: None,
            max_keys: None,
            keys: PhantomData,
        }
    }

    /// Reads time from `clock`.
    pub fn clock<C2: Clock>(self, clock: C2) -> AnyKeyedBuilder<K, C2, S> {
        AnyKeyedBuilder {
            quota: self.quota,
            algorithm: self.algorithm,
            clock: ClockSource::Given(clock),
            hasher: self.hasher,
            shards: self.shards,
            initial_keys: self.initial_keys,
            max_keys: self.max_keys,
            keys: PhantomData,
        }
    }

    /// Hashes keys with `hasher`; see [`KeyedBuilder::hasher`].
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> AnyKeyedBuilder<K, C, S2> {
        AnyKeyedBuilder {
            quota: self.quota,
            algorithm: self.algorithm,
            clock: self.clock,
            hasher,
            shards: self.shards,
            initial_keys: self.initial_keys,
            max_keys: self.max_keys,
            keys: PhantomData,
        }
    }

    /// Runs `algorithm` instead of the one given to `builder`.
    pub fn algorithm(mut self, algorithm: AlgorithmKind) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Splits the table into `shards` shards; see [`KeyedBuilder::shards`].
    pub fn shards(mut self, shards: usize) -> Self {
        self.shards = Some(shards);
        self
    }

    /// Sizes the table for `keys` keys up front; see [`KeyedBuilder::initial_capacity`].
    pub fn initial_capacity(mut self, keys: usize) -> Self {
        self.initial_keys = Some(keys);
        self
    }

    /// Holds at most `max_keys` keys; see [`KeyedBuilder::max_keys`].
    pub fn max_keys(mut self, max_keys: usize) -> Self {
        self.max_keys = Some(max_keys);
        self
    }

    /// Builds the limiter, or says why the algorithm cannot run the quota.
    pub fn build(self) -> Result<AnyKeyedLimiter<K, C, S>, QuotaError>
    where
        K: Hash + Eq + Clone + Send + Sync,
        S: BuildHasher,
    {
        let clock = match self.clock {
            ClockSource::Given(clock) => clock,
            ClockSource::Default(make) => make(),
        };
        let settings = Settings {
            shards: self.shards,
            initial_keys: self.initial_keys,
            max_keys: self.max_keys,
        };
        let (quota, hasher) = (self.quota, self.hasher);
        for_kind!(Keyed, self.algorithm, A => settings.apply(generic::<K, A>(quota).clock(clock).hasher(hasher)).build())
            .map(AnyKeyedLimiter)
    }
}

/// The knobs that keep `KeyedBuilder`'s defaults unless set.
struct Settings {
    shards: Option<usize>,
    initial_keys: Option<usize>,
    max_keys: Option<usize>,
}

impl Settings {
    fn apply<K, A, C: Clock, S>(
        &self,
        mut builder: KeyedBuilder<K, A, C, S>,
    ) -> KeyedBuilder<K, A, C, S> {
        if let Some(shards) = self.shards {
            builder = builder.shards(shards);
        }
        if let Some(keys) = self.initial_keys {
            builder = builder.initial_capacity(keys);
        }
        if let Some(max_keys) = self.max_keys {
            builder = builder.max_keys(max_keys);
        }
        builder
    }
}

/// A generic builder whose clock and hasher are replaced at once: the public
/// `KeyedLimiter::builder` needs default-constructible ones to start from, and ManualClock's
/// default is never made, as the builder only keeps a pointer to `ManualClock::default`.
fn generic<K, A>(quota: Quota) -> KeyedBuilder<K, A, ManualClock, ahash::RandomState>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: crate::algorithm::Algorithm,
{
    KeyedLimiter::<K, A, ManualClock, ahash::RandomState>::builder(quota)
}

impl<K, C: fmt::Debug, S> fmt::Debug for AnyKeyedBuilder<K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clock: &dyn fmt::Debug = match &self.clock {
            ClockSource::Given(clock) => clock,
            ClockSource::Default(_) => &"default",
        };
        f.debug_struct("AnyKeyedBuilder")
            .field("quota", &self.quota)
            .field("algorithm", &self.algorithm)
            .field("clock", clock)
            .field("shards", &self.shards)
            .field("initial_capacity", &self.initial_keys)
            .field("max_keys", &self.max_keys)
            .finish()
    }
}
