//! [`Array`]: one shard's open-addressing array of slots, each a key beside its state word,
//! and the quota parameters those states are kept under.
//!
//! Linear probing from `fastrange(hash, capacity)`. A slot's key is written once, before its
//! word is published (`Release`), and never overwritten while the array lives: readers compare
//! keys of every non-empty slot they pass, including tombstones and moved slots, without
//! locking. Only the shard's lock holder inserts (into an empty slot); readers and sweepers
//! only CAS words. Capacity is any number (not just powers of two), so the shard can grow by
//! 1.25x and keep its load in a narrow band (see [`Sizing`](super::sizing::Sizing)).

use super::needle::{is_text, Needle};
use super::slot::{KeySlot, PlainSlot};
use super::slots::Slots;
use super::text::TextSlot;
use super::word::{EMPTY, MOVED, TOMBSTONE};
use crate::sync::{AtomicPtr, AtomicU64, Ordering};
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::mem::ManuallyDrop;
use std::ptr;

/// An array's slots: text slots for a [text](is_text) key type, plain ones otherwise. The key
/// type alone decides, so every array of a table has the same kind, and each access's branch
/// on it is resolved when the table's code is compiled.
union Store<K> {
    plain: ManuallyDrop<Slots<PlainSlot<K>>>,
    text: ManuallyDrop<Slots<TextSlot>>,
}

/// Runs `$body` with `$slots` bound to `$array`'s slots as the slice of their kind.
macro_rules! dispatch {
    ($array:expr, $slots:ident => $body:expr) => {
        if is_text::<K>() {
            // SAFETY: an array of a text key type is built with text slots (`Array::new`).
            let $slots: &[TextSlot] = unsafe { &$array.store.text };
            $body
        } else {
            // SAFETY: and with plain slots otherwise.
            let $slots: &[PlainSlot<K>] = unsafe { &$array.store.plain };
            $body
        }
    };
    // Two arrays of one table: their slots are of the same kind.
    ($array:expr, $other:expr, $slots:ident, $others:ident => $body:expr) => {
        if is_text::<K>() {
            // SAFETY: as above.
            let ($slots, $others): (&[TextSlot], &[TextSlot]) =
                unsafe { (&$array.store.text, &$other.store.text) };
            $body
        } else {
            // SAFETY: as above.
            let ($slots, $others): (&[PlainSlot<K>], &[PlainSlot<K>]) =
                unsafe { (&$array.store.plain, &$other.store.plain) };
            $body
        }
    };
}

/// Bytes of one slot of a table of `K` keys.
pub(crate) fn slot_bytes<K>() -> usize {
    if is_text::<K>() {
        std::mem::size_of::<TextSlot>()
    } else {
        std::mem::size_of::<PlainSlot<K>>()
    }
}

/// Where a lookup ended.
pub(crate) enum Lookup<'a> {
    /// The key's live slot's word.
    Found(&'a AtomicU64),
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
    store: Store<K>,
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
        let store = if is_text::<K>() {
            Store {
                text: ManuallyDrop::new(Slots::new(capacity, <TextSlot as KeySlot<K>>::empty)),
            }
        } else {
            Store {
                plain: ManuallyDrop::new(Slots::new(capacity, PlainSlot::empty)),
            }
        };
        Array {
            store,
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

    #[inline]
    pub(crate) fn slot_count(&self) -> usize {
        dispatch!(self, slots => slots.len())
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

    /// Bytes this array owns (not counting what keys longer than a text slot own on the heap).
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + dispatch!(self, slots => std::mem::size_of_val(slots))
    }

    /// The word of slot `index` (below [`slot_count`](Self::slot_count)).
    pub(crate) fn word(&self, index: usize) -> &AtomicU64 {
        dispatch!(self, slots => KeySlot::<K>::word(&slots[index]))
    }

    /// The slot a shard-local hash starts probing at: `hash * capacity / 2^64`, so every
    /// capacity works. For text slots only the top 32 bits of the hash count (`hash / 2^32 *
    /// capacity / 2^32`): a text slot keeps them as its tag, so a migration places its key
    /// again without hashing the key's bytes.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        let hash = if is_text::<K>() {
            hash & !0xffff_ffff
        } else {
            hash
        };
        ((u128::from(hash) * self.slot_count() as u128) >> 64) as usize
    }

    /// Asks the CPU to bring the home slot of `hash` into the cache, for a lookup a few
    /// operations later: independent lookups then overlap their misses (see `check_many`).
    /// The line after it too: a probe that starts late in its line often ends in the next
    /// one, and that second miss, left to the lookup, cost a 1M-key batch 4 ns a key.
    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        let home = self.home(hash);
        dispatch!(self, slots => {
            // SAFETY: `home` is below the capacity; a prefetch never faults anyway.
            let slot = unsafe { slots.as_ptr().add(home) };
            prefetch_line(slot);
            // Past the last slot this points outside the array: harmless for a prefetch.
            prefetch_line(slot.wrapping_add(64 / std::mem::size_of_val(&slots[0]).max(1)));
        })
    }

    /// Probes for `key` (whose shard-local hash is `hash`) from its home slot until an empty
    /// slot. Always inlined: left to the compiler, a text table's probe became a call (its
    /// result returned through memory), about 25 instructions of a 300-instruction check.
    #[inline(always)]
    pub(crate) fn find<Q>(&self, hash: u64, key: &Q) -> Lookup<'_>
    where
        K: Borrow<Q>,
        Q: Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.assert_alive();
        let needle = Needle::new::<K>(key, hash);
        let home = self.home(hash);
        dispatch!(self, slots => probe::<K, _, _>(slots, home, &needle))
    }

    /// [`find`](Self::find) resumed at slot `start`, where an earlier probe for `key` in
    /// this array ended at an empty slot: the slots before it held other keys (or dead
    /// copies of this one), and a slot's key never changes while the array lives.
    #[inline]
    pub(crate) fn find_from<Q>(&self, start: usize, hash: u64, key: &Q) -> Lookup<'_>
    where
        K: Borrow<Q>,
        Q: Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.assert_alive();
        // Off the hot path (an insert, under the lock): checked, as `probe` needs.
        assert!(
            start < self.slot_count(),
            "a probe resumes inside the array"
        );
        let needle = Needle::new::<K>(key, hash);
        dispatch!(self, slots => probe::<K, _, _>(slots, start, &needle))
    }

    /// Puts `key` (whose shard-local hash is `hash`) with `word` in slot `index`, which a
    /// [`find`](Self::find) of this key ended at (`Absent(Some(index))`), under the same
    /// rules as [`insert`](Self::insert), and with no insert into this array since that find.
    pub(crate) fn insert_at<Q>(&self, index: usize, hash: u64, key: &Q, word: u64) -> &AtomicU64
    where
        Q: ToOwned<Owned = K> + ?Sized,
    {
        let needle = Needle::new::<K>(key, hash);
        dispatch!(self, slots => publish::<K, _>(&slots[index], |slot| {
            // SAFETY: as in `insert`.
            unsafe { slot.put(&needle) }
        }, word))
    }

    /// Puts `key` (whose shard-local hash is `hash`) with `word` in the first empty slot from
    /// its home.
    ///
    /// Only one thread may insert into an array at a time (the shard's lock holder, or the
    /// migrator of a not-yet-current array), the key must not be live in it, and there must
    /// be an empty slot.
    pub(crate) fn insert<Q>(&self, hash: u64, key: &Q, word: u64) -> &AtomicU64
    where
        Q: ToOwned<Owned = K> + ?Sized,
    {
        let needle = Needle::new::<K>(key, hash);
        let home = self.home(hash);
        dispatch!(self, slots => publish::<K, _>(first_empty::<K, _>(slots, home), |slot| {
            // SAFETY: an empty slot's key is unreachable to readers (they stop at EMPTY) and
            // the caller is the only inserter.
            unsafe { slot.put(&needle) }
        }, word))
    }

    /// Copies the key of `from`'s slot `index` into this array with `word`, at the first
    /// empty slot from the home of `hash` (its shard-local hash): a migration, under
    /// [`insert`](Self::insert)'s rules.
    pub(crate) fn insert_copy(&self, hash: u64, from: &Self, index: usize, word: u64) -> &AtomicU64
    where
        K: Clone,
    {
        let home = self.home(hash);
        dispatch!(self, from, slots, sources => publish::<K, _>(first_empty::<K, _>(slots, home), |slot| {
            // SAFETY: as in `insert`; the source is a live slot (the migration read its word).
            unsafe { KeySlot::<K>::put_copy(slot, &sources[index]) }
        }, word))
    }

    /// The shard-local hash that places slot `index`'s key (see [`KeySlot::local_hash`]).
    ///
    /// # Safety
    /// The slot's word was seen non-empty.
    pub(crate) unsafe fn local_hash<S: BuildHasher>(
        &self,
        index: usize,
        hasher: &S,
        shard_bits: u32,
    ) -> u64
    where
        K: Hash,
    {
        // SAFETY: the caller's contract.
        dispatch!(self, slots => unsafe {
            KeySlot::<K>::local_hash(&slots[index], hasher, shard_bits)
        })
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

/// Writes a key into the empty `slot` with `write`, then publishes `word` (`Release`, so a
/// reader that sees the word sees the key).
fn publish<K, T: KeySlot<K>>(slot: &T, write: impl FnOnce(&T), word: u64) -> &AtomicU64 {
    debug_assert_eq!(slot.word().load(Ordering::Relaxed), EMPTY);
    write(slot);
    slot.word().store(word, Ordering::Release);
    slot.word()
}

/// The first empty slot from `home`, wrapping.
fn first_empty<K, T: KeySlot<K>>(slots: &[T], home: usize) -> &T {
    let (wrapped, from_home) = slots.split_at(home);
    let is_empty = |slot: &&T| slot.word().load(Ordering::Relaxed) == EMPTY;
    from_home
        .iter()
        .find(is_empty)
        .or_else(|| wrapped.iter().find(is_empty))
        .expect("an insert always finds an empty slot: the shard keeps its load below its limit")
}

/// Probes `slots` from slot `start` (below their count) until an empty slot: the slots from
/// `start` on, then those before it. Two plain runs instead of one index that wraps: the wrap
/// test and the index arithmetic per slot were half of a probe's instructions.
#[inline(always)]
fn probe<'a, K, T, Q>(slots: &'a [T], start: usize, needle: &Needle<'_, Q>) -> Lookup<'a>
where
    T: KeySlot<K>,
    K: Borrow<Q>,
    Q: Eq + ?Sized,
{
    debug_assert!(start < slots.len());
    // SAFETY: every caller passes a slot index: a home, or where a probe ended.
    let (wrapped, from_start) = unsafe { slots.split_at_unchecked(start) };
    let (end, base) = match probe_run(from_start, needle) {
        Run::Through => (probe_run(wrapped, needle), 0),
        end => (end, start),
    };
    match end {
        Run::Found(word) => Lookup::Found(word),
        Run::Moved => Lookup::Moved,
        Run::Empty(offset) => Lookup::Absent(Some(base + offset)),
        Run::Through => Lookup::Absent(None),
    }
}

/// How a run of slots ended a probe.
enum Run<'a> {
    Found(&'a AtomicU64),
    Moved,
    /// An empty slot, at this offset in the run: the key is not in the array.
    Empty(usize),
    /// The run ended without deciding: the probe goes on in the next run.
    Through,
}

/// Probes `run` for `needle`'s key, stopping at an empty slot.
#[inline(always)]
fn probe_run<'a, K, T, Q>(run: &'a [T], needle: &Needle<'_, Q>) -> Run<'a>
where
    T: KeySlot<K>,
    K: Borrow<Q>,
    Q: Eq + ?Sized,
{
    for (offset, slot) in run.iter().enumerate() {
        let word = slot.word().load(Ordering::Acquire);
        if word == EMPTY {
            return Run::Empty(offset);
        }
        // SAFETY: the word is not EMPTY, so the key was published before it.
        if unsafe { slot.holds(needle) } {
            match word {
                // Swept; a later copy of the key may have been inserted further on.
                TOMBSTONE => {}
                MOVED => return Run::Moved,
                _ => return Run::Found(slot.word()),
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
        dispatch!(self, slots => for slot in slots {
            if KeySlot::<K>::word(slot).load(Ordering::Relaxed) != EMPTY {
                // SAFETY: every non-empty slot holds a written key, which it owns (a migration
                // copies keys), dropped once here.
                unsafe { KeySlot::<K>::drop_key(slot) };
            }
        });
        // SAFETY: the store is of `K`'s kind (see `dispatch!`) and dropped once, here.
        unsafe {
            if is_text::<K>() {
                ManuallyDrop::drop(&mut self.store.text);
            } else {
                ManuallyDrop::drop(&mut self.store.plain);
            }
        }
    }
}

// SAFETY: slots are shared between threads; keys are only written by the single inserter
// before publication and read after it, so `K: Send + Sync` suffices.
unsafe impl<K: Send + Sync, P: Send + Sync> Send for Array<K, P> {}
// SAFETY: as above.
unsafe impl<K: Send + Sync, P: Send + Sync> Sync for Array<K, P> {}
