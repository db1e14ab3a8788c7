//! [`KeyError`]: why a request's key could not be extracted.

use http::StatusCode;
use std::borrow::Cow;
use std::fmt;

/// Whose fault a [`KeyError`] is, which decides the status the layer answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyErrorKind {
    /// The request lacks what the key is made of (no such header): `400 Bad Request`.
    Missing,
    /// The request carries it, but unusably (oversized, duplicated, an unparsable forwarded
    /// chain): `400 Bad Request`.
    Invalid,
    /// The server cannot see it (no peer address was recorded on the request, so the
    /// service was not set up to record it): `500 Internal Server Error`. Never the client's
    /// fault, and never caused by what the client sent.
    Unavailable,
}

/// Why a key could not be extracted, in a sentence the client (or, for
/// [`Unavailable`](KeyErrorKind::Unavailable), the operator) can act on.
///
/// ```
/// use sluicegate::http::{KeyError, KeyErrorKind};
/// let error = KeyError::missing("the x-api-key header is missing");
/// assert_eq!(error.kind(), KeyErrorKind::Missing);
/// assert_eq!(error.status(), http::StatusCode::BAD_REQUEST);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    kind: KeyErrorKind,
    message: Cow<'static, str>,
}

impl KeyError {
    /// An error of `kind`.
    pub fn new(kind: KeyErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        KeyError {
            kind,
            message: message.into(),
        }
    }

    /// The request lacks the key.
    pub fn missing(message: impl Into<Cow<'static, str>>) -> Self {
        KeyError::new(KeyErrorKind::Missing, message)
    }

    /// The request's key is unusable.
    pub fn invalid(message: impl Into<Cow<'static, str>>) -> Self {
        KeyError::new(KeyErrorKind::Invalid, message)
    }

    /// The server cannot see the key (a setup mistake).
    pub fn unavailable(message: impl Into<Cow<'static, str>>) -> Self {
        KeyError::new(KeyErrorKind::Unavailable, message)
    }

    /// Whose fault it is.
    pub fn kind(&self) -> KeyErrorKind {
        self.kind
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The status the layer answers with: `400` for the client's errors, `500` for
    /// [`Unavailable`](KeyErrorKind::Unavailable).
    pub fn status(&self) -> StatusCode {
        match self.kind {
            KeyErrorKind::Missing | KeyErrorKind::Invalid => StatusCode::BAD_REQUEST,
            KeyErrorKind::Unavailable => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KeyError {}
