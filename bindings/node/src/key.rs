//! Reading a JavaScript string key without allocating: its UTF-16 code units, copied into a
//! stack buffer, or onto the heap only when it is longer than [`INLINE`] units.
//!
//! Keys are the string's code units, not UTF-8: that is exact (UTF-8 would turn every lone
//! surrogate into U+FFFD, so `'\uD800'` and `'\uD801'` would share a state), and V8 copies a
//! string's units faster than it encodes UTF-8 (`bench/return_paths.js` measures a check).

use napi::sys;

/// Keys up to this many UTF-16 code units are read without allocating.
pub(crate) const INLINE: usize = 256;

/// Runs `f` on `key`'s code units; `None` when `key` is not a string.
#[inline(always)]
pub(crate) unsafe fn with_key<R>(
    env: sys::napi_env,
    key: sys::napi_value,
    f: impl FnOnce(&[u16]) -> R,
) -> Option<R> {
    // Not zeroed: Node writes the units that are then read.
    let mut buf = std::mem::MaybeUninit::<[u16; INLINE + 1]>::uninit();
    let mut written = 0usize;
    // `buf` has room for `INLINE` units and the NUL Node adds.
    let status = sys::napi_get_value_string_utf16(
        env,
        key,
        buf.as_mut_ptr().cast(),
        INLINE + 1,
        &mut written,
    );
    if status != sys::Status::napi_ok {
        return None;
    }
    if written < INLINE {
        // Fewer units than the buffer holds: the whole string fit.
        return Some(f(std::slice::from_raw_parts(
            buf.as_ptr().cast::<u16>(),
            written,
        )));
    }
    long_key(env, key).map(|units| f(&units))
}

/// A key too long for the stack buffer, read onto the heap.
#[cold]
unsafe fn long_key(env: sys::napi_env, key: sys::napi_value) -> Option<Vec<u16>> {
    let mut len = 0usize;
    // A null buffer asks for the length in code units.
    if sys::napi_get_value_string_utf16(env, key, std::ptr::null_mut(), 0, &mut len)
        != sys::Status::napi_ok
    {
        return None;
    }
    let mut units = vec![0u16; len + 1];
    let mut written = 0usize;
    sys::napi_get_value_string_utf16(
        env,
        key,
        units.as_mut_ptr().cast(),
        units.len(),
        &mut written,
    );
    units.truncate(written);
    Some(units)
}

/// Code units kept inline in a [`Key`]: most keys (`user:42`, an IPv4 address) fit, and need
/// no allocation when the engine stores them.
const INLINE_KEY: usize = 12;

/// A key as the engine stores it: a string's UTF-16 code units, inline up to
/// [`INLINE_KEY`] units, so that inserting a key (and dropping it when idle) allocates
/// nothing, and comparing it reads no second cache line.
#[derive(Clone)]
pub(crate) struct Key(smallvec::SmallVec<[u16; INLINE_KEY]>);

/// A key borrowed for a lookup: the code units just read.
#[repr(transparent)]
pub(crate) struct Units([u16]);

impl Units {
    pub(crate) fn new(units: &[u16]) -> &Units {
        // SAFETY: `Units` is a transparent wrapper around `[u16]`.
        unsafe { &*(units as *const [u16] as *const Units) }
    }
}

// `Key` and `Units` hash and compare as the `[u16]` they hold, so a borrowed lookup finds the
// key stored.
impl std::hash::Hash for Units {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialEq for Units {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for Units {}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.as_slice().hash(state);
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_slice() == other.0.as_slice()
    }
}

impl Eq for Key {}

impl std::borrow::Borrow<Units> for Key {
    fn borrow(&self) -> &Units {
        Units::new(&self.0)
    }
}

impl ToOwned for Units {
    type Owned = Key;

    fn to_owned(&self) -> Key {
        Key(smallvec::SmallVec::from_slice(&self.0))
    }
}
