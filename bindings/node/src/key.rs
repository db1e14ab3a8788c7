//! Reading a JavaScript string key without allocating: its UTF-16 code units, copied into a
//! stack buffer (onto the heap only when it is longer than [`INLINE`] units), then handed to
//! the engine as their WTF-8 bytes.
//!
//! Keys are the string's code units, not Node's UTF-8: that is exact (Node's UTF-8 turns
//! every lone surrogate into U+FFFD, so `'\uD800'` and `'\uD801'` would share a state), and V8
//! copies a string's units faster than it encodes UTF-8 (`bench/return_paths.js` measures a
//! check).

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

/// A key as the engine stores it: the WTF-8 bytes of a string's UTF-16 code units. The
/// engine keeps byte keys of up to 48 bytes in the table's slot itself (no allocation, one
/// cache line per lookup), so every key of up to 48 ASCII characters costs the same.
pub(crate) type Key = Vec<u8>;

/// The WTF-8 encoding of `units` (UTF-8, with each lone surrogate as its own three bytes):
/// exact, as the code units are (`'\uD800'` and `'\uD801'` stay two keys), and byte for
/// byte the UTF-8 of every well-formed string, so an ASCII key is its own bytes.
/// Runs `f` on the bytes, encoded on the stack unless the key is long.
#[inline(always)]
pub(crate) fn with_wtf8<R>(units: &[u16], f: impl FnOnce(&[u8]) -> R) -> R {
    // At most 3 bytes a unit (a pair of surrogates takes 4 for 2 units).
    let mut buf = std::mem::MaybeUninit::<[u8; 3 * INLINE]>::uninit();
    if units.len() > INLINE {
        let mut bytes = Vec::with_capacity(3 * units.len());
        encode_wtf8(units, |b| bytes.push(b));
        return f(&bytes);
    }
    let out = buf.as_mut_ptr().cast::<u8>();
    let mut len = 0;
    // ASCII, the common case, one byte a unit.
    while len < units.len() && units[len] < 0x80 {
        // SAFETY: `len < units.len() <= INLINE` bytes fit in the buffer.
        unsafe { out.add(len).write(units[len] as u8) };
        len += 1;
    }
    if len < units.len() {
        encode_wtf8(&units[len..], |b| {
            // SAFETY: at most `3 * INLINE` bytes for at most `INLINE` units.
            unsafe { out.add(len).write(b) };
            len += 1;
        });
    }
    // SAFETY: the first `len` bytes were written above.
    f(unsafe { std::slice::from_raw_parts(out, len) })
}

/// Writes the WTF-8 bytes of `units` through `push`.
fn encode_wtf8(units: &[u16], mut push: impl FnMut(u8)) {
    for unit in char::decode_utf16(units.iter().copied()) {
        match unit {
            Ok(c) => {
                let mut bytes = [0u8; 4];
                c.encode_utf8(&mut bytes).bytes().for_each(&mut push);
            }
            Err(lone) => {
                let u = lone.unpaired_surrogate();
                push(0xE0 | (u >> 12) as u8);
                push(0x80 | ((u >> 6) & 0x3F) as u8);
                push(0x80 | (u & 0x3F) as u8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_wtf8;

    fn wtf8(s: &[u16]) -> Vec<u8> {
        with_wtf8(s, |b| b.to_vec())
    }

    #[test]
    fn well_formed_strings_are_their_utf8() {
        for s in [
            "",
            "user:42",
            "ключ",
            "日本語",
            "a\u{1F600}b",
            &"x".repeat(300),
        ] {
            let units: Vec<u16> = s.encode_utf16().collect();
            assert_eq!(wtf8(&units), s.as_bytes(), "{s:?}");
        }
    }

    #[test]
    fn lone_surrogates_stay_distinct() {
        let a = wtf8(&[0xD800]);
        let b = wtf8(&[0xD801]);
        assert_ne!(a, b);
        assert_eq!(a, [0xED, 0xA0, 0x80]);
        // A lone high surrogate then a letter is not the pair's encoding.
        assert_ne!(wtf8(&[0xD83D, 0x41]), wtf8(&[0xD83D, 0xDE00]));
    }
}
