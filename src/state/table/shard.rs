//! [`Shard`]: one lock-free-to-read slice of the keyed table.
//!
//! Readers find a key with no lock and no shared write (see [`Array::find`]). Everything that
//! changes which slots exist (inserting a key, sweeping idle ones, replacing the array)
//! happens under the shard's mutex, which readers never touch:
//! - **insert** puts a new key in an empty slot of the current array;
//! - **maintenance**, when the array would pass its load limit (tombstones included; see
//!   [`Sizing`]): sweep the shard, then, if that did not free enough, migrate to a new array
//!   sized for its keys (growing by ~1.25x, or shrinking/compacting after sweeps);
//! - **migration** publishes the new array as the old one's successor, then moves each live
//!   slot: copy key and word into the new array, then CAS the old word to `MOVED` (recopying
//!   the word if a check changed it in between). A check that meets `MOVED` follows the
//!   successor and finds the word already there, so no update is lost and no reader waits.
//!   The old array is retired to the epoch domain and freed after a grace period.
//! - **reconfiguration** is a migration into an array with the new quota's parameters, each
//!   word converted as it moves (and converted again if a check changed it in between): a
//!   check is decided under the parameters of the array it found its key in, so every key
//!   switches quotas atomically.

use super::array::{Array, Lookup};
use super::sizing::Sizing;
use super::word;
use crate::algorithm::{Op, MAX_NANOS};
use crate::decision::Decision;
use crate::state::engine::Engine;
use crate::state::outcome::{Swap, Sweep};
use crate::state::reclaim::{Domain, Guard};
use crate::sync::{lock, AtomicPtr, AtomicU64, AtomicUsize, Mutex, Ordering};
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;
use std::ptr;

/// While retired memory waits, inserts try to free it once per this many: each try is a
/// `membarrier` (0.24 us alone, 2.8 us with another thread running, on the benchmark VM).
const INSERTS_PER_COLLECT: u32 = 32;

/// What an insert found.
pub(super) enum Insert<'g, K, P> {
    /// Another thread inserted the key first: check it as usual (in this array).
    Existing(&'g Array<K, P>, &'g AtomicU64),
    /// The key is new; its first request was decided as it was published.
    New(&'g AtomicU64, Decision, Option<Swap>),
    /// The shard holds `max_live` keys that a sweep cannot free (this is its array).
    Full(&'g Array<K, P>),
}

/// What a shard needs from its table for maintenance.
pub(super) struct Context<'a, S> {
    pub(super) hasher: &'a S,
    pub(super) domain: &'a Domain,
    /// Bits of the hash that chose the shard (shifted out before probing).
    pub(super) shard_bits: u32,
    /// Most live keys this shard may hold.
    pub(super) max_live: usize,
    /// How large the shard's arrays are for their keys.
    pub(super) sizing: Sizing,
}

/// Memory whose last reader may still be pinned.
enum Retired<K, P> {
    Array(Box<Array<K, P>>),
    /// A live word's payload (a sliding log's ring).
    Word(u64),
}

/// The lock-protected bookkeeping.
struct Inner<K, P> {
    live: usize,
    tombstones: usize,
    /// Retired memory with the epoch tag after which it may be freed.
    garbage: Vec<(u64, Retired<K, P>)>,
    /// Inserts since the last try at freeing `garbage`.
    inserts_since_collect: u32,
    /// When this shard was last swept (see [`Engine::idle_after`]).
    last_sweep: Option<u64>,
    /// Keys swept away so far.
    swept_total: u64,
    /// New keys refused because the shard held `max_live` live keys.
    refused_total: u64,
    /// Under loom, reclaimed memory is kept (marked freed) until the shard drops.
    #[cfg(loom)]
    graveyard: Vec<Retired<K, P>>,
}

/// The array type of a shard of `A`'s states.
pub(super) type ArrayOf<K, A> = Array<K, <A as Engine>::Params>;

/// One shard: its current array and the lock serializing changes to it.
pub(super) struct Shard<K, A: Engine> {
    array: AtomicPtr<ArrayOf<K, A>>,
    inner: Mutex<Inner<K, A::Params>>,
    /// `inner.live`, readable without the lock.
    len: AtomicUsize,
    algorithm: PhantomData<A>,
}

impl<K, A: Engine> Shard<K, A> {
    pub(super) fn new(capacity: usize, params: A::Params) -> Self {
        Shard {
            array: AtomicPtr::new(Box::into_raw(Box::new(Array::new(capacity, params, 0)))),
            inner: Mutex::new(Inner {
                live: 0,
                tombstones: 0,
                garbage: Vec::new(),
                inserts_since_collect: 0,
                last_sweep: None,
                swept_total: 0,
                refused_total: 0,
                #[cfg(loom)]
                graveyard: Vec::new(),
            }),
            len: AtomicUsize::new(0),
            algorithm: PhantomData,
        }
    }

    /// The current array, valid while `_guard` pins this thread.
    #[inline]
    pub(super) fn current<'g>(&self, _guard: &'g Guard<'_>) -> &'g ArrayOf<K, A> {
        // SAFETY: arrays are retired to the domain the guard pins before being freed.
        unsafe { &*self.array.load(Ordering::Acquire) }
    }

    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Inserts `key` with its first request of `cost` already decided (in `mode`), unless
    /// another thread just inserted it or the shard is full. `missed` is where the caller's
    /// lookup (pinned by `guard` since) ended at an empty slot: in that array, the search
    /// under the lock resumes there instead of probing again from the home slot.
    pub(super) fn insert<'g, Q, S>(
        &self,
        ctx: &Context<'_, S>,
        hash: u64,
        key: &Q,
        (now, cost, mode): (u64, u32, Op),
        missed: Option<(&'g Array<K, A::Params>, usize)>,
        guard: &'g Guard<'_>,
    ) -> Insert<'g, K, A::Params>
    where
        K: Borrow<Q> + Hash + Clone,
        Q: Eq + ToOwned<Owned = K> + ?Sized,
        S: BuildHasher,
    {
        let mut inner = lock(&self.inner);
        // Migrations finish under this lock, so the current array has no moved slots.
        let mut array = self.current(guard);
        // Pinned, so a retired array's address is not reused: the same address is the same
        // array.
        let lookup = match missed {
            Some((seen, at)) if ptr::eq(seen, array) => array.find_from(at, hash, key),
            _ => array.find(hash, key),
        };
        let mut empty = match lookup {
            Lookup::Found(word) => return Insert::Existing(array, word),
            Lookup::Absent(empty) => empty,
            Lookup::Moved => unreachable!("the current array has no moved slots under the lock"),
        };
        if !ctx
            .sizing
            .fits(inner.live + inner.tombstones + 1, array.slot_count())
            || inner.live >= ctx.max_live
        {
            array = self.maintain(&mut inner, ctx, now, guard);
            if inner.live >= ctx.max_live {
                inner.refused_total += 1;
                return Insert::Full(array);
            }
            empty = None; // maintenance changed the slots: probe again
        }
        let (word, decision, swap) = A::keyed_insert(array.params(), now, cost, mode);
        let swap = swap.map(|swap| swap.in_generation(array.generation()));
        let word = match empty {
            Some(index) => array.insert_at(index, hash, key, word),
            None => array.insert(hash, key, word),
        };
        inner.live += 1;
        self.len.store(inner.live, Ordering::Relaxed);
        // A migration's old array becomes freeable two epochs later: try every few inserts
        // rather than waiting for the next growth.
        if !inner.garbage.is_empty() {
            inner.inserts_since_collect += 1;
            if inner.inserts_since_collect >= INSERTS_PER_COLLECT || cfg!(loom) {
                inner.inserts_since_collect = 0;
                self.collect(&mut inner, ctx.domain);
            }
        }
        Insert::New(word, decision, swap)
    }

    /// Makes room for one more key: sweep (unless the last sweep was too recent for any key
    /// to have become idle since), then migrate if that was not enough.
    fn maintain<'g, S: BuildHasher>(
        &self,
        inner: &mut Inner<K, A::Params>,
        ctx: &Context<'_, S>,
        now: u64,
        guard: &'g Guard<'_>,
    ) -> &'g ArrayOf<K, A>
    where
        K: Hash + Clone,
    {
        let array = self.current(guard);
        let idle_after = A::idle_after(array.params());
        if inner
            .last_sweep
            .is_none_or(|last| now.saturating_sub(last) >= idle_after)
        {
            self.sweep_locked(inner, ctx, array, now);
        }
        let live = (inner.live + 1).min(ctx.max_live);
        let array = if ctx
            .sizing
            .fits(inner.live + inner.tombstones + 1, array.slot_count())
        {
            array
        } else {
            self.migrate(inner, ctx, array, ctx.sizing.capacity_for(live), None)
        };
        self.collect(inner, ctx.domain);
        array
    }

    /// Forgets `key` (whose shard-local hash is `hash`): its slot is tombstoned as a sweep
    /// would, whatever its state, so the next check of it starts afresh. Returns whether the
    /// key held a state. Under the lock, so the current array has no moved slots; a check
    /// racing with it lands before (and is forgotten) or after (on a fresh state).
    pub(super) fn reset<Q, S>(
        &self,
        ctx: &Context<'_, S>,
        hash: u64,
        key: &Q,
        guard: &Guard<'_>,
    ) -> bool
    where
        K: Borrow<Q>,
        Q: Eq + ToOwned<Owned = K> + ?Sized,
    {
        let mut inner = lock(&self.inner);
        let array = self.current(guard);
        let Lookup::Found(word) = array.find(hash, key) else {
            return false;
        };
        // Every state is fresh at the last time a check can see (2^62 ns, the year 2116, unless
        // hits have pushed it into debt beyond that), so the sweep's own rule (which never
        // loses a concurrent update, and retires a sliding log's ring) removes it.
        let Sweep::Swept(payload) = A::keyed_sweep(word, array.params(), MAX_NANOS) else {
            return false;
        };
        if let Some(payload) = payload {
            let tag = ctx.domain.retire_tag();
            inner.garbage.push((tag, Retired::Word(payload)));
        }
        inner.live -= 1;
        inner.tombstones += 1;
        self.len.store(inner.live, Ordering::Relaxed);
        true
    }

    /// Tombstones every key whose state is fresh at `now`; returns how many.
    fn sweep_locked<S>(
        &self,
        inner: &mut Inner<K, A::Params>,
        ctx: &Context<'_, S>,
        array: &ArrayOf<K, A>,
        now: u64,
    ) -> usize {
        inner.last_sweep = Some(now);
        let mut swept = 0;
        let mut payloads = Vec::new();
        for index in 0..array.slot_count() {
            if let Sweep::Swept(payload) = A::keyed_sweep(array.word(index), array.params(), now) {
                swept += 1;
                payloads.extend(payload);
            }
        }
        if !payloads.is_empty() {
            let tag = ctx.domain.retire_tag();
            inner
                .garbage
                .extend(payloads.into_iter().map(|w| (tag, Retired::Word(w))));
        }
        inner.live -= swept;
        inner.tombstones += swept;
        inner.swept_total += swept as u64;
        self.len.store(inner.live, Ordering::Relaxed);
        swept
    }

    /// Moves every live key of `old` into a new array of `capacity` slots, which becomes
    /// current; `old` is retired. With `change` (new parameters, their generation, and the
    /// time to convert at), every state is converted to the new parameters as it moves: a
    /// reconfiguration.
    fn migrate<'g, S: BuildHasher>(
        &self,
        inner: &mut Inner<K, A::Params>,
        ctx: &Context<'_, S>,
        old: &'g ArrayOf<K, A>,
        capacity: usize,
        change: Option<(A::Params, u32, u64)>,
    ) -> &'g ArrayOf<K, A>
    where
        K: Hash + Clone,
    {
        let (params, generation) = change.map_or((*old.params(), old.generation()), |c| (c.0, c.1));
        let fresh = Box::into_raw(Box::new(Array::new(capacity, params, generation)));
        // SAFETY: just allocated; freed only after being retired, which outlives 'g's guard.
        let new: &'g ArrayOf<K, A> = unsafe { &*fresh };
        old.set_next(fresh);
        let convert = change.map(|(_, _, now)| (old.params(), new.params(), now));
        let mut payloads = Vec::new();
        for index in 0..old.slot_count() {
            let mut moved: Option<&AtomicU64> = None;
            let payload = A::keyed_migrate(old.word(index), convert, |word| match moved {
                Some(moved) => moved.store(word, Ordering::Release),
                None => {
                    // SAFETY: the migration passes only live words, whose keys are written.
                    let hash = unsafe { old.local_hash(index, ctx.hasher, ctx.shard_bits) };
                    moved = Some(new.insert_copy(hash, old, index, word));
                }
            });
            payloads.extend(payload);
        }
        let retired = self.array.swap(fresh, Ordering::AcqRel);
        inner.tombstones = 0;
        let tag = ctx.domain.retire_tag();
        // SAFETY: `retired` came from `Box::into_raw` and is no longer reachable from the shard.
        inner
            .garbage
            .push((tag, Retired::Array(unsafe { Box::from_raw(retired) })));
        inner
            .garbage
            .extend(payloads.into_iter().map(|w| (tag, Retired::Word(w))));
        new
    }

    /// Converts every key to `params` (the quota of reconfiguration `generation`) at `now`.
    pub(super) fn reconfigure<S: BuildHasher>(
        &self,
        ctx: &Context<'_, S>,
        params: A::Params,
        generation: u32,
        now: u64,
        guard: &Guard<'_>,
    ) where
        K: Hash + Clone,
    {
        let mut inner = lock(&self.inner);
        let array = self.current(guard);
        let capacity = ctx.sizing.capacity_for(inner.live);
        self.migrate(
            &mut inner,
            ctx,
            array,
            capacity,
            Some((params, generation, now)),
        );
        self.collect(&mut inner, ctx.domain);
    }

    /// Frees retired memory no reader can still hold.
    fn collect(&self, inner: &mut Inner<K, A::Params>, domain: &Domain) {
        if inner.garbage.is_empty() {
            return;
        }
        let epoch = domain.advance();
        let mut i = 0;
        while i < inner.garbage.len() {
            if Domain::is_safe(inner.garbage[i].0, epoch) {
                let retired = inner.garbage.swap_remove(i).1;
                #[cfg(loom)]
                {
                    retired.mark_freed();
                    inner.graveyard.push(retired);
                }
                #[cfg(not(loom))]
                release::<K, A>(retired);
            } else {
                i += 1;
            }
        }
    }

    /// Sweeps idle keys, compacts the array if at least half of it is tombstones or it is
    /// more than twice the size its keys need, and frees what it can. Returns keys swept.
    pub(super) fn sweep<S: BuildHasher>(
        &self,
        ctx: &Context<'_, S>,
        now: u64,
        guard: &Guard<'_>,
    ) -> usize
    where
        K: Hash + Clone,
    {
        let mut inner = lock(&self.inner);
        let array = self.current(guard);
        let swept = self.sweep_locked(&mut inner, ctx, array, now);
        let wanted = ctx.sizing.capacity_for(inner.live);
        if inner.tombstones * 2 >= array.slot_count() || array.slot_count() > 2 * wanted {
            self.migrate(&mut inner, ctx, array, wanted, None);
        }
        self.collect(&mut inner, ctx.domain);
        swept
    }

    /// Frees what retired memory has become safe; used by callers that are not pinned.
    pub(super) fn collect_garbage(&self, domain: &Domain) {
        self.collect(&mut lock(&self.inner), domain);
    }

    /// (keys swept, new keys refused for a full shard) so far.
    pub(super) fn totals(&self) -> (u64, u64) {
        let inner = lock(&self.inner);
        (inner.swept_total, inner.refused_total)
    }

    /// Slots in the current array.
    pub(super) fn slot_count(&self) -> usize {
        let _inner = lock(&self.inner);
        // SAFETY: the current array is only retired under this lock.
        unsafe { &*self.array.load(Ordering::Acquire) }.slot_count()
    }

    /// Bytes held: the current array, what its keys' words own, and unreclaimed garbage.
    pub(super) fn memory_bytes(&self) -> usize {
        let inner = lock(&self.inner);
        // SAFETY: as in `capacity`.
        let array = unsafe { &*self.array.load(Ordering::Acquire) };
        let params = array.params();
        let garbage: usize = inner
            .garbage
            .iter()
            .map(|(_, retired)| match retired {
                Retired::Array(array) => array.memory_bytes(),
                Retired::Word(_) => A::keyed_heap_bytes(params),
            })
            .sum();
        std::mem::size_of::<Self>()
            + array.memory_bytes()
            + inner.live * A::keyed_heap_bytes(params)
            + garbage
    }
}

#[cfg(loom)]
impl<K, P> Retired<K, P> {
    fn mark_freed(&self) {
        match self {
            Retired::Array(array) => array.mark_freed(),
            // SAFETY: not yet released; under loom words are sliding-log rings.
            Retired::Word(word) => {
                unsafe { &*(*word as *const crate::state::log_ring::LogRing) }.mark_freed()
            }
        }
    }
}

fn release<K, A: Engine>(retired: Retired<K, A::Params>) {
    match retired {
        Retired::Array(array) => drop(array),
        // SAFETY: the word came from `keyed_insert` (or a migration of one) and its grace
        // period has passed.
        Retired::Word(word) => unsafe { A::keyed_release(word) },
    }
}

impl<K, A: Engine> Drop for Shard<K, A> {
    fn drop(&mut self) {
        let mut inner = lock(&self.inner);
        for (_, retired) in inner.garbage.drain(..) {
            release::<K, A>(retired);
        }
        #[cfg(loom)]
        for retired in inner.graveyard.drain(..) {
            release::<K, A>(retired);
        }
        drop(inner);
        // SAFETY: `&mut self`: no reader remains; the array came from `Box::into_raw`.
        let array = unsafe { Box::from_raw(self.array.load(Ordering::Relaxed)) };
        for index in 0..array.slot_count() {
            let word = array.word(index).load(Ordering::Relaxed);
            if word::is_live(word) {
                // SAFETY: a live word of the current array is owned by it alone.
                unsafe { A::keyed_release(word) };
            }
        }
    }
}

// SAFETY: the raw array pointer is owned by the shard; sharing follows `Array`'s rules.
unsafe impl<K: Send + Sync, A: Engine> Send for Shard<K, A> {}
// SAFETY: as above.
unsafe impl<K: Send + Sync, A: Engine> Sync for Shard<K, A> {}
