//! [`Global`]: one key for every request.

use super::{KeyBuf, KeyError, KeyExtractor};
use http::request::Parts;

/// Every request shares one key (the empty string): one limit for the whole service.
///
/// With a direct [`Limiter`](crate::Limiter) as the backend, which ignores keys, this is the
/// cheapest limit there is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Global;

impl KeyExtractor for Global {
    #[inline]
    fn extract(&self, _request: &Parts, _key: &mut KeyBuf) -> Result<(), KeyError> {
        Ok(())
    }
}
