//! What a response reports of its limits, shared by every header form: the tightest limit's
//! numbers ([`Report`]), the limits the request saw ([`Described`]), and the bound of a
//! Structured Field integer.

use crate::quota::Quota;
use http::header::HeaderValue;
use std::time::Duration;

/// The largest Structured Field integer (15 digits).
pub(crate) const SF_INTEGER_MAX: u64 = 999_999_999_999_999;

/// What one response reports: the tightest limit's numbers, those `RateLimit` (and the
/// legacy trio) are written from. Front ends that hand them to their users read them with
/// [`RateLimitHeaders::report`](super::RateLimitHeaders::report), or on a refused request
/// from its response's extensions (the Node middleware's `req.rateLimit`), whether or not the
/// headers are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Index of the limit reported, in the order the limits were added.
    pub limit: usize,
    /// For a tiered limit, the index of the tier the request took (in the order of the
    /// limit's [`tiers`](super::RequestLimit::tiers)); `None` otherwise.
    pub tier: Option<usize>,
    /// Its quota's limit (`q`; the legacy `X-RateLimit-Limit`).
    pub quota: u32,
    /// `r`: requests left under it.
    pub remaining: u32,
    /// `t`: whole seconds until its quota comes back (on a `429`, `Retry-After`).
    pub reset: u64,
    /// The exact time `reset` is rounded up from: for a front end that reports an instant
    /// (express-rate-limit's `resetTime`), the same one for every request of a window.
    pub exact_reset: Duration,
}

/// The limits one response's headers describe, as its request saw them (a tiered limit's
/// name and quota are its tier's).
pub(crate) trait Described {
    /// `RateLimit-Policy` in draft-8 and draft-10's form: every limit's.
    fn policy(&self) -> Option<HeaderValue>;
    /// Limit `limit`'s name as a Structured Field String.
    fn sf_name(&self, limit: usize) -> &str;
    /// Limit `limit`'s own policy, in draft-6 and draft-7's form.
    fn window_policy(&self, limit: usize) -> Option<HeaderValue>;
    /// Calls `each` with every limit the request saw: its slot, its name as a Structured
    /// Field String and its quota (draft-8's policy, written per request).
    fn each_limit(&self, each: &mut dyn FnMut(usize, &str, Quota));
}
