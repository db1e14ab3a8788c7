//! [`Rejection`]: every answer the layer gives instead of calling the service.

use super::key::KeyError;
use crate::backend::BackendError;
use http::StatusCode;
use std::fmt;

/// Why the layer answered a request itself, for a [`Responder`](super::Responder) to turn
/// into a response. The layer adds `Retry-After` and the `RateLimit` headers afterwards, so a
/// responder only chooses the status and body.
#[derive(Debug)]
#[non_exhaustive]
pub enum Rejection<'a> {
    /// A limit denied the request (`429`). `violated` names every limit that denied it;
    /// `retry_after` is when all of them admit it again, in whole seconds rounded up.
    TooManyRequests {
        /// The limits that denied the request.
        violated: &'a [&'a str],
        /// Seconds until it would be admitted.
        retry_after: u64,
    },
    /// A limit's key could not be extracted: `400`, or `500` when the server is at fault
    /// ([`KeyError::status`]).
    Key {
        /// The limit.
        limit: &'a str,
        /// Why.
        error: &'a KeyError,
    },
    /// The request costs more than a limit can ever admit at once (`413 Content Too Large`):
    /// waiting would never help, so it is the client's to fix by sending smaller requests,
    /// and `429` (which clients retry) would be wrong.
    TooCostly {
        /// The limit.
        limit: &'a str,
        /// What the request costs.
        cost: u32,
        /// The most the limit admits at once.
        capacity: u32,
    },
    /// A limit's backend failed and the layer was told to deny on errors (`503`, with
    /// `Retry-After: 1`).
    BackendFailed {
        /// The limit, when known.
        limit: Option<&'a str>,
        /// What failed.
        error: &'a BackendError,
    },
    /// A keyed limiter's table is full of active keys (its `max_keys`) and could not take this
    /// client's (`503`, with `Retry-After: 1`): the server is at capacity, not this client.
    TableFull {
        /// The limit.
        limit: &'a str,
    },
}

impl Rejection<'_> {
    /// The status this rejection is answered with by default.
    pub fn status(&self) -> StatusCode {
        match self {
            Rejection::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Rejection::Key { error, .. } => error.status(),
            Rejection::TooCostly { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Rejection::BackendFailed { .. } | Rejection::TableFull { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }

    /// The RFC 9457 problem type: the ones draft-ietf-httpapi-ratelimit-headers registers for
    /// quotas, `about:blank` for the rest.
    pub fn problem_type(&self) -> &'static str {
        match self {
            Rejection::TooManyRequests { .. } => {
                "https://iana.org/assignments/http-problem-types#quota-exceeded"
            }
            Rejection::BackendFailed { .. } | Rejection::TableFull { .. } => {
                "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
            }
            Rejection::Key { .. } | Rejection::TooCostly { .. } => "about:blank",
        }
    }

    /// A short summary: the draft's problem title, or the status phrase for `about:blank`.
    pub fn title(&self) -> &'static str {
        match self {
            Rejection::TooManyRequests { .. } => {
                "Request cannot be satisfied as assigned quota has been exceeded"
            }
            Rejection::BackendFailed { .. } | Rejection::TableFull { .. } => {
                "Request cannot be satisfied due to temporary server capacity constraints"
            }
            other => other.status().canonical_reason().unwrap_or("Error"),
        }
    }

    /// The limits this rejection concerns.
    pub fn violated(&self) -> &[&str] {
        match self {
            Rejection::TooManyRequests { violated, .. } => violated,
            Rejection::Key { limit, .. }
            | Rejection::TooCostly { limit, .. }
            | Rejection::TableFull { limit }
            | Rejection::BackendFailed {
                limit: Some(limit), ..
            } => std::slice::from_ref(limit),
            Rejection::BackendFailed { limit: None, .. } => &[],
        }
    }
}

/// The detail sentence, as the built-in bodies write it.
impl fmt::Display for Rejection<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::TooManyRequests {
                violated,
                retry_after,
            } => {
                f.write_str("too many requests for ")?;
                for (i, name) in violated.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}limit {name:?}")?;
                }
                let s = if *retry_after == 1 { "" } else { "s" };
                write!(f, "; retry after {retry_after} second{s}")
            }
            Rejection::Key { limit, error } => write!(f, "limit {limit:?}: {error}"),
            Rejection::TooCostly {
                limit,
                cost,
                capacity,
            } => write!(
                f,
                "this request costs {cost}, more than the {capacity} limit {limit:?} can ever \
                 admit at once; send smaller requests"
            ),
            Rejection::BackendFailed { limit, .. } => {
                if let Some(limit) = limit {
                    write!(f, "limit {limit:?}: ")?;
                }
                f.write_str("the rate limiter is unavailable; retry after 1 second")
            }
            Rejection::TableFull { limit } => {
                let seconds = crate::TABLE_FULL_RETRY_AFTER.as_secs();
                let s = if seconds == 1 { "" } else { "s" };
                write!(
                    f,
                    "limit {limit:?} is tracking as many clients as it can; retry after \
                     {seconds} second{s}"
                )
            }
        }
    }
}
