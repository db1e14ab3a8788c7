//! Turning the options' strings into the engine's types, with the engine's own sentences as
//! the errors.

use napi::{Error, Status};
use napi_derive::napi;
use sluicegate::policy::AlgorithmKind;
use sluicegate::Quota;

/// The quota `text` means ("100/minute burst 20"), or an `Error` with the parser's sentence.
pub(crate) fn quota(text: &str) -> napi::Result<Quota> {
    text.parse()
        .map_err(|e: sluicegate::QuotaError| Error::new(Status::InvalidArg, e.to_string()))
}

/// `quotaParts(text)`: the quotas of a string of several (`"5/minute; 100/hour"`, read by
/// the library's `Quota::parse_many`), each written back as the library writes a quota, so
/// that `rateLimit` makes one limit of each, decided all-or-nothing.
#[napi]
pub fn quota_parts(text: String) -> napi::Result<Vec<String>> {
    Quota::parse_many(&text)
        .map(|quotas| quotas.iter().map(ToString::to_string).collect())
        .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))
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

/// `algorithmName(text)`: the library's name of the algorithm `text` names (any case, `_`
/// for `-`: `"Sliding_Window"` is `"sliding-window"`), or an `Error` listing the names.
#[napi]
pub fn algorithm_name(text: String) -> napi::Result<String> {
    algorithm(&text).map(|kind| kind.name().to_owned())
}
