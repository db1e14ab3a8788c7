//! [`KeyedBuilder`]: the knobs of a [`KeyedLimiter`](super::KeyedLimiter).

use super::options::{ClockSource, TableOptions};
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
    options: TableOptions,
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

    /// Splits the table into `shards` shards (rounded up to a power of two, at least 1).
    /// More shards mean smaller arrays to grow and less contention among threads inserting
    /// new keys; checks of existing keys never contend on a shard. Default: four per
    /// available core, between 4 and 256.
    pub fn shards(mut self, shards: usize) -> Self {
        self.options.shards = Some(shards);
        self
    }

    /// Sizes the table for `keys` keys up front, so it does not grow until it holds about
    /// that many. Default: a few slots per shard (a limiter with ten keys stays a few KiB).
    pub fn initial_capacity(mut self, keys: usize) -> Self {
        self.options.initial_keys = keys;
        self
    }

    /// Lets the table spend up to `bytes` of slots on staying sparse. A lookup reads the slots
    /// it passes on the way to its key, and threads checking different keys fetch each line
    /// another core wrote, so a small table keeps only 3-4% of its slots in use: most probes
    /// end at the key's home slot and most cache lines hold one key. Past the budget, arrays
    /// are dense (68-85% used, 19-24 bytes a `u64` key). Default: 4 MiB for the whole table,
    /// about 500 bytes a `u64` key up to 8,000 keys; 0 keeps it dense from its first key (for
    /// many small limiters where memory matters more than their speed on several cores).
    pub fn sparse_bytes(mut self, bytes: usize) -> Self {
        self.options.sparse_bytes = Some(bytes);
        self
    }

    /// Holds at most `max_keys` keys. When a new key arrives and its shard is full of keys
    /// that still carry state (even after sweeping the idle ones), the request is denied with
    /// [`Decision::is_table_full`](crate::Decision::is_table_full): never a panic, never an
    /// unbounded allocation. Enforced per shard, as `ceil(max_keys / shards)` each, so a key
    /// may be refused a little before the whole table reaches `max_keys`.
    pub fn max_keys(mut self, max_keys: usize) -> Self {
        self.options.max_keys = Some(max_keys);
        self
    }

    /// Names the limiter, for its log events (feature `tracing`) and wherever its metrics
    /// are published. Default: `"keyed"`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.options.name = Some(name.into());
        self
    }

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
