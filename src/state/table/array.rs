//! [`Array`]: one shard's open-addressing array of slots, each a key beside its state word,
//! and the quota parameters those states are kept under.
//!
//! Linear probing from `fastrange(hash, capacity)`. A slot's key is written once, before its
//! word is published (`Release`), and never overwritten while the array lives: readers compare
//! keys of every non-empty slot they pass, including tombstones and moved slots, without
//! locking. Only the shard's lock holder inserts (into an empty slot); readers and sweepers
//! only CAS words. Capacity is any number (not just powers of two), so the shard can grow by
//! 1.25x and keep its load in a narrow band (see [`Sizing`](super::sizing::Sizing)).

use super::slots::Slots;
use super::word::{EMPTY, MOVED, TOMBSTONE};
use crate::state::sync::{AtomicPtr, AtomicU64, Ordering, UnsafeCell};
use std::borrow::Borrow;
use std::mem::MaybeUninit;
use std::ptr;

/// A key and its state word. 16-byte aligned so that a 16-byte slot (a `u64` key) never
/// straddles a cache line: the key compare and the CAS touch one line.
#[repr(C, align(16))]
pub(crate) struct Slot<K> {
    pub(crate) word: AtomicU64,
    key: UnsafeCell<MaybeUninit<K>>,
}

impl<K> Slot<K> {
    pub(super) fn empty() -> Self {
        Slot {
            word: AtomicU64::new(EMPTY),
            key: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Runs `f` on the key.
    ///
    /// # Safety
    /// The slot's word must have been seen non-empty (with `Acquire`), or be written by the
    /// caller, so the key is initialized; it is never modified afterwards.
    #[inline]
    pub(crate) unsafe fn with_key<R>(&self, f: impl FnOnce(&K) -> R) -> R {
        // SAFETY: see the function's contract.
        self.key.with(|key| f(unsafe { (*key).assume_init_ref() }))
    }
}

/// Where a lookup ended.
pub(crate) enum Lookup<'a, K> {
    /// The key's live slot.
    Found(&'a Slot<K>),
    /// The key was migrated: look in the successor array.
    Moved,
    /// Not in this array; the index of the empty slot that ended the probe, where an insert
    /// made before anything else changes the array would go (`None` if the array was full).
    Absent(Option<usize>),
}

/// One shard's slots, the parameters of the quota their states are kept under, and the array
/// that replaces it while it is being migrated. A check uses the parameters of the array it
/// found its key in, so a reconfiguration (a migration into an array with new parameters,
/// converting every state) switches each key atomically.
pub(crate) struct Array<K, P> {
    slots: Slots<K>,
    next: AtomicPtr<Array<K, P>>,
    params: P,
    /// Bumped by every reconfiguration, kept by growth (see `Swap::generation`).
    generation: u32,
    /// Under loom, reclamation marks an array freed instead of freeing it, and every access
    /// asserts it is not: a model in which a reader touches reclaimed memory fails.
    #[cfg(loom)]
    freed: crate::state::sync::AtomicBool,
}

impl<K, P> Array<K, P> {
    /// An array of `capacity` empty slots for states kept under `params`.
    pub(crate) fn new(capacity: usize, params: P, generation: u32) -> Array<K, P> {
        Array {
            slots: Slots::new(capacity, Slot::empty),
            next: AtomicPtr::new(ptr::null_mut()),
            params,
            generation,
            #[cfg(loom)]
            freed: crate::state::sync::AtomicBool::new(false),
        }
    }

    /// Under loom: records that reclamation would free this array now.
    #[cfg(loom)]
    pub(crate) fn mark_freed(&self) {
        self.freed.store(true, Ordering::SeqCst);
    }

    /// Under loom: fails the model if this array was reclaimed.
    #[inline]
    fn assert_alive(&self) {
        #[cfg(loom)]
        assert!(
            !self.freed.load(Ordering::SeqCst),
            "a reader touched an array after reclamation freed it"
        );
    }

    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The parameters this array's states are kept under.
    #[inline]
    pub(crate) fn params(&self) -> &P {
        &self.params
    }

    /// The reconfiguration this array's states belong to.
    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// Bytes this array owns (not counting what keys own on the heap).
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + std::mem::size_of_val::<[Slot<K>]>(&self.slots)
    }

    pub(crate) fn slots(&self) -> impl Iterator<Item = &Slot<K>> {
        self.slots.iter()
    }

    /// The slot a hash starts probing at: `hash * capacity / 2^64`, so every capacity works.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        ((u128::from(hash) * self.slots.len() as u128) >> 64) as usize
    }

    /// Asks the CPU to bring the home slot of `hash` into the cache, for a lookup a few
    /// operations later: independent lookups then overlap their misses (see `check_many`).
    /// The line after it too: a probe that starts late in its line often ends in the next
    /// one, and that second miss, left to the lookup, cost a 1M-key batch 4 ns a key.
    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        // SAFETY: `home` is below the capacity; a prefetch never faults anyway.
        let slot: *const Slot<K> = unsafe { self.slots.get_unchecked(self.home(hash)) };
        prefetch_line(slot);
        // Past the last slot this points outside the array: harmless for a prefetch.
        prefetch_line(slot.wrapping_add(64 / std::mem::size_of::<Slot<K>>().max(1)));
    }

    /// Probes for `key` from its home slot until an empty slot.
    #[inline]
    pub(crate) fn find<Q>(&self, hash: u64, key: &Q) -> Lookup<'_, K>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.assert_alive();
        self.probe(self.home(hash), key)
    }

    /// [`find`](Self::find) resumed at slot `start`, where an earlier probe for `key` in
    /// this array ended at an empty slot: the slots before it held other keys (or dead
    /// copies of this one), and a slot's key never changes while the array lives.
    #[inline]
    pub(crate) fn find_from<Q>(&self, start: usize, key: &Q) -> Lookup<'_, K>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.assert_alive();
        // Off the hot path (an insert, under the lock): checked, as `runs` needs.
        assert!(
            start < self.slot_count(),
            "a probe resumes inside the array"
        );
        self.probe(start, key)
    }

    /// Probes from slot `start` (below the capacity) until an empty slot.
    #[inline(always)]
    fn probe<Q>(&self, start: usize, key: &Q) -> Lookup<'_, K>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let (wrapped, from_start) = self.runs(start);
        let (end, base) = match probe_run(from_start, key) {
            Run::Through => (probe_run(wrapped, key), 0),
            end => (end, start),
        };
        match end {
            Run::Found(slot) => Lookup::Found(slot),
            Run::Moved => Lookup::Moved,
            Run::Empty(offset) => Lookup::Absent(Some(base + offset)),
            Run::Through => Lookup::Absent(None),
        }
    }

    /// The slots before `start` and from `start` on: a probe walks the second run, then
    /// wraps to the first. Two plain runs instead of one index that wraps: the wrap test and
    /// the index arithmetic per slot were half of a probe's instructions.
    #[inline(always)]
    fn runs(&self, start: usize) -> (&[Slot<K>], &[Slot<K>]) {
        let slots: &[Slot<K>] = &self.slots;
        debug_assert!(start < slots.len());
        // SAFETY: every caller passes a slot index: a home, or where a probe ended.
        unsafe { slots.split_at_unchecked(start) }
    }

    /// Puts `key` with `word` in slot `index`, which a [`find`](Self::find) of this key ended
    /// at (`Absent(Some(index))`), under the same rules as [`insert`](Self::insert), and with
    /// no insert into this array since that find.
    pub(crate) fn insert_at(&self, index: usize, key: K, word: u64) -> &Slot<K> {
        let slot = &self.slots[index];
        debug_assert_eq!(slot.word.load(Ordering::Relaxed), EMPTY);
        // SAFETY: as in `insert`.
        slot.key.with_mut(|k| unsafe { (*k).write(key) });
        slot.word.store(word, Ordering::Release);
        slot
    }

    /// Puts `key` with `word` in the first empty slot from its home.
    ///
    /// Only one thread may insert into an array at a time (the shard's lock holder, or the
    /// migrator of a not-yet-current array), the key must not be live in it, and there must
    /// be an empty slot.
    pub(crate) fn insert(&self, hash: u64, key: K, word: u64) -> &Slot<K> {
        let (wrapped, from_home) = self.runs(self.home(hash));
        let is_empty = |slot: &&Slot<K>| slot.word.load(Ordering::Relaxed) == EMPTY;
        let slot = from_home
            .iter()
            .find(is_empty)
            .or_else(|| wrapped.iter().find(is_empty))
            .expect(
                "an insert always finds an empty slot: the shard keeps its load below its limit",
            );
        // SAFETY: an empty slot's key is unreachable to readers (they stop at EMPTY) and the
        // caller is the only inserter.
        slot.key.with_mut(|k| unsafe { (*k).write(key) });
        slot.word.store(word, Ordering::Release);
        slot
    }

    /// The array this one is being migrated into, if any.
    ///
    /// # Safety
    /// The caller must be pinned in the domain the arrays are retired to.
    #[inline]
    pub(crate) unsafe fn next(&self) -> Option<&Array<K, P>> {
        self.assert_alive();
        // SAFETY: a successor outlives its predecessor and is retired only after it.
        unsafe { self.next.load(Ordering::Acquire).as_ref() }
    }

    /// Publishes the successor, before any slot is marked moved.
    pub(crate) fn set_next(&self, next: *mut Array<K, P>) {
        self.next.store(next, Ordering::Release);
    }
}

/// How a run of slots ended a probe.
enum Run<'a, K> {
    Found(&'a Slot<K>),
    Moved,
    /// An empty slot, at this offset in the run: the key is not in the array.
    Empty(usize),
    /// The run ended without deciding: the probe goes on in the next run.
    Through,
}

/// Probes `run` for `key`, stopping at an empty slot.
#[inline(always)]
fn probe_run<'a, K, Q>(run: &'a [Slot<K>], key: &Q) -> Run<'a, K>
where
    K: Borrow<Q>,
    Q: Eq + ?Sized,
{
    for (offset, slot) in run.iter().enumerate() {
        let word = slot.word.load(Ordering::Acquire);
        if word == EMPTY {
            return Run::Empty(offset);
        }
        // SAFETY: the word is not EMPTY, so the key was published before it.
        if unsafe { slot.with_key(|k| k.borrow() == key) } {
            match word {
                // Swept; a later copy of the key may have been inserted further on.
                TOMBSTONE => {}
                MOVED => return Run::Moved,
                _ => return Run::Found(slot),
            }
        }
    }
    Run::Through
}

/// A hint to load the line at `address` into every cache level; no effect elsewhere.
#[inline(always)]
fn prefetch_line<T>(address: *const T) {
    #[cfg(all(target_arch = "x86_64", not(loom)))]
    // SAFETY: `_mm_prefetch` only hints; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(all(target_arch = "x86_64", not(loom))))]
    let _ = address;
}

impl<K, P> Drop for Array<K, P> {
    fn drop(&mut self) {
        for slot in self.slots.iter() {
            let word = slot.word.load(Ordering::Relaxed);
            if word != EMPTY {
                // SAFETY: every non-empty slot holds an initialized key, dropped once here.
                slot.key.with_mut(|k| unsafe { (*k).assume_init_drop() });
            }
        }
    }
}

// SAFETY: slots are shared between threads; keys are only written by the single inserter
// before publication and read after it, so `K: Send + Sync` suffices.
unsafe impl<K: Send + Sync, P: Send + Sync> Send for Array<K, P> {}
// SAFETY: as above.
unsafe impl<K: Send + Sync, P: Send + Sync> Sync for Array<K, P> {}
