//! [`Array`]: one shard's open-addressing array of slots, each a key beside its state word,
//! and the quota parameters those states are kept under.
//!
//! Linear probing from `fastrange(hash, capacity)`. A slot's key is written once, before its
//! word is published (`Release`), and never overwritten while the array lives: readers compare
//! keys of every non-empty slot they pass, including tombstones and moved slots, without
//! locking. Only the shard's lock holder inserts (into an empty slot); readers and sweepers
//! only CAS words. Capacity is any number (not just powers of two), so the shard can grow by
//! 1.25x and keep its load between 0.68 and 0.85.

use super::slots::Slots;
use super::word::{EMPTY, MOVED, TOMBSTONE};
use crate::sync::{AtomicPtr, AtomicU64, Ordering, UnsafeCell};
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
    freed: crate::sync::AtomicBool,
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
            freed: crate::sync::AtomicBool::new(false),
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

    pub(crate) fn capacity(&self) -> usize {
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
    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        // SAFETY: `home` is below the capacity; a prefetch never faults anyway.
        let slot = unsafe { self.slots.get_unchecked(self.home(hash)) };
        prefetch_line(slot as *const Slot<K>);
    }

    /// Probes for `key` from its home slot until an empty slot.
    #[inline]
    pub(crate) fn find<Q>(&self, hash: u64, key: &Q) -> Lookup<'_, K>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.assert_alive();
        let slots: &[Slot<K>] = &self.slots;
        let capacity = slots.len();
        let mut i = self.home(hash);
        for _ in 0..capacity {
            debug_assert!(i < capacity);
            // SAFETY: `home` is below the capacity and `i` wraps to 0 when it reaches it.
            let slot = unsafe { slots.get_unchecked(i) };
            let word = slot.word.load(Ordering::Acquire);
            if word == EMPTY {
                return Lookup::Absent(Some(i));
            }
            // SAFETY: the word is not EMPTY, so the key was published before it.
            if unsafe { slot.with_key(|k| k.borrow() == key) } {
                match word {
                    // Swept; a later copy of the key may have been inserted further on.
                    TOMBSTONE => {}
                    MOVED => return Lookup::Moved,
                    _ => return Lookup::Found(slot),
                }
            }
            i += 1;
            if i == capacity {
                i = 0;
            }
        }
        Lookup::Absent(None)
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
        let capacity = self.slots.len();
        let mut i = self.home(hash);
        loop {
            let slot = &self.slots[i];
            if slot.word.load(Ordering::Relaxed) == EMPTY {
                // SAFETY: an empty slot's key is unreachable to readers (they stop at EMPTY)
                // and the caller is the only inserter.
                slot.key.with_mut(|k| unsafe { (*k).write(key) });
                slot.word.store(word, Ordering::Release);
                return slot;
            }
            i += 1;
            if i == capacity {
                i = 0;
            }
        }
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
