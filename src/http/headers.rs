//! The response headers: `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-
//! headers-10, as RFC 9651 Structured Fields), `Retry-After`, and the legacy
//! `X-RateLimit-*` trio. The one writer of them: the layer, `http_server`,
//! `sluicegate-server` and the Node and Python middlewares all send what this file writes.
//!
//! - `RateLimit-Policy: "ip";q=5;w=1, "token";q=100;w=60`: each limit's quota `q` per window
//!   `w` seconds, by name. `w` is left out when the period is not a whole number of seconds
//!   (the draft has no sub-second windows).
//! - `RateLimit: "ip";r=0;t=3`: the limit with the least remaining, `r` requests left and
//!   `t` seconds until quota comes back. On a `429`, `t` is exactly `Retry-After` (when every
//!   limit admits the request again, rounded up to whole seconds); otherwise it is when the
//!   reported limit is fully replenished (its window resets), rounded up, which is never
//!   earlier than when some quota returns, as the draft requires.
//! - A name is a Structured Field String, which holds printable ASCII only: `"` and `\` are
//!   escaped with `\`, and every other byte of the name's UTF-8 outside printable ASCII, and
//!   `%` itself, is written `%xx` (lowercase hex, as RFC 9651's Display Strings do), so
//!   `"café"` goes out as `"caf%c3%a9"` and can be decoded back. Seconds are capped at
//!   999,999,999,999,999, the largest Structured Field Integer.

use super::report::{Described, Report, SF_INTEGER_MAX};
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
/// Legacy `X-RateLimit-Reset`: when that limit's quota comes back, as a Unix timestamp in
/// seconds (as express-rate-limit, GitHub and most APIs send it), never earlier than
/// `RateLimit`'s `t` seconds from now.
pub const X_RATELIMIT_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// `X-RateLimit-Reset`'s value for a reset `reset` whole seconds from now: the Unix time in
/// seconds, rounded up, plus `reset`.
pub(crate) fn reset_timestamp(reset: u64) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    ceil_secs(now).saturating_add(reset).min(SF_INTEGER_MAX)
}

/// Draft-6's `RateLimit-Limit`: the reported limit's quota.
pub const RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
/// Draft-6's `RateLimit-Remaining`: requests left under it.
pub const RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");
/// Draft-6's `RateLimit-Reset`: seconds until its quota comes back.
pub const RATELIMIT_RESET: HeaderName = HeaderName::from_static("ratelimit-reset");

/// Which draft of the IETF RateLimit headers the standard headers follow, for clients written
/// against an earlier one (express-rate-limit's `standardHeaders: 'draft-6' | 'draft-7' |
/// 'draft-8'`). Each reports the same numbers: `q` the quota, `r` remaining, `t` seconds.
///
/// - `Draft6`: `RateLimit-Policy: 5;w=60` (the reported limit's), `RateLimit-Limit: 5`,
///   `RateLimit-Remaining: 4`, `RateLimit-Reset: 60`.
/// - `Draft7`: `RateLimit-Policy: 5;w=60` and `RateLimit: limit=5, remaining=4, reset=60`.
/// - `Draft8`: every limit's `RateLimit-Policy: "ip"; q=5; w=60; pk=:MmMyNmI0NmI2OGZm:` and
///   `RateLimit: "ip"; r=4; t=60`, as express-rate-limit writes them: `pk`, the partition key,
///   is the base64 of the first 12 hex digits of the SHA-256 of the request's key on that
///   limit.
/// - `Draft10` (the default): every limit's `RateLimit-Policy: "ip";q=5;w=60` and
///   `RateLimit: "ip";r=4;t=60`, Structured Fields by name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderDraft {
    /// draft-ietf-httpapi-ratelimit-headers-06.
    Draft6,
    /// draft-ietf-httpapi-ratelimit-headers-07.
    Draft7,
    /// draft-ietf-httpapi-ratelimit-headers-08.
    Draft8,
    /// draft-ietf-httpapi-ratelimit-headers-10.
    #[default]
    Draft10,
}

impl std::str::FromStr for HeaderDraft {
    type Err = String;

    /// `draft-6`, `draft-7`, `draft-8` or `draft-10`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "draft-6" => Ok(HeaderDraft::Draft6),
            "draft-7" => Ok(HeaderDraft::Draft7),
            "draft-8" => Ok(HeaderDraft::Draft8),
            "draft-10" => Ok(HeaderDraft::Draft10),
            _ => Err(format!(
                "unknown headers draft {text:?}: expected draft-6, draft-7, draft-8 or draft-10"
            )),
        }
    }
}

/// One limit's `RateLimit-Policy` in draft-6 and draft-7's form: `q;w=W` (`w` left out for a
/// period that is not whole seconds).
pub(crate) fn window_policy(quota: Quota) -> Option<HeaderValue> {
    let (q, period) = (quota.limit(), quota.period());
    let mut text = q.to_string();
    if period.subsec_nanos() == 0 && period.as_secs() > 0 {
        let _ = write!(text, ";w={}", period.as_secs().min(SF_INTEGER_MAX));
    }
    HeaderValue::from_str(&text).ok()
}

/// The longest limit name the layer takes, in characters, so that headers stay small.
pub(crate) const MAX_NAME: usize = 64;

/// Why the layer refuses a limit's name, if it does: a name is 1 to 64 characters.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let length = name.chars().count();
    if length == 0 || length > MAX_NAME {
        return Err(format!(
            "a limit's name must be 1 to {MAX_NAME} characters: {name:?}"
        ));
    }
    Ok(())
}

/// Writes `text` as a Structured Field String: `"` and `\\` escaped, bytes outside printable
/// ASCII and `%` percent-encoded (see the module documentation).
pub(crate) fn push_sf_string(out: &mut String, text: &str) {
    out.push('"');
    for byte in text.bytes() {
        match byte {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(char::from(byte));
            }
            b'%' => out.push_str("%25"),
            b' '..=b'~' => out.push(char::from(byte)),
            _ => {
                let _ = write!(out, "%{byte:02x}");
            }
        }
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
    let text = policy_text(limits.map(|(name, quota)| (name, quota.limit(), quota.period())));
    // Names are escaped to printable ASCII; the rest is digits and punctuation.
    HeaderValue::from_str(&text).ok()?;
    Some(HeaderValue::from_static(intern(text)))
}

/// The `RateLimit-Policy` text for limits of these names, quotas `q` and periods: a name
/// that comes twice (two descriptors of one rule) is listed once.
pub(crate) fn policy_text<'a>(limits: impl Iterator<Item = (&'a str, u32, Duration)>) -> String {
    let mut out = String::new();
    let mut listed: Vec<&str> = Vec::new();
    for (name, q, period) in limits {
        if listed.contains(&name) {
            continue;
        }
        listed.push(name);
        if !out.is_empty() {
            out.push_str(", ");
        }
        push_sf_string(&mut out, name);
        let _ = write!(out, ";q={q}");
        if period.subsec_nanos() == 0 && period.as_secs() > 0 {
            let _ = write!(out, ";w={}", period.as_secs().min(SF_INTEGER_MAX));
        }
    }
    out
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

/// Which rate-limit headers a limiter's responses carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeaderForm {
    /// `RateLimit-Policy` and `RateLimit` (or their earlier drafts' forms).
    pub(crate) standard: bool,
    /// The draft the standard headers follow.
    pub(crate) draft: HeaderDraft,
    /// The legacy `X-RateLimit-*` trio.
    pub(crate) legacy: bool,
}

impl Default for HeaderForm {
    fn default() -> Self {
        HeaderForm {
            standard: true,
            draft: HeaderDraft::default(),
            legacy: false,
        }
    }
}

/// The `RateLimit` value: `"name";r=R;t=T`. `prefix` is the limit's name as a String item
/// ([`push_sf_string`]).
#[inline]
pub(crate) fn ratelimit_value(prefix: &str, report: &Report) -> HeaderValue {
    // Formatted by hand into a stack buffer, then copied once into the value: this runs for
    // every response, and `fmt` (or a growable buffer's checks) would double its cost.
    let mut digits = [0u8; 20];
    let remaining = super::ip::decimal(u64::from(report.remaining), &mut digits);
    let mut reset_digits = [0u8; 20];
    let reset = super::ip::decimal(report.reset, &mut reset_digits);
    let parts: [&[u8]; 5] = [
        prefix.as_bytes(),
        b";r=",
        &digits[remaining..],
        b";t=",
        &reset_digits[reset..],
    ];
    let len: usize = parts.iter().map(|part| part.len()).sum();
    let mut stack = [0u8; 160];
    let mut heap = Vec::new();
    let out: &mut [u8] = if len <= stack.len() {
        &mut stack[..len]
    } else {
        // A long escaped name: rare, and allowed to allocate once more.
        heap.resize(len, 0);
        &mut heap
    };
    let mut at = 0;
    for part in parts {
        out[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    // `prefix` is escaped to printable ASCII and the rest is digits and punctuation: always
    // a valid value, so the per-byte validation (a third of this function's cost) is skipped.
    debug_assert!(out.iter().all(|b| (b' '..=b'~').contains(b)));
    // SAFETY: printable ASCII, hence valid UTF-8, as `from_maybe_shared_unchecked` requires.
    unsafe { HeaderValue::from_maybe_shared_unchecked(Bytes::copy_from_slice(out)) }
}

/// The rate-limit headers one response gets: `RateLimit-Policy`, `RateLimit`, on a refusal
/// `Retry-After`, and the legacy `X-RateLimit-*` trio when they are on. Computed when a
/// request is decided ([`Verdict`](super::Verdict)), added by whichever front end answers.
#[derive(Debug, Default, Clone)]
pub struct RateLimitHeaders {
    pub(crate) policy: Option<HeaderValue>,
    pub(crate) ratelimit: Option<HeaderValue>,
    pub(crate) retry_after: Option<u64>,
    /// What the headers report, sent or not.
    pub(crate) report: Option<Report>,
    /// Whether the legacy trio is written from `report`.
    pub(crate) legacy: bool,
    /// Whether draft-6's `RateLimit-Limit`, `-Remaining` and `-Reset` are written from
    /// `report`.
    pub(crate) draft6: bool,
}

impl RateLimitHeaders {
    /// The headers a limiter sending `form` sends for a response reporting `report` of
    /// `limits` (as the request saw them), with `retry_after` seconds: the standard ones in
    /// the form's draft when on, the legacy trio when on.
    #[inline]
    pub(crate) fn for_report(
        form: &HeaderForm,
        limits: &impl Described,
        report: Option<&Report>,
        retry_after: Option<u64>,
        keys: &[super::key::KeyBuf],
    ) -> RateLimitHeaders {
        // A 429 carries Retry-After only beside some rate-limit header, as express-rate-limit,
        // slowapi and Flask-Limiter send it; a 503's (no report: a full table, a failed
        // backend) is about the service, and stays.
        let quiet = report.is_some() && !form.standard && !form.legacy;
        let mut headers = RateLimitHeaders {
            policy: None,
            ratelimit: None,
            retry_after: if quiet { None } else { retry_after },
            report: report.copied(),
            legacy: form.legacy,
            draft6: false,
        };
        if !form.standard {
            return headers;
        }
        match form.draft {
            HeaderDraft::Draft8 => {
                // Per request: the policy carries each limit's partition key.
                headers.policy = super::draft8::policy(limits, keys);
                headers.ratelimit = report.and_then(|report| {
                    super::draft8::ratelimit(limits.sf_name(report.limit), report)
                });
            }
            HeaderDraft::Draft10 => {
                // A static value (see `policy_value`): cloning it copies a pointer.
                headers.policy = limits.policy();
                headers.ratelimit =
                    report.map(|report| ratelimit_value(limits.sf_name(report.limit), report));
            }
            HeaderDraft::Draft7 => {
                if let Some(report) = report {
                    headers.policy = limits.window_policy(report.limit);
                    let value = format!(
                        "limit={}, remaining={}, reset={}",
                        report.quota, report.remaining, report.reset
                    );
                    headers.ratelimit = HeaderValue::from_str(&value).ok();
                }
            }
            HeaderDraft::Draft6 => {
                if let Some(report) = report {
                    headers.policy = limits.window_policy(report.limit);
                    headers.draft6 = true;
                }
            }
        }
        headers
    }

    /// Adds the headers to `headers`, replacing any of the same names.
    #[inline]
    pub fn apply(self, headers: &mut HeaderMap) {
        // By move, not through `iter`: this runs for every response.
        let (legacy, draft6) = (self.legacy(), self.draft6());
        if let Some(policy) = self.policy {
            headers.insert(RATELIMIT_POLICY, policy);
        }
        if let Some(ratelimit) = self.ratelimit {
            headers.insert(RATELIMIT, ratelimit);
        }
        if let Some(secs) = self.retry_after {
            headers.insert(RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some(report) = draft6 {
            headers.insert(RATELIMIT_LIMIT, HeaderValue::from(report.quota));
            headers.insert(RATELIMIT_REMAINING, HeaderValue::from(report.remaining));
            headers.insert(RATELIMIT_RESET, HeaderValue::from(report.reset));
        }
        if let Some(report) = legacy {
            headers.insert(X_RATELIMIT_LIMIT, HeaderValue::from(report.quota));
            headers.insert(X_RATELIMIT_REMAINING, HeaderValue::from(report.remaining));
            headers.insert(
                X_RATELIMIT_RESET,
                HeaderValue::from(reset_timestamp(report.reset)),
            );
        }
    }

    /// The headers, in the order `RateLimit-Policy`, `RateLimit`, `Retry-After`,
    /// `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (those present).
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (HeaderName, HeaderValue)> + '_ {
        let legacy = self.legacy().into_iter().flat_map(|report| {
            [
                (X_RATELIMIT_LIMIT, HeaderValue::from(report.quota)),
                (X_RATELIMIT_REMAINING, HeaderValue::from(report.remaining)),
                (
                    X_RATELIMIT_RESET,
                    HeaderValue::from(reset_timestamp(report.reset)),
                ),
            ]
        });
        let draft6 = self.draft6().into_iter().flat_map(|report| {
            [
                (RATELIMIT_LIMIT, HeaderValue::from(report.quota)),
                (RATELIMIT_REMAINING, HeaderValue::from(report.remaining)),
                (RATELIMIT_RESET, HeaderValue::from(report.reset)),
            ]
        });
        let policy = self.policy.clone().map(|v| (RATELIMIT_POLICY, v));
        let ratelimit = self.ratelimit.clone().map(|v| (RATELIMIT, v));
        let retry = self
            .retry_after
            .map(|s| (RETRY_AFTER, HeaderValue::from(s)));
        policy
            .into_iter()
            .chain(ratelimit)
            .chain(draft6)
            .chain(retry)
            .chain(legacy)
    }

    /// The numbers these headers report (the tightest limit's), also when the standard
    /// headers are switched off; `None` when no limit decided (an exempt request, a missing
    /// key, a backend failure).
    ///
    /// ```
    /// use sluicegate::http::{Deciding, Global, RateLimitLayer, RequestLimit, Verdict};
    /// use sluicegate::{Limiter, Quota};
    ///
    /// let limiter = RateLimitLayer::builder()
    ///     .limit(RequestLimit::new("all", Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_minute(10))?).key(Global))
    ///     .standard_headers(false)
    ///     .limiter()?;
    /// let (parts, ()) = http::Request::get("/").body(())?.into_parts();
    /// let Deciding::Now(Verdict::Pass { headers, .. }) = limiter.decide(&parts) else { panic!() };
    /// let report = headers.report().expect("the limit decided");
    /// assert_eq!((report.limit, report.quota, report.remaining, report.reset), (0, 10, 9, 6));
    /// assert!(headers.is_empty(), "nothing is sent");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn report(&self) -> Option<Report> {
        self.report
    }

    /// `Retry-After`'s whole seconds, on a refusal.
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    /// True when there is no header to add.
    pub fn is_empty(&self) -> bool {
        self.policy.is_none()
            && self.ratelimit.is_none()
            && self.retry_after.is_none()
            && self.legacy().is_none()
            && self.draft6().is_none()
    }

    /// The report the legacy trio is written from, when they are on.
    fn legacy(&self) -> Option<Report> {
        self.report.filter(|_| self.legacy)
    }

    /// The report draft-6's three headers are written from, when they are on.
    fn draft6(&self) -> Option<Report> {
        self.report.filter(|_| self.draft6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The headers a limit of 5 a minute (fixed windows, at time 0) sends on a first request
    /// in `draft`'s form.
    fn first_response(draft: HeaderDraft) -> Vec<(String, String)> {
        use crate::http::{Deciding, Global, RateLimitLayer, RequestLimit, Verdict};
        use crate::{algorithm::FixedWindow, clock::ManualClock, Limiter};
        let limit = Limiter::<FixedWindow, _>::with_clock(Quota::per_minute(5), ManualClock::new())
            .unwrap();
        let limiter = RateLimitLayer::builder()
            .limit(RequestLimit::new("ip", limit).key(Global))
            .headers_draft(draft)
            .limiter()
            .unwrap();
        let (parts, ()) = http::Request::get("/").body(()).unwrap().into_parts();
        let Deciding::Now(Verdict::Pass { headers, .. }) = limiter.decide(&parts) else {
            panic!("in process, admitted")
        };
        headers
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect()
    }

    #[test]
    fn each_draft_writes_its_form() {
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            first_response(HeaderDraft::Draft6),
            pairs(&[
                ("ratelimit-policy", "5;w=60"),
                ("ratelimit-limit", "5"),
                ("ratelimit-remaining", "4"),
                ("ratelimit-reset", "60"),
            ])
        );
        assert_eq!(
            first_response(HeaderDraft::Draft7),
            pairs(&[
                ("ratelimit-policy", "5;w=60"),
                ("ratelimit", "limit=5, remaining=4, reset=60"),
            ])
        );
        let draft10 = pairs(&[
            ("ratelimit-policy", r#""ip";q=5;w=60"#),
            ("ratelimit", r#""ip";r=4;t=60"#),
        ]);
        assert_eq!(first_response(HeaderDraft::Draft10), draft10);
        // express-rate-limit's spacing, and the partition key of the key "" (`Global`'s).
        assert_eq!(
            first_response(HeaderDraft::Draft8),
            pairs(&[
                (
                    "ratelimit-policy",
                    r#""ip"; q=5; w=60; pk=:ZTNiMGM0NDI5OGZj:"#
                ),
                ("ratelimit", r#""ip"; r=4; t=60"#),
            ])
        );
        assert_eq!("draft-7".parse(), Ok(HeaderDraft::Draft7));
        assert!("draft-9".parse::<HeaderDraft>().is_err());
    }

    #[test]
    fn names_are_strings_with_escapes_and_percent_encoding() {
        assert!(check_name("ip").is_ok());
        assert!(check_name("a \"quoted\" \\ name").is_ok());
        assert!(check_name(&"é".repeat(64)).is_ok());
        assert!(check_name("").is_err());
        assert!(check_name(&"x".repeat(65)).is_err());
        let mut out = String::new();
        push_sf_string(&mut out, "a \"q\" \\ 100% café\t");
        assert_eq!(out, r#""a \"q\" \\ 100%25 caf%c3%a9%09""#);
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
            tier: None,
            quota: 5,
            remaining: 4,
            reset: 1,
            exact_reset: Duration::from_millis(700),
        };
        assert_eq!(ratelimit_value("\"ip\"", &report), "\"ip\";r=4;t=1");
        // A name whose escaped form does not fit the stack buffer goes through the heap.
        let mut long = String::new();
        push_sf_string(&mut long, &"🦀".repeat(64));
        assert!(long.len() > 700);
        let value = ratelimit_value(&long, &report);
        assert_eq!(value.as_bytes(), format!("{long};r=4;t=1").as_bytes());
    }
}
