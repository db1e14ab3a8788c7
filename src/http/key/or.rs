//! [`Or`]: a key from one extractor, or else from another.

use super::{KeyBuf, KeyError, KeyExtractor};
use http::request::Parts;

/// The first extractor's key, or the fallback's when the first fails (for any reason: a
/// missing header, an oversized one). Built by [`KeyExtractor::or`].
///
/// The two kinds of keys are tagged (`0:` and `1:`), so they never share a state: a client
/// cannot send an API key spelled like a victim's IP address and spend that address's quota.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Or<A, B> {
    first: A,
    fallback: B,
}

impl<A, B> Or<A, B> {
    pub(crate) fn new(first: A, fallback: B) -> Self {
        Or { first, fallback }
    }
}

impl<A: KeyExtractor, B: KeyExtractor> KeyExtractor for Or<A, B> {
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError> {
        let start = key.len();
        key.push_str("0:");
        if self.first.extract(request, key).is_ok() {
            return Ok(());
        }
        key.truncate(start);
        key.push_str("1:");
        self.fallback.extract(request, key)
    }
}
