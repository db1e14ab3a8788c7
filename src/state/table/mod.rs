//! [`Table`]: the sharded keyed table behind [`KeyedLimiter`](crate::KeyedLimiter).
//!
//! Keys hash (with the table's `BuildHasher`, `ahash` by default) to one of a power-of-two
//! number of cache-padded [`Shard`]s by the top bits, and within it to a slot of an
//! open-addressing [`Array`](array::Array). A check of a key already present reads the shard's
//! array pointer, probes, and CASes the key's own word: no lock, and no write to anything
//! shared but that word (the epoch pin and the counters go to this thread's own record).
//! Keys are compared exactly, never by hash alone.

mod array;
mod needle;
mod shard;
mod sizing;
mod slot;
mod slots;
mod text;
pub(crate) mod word;

use crate::algorithm::Op;
use crate::decision::Decision;
use crate::state::engine::Engine;
use crate::state::outcome::{Stale, Swap};
use crate::state::reclaim::{Domain, Guard};
use crate::sync::AtomicU64;
use array::{slot_bytes, Lookup};
use crossbeam_utils::CachePadded;
use shard::{ArrayOf, Context, Insert, Shard};
use sizing::Sizing;
pub(crate) use sizing::DEFAULT_SPARSE_BYTES;
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

/// How many keys ahead of its check `check_many` prefetches a key's slot: enough lines in
/// flight to cover a memory access with the work of the checks between (a power of two).
const LOOKAHEAD: usize = 8;

/// A decision, and when it consumed, the key's word and the swap to undo it with.
pub(crate) type Reserved<'g> = (Decision, Option<(&'g AtomicU64, Swap)>);

/// How a table is laid out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// Rounded up to a power of two.
    pub(crate) shards: usize,
    /// Keys the table holds before its first growth (spread over the shards).
    pub(crate) initial_keys: usize,
    /// At most this many keys, enforced per shard as `ceil(max_keys / shards)`.
    pub(crate) max_keys: Option<usize>,
    /// Bytes of slots the table may spend on staying sparse (see [`Sizing`]).
    pub(crate) sparse_bytes: usize,
}

/// The sharded table of keys and their states.
pub(crate) struct Table<K, A: Engine, S> {
    shards: Box<[CachePadded<Shard<K, A>>]>,
    shard_bits: u32,
    hasher: S,
    domain: Domain,
    max_live: usize,
    sizing: Sizing,
}

impl<K, A: Engine, S: BuildHasher> Table<K, A, S> {
    /// A table whose states are kept under `params` (each array carries its parameters).
    pub(crate) fn new(params: A::Params, hasher: S, layout: Layout) -> Self {
        let shards = layout.shards.clamp(1, 1 << 16).next_power_of_two();
        let per_shard = layout.initial_keys.div_ceil(shards);
        let sizing = Sizing::new(shards, slot_bytes::<K>(), layout.sparse_bytes);
        Table {
            shards: (0..shards)
                .map(|_| CachePadded::new(Shard::new(sizing.capacity_for(per_shard), params)))
                .collect(),
            shard_bits: shards.trailing_zeros(),
            hasher,
            domain: Domain::new(),
            max_live: layout
                .max_keys
                .map_or(usize::MAX, |max| max.div_ceil(shards).max(1)),
            sizing,
        }
    }

    fn context(&self) -> Context<'_, S> {
        Context {
            hasher: &self.hasher,
            domain: &self.domain,
            shard_bits: self.shard_bits,
            max_live: self.max_live,
            sizing: self.sizing,
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
    pub(crate) fn check<Q>(&self, key: &Q, now: u64, cost: u32, mode: Op) -> Decision
    where
        K: Borrow<Q> + Hash + Clone,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let guard = self.domain.pin();
        let place = self.locate(self.hasher.hash_one(key));
        self.check_located(place, key, (now, cost, mode), &guard)
    }

    /// [`check`](Self::check) of a key already located (its shard and the hash bits that
    /// place it there), pinned by `guard`; counted.
    #[inline(always)]
    fn check_located<Q>(
        &self,
        place: (&Shard<K, A>, u64),
        key: &Q,
        request: (u64, u32, Op),
        guard: &Guard<'_>,
    ) -> Decision
    where
        K: Borrow<Q> + Hash + Clone,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.check_located_then(place, key, request, guard, |decision| decision)
    }

    /// [`check_located`](Self::check_located), handing the decision to `then` on each path
    /// separately: the fast path's decision then goes straight where `then` puts it (a
    /// batch's output), instead of through a stack copy where the two paths join.
    #[inline(always)]
    fn check_located_then<Q, R>(
        &self,
        (shard, local): (&Shard<K, A>, u64),
        key: &Q,
        (now, cost, mode): (u64, u32, Op),
        guard: &Guard<'_>,
        then: impl FnOnce(Decision) -> R,
    ) -> R
    where
        K: Borrow<Q> + Hash + Clone,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let array = shard.current(guard);
        let found = array.find(local, key);
        let counted = |decision: Decision| {
            if mode != Op::Peek {
                guard.count(decision.is_allowed());
            }
            then(decision)
        };
        // The common case, inlined, its swap dropped at once; the rest out of line. (Going
        // through `reserve` instead makes the compiler keep the whole decision and swap in
        // memory, at the join with the slow path's result.)
        if let Lookup::Found(slot) = found {
            if let Some((decision, _)) = Self::decide_in(array, slot, now, cost, mode) {
                return counted(decision);
            }
        }
        counted(self.check_slow(shard, local, key, (now, cost, mode), (array, found), guard))
    }

    /// The rest of [`check`](Self::check), out of line.
    #[cold]
    #[inline(never)]
    fn check_slow<'g, Q>(
        &self,
        shard: &Shard<K, A>,
        local: u64,
        key: &Q,
        request: (u64, u32, Op),
        first: (&'g ArrayOf<K, A>, Lookup<'g>),
        guard: &'g Guard<'_>,
    ) -> Decision
    where
        K: Borrow<Q> + Hash + Clone + 'g,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.reserve_slow(shard, local, key, request, first, guard)
            .0
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
        mode: Op,
        guard: &'g Guard<'_>,
    ) -> Reserved<'g>
    where
        K: Borrow<Q> + Hash + Clone + 'g,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let hash = self.hasher.hash_one(key);
        let (shard, local) = self.locate(hash);
        let array = shard.current(guard);
        let found = array.find(local, key);
        if let Lookup::Found(slot) = found {
            if let Some(outcome) = Self::decide_in(array, slot, now, cost, mode) {
                return outcome;
            }
        }
        self.reserve_slow(shard, local, key, (now, cost, mode), (array, found), guard)
    }

    /// Decides on `slot`'s word under the parameters of `array`, the array it was found in,
    /// returning the swap (stamped with the array's generation) as a [`Reserved`] needs it.
    /// (Kept small: a larger aggregate here makes the compiler spill the whole decision even
    /// where the caller drops all but `is_allowed`.)
    #[inline(always)]
    fn decide_in<'g>(
        array: &'g ArrayOf<K, A>,
        word: &'g AtomicU64,
        now: u64,
        cost: u32,
        mode: Op,
    ) -> Option<Reserved<'g>> {
        let params = array.params();
        if mode.within_capacity(cost, A::max_cost(params)).is_err() {
            return Self::beyond_capacity(word, params, now).map(|d| (d, None));
        }
        match A::keyed_check(word, params, now, cost, mode) {
            Ok((decision, None)) => Some((decision, None)),
            Ok((decision, Some(swap))) => {
                let swap = swap.in_generation(array.generation());
                Some((decision, Some((word, swap))))
            }
            Err(Stale) => None,
        }
    }

    /// A cost above the capacity reached the table: a `check_n` measured it before a
    /// reconfiguration lowered the capacity. Such a request can never be admitted.
    #[cold]
    #[inline(never)]
    fn beyond_capacity(word: &AtomicU64, params: &A::Params, now: u64) -> Option<Decision> {
        let (standing, _) = A::keyed_check(word, params, now, 0, Op::Peek).ok()?;
        Some(Decision::beyond_capacity(&standing))
    }

    /// Decides one request of cost 1 (or peeks) for each of `keys`, in order, at `now`, into
    /// `out`: each lookup is hashed and its home slot prefetched [`LOOKAHEAD`] keys before its
    /// turn, so the cache misses of a batch overlap instead of queueing.
    pub(crate) fn check_many<Q, T>(&self, keys: &[T], now: u64, mode: Op, out: &mut Vec<Decision>)
    where
        K: Borrow<Q> + Hash + Clone,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        T: Borrow<Q>,
    {
        out.reserve(keys.len());
        let guard = self.domain.pin();
        // The keys located and prefetched, LOOKAHEAD ahead (placeholders past the end).
        let mut ahead: [(&Shard<K, A>, u64); LOOKAHEAD] = [(&self.shards[0], 0); LOOKAHEAD];
        for (place, key) in ahead.iter_mut().zip(keys) {
            *place = self.prefetch(key.borrow(), &guard);
        }
        // Written in place: through `push`, each decision was built on the stack and copied.
        let start = out.len();
        for ((i, key), place) in keys.iter().enumerate().zip(out.spare_capacity_mut()) {
            let ring = &mut ahead[i % LOOKAHEAD];
            let located = *ring;
            if let Some(later) = keys.get(i + LOOKAHEAD) {
                *ring = self.prefetch(later.borrow(), &guard);
            }
            self.check_located_then(located, key.borrow(), (now, 1, mode), &guard, |decision| {
                place.write(decision);
            });
        }
        // SAFETY: `reserve` made room for every key, and each of those places was written
        // above (`Decision` needs no drop, so a panic in between leaked nothing).
        unsafe { out.set_len(start + keys.len()) };
    }

    /// Where `key` lives (as [`locate`](Self::locate)), after bringing its home slot toward
    /// the cache: a check of it a few keys later finds the line there. The array is not kept:
    /// by then it may have been replaced.
    #[inline(always)]
    fn prefetch<Q: Hash + ?Sized>(&self, key: &Q, guard: &Guard<'_>) -> (&Shard<K, A>, u64) {
        let (shard, local) = self.locate(self.hasher.hash_one(key));
        shard.current(guard).prefetch(local);
        (shard, local)
    }

    /// The shard of `hash` (by its top bits) and the hash bits that place a key there.
    #[inline]
    fn locate(&self, hash: u64) -> (&Shard<K, A>, u64) {
        // The top `shard_bits` bits (two shifts, so that 0 bits needs no branch).
        let index = (hash >> 32 >> (32 - self.shard_bits)) as usize;
        debug_assert!(index < self.shards.len());
        // SAFETY: `index < 2^shard_bits`, the number of shards (`shard_bits <= 16`).
        let shard = unsafe { self.shards.get_unchecked(index) };
        (shard, hash << self.shard_bits)
    }

    /// The rest of [`reserve`](Self::reserve): a migration in progress, a swept key, a new key.
    /// `first` is the fast path's lookup, which the first round reuses.
    #[cold]
    #[inline(never)]
    fn reserve_slow<'g, Q>(
        &self,
        shard: &Shard<K, A>,
        local: u64,
        key: &Q,
        (now, cost, mode): (u64, u32, Op),
        first: (&'g ArrayOf<K, A>, Lookup<'g>),
        guard: &'g Guard<'_>,
    ) -> Reserved<'g>
    where
        K: Borrow<Q> + Hash + Clone + 'g,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let mut first = Some(first);
        loop {
            let (mut array, mut lookup) = match first.take() {
                Some(first) => first,
                None => {
                    let array = shard.current(guard);
                    (array, array.find(local, key))
                }
            };
            let found = loop {
                match lookup {
                    Lookup::Found(slot) => break Ok(slot),
                    Lookup::Absent(at) => break Err(at.map(|at| (array, at))),
                    // SAFETY: pinned; a moved slot's array always has a successor.
                    Lookup::Moved => match unsafe { array.next() } {
                        Some(next) => {
                            array = next;
                            lookup = array.find(local, key);
                        }
                        None => break Err(None),
                    },
                }
            };
            let (array, slot) = match found {
                Ok(slot) => (array, slot),
                Err(_) if cost == 0 || mode == Op::Peek => {
                    return (A::keyed_fresh_decision(array.params(), now, cost), None);
                }
                Err(missed) => match shard.insert(
                    &self.context(),
                    local,
                    key,
                    (now, cost, mode),
                    missed,
                    guard,
                ) {
                    Insert::Existing(array, word) => (array, word),
                    Insert::New(word, decision, swap) => {
                        return (decision, swap.map(|swap| (word, swap)));
                    }
                    Insert::Full(array) => {
                        let limit = A::keyed_fresh_decision(array.params(), now, 0).limit();
                        return (Decision::table_full(limit), None);
                    }
                },
            };
            if let Some(outcome) = Self::decide_in(array, slot, now, cost, mode) {
                return outcome;
            }
            // The key was swept or migrated since it was found: look again. (A sliding log
            // whose ring was retired has had its word tombstoned by the check that found it,
            // so the next lookup never meets the dead ring again.)
        }
    }

    /// Reverts a swap from [`reserve`](Self::reserve) if nothing has written since: finds the
    /// key's word again (a migration copies words unchanged, so the swap still applies there).
    pub(crate) fn undo_key<Q>(&self, key: &Q, swap: Swap) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let guard = self.domain.pin();
        let (shard, local) = self.locate(self.hasher.hash_one(key));
        let mut array = shard.current(&guard);
        loop {
            match array.find(local, key) {
                // A reconfiguration since converted the state: the swap's words mean nothing
                // there any more.
                Lookup::Found(word) => {
                    return array.generation() == swap.generation
                        && A::keyed_undo(word, array.params(), swap)
                }
                Lookup::Absent(_) => return false,
                // SAFETY: pinned; a moved slot's array always has a successor.
                Lookup::Moved => match unsafe { array.next() } {
                    Some(next) => array = next,
                    None => return false,
                },
            }
        }
    }

    /// Converts every key's state to `params`, the quota of reconfiguration `generation`, at
    /// `now`, shard by shard (see [`shard`]).
    pub(crate) fn reconfigure(&self, params: A::Params, generation: u32, now: u64)
    where
        K: Hash + Clone,
    {
        let context = self.context();
        for shard in self.shards.iter() {
            shard.reconfigure(&context, params, generation, now, &self.domain.pin());
        }
        self.collect_unpinned();
    }

    /// Frees retired memory; two rounds let the epoch pass everything retired before.
    fn collect_unpinned(&self) {
        for _ in 0..2 {
            for shard in self.shards.iter() {
                shard.collect_garbage(&self.domain);
            }
        }
    }

    /// Forgets `key`'s state (see [`Shard::reset`]); whether it held one.
    pub(crate) fn reset<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q> + Hash + Clone,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let guard = self.domain.pin();
        let (shard, local) = self.locate(self.hasher.hash_one(key));
        shard.reset(&self.context(), local, key, &guard)
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
        self.collect_unpinned();
        swept
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|shard| shard.len()).sum()
    }

    pub(crate) fn slots(&self) -> usize {
        self.shards.iter().map(|shard| shard.slot_count()).sum()
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.domain.memory_bytes()
            + self
                .shards
                .iter()
                .map(|shard| shard.memory_bytes())
                .sum::<usize>()
    }

    /// (keys swept, new keys refused because their shard was full) so far.
    pub(crate) fn totals(&self) -> (u64, u64) {
        self.shards
            .iter()
            .map(|shard| shard.totals())
            .fold((0, 0), |(s, r), (ds, dr)| (s + ds, r + dr))
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
