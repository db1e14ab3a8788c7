//! `RateLimit-Policy`, `RateLimit` (draft-ietf-httpapi-ratelimit-headers-10, as Structured
//! Fields) and `Retry-After` for a verdict, as `--response-headers` adds them.
//!
//! The library's own formatter is private to its tower layer, so this is a small one with
//! the same rules: `q` is the quota's limit, `w` its window in whole seconds (left out when
//! the period is not whole seconds); `RateLimit` reports the enforced limit with the fewest
//! requests left, `t` being its retry-after when over, else its reset, rounded up.

use crate::engine::{Shown, Status, Verdict};
use std::fmt::Write;
use std::time::Duration;

/// The headers for `verdict`, as `(name, value)` pairs; none when no rule matched.
pub fn for_verdict(verdict: &Verdict) -> Vec<(String, String)> {
    let limited: Vec<(&Status, &Shown)> = verdict
        .statuses
        .iter()
        .filter_map(|s| s.limit.as_ref().map(|l| (s, l)))
        .filter(|(_, l)| !l.shadow)
        .collect();
    let mut headers = Vec::new();
    if limited.is_empty() {
        return headers;
    }
    let mut policy = String::new();
    let mut seen: Vec<&str> = Vec::new();
    for (_, shown) in &limited {
        if seen.contains(&shown.name.as_str()) {
            continue;
        }
        seen.push(&shown.name);
        if !policy.is_empty() {
            policy.push_str(", ");
        }
        push_sf_string(&mut policy, &shown.name);
        let _ = write!(policy, ";q={}", shown.quota_limit);
        if shown.period.subsec_nanos() == 0 {
            let _ = write!(policy, ";w={}", shown.period.as_secs());
        }
    }
    headers.push(("RateLimit-Policy".to_owned(), policy));
    // The tightest: an over-limit status first, then the fewest remaining.
    let (status, shown) = limited
        .iter()
        .min_by_key(|(s, _)| (!s.over, s.remaining))
        .copied()
        .unwrap_or(limited[0]);
    let t = if status.over {
        status.retry_after.unwrap_or(status.reset_after)
    } else {
        status.reset_after
    };
    let mut current = String::new();
    push_sf_string(&mut current, &shown.name);
    let _ = write!(current, ";r={};t={}", status.remaining, seconds_up(t));
    headers.push(("RateLimit".to_owned(), current));
    if verdict.over {
        let retry = limited
            .iter()
            .filter(|(s, _)| s.over)
            .filter_map(|(s, _)| s.retry_after)
            .max()
            .unwrap_or(Duration::from_secs(1));
        headers.push((
            "Retry-After".to_owned(),
            seconds_up(retry).max(1).to_string(),
        ));
    }
    headers
}

/// Whole seconds, rounded up.
pub fn seconds_up(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// `text` as a Structured Field String: printable ASCII only (others become `?`), with `"`
/// and `\` escaped.
fn push_sf_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars().take(64) {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push('?'),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Unit;

    fn status(over: bool, remaining: u32, name: &str) -> Status {
        Status {
            over,
            limit: Some(Shown {
                name: name.into(),
                requests_per_unit: 5,
                unit: Unit::Second,
                quota_limit: 5,
                period: Duration::from_secs(1),
                shadow: false,
            }),
            remaining,
            reset_after: Duration::from_millis(1500),
            retry_after: over.then_some(Duration::from_millis(200)),
        }
    }

    #[test]
    fn headers_name_every_policy_and_the_tightest_limit() {
        let verdict = Verdict {
            statuses: vec![status(false, 3, "a"), status(true, 0, "b\"q")],
            over: true,
        };
        let headers = for_verdict(&verdict);
        assert_eq!(
            headers,
            vec![
                (
                    "RateLimit-Policy".into(),
                    "\"a\";q=5;w=1, \"b\\\"q\";q=5;w=1".into()
                ),
                ("RateLimit".into(), "\"b\\\"q\";r=0;t=1".into()),
                ("Retry-After".into(), "1".into()),
            ]
        );
    }
}
