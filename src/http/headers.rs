//! The response headers: `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-
//! headers-10, as RFC 9651 Structured Fields), `Retry-After`, and the legacy
//! `X-RateLimit-*` trio.
//!
//! - `RateLimit-Policy: "ip";q=5;w=1, "token";q=100;w=60`: each limit's quota `q` per window
//!   `w` seconds, by name. `w` is left out when the period is not a whole number of seconds
//!   (the draft has no sub-second windows).
//! - `RateLimit: "ip";r=0;t=3`: the limit with the least remaining, `r` requests left and
//!   `t` seconds until quota comes back. On a `429`, `t` is exactly `Retry-After` (when every
//!   limit admits the request again, rounded up to whole seconds); otherwise it is when the
//!   reported limit is fully replenished (its window resets), rounded up, which is never
//!   earlier than when some quota returns, as the draft requires.

use crate::quota::Quota;
use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// `RateLimit`: the current service limit of the tightest policy.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
/// `RateLimit-Policy`: every limit's quota and window.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// Legacy `X-RateLimit-Limit`: the tightest limit's quota.
pub const X_RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
/// Legacy `X-RateLimit-Remaining`: requests left under the tightest limit.
pub const X_RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
/// Legacy `X-RateLimit-Reset`: seconds until that limit's quota comes back (a delay, as in
/// `RateLimit`'s `t`, not a timestamp).
pub const X_RATELIMIT_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// The largest Structured Field integer (15 digits).
const SF_INTEGER_MAX: u64 = 999_999_999_999_999;

/// The longest limit name, so that headers stay small.
pub(crate) const MAX_NAME: usize = 64;

/// Why a limit's name cannot go into a header, if it cannot: a name must be 1 to 64
/// printable ASCII characters (it is written as a Structured Field String).
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!(
            "a limit's name must be 1 to {MAX_NAME} characters: {name:?}"
        ));
    }
    if let Some(bad) = name.chars().find(|c| !(' '..='~').contains(c)) {
        return Err(format!(
            "a limit's name must be printable ASCII (it goes into the RateLimit headers): \
             {name:?} has {bad:?}"
        ));
    }
    Ok(())
}

/// Writes `text` (checked by [`check_name`]) as a Structured Field String.
pub(crate) fn push_sf_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// Whole seconds, rounded up, capped at what a Structured Field integer holds.
pub(crate) fn ceil_secs(duration: Duration) -> u64 {
    let secs = duration
        .as_secs()
        .saturating_add(u64::from(duration.subsec_nanos() > 0));
    secs.min(SF_INTEGER_MAX)
}

/// The `RateLimit-Policy` value for limits of these names and quotas.
pub(crate) fn policy_value<'a>(
    limits: impl Iterator<Item = (&'a str, Quota)>,
) -> Option<HeaderValue> {
    let mut out = String::new();
    for (name, quota) in limits {
        if !out.is_empty() {
            out.push_str(", ");
        }
        push_sf_string(&mut out, name);
        let _ = write!(out, ";q={}", quota.limit());
        let period = quota.period();
        if period.subsec_nanos() == 0 && period.as_secs() > 0 {
            let _ = write!(out, ";w={}", period.as_secs().min(SF_INTEGER_MAX));
        }
    }
    // Names were checked to be printable ASCII; the rest is digits and punctuation.
    HeaderValue::from_str(&out).ok()?;
    Some(HeaderValue::from_static(intern(out)))
}

/// `text` kept for the rest of the program, once per distinct text: the policy header is the
/// same on every response, and a static value is cloned without touching the allocator or a
/// reference count shared by every core. Rebuilding a layer with the same limits reuses the
/// text, so only distinct configurations take memory (a few dozen bytes each).
fn intern(text: String) -> &'static str {
    static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut interned = INTERNED.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(known) = interned.get(text.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    interned.insert(leaked);
    leaked
}

/// What one response reports: the tightest limit's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Report {
    /// Index of the limit reported.
    pub(crate) limit: usize,
    /// Its quota's limit (for the legacy header).
    pub(crate) quota: u32,
    /// `r`.
    pub(crate) remaining: u32,
    /// `t`, whole seconds.
    pub(crate) reset: u64,
}

/// The `RateLimit` value: `"name";r=R;t=T`. `prefix` is the limit's name as a String item.
#[inline]
pub(crate) fn ratelimit_value(prefix: &str, report: &Report) -> Option<HeaderValue> {
    // Formatted by hand: this runs for every response, and `fmt` would double its cost.
    let mut out = StackText::<{ MAX_NAME * 2 + 64 }>::new();
    let mut digits = [0u8; 20];
    out.push(prefix.as_bytes());
    out.push(b";r=");
    let at = super::ip::decimal(u64::from(report.remaining), &mut digits);
    out.push(&digits[at..]);
    out.push(b";t=");
    let at = super::ip::decimal(report.reset, &mut digits);
    out.push(&digits[at..]);
    // `prefix` is a checked name (printable ASCII) and the rest digits and punctuation, and
    // the buffer holds the longest name escaped: always a valid value, so the per-byte
    // validation (a third of this function's cost) is skipped.
    let text = out.as_bytes();
    debug_assert!(text.iter().all(|b| (b' '..=b'~').contains(b)));
    // SAFETY: printable ASCII, hence valid UTF-8, as `from_maybe_shared_unchecked` requires.
    Some(unsafe { HeaderValue::from_maybe_shared_unchecked(Bytes::copy_from_slice(text)) })
}

/// The headers one response gets, computed when the request is decided.
#[derive(Debug, Default)]
pub(crate) struct Stamp {
    pub(crate) policy: Option<HeaderValue>,
    pub(crate) ratelimit: Option<HeaderValue>,
    pub(crate) retry_after: Option<u64>,
    pub(crate) legacy: Option<Report>,
}

impl Stamp {
    /// Adds the headers to `headers`, replacing any the inner service set.
    #[inline]
    pub(crate) fn apply(self, headers: &mut HeaderMap) {
        if let Some(policy) = self.policy {
            headers.insert(RATELIMIT_POLICY, policy);
        }
        if let Some(ratelimit) = self.ratelimit {
            headers.insert(RATELIMIT, ratelimit);
        }
        if let Some(secs) = self.retry_after {
            headers.insert(RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some(report) = self.legacy {
            headers.insert(X_RATELIMIT_LIMIT, HeaderValue::from(report.quota));
            headers.insert(X_RATELIMIT_REMAINING, HeaderValue::from(report.remaining));
            headers.insert(X_RATELIMIT_RESET, HeaderValue::from(report.reset));
        }
    }
}

/// A fixed buffer that a header value is assembled in without allocating; bytes past its end
/// are cut.
struct StackText<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> StackText<N> {
    fn new() -> Self {
        StackText {
            bytes: [0; N],
            len: 0,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn push(&mut self, text: &[u8]) {
        let take = text.len().min(N - self.len);
        self.bytes[self.len..self.len + take].copy_from_slice(&text[..take]);
        self.len += take;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_printable_ascii_strings_with_escapes() {
        assert!(check_name("ip").is_ok());
        assert!(check_name("a \"quoted\" \\ name").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("tab\tname").is_err());
        assert!(check_name("é").is_err());
        assert!(check_name(&"x".repeat(65)).is_err());
        let mut out = String::new();
        push_sf_string(&mut out, "a \"q\" \\");
        assert_eq!(out, r#""a \"q\" \\""#);
    }

    #[test]
    fn policy_lists_every_limit_and_omits_sub_second_windows() {
        let value = policy_value(
            [
                ("ip", Quota::per_second(5)),
                ("token", "100/minute burst 20".parse().unwrap()),
                ("fast", Quota::new(10, Duration::from_millis(500)).unwrap()),
            ]
            .into_iter(),
        );
        assert_eq!(
            value.unwrap(),
            r#""ip";q=5;w=1, "token";q=100;w=60, "fast";q=10"#
        );
    }

    #[test]
    fn ratelimit_and_seconds_round_up() {
        assert_eq!(ceil_secs(Duration::ZERO), 0);
        assert_eq!(ceil_secs(Duration::from_nanos(1)), 1);
        assert_eq!(ceil_secs(Duration::from_secs(2)), 2);
        assert_eq!(ceil_secs(Duration::from_millis(2001)), 3);
        assert_eq!(ceil_secs(Duration::MAX), SF_INTEGER_MAX);
        let report = Report {
            limit: 0,
            quota: 5,
            remaining: 4,
            reset: 1,
        };
        assert_eq!(
            ratelimit_value("\"ip\"", &report).unwrap(),
            "\"ip\";r=4;t=1"
        );
    }
}
