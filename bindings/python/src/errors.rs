//! The engine's errors as Python exceptions: a `ValueError` carrying the Rust error's own
//! sentence for anything the caller passed wrong, `sluicegate.RedisError` (a
//! `ConnectionError`) when Redis could not decide.

use pyo3::create_exception;
use pyo3::exceptions::{PyConnectionError, PyValueError};
use pyo3::types::PyAnyMethods;
use pyo3::{PyErr, Python};
use sluicegate::{CapacityError, QuotaError};

create_exception!(
    sluicegate,
    RedisError,
    PyConnectionError,
    "Redis could not decide: it did not answer within the limiter's timeout, could not be \
     reached, or refused the call. `kind` says which (`timeout`, `unavailable`, `script`, \
     `wrong_type`, `foreign`); the message says what happened."
);

/// A quota the engine cannot parse or run.
pub(crate) fn quota(error: QuotaError) -> PyErr {
    value(error)
}

/// A cost above what the limiter can ever admit.
#[cold]
pub(crate) fn capacity(error: CapacityError) -> PyErr {
    value(error)
}

/// Any engine error about a value the caller passed, with its sentence.
#[cold]
pub(crate) fn value(error: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// A Redis limiter's error: a `ValueError` for what the caller passed (a cost that can never
/// fit, a quota Redis cannot run, a bad URL or prefix), else `sluicegate.RedisError` with
/// `kind` set to the engine's label (`timeout`, `unavailable`, `script`, `wrong_type`,
/// `foreign`).
#[cold]
pub(crate) fn redis(error: sluicegate::redis::RedisError) -> PyErr {
    use sluicegate::redis::RedisError as E;
    match error {
        E::Capacity(_) | E::Quota(_) | E::Config { .. } => value(error),
        other => Python::attach(|py| {
            let raised = RedisError::new_err(other.to_string());
            // Setting an attribute on a fresh exception instance cannot fail.
            let _ = raised.value(py).setattr("kind", other.label());
            raised
        }),
    }
}

/// A backend's error outside a decision (a reset on Redis that failed):
/// `sluicegate.RedisError`, `kind` the library's label (`timeout`, `unavailable`, `script`...).
#[cold]
pub(crate) fn backend(error: sluicegate::backend::BackendError) -> PyErr {
    let kind = error.label();
    Python::attach(|py| {
        let raised = RedisError::new_err(error.to_string());
        let _ = raised.value(py).setattr("kind", kind);
        raised
    })
}
