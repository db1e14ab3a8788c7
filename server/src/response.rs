//! A [`Verdict`] as a `RateLimitResponse`, and its rate-limit headers.

use crate::proto::envoy::config::core::v3::HeaderValue;
use crate::proto::rate_limit_response::{Code, DescriptorStatus, RateLimit};
use crate::proto::RateLimitResponse;
use crate::status::Verdict;
use sluicegate::http::{front_end::DecidedLimit, RateLimitHeaders};
use sluicegate::policy::quota_name;
use sluicegate::Decision;
use std::borrow::Cow;
use std::time::Duration;

/// The response for `verdict`; with `with_headers`, the RateLimit headers go into
/// `response_headers_to_add`.
pub fn to_proto(verdict: &Verdict, with_headers: bool) -> RateLimitResponse {
    let code = |over: bool| if over { Code::OverLimit } else { Code::Ok } as i32;
    let statuses = verdict
        .statuses
        .iter()
        .map(|status| DescriptorStatus {
            code: code(status.over),
            current_limit: status.limit.as_ref().map(|limit| RateLimit {
                name: limit.name.clone(),
                requests_per_unit: limit.requests_per_unit,
                unit: limit.unit.to_proto() as i32,
            }),
            limit_remaining: status.remaining,
            duration_until_reset: status.limit.as_ref().map(|_| duration(status.reset_after)),
        })
        .collect();
    let response_headers_to_add = if with_headers {
        rate_limit_headers(verdict)
            .iter()
            .map(|(name, value)| HeaderValue {
                key: name.as_str().to_owned(),
                // The library writes printable ASCII only.
                value: String::from_utf8_lossy(value.as_bytes()).into_owned(),
                raw_value: Vec::new(),
            })
            .collect()
    } else {
        Vec::new()
    };
    RateLimitResponse {
        overall_code: code(verdict.over),
        statuses,
        response_headers_to_add,
        ..RateLimitResponse::default()
    }
}

/// The headers for `verdict`, written by the library's one writer of them, as the tower
/// layer and every other front end would write them for the same decisions: the enforced
/// rules (shadow-mode ones only observe) as limits named by their rules; a rule with several
/// quotas as one limit per quota, `NAME-1`, `NAME-2`... (the library's `quota_name`, as every
/// HTTP front end names them: the policy lists each name once).
pub fn rate_limit_headers(verdict: &Verdict) -> RateLimitHeaders {
    let mut named: Vec<(Cow<'_, str>, u32, Duration, Decision)> = Vec::new();
    for status in &verdict.statuses {
        let Some(shown) = status.limit.as_ref().filter(|shown| !shown.shadow) else {
            continue;
        };
        if status.quotas.is_empty() {
            let name = Cow::Borrowed(shown.name.as_str());
            named.push((name, shown.quota_limit, shown.period, status.decision()));
        }
        let parts = status.quotas.len();
        for (i, part) in status.quotas.iter().enumerate() {
            let name = quota_name(&shown.name, i, parts);
            named.push((name, part.limit, part.period, part.decision));
        }
    }
    let limits: Vec<DecidedLimit<'_>> = named
        .iter()
        .map(|(name, quota, period, decision)| DecidedLimit {
            name,
            quota: *quota,
            period: *period,
            decision: *decision,
        })
        .collect();
    RateLimitHeaders::for_decisions(&limits, !verdict.over)
}

/// A `std` duration as the protobuf one.
pub fn duration(d: std::time::Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}
