//! [`KeySlot`]: what an array's slot holds beside its state word, in one of two layouts
//! chosen from the key type: [`PlainSlot`] (the key as it is: integers, tuples, any
//! `Hash + Eq` type) or [`TextSlot`](super::text::TextSlot) (string keys, in the slot).
//!
//! A slot's key is written once, before its word is published (`Release`), and never changed
//! while the array lives, so readers that saw the word (`Acquire`) read the key unlocked.

use super::needle::Needle;
use super::word::EMPTY;
use crate::sync::{AtomicU64, UnsafeCell};
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::mem::MaybeUninit;

/// One slot layout: a state word and a key.
///
/// Every `unsafe` method requires what the module docs say: a key is read only after its word
/// was seen non-empty, and written only by the array's one inserter into an empty slot.
pub(crate) trait KeySlot<K>: Sized {
    /// A slot with no key (its word `EMPTY`).
    fn empty() -> Self;
    /// The state word.
    fn word(&self) -> &AtomicU64;
    /// Whether the slot's key is `needle`'s.
    ///
    /// # Safety
    /// The word was seen non-empty with `Acquire`.
    unsafe fn holds<Q>(&self, needle: &Needle<'_, Q>) -> bool
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized;
    /// Writes `needle`'s key into this empty slot.
    ///
    /// # Safety
    /// The caller is the array's only inserter and the slot's word is `EMPTY`.
    unsafe fn put<Q>(&self, needle: &Needle<'_, Q>)
    where
        Q: ToOwned<Owned = K> + ?Sized;
    /// Writes a copy of `from`'s key into this empty slot (a migration).
    ///
    /// # Safety
    /// As [`put`](Self::put), and `from`'s key is written.
    unsafe fn put_copy(&self, from: &Self)
    where
        K: Clone;
    /// The shard-local hash that places the key (its hash under `hasher`, shifted left by
    /// `shard_bits`), or as much of it as placing it needs: a text slot's home depends on its
    /// top 32 bits alone (see [`Array::home`](super::array::Array)).
    ///
    /// # Safety
    /// The key is written.
    unsafe fn local_hash<S: BuildHasher>(&self, hasher: &S, shard_bits: u32) -> u64
    where
        K: Hash;
    /// Drops the key.
    ///
    /// # Safety
    /// The key is written, no reader can reach the slot any more, and it is dropped once.
    unsafe fn drop_key(&self);
}

/// A key and its state word. 16-byte aligned so that a 16-byte slot (a `u64` key) never
/// straddles a cache line: the key compare and the CAS touch one line.
#[repr(C, align(16))]
pub(crate) struct PlainSlot<K> {
    word: AtomicU64,
    key: UnsafeCell<MaybeUninit<K>>,
}

impl<K> KeySlot<K> for PlainSlot<K> {
    fn empty() -> Self {
        PlainSlot {
            word: AtomicU64::new(EMPTY),
            key: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        &self.word
    }

    #[inline(always)]
    unsafe fn holds<Q>(&self, needle: &Needle<'_, Q>) -> bool
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        // SAFETY: see the trait: the key was written before the word the caller saw.
        self.key
            .with(|key| unsafe { (*key).assume_init_ref() }.borrow() == needle.key)
    }

    unsafe fn put<Q>(&self, needle: &Needle<'_, Q>)
    where
        Q: ToOwned<Owned = K> + ?Sized,
    {
        // SAFETY: an empty slot's key is unreachable to readers; the caller is the only writer.
        self.key
            .with_mut(|key| unsafe { (*key).write(needle.key.to_owned()) });
    }

    unsafe fn put_copy(&self, from: &Self)
    where
        K: Clone,
    {
        // SAFETY: `from`'s key is written; `self` is empty and ours to write.
        let key = from
            .key
            .with(|key| unsafe { (*key).assume_init_ref() }.clone());
        self.key.with_mut(|slot| unsafe { (*slot).write(key) });
    }

    unsafe fn local_hash<S: BuildHasher>(&self, hasher: &S, shard_bits: u32) -> u64
    where
        K: Hash,
    {
        // SAFETY: the key is written.
        self.key
            .with(|key| hasher.hash_one(unsafe { (*key).assume_init_ref() }))
            << shard_bits
    }

    unsafe fn drop_key(&self) {
        // SAFETY: written, unreachable, dropped once (the caller's contract).
        self.key
            .with_mut(|key| unsafe { (*key).assume_init_drop() });
    }
}
