//! [`Table`]: the sharded keyed table behind [`KeyedLimiter`](crate::KeyedLimiter).
//!
//! Keys hash (with the table's `BuildHasher`, `ahash` by default) to one of a power-of-two
//! number of cache-padded [`Shard`]s by the top bits, and within it to a slot of an
//! open-addressing [`Array`](array::Array). A check of a key already present reads the shard's
//! array pointer, probes, and CASes the key's own word: no lock, and no write to anything
//! shared but that word (the epoch pin and the counters go to this thread's own record).
//! Keys are compared exactly, never by hash alone.

mod array;
mod shard;
mod slots;
pub(crate) mod word;

use crate::algorithm::engine::{Engine, Mode, Swap};
use crate::decision::Decision;
use crate::reclaim::{Domain, Guard};
use crate::sync::AtomicU64;
use array::Lookup;
use crossbeam_utils::CachePadded;
use shard::{capacity_for, Context, Insert, Shard};
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

/// How a table is laid out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// Rounded up to a power of two.
    pub(crate) shards: usize,
    /// Keys the table holds before its first growth (spread over the shards).
    pub(crate) initial_keys: usize,
    /// At most this many keys, enforced per shard as `ceil(max_keys / shards)`.
    pub(crate) max_keys: Option<usize>,
}

/// The sharded table of keys and their states.
pub(crate) struct Table<K, A: Engine, S> {
    shards: Box<[CachePadded<Shard<K, A>>]>,
    shard_bits: u32,
    hasher: S,
    domain: Domain,
    params: A::Params,
    limit: u32,
    max_live: usize,
}

impl<K, A: Engine, S: BuildHasher> Table<K, A, S> {
    pub(crate) fn new(params: A::Params, limit: u32, hasher: S, layout: Layout) -> Self {
        let shards = layout.shards.clamp(1, 1 << 16).next_power_of_two();
        let per_shard = layout.initial_keys.div_ceil(shards);
        Table {
            shards: (0..shards)
                .map(|_| CachePadded::new(Shard::new(capacity_for(per_shard))))
                .collect(),
            shard_bits: shards.trailing_zeros(),
            hasher,
            domain: Domain::new(),
            params,
            limit,
            max_live: layout
                .max_keys
                .map_or(usize::MAX, |max| max.div_ceil(shards).max(1)),
        }
    }

    fn context(&self) -> Context<'_, A, S> {
        Context {
            params: &self.params,
            hasher: &self.hasher,
            domain: &self.domain,
            shard_bits: self.shard_bits,
            max_live: self.max_live,
        }
    }

    /// Pins the current thread in the table's reclamation domain.
    #[inline]
    pub(crate) fn pin(&self) -> Guard<'_> {
        self.domain.pin()
    }

    /// Decides a request of `cost` for `key` at `now`; a key seen for the first time gets a
    /// fresh state (unless only peeking, or the cost is 0, which never needs one).
    #[inline(always)]
    pub(crate) fn check<Q>(&self, key: &Q, now: u64, cost: u32, mode: Mode) -> Decision
    where
        K: Borrow<Q> + Hash + Clone,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let guard = self.domain.pin();
        let (decision, _) = self.reserve(key, now, cost, mode, &guard);
        if mode != Mode::Peek {
            guard.count(decision.is_allowed());
        }
        decision
    }

    /// [`check`](Self::check) (without counting), also returning, when it consumed, the key's
    /// word and the swap to [`undo`](Self::undo) it with while `guard` still pins.
    ///
    /// The common case (the key is in its shard's current array and its word holds its state)
    /// is inlined into the caller; everything else is in [`reserve_slow`](Self::reserve_slow).
    #[inline(always)]
    pub(crate) fn reserve<'g, Q>(
        &self,
        key: &Q,
        now: u64,
        cost: u32,
        mode: Mode,
        guard: &'g Guard<'_>,
    ) -> (Decision, Option<(&'g AtomicU64, Swap)>)
    where
        K: Borrow<Q> + Hash + Clone + 'g,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let (shard, local) = self.locate(key);
        if let Lookup::Found(slot) = shard.current(guard).find(local, key) {
            if let Ok((decision, swap)) = A::keyed_check(&slot.word, &self.params, now, cost, mode)
            {
                return (decision, swap.map(|swap| (&slot.word, swap)));
            }
        }
        self.reserve_slow(shard, local, key, (now, cost, mode), guard)
    }

    /// The key's shard (by the top bits of its hash) and the hash bits that place it there.
    #[inline]
    fn locate<Q: Hash + ?Sized>(&self, key: &Q) -> (&Shard<K, A>, u64) {
        let hash = self.hasher.hash_one(key);
        let shard = &self.shards[if self.shard_bits == 0 {
            0
        } else {
            (hash >> (64 - self.shard_bits)) as usize
        }];
        (shard, hash << self.shard_bits)
    }

    /// The rest of [`reserve`](Self::reserve): a migration in progress, a swept key, a new key.
    #[cold]
    #[inline(never)]
    fn reserve_slow<'g, Q>(
        &self,
        shard: &Shard<K, A>,
        local: u64,
        key: &Q,
        (now, cost, mode): (u64, u32, Mode),
        guard: &'g Guard<'_>,
    ) -> (Decision, Option<(&'g AtomicU64, Swap)>)
    where
        K: Borrow<Q> + Hash + Clone + 'g,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        loop {
            let mut array = shard.current(guard);
            let found = loop {
                match array.find(local, key) {
                    Lookup::Found(slot) => break Some(slot),
                    Lookup::Absent => break None,
                    // SAFETY: pinned; a moved slot's array always has a successor.
                    Lookup::Moved => match unsafe { array.next() } {
                        Some(next) => array = next,
                        None => break None,
                    },
                }
            };
            let slot = match found {
                Some(slot) => slot,
                None if cost == 0 || mode == Mode::Peek => {
                    return (A::keyed_fresh_decision(&self.params, now, cost), None);
                }
                None => match shard.insert(&self.context(), local, key, (now, cost, mode), guard) {
                    Some(Insert::Existing(slot)) => slot,
                    Some(Insert::New(slot, decision, swap)) => {
                        return (decision, swap.map(|swap| (&slot.word, swap)));
                    }
                    None => return (Decision::table_full(self.limit), None),
                },
            };
            if let Ok((decision, swap)) = A::keyed_check(&slot.word, &self.params, now, cost, mode)
            {
                return (decision, swap.map(|swap| (&slot.word, swap)));
            }
            // The key was swept or migrated since it was found: look again. (A sliding log
            // whose ring was retired has had its word tombstoned by the check that found it,
            // so the next lookup never meets the dead ring again.)
        }
    }

    /// Reverts a swap from [`reserve`](Self::reserve) if nothing has written since.
    pub(crate) fn undo(&self, word: &AtomicU64, swap: Swap) -> bool {
        A::keyed_undo(word, swap)
    }

    /// [`undo`](Self::undo) for a caller no longer pinned since its reserve: finds the key's
    /// word again (a migration copies words unchanged, so the swap still applies there).
    pub(crate) fn undo_key<Q>(&self, key: &Q, swap: Swap) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let guard = self.domain.pin();
        let (shard, local) = self.locate(key);
        let mut array = shard.current(&guard);
        loop {
            match array.find(local, key) {
                Lookup::Found(slot) => return A::keyed_undo(&slot.word, swap),
                Lookup::Absent => return false,
                // SAFETY: pinned; a moved slot's array always has a successor.
                Lookup::Moved => match unsafe { array.next() } {
                    Some(next) => array = next,
                    None => return false,
                },
            }
        }
    }

    /// Removes every key whose state is fresh at `now`; returns how many.
    pub(crate) fn sweep(&self, now: u64) -> usize
    where
        K: Hash + Clone,
    {
        let context = self.context();
        let swept = self
            .shards
            .iter()
            .map(|shard| shard.sweep(&context, now, &self.domain.pin()))
            .sum();
        // Unpinned now: two rounds let the epoch pass everything retired above.
        for _ in 0..2 {
            for shard in self.shards.iter() {
                shard.collect_garbage(&self.domain);
            }
        }
        swept
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|shard| shard.len()).sum()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.shards.iter().map(|shard| shard.capacity()).sum()
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.domain.memory_bytes()
            + self
                .shards
                .iter()
                .map(|shard| shard.memory_bytes(&self.params))
                .sum::<usize>()
    }

    /// (allowed, denied) decisions so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        self.domain.counts()
    }

    pub(crate) fn shards(&self) -> usize {
        self.shards.len()
    }

    pub(crate) fn hasher(&self) -> &S {
        &self.hasher
    }
}
