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
