//! [`KeyFn`]: a key computed by a closure.

use super::{KeyBuf, KeyError, KeyExtractor};
use http::request::Parts;
use std::fmt;

/// A key computed by a closure from the request: a JWT subject, a route plus a user, a
/// tenant. Build one with [`key_fn`].
pub struct KeyFn<F> {
    f: F,
}

/// An extractor from a closure that returns the key, or a [`KeyError`] to answer with.
///
/// ```
/// use sluicegate::http::{key_fn, KeyBuf, KeyError, KeyExtractor};
///
/// // Route plus user: each user gets the limit once per route.
/// let per_route_user = key_fn(|request: &http::request::Parts| {
///     let user = request
///         .headers
///         .get("x-user")
///         .and_then(|v| v.to_str().ok())
///         .ok_or_else(|| KeyError::missing("the x-user header is missing"))?;
///     Ok(format!("{} {}", request.uri.path(), user))
/// });
///
/// let (request, ()) = http::Request::get("/orders").header("x-user", "ana").body(()).unwrap().into_parts();
/// let mut key = KeyBuf::new();
/// per_route_user.extract(&request, &mut key)?;
/// assert_eq!(key.as_str(), "/orders ana");
/// # Ok::<(), KeyError>(())
/// ```
pub fn key_fn<F, K>(f: F) -> KeyFn<F>
where
    F: Fn(&Parts) -> Result<K, KeyError> + Send + Sync + 'static,
    K: AsRef<str>,
{
    KeyFn { f }
}

impl<F, K> KeyExtractor for KeyFn<F>
where
    F: Fn(&Parts) -> Result<K, KeyError> + Send + Sync + 'static,
    K: AsRef<str>,
{
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError> {
        key.push_str((self.f)(request)?.as_ref());
        Ok(())
    }
}

impl<F> fmt::Debug for KeyFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyFn(..)")
    }
}
