//! The rate-limit headers for limits decided elsewhere than a
//! [`RequestLimiter`](super::RequestLimiter): `sluicegate-server` decides Envoy's
//! descriptors itself and writes their headers here, so that every front end's headers come
//! from one writer and say the same for the same decisions.

use super::decide::{summarize, Outcome};
use super::headers::{policy_text, push_sf_string, ratelimit_value, RateLimitHeaders};
use crate::decision::Decision;
use http::HeaderValue;
use std::time::Duration;

/// One named limit and its decision, as the headers report it.
#[derive(Debug, Clone, Copy)]
pub struct DecidedLimit<'a> {
    /// The limit's name.
    pub name: &'a str,
    /// `q`: requests per window.
    pub quota: u32,
    /// `w`: the window (left out of the policy unless whole seconds).
    pub period: Duration,
    /// Its decision for this request.
    pub decision: Decision,
}

/// Which of one request's limit `decisions` the headers report, by the rule every front end's
/// headers follow: when some refused, the one that admits the request last (the longest wait;
/// of equals, the first); otherwise the one with the least remaining (of equals, the one that
/// resets last). `None` for no decisions. For a front end that reports one limit of several
/// in its own terms (the service's status per descriptor).
///
/// ```
/// use sluicegate::http::front_end::reported_limit;
/// use sluicegate::{Limiter, Quota};
///
/// let (wide, narrow) = (Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_minute(100))?,
///                       Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_minute(2))?);
/// assert_eq!(reported_limit(&[wide.check(), narrow.check()]), Some(1));
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
pub fn reported_limit(decisions: &[Decision]) -> Option<usize> {
    if decisions.is_empty() {
        return None;
    }
    let allowed = decisions.iter().all(Decision::is_allowed);
    match summarize(decisions.iter().copied().enumerate(), allowed) {
        Outcome::Admit { report, .. } => report.map(|report| report.limit),
        Outcome::Deny { report, .. } => Some(report.limit),
        Outcome::TableFull { limit } => Some(limit),
        Outcome::Failed { limit, .. } => limit,
    }
}

impl RateLimitHeaders {
    /// The headers a [`RequestLimiter`](super::RequestLimiter) would send for these limits'
    /// decisions, `allowed` saying whether the request as a whole was admitted: the policy
    /// of every limit (each name once), `RateLimit` for the tightest (admitted: the fewest
    /// remaining; refused: the denying limit that admits it last), and on a refusal
    /// `Retry-After`. No limits, no headers.
    ///
    /// ```
    /// use sluicegate::http::{front_end::DecidedLimit, RateLimitHeaders};
    /// use sluicegate::{Limiter, Quota};
    /// use std::time::Duration;
    ///
    /// let limiter = Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_minute(10))?;
    /// let limits = [DecidedLimit {
    ///     name: "per-user",
    ///     quota: 10,
    ///     period: Duration::from_secs(60),
    ///     decision: limiter.check(),
    /// }];
    /// let headers: Vec<_> = RateLimitHeaders::for_decisions(&limits, true).iter().collect();
    /// assert_eq!(headers[0].1, r#""per-user";q=10;w=60"#);
    /// assert_eq!(headers[1].1, r#""per-user";r=9;t=6"#);
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn for_decisions(limits: &[DecidedLimit<'_>], allowed: bool) -> RateLimitHeaders {
        if limits.is_empty() {
            return RateLimitHeaders::default();
        }
        let policy = policy_text(limits.iter().map(|l| (l.name, l.quota, l.period)));
        let decided = limits.iter().enumerate().map(|(i, l)| (i, l.decision));
        let (report, retry_after) = match summarize(decided, allowed) {
            Outcome::Admit { report, .. } => (report, None),
            Outcome::Deny { report, .. } => (Some(report), Some(report.reset)),
            Outcome::TableFull { .. } => (None, Some(crate::TABLE_FULL_RETRY_AFTER.as_secs())),
            Outcome::Failed { .. } => (None, Some(1)),
        };
        let ratelimit = report.map(|report| {
            let mut name = String::new();
            push_sf_string(&mut name, limits[report.limit].name);
            ratelimit_value(&name, &report)
        });
        RateLimitHeaders {
            policy: HeaderValue::from_str(&policy).ok(),
            ratelimit,
            retry_after,
            report,
            legacy: false,
            draft6: false,
        }
    }
}
