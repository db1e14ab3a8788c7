//! What a request is counted against: [`KeyExtractor`] and the ready-made extractors.

mod buf;
mod client_ip;
mod error;
mod func;
mod given;
mod global;
mod header;
mod or;

pub use buf::KeyBuf;
pub use client_ip::{ClientIp, ForwardedHeaders};
pub use error::{KeyError, KeyErrorKind};
pub use func::{key_fn, KeyFn};
pub use given::{GivenKey, GivenKeys};
pub use global::Global;
pub use header::HeaderKey;
pub use or::Or;

use http::request::Parts;

/// Turns a request into the key a limit counts it against.
///
/// An extractor writes the key into `key` (on the stack when it is short) or says why it
/// cannot: a [`KeyError`] becomes a `400` with its message (or `500` when the server, not the
/// client, is at fault), never a panic. Ready-made: [`Global`], [`ClientIp`], [`HeaderKey`],
/// closures through [`key_fn`], and fallbacks through [`or`](Self::or).
///
/// ```
/// use sluicegate::http::{ClientIp, HeaderKey, KeyExtractor};
///
/// // The API key when there is one, else the client's address.
/// let key = HeaderKey::parse("x-api-key")?.or(ClientIp::new());
/// # let _ = key;
/// # Ok::<(), http::header::InvalidHeaderName>(())
/// ```
pub trait KeyExtractor: Send + Sync + 'static {
    /// Writes `request`'s key into `key` (which is empty), or says why there is none.
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError>;

    /// This extractor's key, or `fallback`'s when this one fails.
    fn or<B: KeyExtractor>(self, fallback: B) -> Or<Self, B>
    where
        Self: Sized,
    {
        Or::new(self, fallback)
    }
}

impl<E: KeyExtractor + ?Sized> KeyExtractor for std::sync::Arc<E> {
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError> {
        (**self).extract(request, key)
    }
}

impl<E: KeyExtractor + ?Sized> KeyExtractor for Box<E> {
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError> {
        (**self).extract(request, key)
    }
}
