//! [`Needle`]: a lookup's key as every slot layout compares it, and which key types a table
//! stores as text ([`is_text`]; their bytes read in place, see [`TextSlot`](super::text::TextSlot)).

use std::borrow::Cow;
use std::sync::Arc;

/// A lookup's key, prepared once for all the slots its probe compares it with.
pub(crate) struct Needle<'q, Q: ?Sized> {
    pub(crate) key: &'q Q,
    /// For text slots: the tag of the key's hash and its bytes (empty for plain slots).
    pub(crate) tag: u32,
    pub(crate) text: Cow<'q, [u8]>,
}

impl<'q, Q: ?Sized> Needle<'q, Q> {
    /// `key`, whose shard-local hash is `local`, for a table of `K` keys.
    #[inline(always)]
    pub(crate) fn new<K>(key: &'q Q, local: u64) -> Self
    where
        Q: ToOwned<Owned = K>,
    {
        if is_text::<K>() {
            Needle {
                key,
                tag: tag_of(local),
                text: needle_text::<K, Q>(key),
            }
        } else {
            Needle {
                key,
                tag: 0,
                text: Cow::Borrowed(&[]),
            }
        }
    }
}

/// Whether a table of `K` keys stores them as text (in [`TextSlot`]s): `String`, `Box<str>`,
/// `Arc<str>`, `Vec<u8>`, `Box<[u8]>`.
#[inline(always)]
pub(crate) fn is_text<K: ?Sized>() -> bool {
    let id = typeid::of::<K>();
    id == typeid::of::<String>()
        || id == typeid::of::<Box<str>>()
        || id == typeid::of::<Arc<str>>()
        || id == typeid::of::<Vec<u8>>()
        || id == typeid::of::<Box<[u8]>>()
}

/// The bytes of `key` when `T` is `str`, `[u8]` or one of the [text](is_text) key types.
#[inline(always)]
fn bytes_of<T: ?Sized>(key: &T) -> Option<&[u8]> {
    let id = typeid::of::<T>();
    let ptr: *const T = key;
    // SAFETY: each cast is taken only when `T` is exactly the type cast to (type ids compare
    // types with their lifetimes erased, which a layout does not depend on).
    unsafe {
        if id == typeid::of::<str>() {
            Some(std::mem::transmute_copy::<&T, &str>(&key).as_bytes())
        } else if id == typeid::of::<[u8]>() {
            Some(std::mem::transmute_copy::<&T, &[u8]>(&key))
        } else if id == typeid::of::<String>() {
            Some((*ptr.cast::<String>()).as_bytes())
        } else if id == typeid::of::<Box<str>>() {
            Some((*ptr.cast::<Box<str>>()).as_bytes())
        } else if id == typeid::of::<Arc<str>>() {
            Some((*ptr.cast::<Arc<str>>()).as_bytes())
        } else if id == typeid::of::<Vec<u8>>() {
            Some(&*ptr.cast::<Vec<u8>>())
        } else if id == typeid::of::<Box<[u8]>>() {
            Some(&**ptr.cast::<Box<[u8]>>())
        } else {
            None
        }
    }
}

/// The 32 bits of a key's (shard-local) hash a slot keeps: the top ones, which alone place
/// the key (see [`Array::home`](super::array::Array)). Keys met on one probe sequence share
/// the tag's first bits (those that chose nearby homes, about log2 of a shard's slots); the
/// rest tell them apart: at 2^18 slots a shard, two of them share a tag once in 2^14.
#[inline(always)]
pub(crate) fn tag_of(local_hash: u64) -> u32 {
    (local_hash >> 32) as u32
}

/// The bytes of a lookup's key for a table of text keys: borrowed for `str`, `[u8]` and the key
/// types, copied through `ToOwned` for any other borrowed form.
#[inline(always)]
pub(crate) fn needle_text<'q, K, Q>(key: &'q Q) -> Cow<'q, [u8]>
where
    Q: ToOwned<Owned = K> + ?Sized,
{
    match bytes_of(key) {
        Some(bytes) => Cow::Borrowed(bytes),
        None => Cow::Owned(
            bytes_of(&key.to_owned())
                .expect("a text table's key type has bytes")
                .to_vec(),
        ),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_text_key_types_are_recognized() {
        assert!(is_text::<String>() && is_text::<Box<str>>() && is_text::<Arc<str>>());
        assert!(is_text::<Vec<u8>>() && is_text::<Box<[u8]>>());
        assert!(!is_text::<u64>() && !is_text::<(u8, String)>() && !is_text::<&str>());
    }

    #[test]
    fn lookups_borrow_their_bytes() {
        let owned = String::from("alice");
        assert!(matches!(
            needle_text::<String, str>("alice"),
            Cow::Borrowed(b"alice")
        ));
        assert!(matches!(
            needle_text::<String, String>(&owned),
            Cow::Borrowed(b"alice")
        ));
        let bytes = b"bob".to_vec();
        assert!(matches!(
            needle_text::<Vec<u8>, [u8]>(b"bob"),
            Cow::Borrowed(b"bob")
        ));
        assert!(matches!(
            needle_text::<Vec<u8>, Vec<u8>>(&bytes),
            Cow::Borrowed(b"bob")
        ));
    }
}
