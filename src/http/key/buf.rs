//! [`KeyBuf`]: where an extractor writes a request's key, on the stack when it is short.

use std::fmt;

/// Bytes kept inline: an IPv6 prefix with its length (`ffff:…:ffff/128`, 43 bytes) fits, so
/// the address extractors never allocate; longer keys (header values) spill to the heap.
const INLINE: usize = 62;

/// A request's key for one limit, as extractors write it.
///
/// Extractors append text with [`push_str`](Self::push_str) or `write!` (it implements
/// [`fmt::Write`]); the layer then hands [`as_str`](Self::as_str) to the limit's backend.
/// Keys up to 62 bytes stay inline, so extracting an address allocates nothing.
///
/// ```
/// use sluicegate::http::KeyBuf;
/// use std::fmt::Write;
///
/// let mut key = KeyBuf::new();
/// write!(key, "user:{}", 42)?;
/// assert_eq!(key.as_str(), "user:42");
/// # Ok::<(), std::fmt::Error>(())
/// ```
#[derive(Clone)]
pub struct KeyBuf {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(String),
}

impl KeyBuf {
    /// An empty key.
    #[inline]
    pub fn new() -> Self {
        KeyBuf {
            repr: Repr::Inline {
                len: 0,
                bytes: [0; INLINE],
            },
        }
    }

    /// The key as text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.repr {
            // SAFETY: the inline bytes are only ever written by `push_str` from a `&str`, and
            // only cut by `truncate` at a length `len()` returned earlier, which is a char
            // boundary; so the first `len` bytes are always valid UTF-8.
            Repr::Inline { len, bytes } => unsafe {
                std::str::from_utf8_unchecked(&bytes[..usize::from(*len)])
            },
            Repr::Heap(text) => text,
        }
    }

    /// The key's length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Inline { len, .. } => usize::from(*len),
            Repr::Heap(text) => text.len(),
        }
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `text`.
    #[inline]
    pub fn push_str(&mut self, text: &str) {
        match &mut self.repr {
            Repr::Inline { len, bytes } => {
                let start = usize::from(*len);
                let end = start + text.len();
                if end <= INLINE {
                    bytes[start..end].copy_from_slice(text.as_bytes());
                    // `end <= INLINE < 256`.
                    *len = end as u8;
                } else {
                    let mut heap = String::with_capacity(end.max(2 * INLINE));
                    // SAFETY: see `as_str`.
                    heap.push_str(unsafe { std::str::from_utf8_unchecked(&bytes[..start]) });
                    heap.push_str(text);
                    self.repr = Repr::Heap(heap);
                }
            }
            Repr::Heap(heap) => heap.push_str(text),
        }
    }

    /// Appends `text` if it is ASCII (what the address extractors write): checking that is
    /// cheaper than validating UTF-8. Other bytes are dropped, which never happens in this
    /// crate's callers.
    #[inline]
    pub(crate) fn push_ascii(&mut self, text: &[u8]) {
        debug_assert!(text.is_ascii());
        if text.is_ascii() {
            // SAFETY: ASCII is valid UTF-8.
            self.push_str(unsafe { std::str::from_utf8_unchecked(text) });
        }
    }

    /// Appends one character.
    pub fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// Cuts the key back to `len` bytes: what a fallback extractor does to forget what a
    /// failed one wrote. `len` must be a length this key had before (from [`len`](Self::len));
    /// a longer one changes nothing, and one inside a character cuts before that character.
    pub fn truncate(&mut self, len: usize) {
        let text = self.as_str();
        if len >= text.len() {
            return;
        }
        let mut cut = len;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        match &mut self.repr {
            // `cut < len <= INLINE`.
            Repr::Inline { len, .. } => *len = cut as u8,
            Repr::Heap(heap) => heap.truncate(cut),
        }
    }

    /// Empties the key, keeping any heap buffer for reuse.
    pub fn clear(&mut self) {
        self.truncate(0);
    }
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf::new()
    }
}

impl fmt::Write for KeyBuf {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.push_str(text);
        Ok(())
    }
}

impl fmt::Debug for KeyBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for KeyBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for KeyBuf {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for KeyBuf {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    #[test]
    fn short_keys_stay_inline_and_long_ones_spill_losslessly() {
        let mut key = KeyBuf::new();
        key.push_str("2001:db8:85a3:8d3:1319:8a2e:370:7348/128");
        assert!(matches!(key.repr, Repr::Inline { .. }));
        let long = "é".repeat(40);
        key.push_str(&long);
        assert!(matches!(key.repr, Repr::Heap(_)));
        assert_eq!(
            key.as_str(),
            format!("2001:db8:85a3:8d3:1319:8a2e:370:7348/128{long}")
        );
    }

    #[test]
    fn truncate_restores_an_earlier_length_and_never_splits_a_char() {
        let mut key = KeyBuf::new();
        key.push_str("a:");
        let mark = key.len();
        write!(key, "{}", "ü".repeat(3)).unwrap();
        key.truncate(mark + 1); // inside 'ü': cut before it
        assert_eq!(key.as_str(), "a:");
        key.push_str("x");
        key.truncate(mark);
        assert_eq!(key.as_str(), "a:");
        key.clear();
        assert!(key.is_empty());
    }

    #[test]
    fn exactly_full_inline_buffer_does_not_spill() {
        let mut key = KeyBuf::new();
        key.push_str(&"x".repeat(INLINE));
        assert!(matches!(key.repr, Repr::Inline { .. }));
        key.push('y');
        assert!(matches!(key.repr, Repr::Heap(_)));
        assert_eq!(key.len(), INLINE + 1);
    }
}
