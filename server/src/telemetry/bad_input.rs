//! Requests refused as the client's fault: counted by API and kind in
//! `ratelimit_service_bad_requests_total`, and logged at `warn` at most once a second per
//! API and kind (with how many were held back), so a client sending garbage cannot flood
//! the log.

use super::throttled;
use metrics::counter;
use sluicegate::telemetry::Throttle;
use std::sync::LazyLock;

/// Which front end refused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// gRPC `ShouldRateLimit`.
    Grpc,
    /// `POST /json`.
    Json,
}

/// Why it was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadInput {
    /// A body that is not a `RateLimitRequest` (protobuf or JSON).
    Undecodable,
    /// A request that breaks a rule of its own (empty domain, too many descriptors, ...).
    Invalid,
    /// A descriptor's `limit` override that no limiter can run (an unknown unit, a rate the
    /// rule's algorithm cannot hold).
    Override,
    /// A message or body over `--max-message-bytes`.
    TooLarge,
    /// `/json` without `Content-Type: application/json`.
    ContentType,
    /// A `/json` body that did not arrive within `--http-body-timeout`.
    BodyTimeout,
}

const KINDS: [BadInput; 6] = [
    BadInput::Undecodable,
    BadInput::Invalid,
    BadInput::Override,
    BadInput::TooLarge,
    BadInput::ContentType,
    BadInput::BodyTimeout,
];

impl BadInput {
    /// The `reason` label.
    pub fn as_str(self) -> &'static str {
        match self {
            BadInput::Undecodable => "undecodable",
            BadInput::Invalid => "invalid",
            BadInput::Override => "override",
            BadInput::TooLarge => "too_large",
            BadInput::ContentType => "content_type",
            BadInput::BodyTimeout => "body_timeout",
        }
    }
}

impl Api {
    /// The `api` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Grpc => "grpc",
            Api::Json => "json",
        }
    }
}

/// One throttle per API and kind.
static THROTTLES: LazyLock<Vec<Throttle>> =
    LazyLock::new(|| (0..2 * KINDS.len()).map(|_| Throttle::new()).collect());

/// Counts and (throttled) logs one refused request; `why` is the sentence the client got.
pub fn refused(api: Api, kind: BadInput, why: &str) {
    counter!(
        "ratelimit_service_bad_requests_total",
        "api" => api.as_str(),
        "reason" => kind.as_str()
    )
    .increment(1);
    let index = api as usize * KINDS.len() + kind as usize;
    if let Some(suppressed) = throttled::admit(&THROTTLES[index]) {
        tracing::warn!(
            api = api.as_str(),
            reason = kind.as_str(),
            suppressed,
            "request refused: {why}"
        );
    }
}
