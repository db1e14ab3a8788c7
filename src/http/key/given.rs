//! [`GivenKey`]: a key the front end computed itself, such as a JavaScript or Python function
//! of the request in the Node and Python middlewares.

use super::{KeyBuf, KeyError, KeyExtractor};
use http::request::Parts;

/// The keys a front end computed for a request, by limit name: a request extension that
/// [`GivenKey`] reads. `None` says the function found no key (the request is then refused
/// with `400`, as a missing header would be).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GivenKeys(Vec<(String, Option<String>)>);

impl GivenKeys {
    /// No keys yet.
    pub fn new() -> Self {
        GivenKeys::default()
    }

    /// Records `key` as limit `limit`'s key.
    pub fn insert(&mut self, limit: impl Into<String>, key: Option<String>) {
        self.0.push((limit.into(), key));
    }

    fn get(&self, limit: &str) -> Option<&Option<String>> {
        self.0
            .iter()
            .find(|(name, _)| name == limit)
            .map(|(_, key)| key)
    }
}

/// The key the front end put for limit `limit` in the request's [`GivenKeys`].
///
/// ```
/// use sluicegate::http::front_end::{GivenKey, GivenKeys};
/// use sluicegate::http::{KeyBuf, KeyExtractor};
///
/// let mut request = http::Request::get("/").body(())?;
/// let mut keys = GivenKeys::new();
/// keys.insert("user", Some("u-42".to_owned()));
/// request.extensions_mut().insert(keys);
/// let (parts, ()) = request.into_parts();
/// let mut key = KeyBuf::new();
/// GivenKey::new("user").extract(&parts, &mut key)?;
/// assert_eq!(key.as_str(), "u-42");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenKey {
    limit: String,
}

impl GivenKey {
    /// Reads limit `limit`'s key.
    pub fn new(limit: impl Into<String>) -> Self {
        GivenKey {
            limit: limit.into(),
        }
    }
}

impl KeyExtractor for GivenKey {
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError> {
        let given = request
            .extensions
            .get::<GivenKeys>()
            .and_then(|keys| keys.get(&self.limit));
        match given {
            Some(Some(found)) if !found.is_empty() => {
                key.push_str(found);
                Ok(())
            }
            // The refusal names the limit (`limit "user": ...`): the sentence does not again.
            Some(_) => Err(KeyError::missing(
                "its key function found no key in this request",
            )),
            None => Err(KeyError::unavailable(
                "the front end gave no key for this limit (a GivenKeys request extension)",
            )),
        }
    }
}
