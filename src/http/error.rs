//! [`BuildError`]: why a layer or an extractor could not be built.

use std::fmt;

/// Why [`RateLimitLayer`](super::RateLimitLayer) or an extractor setting was refused; the
/// message names the setting and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    message: String,
}

impl BuildError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        BuildError {
            message: message.into(),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}
