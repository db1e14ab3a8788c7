//! [`KeyedBuilder`]: the knobs of a [`KeyedLimiter`](super::KeyedLimiter).

use super::options::{table_setters, ClockSource, TableOptions};
use super::KeyedLimiter;
use crate::clock::Clock;
use crate::error::QuotaError;
use crate::quota::Quota;
use crate::state::Algorithm;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

/// Builds a [`KeyedLimiter`]: clock, hasher, shard count, initial capacity, `max_keys` and
/// name. Start with [`KeyedLimiter::builder`].
pub struct KeyedBuilder<K, A, C, S> {
    quota: Quota,
    clock: ClockSource<C>,
    hasher: S,
    pub(crate) options: TableOptions,
    types: PhantomData<fn() -> (K, A)>,
}

impl<K, A, C: Clock, S> KeyedBuilder<K, A, C, S> {
    pub(super) fn new(quota: Quota, hasher: S) -> Self
    where
        C: Default,
    {
        Self::from_source(quota, ClockSource::Default(C::default), hasher)
    }

    pub(crate) fn with_clock(quota: Quota, clock: C, hasher: S) -> Self {
        Self::from_source(quota, ClockSource::Given(clock), hasher)
    }

    pub(crate) fn from_source(quota: Quota, clock: ClockSource<C>, hasher: S) -> Self {
        KeyedBuilder {
            quota,
            clock,
            hasher,
            options: TableOptions::default(),
            types: PhantomData,
        }
    }

    /// Reads time from `clock`.
    pub fn clock<C2: Clock>(self, clock: C2) -> KeyedBuilder<K, A, C2, S> {
        KeyedBuilder {
            quota: self.quota,
            clock: ClockSource::Given(clock),
            hasher: self.hasher,
            options: self.options,
            types: PhantomData,
        }
    }

    /// Hashes keys with `hasher` (seed it, e.g. `ahash::RandomState::with_seeds`, for
    /// reproducible layouts).
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> KeyedBuilder<K, A, C, S2> {
        KeyedBuilder {
            quota: self.quota,
            clock: self.clock,
            hasher,
            options: self.options,
            types: PhantomData,
        }
    }

    table_setters!(options);

    /// Every knob at once (for the builders that wrap this one).
    pub(crate) fn options(mut self, options: TableOptions) -> Self {
        self.options = options;
        self
    }

    /// The same builder for another algorithm.
    pub(crate) fn running<A2>(self) -> KeyedBuilder<K, A2, C, S> {
        KeyedBuilder {
            quota: self.quota,
            clock: self.clock,
            hasher: self.hasher,
            options: self.options,
            types: PhantomData,
        }
    }

    /// Builds the limiter, or says why `A` cannot run the quota.
    pub fn build(self) -> Result<KeyedLimiter<K, A, C, S>, QuotaError>
    where
        K: Hash + Eq + Clone + Send + Sync,
        A: Algorithm,
        S: BuildHasher,
    {
        let (layout, name) = (self.options.layout(), self.options.name());
        KeyedLimiter::from_parts(self.quota, self.clock.take(), self.hasher, layout, name)
    }
}

impl<K, A, C: fmt::Debug, S> fmt::Debug for KeyedBuilder<K, A, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedBuilder")
            .field("quota", &self.quota)
            .field("clock", &self.clock)
            .field("options", &self.options)
            .finish()
    }
}
