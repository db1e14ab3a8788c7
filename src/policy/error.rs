//! [`PolicyError`]: why a policy could not be read.

use crate::error::QuotaError;
use std::fmt;

/// Why a [`Policy`](super::Policy) (or one of its fields) could not be read. Each variant's
/// `Display` names the field and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyError {
    /// A field was not `name=value`.
    Malformed(String),
    /// A field name other than `name`, `quota`, `algorithm` and `key`.
    UnknownField(String),
    /// A field given twice.
    DuplicateField(String),
    /// A required field was missing.
    MissingField(&'static str),
    /// `name` was empty.
    EmptyName,
    /// `quota` did not parse, or is zero.
    Quota(QuotaError),
    /// `algorithm` named none of the six.
    UnknownAlgorithm(String),
    /// `key` was none of `global`, `peer-ip`, `header:NAME`.
    UnknownKey(String),
    /// `header:NAME` with a name that is not an HTTP field name.
    BadHeaderName(String),
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::Malformed(field) => {
                write!(f, "policy field {field:?} is not of the form name=value")
            }
            PolicyError::UnknownField(name) => write!(
                f,
                "unknown policy field {name:?}: expected name, quota, algorithm or key"
            ),
            PolicyError::DuplicateField(name) => write!(f, "policy field {name:?} given twice"),
            PolicyError::MissingField(name) => write!(f, "policy field {name:?} is missing"),
            PolicyError::EmptyName => f.write_str("policy field \"name\" is empty"),
            PolicyError::Quota(error) => write!(f, "policy field \"quota\": {error}"),
            PolicyError::UnknownAlgorithm(name) => write!(
                f,
                "policy field \"algorithm\": unknown algorithm {name:?}: expected gcra, \
                 token-bucket, leaky-bucket, fixed-window, sliding-window or sliding-log"
            ),
            PolicyError::UnknownKey(key) => write!(
                f,
                "policy field \"key\": unknown key {key:?}: expected global, peer-ip or \
                 header:NAME"
            ),
            PolicyError::BadHeaderName(name) => write!(
                f,
                "policy field \"key\": {name:?} is not an HTTP header name"
            ),
        }
    }
}

impl std::error::Error for PolicyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PolicyError::Quota(error) => Some(error),
            _ => None,
        }
    }
}
