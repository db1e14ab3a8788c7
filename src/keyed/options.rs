//! What every keyed builder shares ([`KeyedBuilder`](super::KeyedBuilder),
//! [`AnyKeyedBuilder`](crate::dynamic::AnyKeyedBuilder),
//! [`TieredBuilder`](crate::tiers::TieredBuilder)): where the clock comes from, and the table's
//! knobs, written once.

use crate::state::table::{Layout, DEFAULT_SPARSE_BYTES};
use std::fmt;

/// Where the clock will come from: one given, or the type's default made at `build` (so a
/// default [`CoarseClock`](crate::clock::CoarseClock) replaced by `.clock(...)` never starts
/// its upkeep thread).
pub(crate) enum ClockSource<C> {
    Given(C),
    Default(fn() -> C),
}

impl<C> ClockSource<C> {
    /// The clock, made now if it is the default.
    pub(crate) fn take(self) -> C {
        match self {
            ClockSource::Given(clock) => clock,
            ClockSource::Default(make) => make(),
        }
    }
}

impl<C: fmt::Debug> fmt::Debug for ClockSource<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockSource::Given(clock) => clock.fmt(f),
            ClockSource::Default(_) => f.write_str("default"),
        }
    }
}

/// A keyed table's knobs, as set on a builder (unset: the defaults).
#[derive(Debug, Clone, Default)]
pub(crate) struct TableOptions {
    pub(crate) shards: Option<usize>,
    pub(crate) initial_keys: usize,
    pub(crate) max_keys: Option<usize>,
    pub(crate) sparse_bytes: Option<usize>,
    pub(crate) name: Option<String>,
}

impl TableOptions {
    /// The table's layout: the shard count defaults to four per available core, between 4
    /// and 256.
    pub(crate) fn layout(&self) -> Layout {
        let default_shards = || {
            let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
            (cores * 4).clamp(4, 256)
        };
        Layout {
            shards: self.shards.unwrap_or_else(default_shards),
            initial_keys: self.initial_keys,
            max_keys: self.max_keys,
            sparse_bytes: self.sparse_bytes.unwrap_or(DEFAULT_SPARSE_BYTES),
        }
    }

    /// The limiter's name for logs and metrics (`"keyed"` unless set).
    pub(crate) fn name(&self) -> Box<str> {
        self.name.as_deref().unwrap_or("keyed").into()
    }
}

/// The table's knobs as builder methods, written once for every keyed builder
/// ([`KeyedBuilder`](crate::KeyedBuilder), [`AnyKeyedBuilder`](crate::dynamic::AnyKeyedBuilder),
/// [`TieredBuilder`](crate::tiers::TieredBuilder), whose every tier gets them): `$field` is
/// the path from `self` to the builder's [`TableOptions`].
macro_rules! table_setters {
    ($($field:ident).+) => {
        /// Splits the table into `shards` shards (rounded up to a power of two, at least 1).
        /// More shards mean smaller arrays to grow and less contention among threads
        /// inserting new keys; checks of existing keys never contend on a shard. Default:
        /// four per available core, between 4 and 256.
        pub fn shards(mut self, shards: usize) -> Self {
            self.$($field).+.shards = Some(shards);
            self
        }

        /// Sizes the table for `keys` keys up front, so it does not grow until it holds about
        /// that many. Default: a few slots per shard (a limiter with ten keys stays a few
        /// KiB).
        pub fn initial_capacity(mut self, keys: usize) -> Self {
            self.$($field).+.initial_keys = keys;
            self
        }

        /// Lets the table spend up to `bytes` of slots on staying sparse. A lookup reads the
        /// slots it passes on the way to its key, and threads checking different keys fetch
        /// each line another core wrote, so a small table keeps only 3-4% of its slots in
        /// use: most probes end at the key's home slot and most cache lines hold one key.
        /// Past the budget, arrays are dense (68-85% used, 19-24 bytes a `u64` key). Default:
        /// 4 MiB for the whole table, about 500 bytes a `u64` key up to 8,000 keys; 0 keeps
        /// it dense from its first key (for many small limiters where memory matters more
        /// than their speed on several cores).
        pub fn sparse_bytes(mut self, bytes: usize) -> Self {
            self.$($field).+.sparse_bytes = Some(bytes);
            self
        }

        /// Holds at most `max_keys` keys. When a new key arrives and its shard is full of
        /// keys that still carry state (even after sweeping the idle ones), the request is
        /// denied with [`Decision::is_table_full`](crate::Decision::is_table_full): never a
        /// panic, never an unbounded allocation. Enforced per shard, as
        /// `ceil(max_keys / shards)` each, so a key may be refused a little before the whole
        /// table reaches `max_keys`.
        pub fn max_keys(mut self, max_keys: usize) -> Self {
            self.$($field).+.max_keys = Some(max_keys);
            self
        }

        /// Names the limiter, for its log events (feature `tracing`) and wherever its
        /// metrics are published. Default: `"keyed"`.
        pub fn name(mut self, name: impl Into<String>) -> Self {
            self.$($field).+.name = Some(name.into());
            self
        }
    };
}
pub(crate) use table_setters;
