//! [`KeyedBuilder`]: the knobs of a [`KeyedLimiter`](super::KeyedLimiter).

use super::KeyedLimiter;
use crate::algorithm::Algorithm;
use crate::clock::Clock;
use crate::error::QuotaError;
use crate::quota::Quota;
use crate::state::table::Layout;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

/// Where the clock will come from: one given, or the type's default made at `build` (so a
/// [`CoarseClock`](crate::clock::CoarseClock) replaced by `.clock(...)` never starts its
/// default upkeep thread first).
enum ClockSource<C> {
    Given(C),
    Default(fn() -> C),
}

/// Builds a [`KeyedLimiter`]: clock, hasher, shard count, initial capacity and `max_keys`.
/// Start with [`KeyedLimiter::builder`].
pub struct KeyedBuilder<K, A, C, S> {
    quota: Quota,
    clock: ClockSource<C>,
    hasher: S,
    shards: Option<usize>,
    initial_keys: usize,
    max_keys: Option<usize>,
    name: Option<String>,
    types: PhantomData<fn() -> (K, A)>,
}

impl<K, A, C: Clock, S> KeyedBuilder<K, A, C, S> {
    pub(super) fn new(quota: Quota, hasher: S) -> Self
    where
        C: Default,
    {
        KeyedBuilder {
            quota,
            clock: ClockSource::Default(C::default),
            hasher,
            shards: None,
            initial_keys: 0,
            max_keys: None,
            name: None,
            types: PhantomData,
        }
    }

    pub(super) fn with_clock(quota: Quota, clock: C, hasher: S) -> Self {
        KeyedBuilder {
            quota,
            clock: ClockSource::Given(clock),
            hasher,
            shards: None,
            initial_keys: 0,
            max_keys: None,
            name: None,
            types: PhantomData,
        }
    }

    /// Reads time from `clock`.
    pub fn clock<C2: Clock>(self, clock: C2) -> KeyedBuilder<K, A, C2, S> {
        KeyedBuilder {
            quota: self.quota,
            clock: ClockSource::Given(clock),
            hasher: self.hasher,
            shards: self.shards,
            initial_keys: self.initial_keys,
            max_keys: self.max_keys,
            name: self.name,
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
            shards: self.shards,
            initial_keys: self.initial_keys,
            max_keys: self.max_keys,
            name: self.name,
            types: PhantomData,
        }
    }

    /// Splits the table into `shards` shards (rounded up to a power of two, at least 1).
    /// More shards mean smaller arrays to grow and less contention among threads inserting
    /// new keys; checks of existing keys never contend on a shard. Default: four per
    /// available core, between 4 and 256.
    pub fn shards(mut self, shards: usize) -> Self {
        self.shards = Some(shards);
        self
    }

    /// Sizes the table for `keys` keys up front, so it does not grow until it holds about
    /// that many. Default: a few slots per shard (a limiter with ten keys stays a few KiB).
    pub fn initial_capacity(mut self, keys: usize) -> Self {
        self.initial_keys = keys;
        self
    }

    /// Holds at most `max_keys` keys. When a new key arrives and its shard is full of keys
    /// that still carry state (even after sweeping the idle ones), the request is denied with
    /// [`Decision::is_table_full`](crate::Decision::is_table_full): never a panic, never an
    /// unbounded allocation. Enforced per shard, as `ceil(max_keys / shards)` each, so a key
    /// may be refused a little before the whole table reaches `max_keys`.
    pub fn max_keys(mut self, max_keys: usize) -> Self {
        self.max_keys = Some(max_keys);
        self
    }

    /// Names the limiter, for its log events (feature `tracing`) and wherever its metrics
    /// are published. Default: `"keyed"`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Builds the limiter, or says why `A` cannot run the quota.
    pub fn build(self) -> Result<KeyedLimiter<K, A, C, S>, QuotaError>
    where
        K: Hash + Eq + Clone + Send + Sync,
        A: Algorithm,
        S: BuildHasher,
    {
        let clock = match self.clock {
            ClockSource::Given(clock) => clock,
            ClockSource::Default(make) => make(),
        };
        let shards = self.shards.unwrap_or_else(default_shards);
        let layout = Layout {
            shards,
            initial_keys: self.initial_keys,
            max_keys: self.max_keys,
        };
        let name = self
            .name
            .unwrap_or_else(|| "keyed".to_owned())
            .into_boxed_str();
        KeyedLimiter::from_parts(self.quota, clock, self.hasher, layout, name)
    }
}

fn default_shards() -> usize {
    let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
    (cores * 4).clamp(4, 256)
}

impl<K, A, C: fmt::Debug, S> fmt::Debug for KeyedBuilder<K, A, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clock: &dyn fmt::Debug = match &self.clock {
            ClockSource::Given(clock) => clock,
            ClockSource::Default(_) => &"default",
        };
        f.debug_struct("KeyedBuilder")
            .field("quota", &self.quota)
            .field("clock", clock)
            .field("shards", &self.shards)
            .field("initial_capacity", &self.initial_keys)
            .field("max_keys", &self.max_keys)
            .field("name", &self.name)
            .finish()
    }
}
