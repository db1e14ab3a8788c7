//! [`DenyCache`]: denials answered locally, exactly, until the instant Redis would admit.
//!
//! When Redis denies a key, its reply says when a single request would be admitted (if
//! nobody else records anything meanwhile) and when the request that was denied would be.
//! Until the first of those instants, this process answers requests of cost 1, and of the
//! cost that was denied, itself: denied, `remaining` 0, and the `retry_after` and
//! `reset_after` Redis would give, measured to the same instants. Other costs ask Redis (a
//! denial of 5 says nothing exact about 2). Nothing recorded elsewhere can make an earlier
//! admission possible (other servers only consume; an undo (a composite after a race, an
//! HTTP refund) in another process errs toward denial there; an undo in this process
//! forgets the key here; a reset anywhere is heard and forgotten: `reset_watch`), so the
//! cache never denies what Redis would admit; it only saves the round trips: under a flood
//! from one client, Redis sees about one call per `retry_after` per server.
//!
//! Times are whole microseconds on the limiter's own timeline: with a client clock, the very
//! readings sent to Redis (so the answers are Redis's, exactly); with Redis's `TIME`, a local
//! monotonic clock read just before the call was sent, so the cached instant is never later
//! than Redis's (it may be up to a round trip earlier, and then Redis is simply asked).
//!
//! Bounded: a fixed number of entries, spread over shards; a full shard first drops its
//! expired entries, then an arbitrary one (a dropped entry only costs a round trip).

// `pub` items here are reachable only by the loom models (through `cfg(loom)` re-exports).
#![cfg_attr(not(loom), allow(unreachable_pub))]

use crate::sync::{lock, AtomicUsize, Mutex, Ordering::Relaxed};
use ahash::RandomState;
use hashbrown::HashMap;
use std::fmt;

const SHARDS: usize = 16;

/// What one denial taught, in microseconds on the limiter's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// A single request is admitted from here.
    one_at: u64,
    /// The cost that was denied, and when it is admitted.
    cost: u32,
    cost_at: u64,
    /// The state is fresh from here.
    reset_at: u64,
}

/// A cached denial's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cached {
    /// Until the request may be admitted, in microseconds.
    pub retry_us: u64,
    /// Until the state is fresh, in microseconds.
    pub reset_us: u64,
}

/// One shard: keys and what their denials taught.
type Shard = Mutex<HashMap<Box<str>, Entry, RandomState>>;

/// The cache (`pub` for the loom models, which reach it through `redis::loom_hooks`; the
/// module is private otherwise).
pub struct DenyCache {
    shards: Box<[Shard]>,
    per_shard: usize,
    hasher: RandomState,
    /// Entries held (approximately), so that admissions skip the lock when there are none.
    len: AtomicUsize,
}

impl fmt::Debug for DenyCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DenyCache")
            .field("capacity", &(self.per_shard * SHARDS))
            .field("len", &self.len.load(Relaxed))
            .finish()
    }
}

/// What spreads keys over the shards: seeded at random, except under loom, whose runs must
/// repeat exactly (the shard a key lands in decides which lock it takes).
fn shard_hasher() -> RandomState {
    #[cfg(loom)]
    return RandomState::with_seeds(1, 2, 3, 4);
    #[cfg(not(loom))]
    RandomState::new()
}

impl DenyCache {
    /// A cache of at most `capacity` keys (at least one per shard).
    pub fn new(capacity: usize) -> DenyCache {
        let per_shard = capacity.div_ceil(SHARDS).max(1);
        DenyCache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(HashMap::with_hasher(RandomState::new())))
                .collect(),
            per_shard,
            hasher: shard_hasher(),
            len: AtomicUsize::new(0),
        }
    }

    fn shard(&self, key: &str) -> &Shard {
        let index = self.hasher.hash_one(key) as usize % SHARDS;
        &self.shards[index]
    }

    /// The denial of `cost` for `key` at `now`, if the cache knows it exactly.
    pub fn lookup(&self, key: &str, cost: u32, now: u64) -> Option<Cached> {
        if self.len.load(Relaxed) == 0 {
            return None;
        }
        let mut shard = lock(self.shard(key));
        let entry = *shard.get(key)?;
        if now >= entry.one_at {
            // Expired: Redis may admit a single request now.
            if shard.remove(key).is_some() {
                self.len.fetch_sub(1, Relaxed);
            }
            return None;
        }
        let until = if cost == 1 {
            entry.one_at
        } else if cost == entry.cost {
            entry.cost_at
        } else {
            return None;
        };
        Some(Cached {
            retry_us: until - now,
            reset_us: entry.reset_at.saturating_sub(now),
        })
    }

    /// Redis denied `cost` for `key`, decided at `at`: a single request waits `retry_one_us`,
    /// the denied one `retry_us`, and the state is fresh in `reset_us`. Nothing is stored
    /// when a single request would be admitted at once.
    pub fn record(
        &self,
        key: &str,
        cost: u32,
        at: u64,
        retry_us: u64,
        retry_one_us: u64,
        reset_us: u64,
    ) {
        if retry_one_us == 0 {
            self.forget(key);
            return;
        }
        let entry = Entry {
            one_at: at.saturating_add(retry_one_us),
            cost,
            cost_at: at.saturating_add(retry_us),
            reset_at: at.saturating_add(reset_us),
        };
        let mut shard = lock(self.shard(key));
        if let Some(held) = shard.get_mut(key) {
            *held = entry;
            return;
        }
        if shard.len() >= self.per_shard {
            let before = shard.len();
            shard.retain(|_, held| held.one_at > at);
            if shard.len() >= self.per_shard {
                let evicted = shard.keys().next().cloned();
                if let Some(evicted) = evicted {
                    shard.remove(&evicted);
                }
            }
            self.len.fetch_sub(before - shard.len(), Relaxed);
        }
        shard.insert(key.into(), entry);
        self.len.fetch_add(1, Relaxed);
    }

    /// Redis admitted a request for `key`: whatever was cached is stale.
    pub fn forget(&self, key: &str) {
        if self.len.load(Relaxed) == 0 {
            return;
        }
        let mut shard = lock(self.shard(key));
        if shard.remove(key).is_some() {
            self.len.fetch_sub(1, Relaxed);
        }
    }

    /// Forgets every key: resets may have been missed (see `reset_watch`).
    pub fn clear(&self) {
        for shard in self.shards.iter() {
            let mut shard = lock(shard);
            self.len.fetch_sub(shard.len(), Relaxed);
            shard.clear();
        }
    }

    /// Keys held (a count for the limiter's stats; nothing asks whether it is empty).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len.load(Relaxed)
    }

    /// Entries held, counted shard by shard under each lock: what `len` must equal once no
    /// call is running.
    #[cfg(any(test, loom))]
    pub fn held(&self) -> usize {
        self.shards.iter().map(|shard| lock(shard).len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_cost_one_and_the_denied_cost_until_one_is_admitted() {
        let cache = DenyCache::new(100);
        // Denied a cost of 3 at t=1000: a single request waits 200 us, the 3 wait 500 us.
        cache.record("k", 3, 1_000, 500, 200, 900);
        let at = |cost, now| cache.lookup("k", cost, now);
        assert_eq!(
            at(1, 1_050),
            Some(Cached {
                retry_us: 150,
                reset_us: 850
            })
        );
        assert_eq!(at(3, 1_100).map(|c| c.retry_us), Some(400));
        assert_eq!(
            at(2, 1_100),
            None,
            "a denial of 3 says nothing exact about 2"
        );
        assert_eq!(at(1, 1_199).map(|c| c.retry_us), Some(1));
        assert_eq!(
            at(1, 1_200),
            None,
            "a single request may be admitted from here"
        );
        assert_eq!(at(3, 1_100), None, "expired entries are dropped");
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn admissions_and_immediate_singles_store_nothing() {
        let cache = DenyCache::new(100);
        cache.record("k", 5, 0, 700, 0, 900);
        assert_eq!(cache.len(), 0);
        cache.record("k", 1, 0, 700, 700, 900);
        assert_eq!(cache.len(), 1);
        cache.forget("k");
        assert_eq!(cache.lookup("k", 1, 1), None);
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn stays_within_its_capacity() {
        let cache = DenyCache::new(32);
        for i in 0..10_000u64 {
            cache.record(&format!("key{i}"), 1, i, 1_000_000, 1_000_000, 1_000_000);
        }
        assert!(cache.len() <= 32, "{} entries", cache.len());
        assert_eq!(cache.held(), cache.len());
    }
}
