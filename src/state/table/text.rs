//! [`TextSlot`]: how a table stores string keys (`String`, `Box<str>`, `Arc<str>`, and byte
//! strings: `Vec<u8>`, `Box<[u8]>`), the keys users actually send: API keys, user ids, `ip:`
//! text, UUIDs.
//!
//! A `String` slot is the `String` itself: a pointer to bytes elsewhere on the heap, so every
//! candidate a probe passes costs a load of another key's bytes (a cache miss per compare at
//! a million keys), and every new key an allocation. A text slot is one cache line instead:
//! the state word, a 32-bit tag of the key's hash, the length, and the bytes themselves when
//! they fit in [`INLINE`] (48) bytes. A probe compares the tag and length first, so a
//! mismatch never reads another key's bytes, and a match compares bytes on the line it has
//! already loaded, word by word in line (no call). A longer key keeps its bytes in one heap
//! allocation, owned by the slot.
//!
//! The tag is the top 32 bits of the key's shard-local hash, the bits that choose its home
//! slot, so growing the table places every key again from its tag: a migration never hashes
//! a key's bytes again.
//!
//! Keys stay exact: a tag only rules candidates out; a slot holds a key only when the bytes
//! are equal.

use super::needle::Needle;
use super::slot::KeySlot;
use crate::state::table::word::EMPTY;
use crate::sync::{AtomicU64, UnsafeCell};
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::mem::MaybeUninit;

/// Bytes of a key stored in the slot itself; longer keys go to the heap.
pub(crate) const INLINE: usize = 48;

/// Whether `a` and `b`, of the same length, hold the same bytes: words compared in line, the
/// last one overlapping the one before (never reading past either end), so a key of up to
/// [`INLINE`] bytes costs a few loads and no call.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let n = a.len();
    if n > INLINE {
        return a == b;
    }
    let (a, b) = (a.as_ptr(), b.as_ptr());
    // SAFETY: every read lies within the first `n` bytes of both.
    unsafe {
        let word = |p: *const u8, at: usize| p.add(at).cast::<u64>().read_unaligned();
        let half = |p: *const u8, at: usize| p.add(at).cast::<u32>().read_unaligned();
        if n >= 8 {
            let mut at = 0;
            while at + 8 < n {
                if word(a, at) != word(b, at) {
                    return false;
                }
                at += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        } else if n >= 4 {
            half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4)
        } else {
            n == 0 || (*a == *b && *a.add(n / 2) == *b.add(n / 2) && *a.add(n - 1) == *b.add(n - 1))
        }
    }
}

/// What a text slot holds beside its word. Written once, before the word is published.
#[repr(C)]
struct TextKey {
    tag: u32,
    len: u32,
    /// The bytes when `len <= INLINE`; otherwise the first 8 hold the heap copy's pointer.
    bytes: [MaybeUninit<u8>; INLINE],
}

impl TextKey {
    /// The key's bytes.
    ///
    /// # Safety
    /// Written by [`TextKey::write`] and not yet released.
    #[inline(always)]
    unsafe fn text(&self) -> &[u8] {
        let len = self.len as usize;
        // SAFETY: `write` initialized `len` inline bytes, or the pointer of a live heap copy
        // of `len` bytes.
        unsafe {
            if len <= INLINE {
                std::slice::from_raw_parts(self.bytes.as_ptr().cast::<u8>(), len)
            } else {
                std::slice::from_raw_parts(self.heap(), len)
            }
        }
    }

    /// The heap copy's pointer (only for keys longer than [`INLINE`]).
    unsafe fn heap(&self) -> *mut u8 {
        // SAFETY: `write` stored the pointer in the first 8 bytes.
        unsafe { self.bytes.as_ptr().cast::<*mut u8>().read_unaligned() }
    }

    /// Stores `text` with its `tag`: in place, or in one heap allocation when too long.
    fn write(&mut self, tag: u32, text: &[u8]) {
        let len = u32::try_from(text.len()).expect("a key is shorter than 4 GiB");
        self.tag = tag;
        self.len = len;
        if text.len() <= INLINE {
            // SAFETY: `text.len()` bytes fit in the inline buffer; source and target differ.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    text.as_ptr(),
                    self.bytes.as_mut_ptr().cast(),
                    text.len(),
                )
            };
        } else {
            let heap = Box::into_raw(Box::<[u8]>::from(text)).cast::<u8>();
            // SAFETY: a pointer fits in the first 8 of the 48 bytes.
            unsafe {
                self.bytes
                    .as_mut_ptr()
                    .cast::<*mut u8>()
                    .write_unaligned(heap)
            };
        }
    }

    /// Frees the heap copy, if any.
    ///
    /// # Safety
    /// Written, and never used again.
    unsafe fn release(&mut self) {
        let len = self.len as usize;
        if len > INLINE {
            // SAFETY: the pointer came from a boxed slice of `len` bytes, freed once here.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.heap(), len)) });
        }
    }
}

/// A string key's slot: a cache line (see the module docs).
#[repr(C, align(64))]
pub(crate) struct TextSlot {
    word: AtomicU64,
    key: UnsafeCell<TextKey>,
}

impl<K> KeySlot<K> for TextSlot {
    fn empty() -> Self {
        TextSlot {
            word: AtomicU64::new(EMPTY),
            key: UnsafeCell::new(TextKey {
                tag: 0,
                len: 0,
                bytes: [MaybeUninit::uninit(); INLINE],
            }),
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
        // SAFETY: the caller saw the word published, so the key was written before it.
        self.key.with(|key| unsafe {
            let key = &*key;
            key.tag == needle.tag
                && key.len as usize == needle.text.len()
                && same_bytes(key.text(), &needle.text)
        })
    }

    unsafe fn put<Q>(&self, needle: &Needle<'_, Q>)
    where
        Q: ToOwned<Owned = K> + ?Sized,
    {
        // SAFETY: the caller is the slot's only writer and no reader reaches it yet.
        self.key
            .with_mut(|key| unsafe { (*key).write(needle.tag, &needle.text) });
    }

    unsafe fn put_copy(&self, from: &Self)
    where
        K: Clone,
    {
        // SAFETY: `from` is published (its key written); `self` is unpublished and ours.
        from.key.with(|source| unsafe {
            let source = &*source;
            if source.len as usize <= INLINE {
                // The whole key at once, a fixed-size copy: the bytes past its length are
                // copied as the `MaybeUninit`s they are.
                self.key
                    .with_mut(|key| std::ptr::copy_nonoverlapping(source, key, 1));
            } else {
                self.key
                    .with_mut(|key| (*key).write(source.tag, source.text()));
            }
        });
    }

    unsafe fn local_hash<S: BuildHasher>(&self, _hasher: &S, _shard_bits: u32) -> u64
    where
        K: Hash,
    {
        // The tag is the top 32 bits of the key's shard-local hash, all that places it.
        // SAFETY: the key is written (the caller's contract).
        self.key.with(|key| u64::from(unsafe { (*key).tag }) << 32)
    }

    unsafe fn drop_key(&self) {
        // SAFETY: the caller owns the array and the key is written.
        self.key.with_mut(|key| unsafe { (*key).release() });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Every length up to past the inline size, with a difference at every position (and
    /// none), compares as slices do.
    #[test]
    fn bytes_compare_exactly_at_every_length_and_position() {
        for n in 0..=INLINE + 8 {
            let a: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
            assert!(same_bytes(&a, &a.clone()), "{n} equal bytes");
            for at in 0..n {
                for flip in [1u8, 0x80] {
                    let mut b = a.clone();
                    b[at] ^= flip;
                    assert!(!same_bytes(&a, &b), "{n} bytes differing at {at}");
                }
            }
        }
    }

    #[test]
    fn keys_round_trip_in_the_slot_and_on_the_heap() {
        for len in [0, 1, 47, 48, 49, 300] {
            let text = "é".repeat(len / 2) + &"x".repeat(len % 2);
            let mut key = TextKey {
                tag: 0,
                len: 0,
                bytes: [MaybeUninit::uninit(); INLINE],
            };
            key.write(7, text.as_bytes());
            // SAFETY: just written; released once below.
            unsafe {
                assert_eq!(key.text(), text.as_bytes());
                key.release();
            }
            assert_eq!(key.tag, 7);
        }
    }
}
