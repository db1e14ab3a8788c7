//! Turning the options' strings into the engine's types, with the engine's own sentences as
//! the errors.

use napi::{Error, Status};
use sluicegate::policy::AlgorithmKind;
use sluicegate::Quota;

/// The quota `text` means ("100/minute burst 20"), or an `Error` with the parser's sentence.
pub(crate) fn quota(text: &str) -> napi::Result<Quota> {
    text.parse()
        .map_err(|e: sluicegate::QuotaError| Error::new(Status::InvalidArg, e.to_string()))
}

/// The algorithm `name` names ("sliding-window"), or an `Error` listing the names.
pub(crate) fn algorithm(name: &str) -> napi::Result<AlgorithmKind> {
    name.parse()
        .map_err(|e: sluicegate::policy::PolicyError| Error::new(Status::InvalidArg, e.to_string()))
}

/// A quota error from building a limiter (an algorithm that cannot run the quota).
pub(crate) fn quota_error(error: sluicegate::QuotaError) -> Error {
    Error::new(Status::InvalidArg, error.to_string())
}
