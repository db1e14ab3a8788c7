//! [`BackendError`]: why a backend could not decide.

use crate::error::CapacityError;
use std::error::Error;
use std::fmt;

/// What kind of failure a [`BackendError`] is, so that callers (the HTTP layer's
/// `on_backend_error`, a fallback) can choose what to do without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackendErrorKind {
    /// The cost can never be admitted: it exceeds the limit's capacity. The caller's fault,
    /// not the backend's; waiting does not help.
    Capacity,
    /// The backend did not answer within its timeout.
    Timeout,
    /// The backend could not be reached (connection refused or lost).
    Unavailable,
    /// The backend answered with an error: a key holding something else, a script error.
    Rejected,
}

impl BackendErrorKind {
    /// A short name, for metric labels and the bindings' error kinds: `capacity`, `timeout`,
    /// `unavailable` or `rejected`.
    pub fn label(self) -> &'static str {
        match self {
            BackendErrorKind::Capacity => "capacity",
            BackendErrorKind::Timeout => "timeout",
            BackendErrorKind::Unavailable => "unavailable",
            BackendErrorKind::Rejected => "rejected",
        }
    }
}

impl fmt::Display for BackendErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendErrorKind::Capacity => "request exceeds the limit's capacity",
            BackendErrorKind::Timeout => "backend timed out",
            BackendErrorKind::Unavailable => "backend unavailable",
            BackendErrorKind::Rejected => "backend rejected the request",
        })
    }
}

/// Why a [`Backend`](super::Backend) could not decide: a [kind](BackendErrorKind), the
/// backend's own error as the [`source`](Error::source), and in a composite decision
/// ([`all_of`](super::all_of), [`all_of_each`](super::all_of_each)) which
/// [member](Self::member) failed.
#[derive(Debug)]
pub struct BackendError {
    kind: BackendErrorKind,
    source: Box<dyn Error + Send + Sync + 'static>,
    member: Option<usize>,
    /// The failing backend's own short name for what failed, when it gave one.
    label: Option<&'static str>,
}

impl BackendError {
    /// An error of `kind`, caused by `source`.
    pub fn new(kind: BackendErrorKind, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        BackendError {
            kind,
            source: source.into(),
            member: None,
            label: None,
        }
    }

    /// The same error with the failing backend's own short name for what failed (a
    /// `RedisError`'s `script`, `wrong_type`, `foreign`...), which [`label`](Self::label)
    /// then returns: the backend that failed names its failure, the seam knows no backend.
    pub fn with_label(self, label: &'static str) -> Self {
        BackendError {
            label: Some(label),
            ..self
        }
    }

    /// In a composite decision, the index of the member that failed (so a caller may decide
    /// the others again without it); `None` for a single decision.
    pub fn member(&self) -> Option<usize> {
        self.member
    }

    /// The same error, as the failure of member `index` of a composite.
    pub(crate) fn of_member(self, index: usize) -> Self {
        BackendError {
            member: Some(index),
            ..self
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> BackendErrorKind {
        self.kind
    }

    /// The backend's own error, to downcast (e.g. to a `RedisError`).
    pub fn inner(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.source
    }

    /// A short name for what failed: the one the failing backend gave
    /// ([`with_label`](Self::with_label); a Redis limiter gives its `RedisError`'s `label()`:
    /// `script`, `wrong_type`, `foreign`...), the [kind's](BackendErrorKind::label)
    /// otherwise. What the bindings report as an error's kind.
    pub fn label(&self) -> &'static str {
        self.label.unwrap_or(self.kind.label())
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(member) = self.member {
            write!(f, "limit {member}: ")?;
        }
        write!(f, "{}: {}", self.kind, self.source)
    }
}

impl Error for BackendError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.source)
    }
}

impl From<CapacityError> for BackendError {
    fn from(error: CapacityError) -> Self {
        BackendError::new(BackendErrorKind::Capacity, error)
    }
}
