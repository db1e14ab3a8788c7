//! [`Quota`] in configuration: its string form, or a map `{ limit, period, burst }`.

use super::period::{period_of, EXPECTED_PERIOD};
use super::raw::{at, join, Checked, Fields, Raw};
use crate::error::QuotaError;
use crate::quota::Quota;
use serde::de::{Deserialize, DeserializeSeed, Deserializer};
use serde::ser::{Serialize, Serializer};

/// What a quota may be, for messages.
const EXPECTED_QUOTA: &str =
    "a quota string such as \"100/minute burst 20\", or a map with limit, period and burst";

/// Written as the string [`Display`](std::fmt::Display) gives, which
/// [`FromStr`](std::str::FromStr) reads back: `"100/minute burst 20"`, `"5/30s"`.
impl Serialize for Quota {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Read from the string form (`"100/minute burst 20"`, as [`FromStr`](std::str::FromStr)
/// parses it) or from a map `{ limit, period, burst, anchored }`: `limit` and `burst` whole numbers
/// (`burst` optional, defaulting to `limit`), `period` a duration string (`"1m"`, `"60s"`,
/// `"1 minute"`, `"500ms"`: a count and any unit the quota syntax knows) or a whole number of
/// seconds, `anchored` a boolean ([`Quota::anchored`]). Unknown fields, zeros and numbers beyond `u32` are refused with a message naming
/// the field.
impl<'de> Deserialize<'de> for Quota {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Quota, D::Error> {
        Checked(|raw: Raw| quota_of(&raw, "")).deserialize(deserializer)
    }
}

/// The quota `value` describes; messages name fields under `path`.
pub(super) fn quota_of(value: &Raw, path: &str) -> Result<Quota, String> {
    match value {
        Raw::Str(text) => text
            .parse()
            .map_err(|error| at(path, quota_text_error(text, error))),
        Raw::Map(entries) => quota_of_parts(entries, path),
        other => Err(at(
            path,
            format!("expected {EXPECTED_QUOTA}, found {}", other.describe()),
        )),
    }
}

/// The parser's errors already quote the input; the others get it added.
fn quota_text_error(text: &str, error: QuotaError) -> String {
    match error {
        QuotaError::Parse { .. } => error.to_string(),
        other => format!("invalid quota {text:?}: {other}"),
    }
}

fn quota_of_parts(entries: &[(Raw, Raw)], path: &str) -> Result<Quota, String> {
    let fields = Fields::read(
        entries,
        &["limit", "period", "burst", "anchored"],
        path,
        "limit, period, burst or anchored",
    )?;
    let field = |name: &str| join(path, name);
    let missing = |name: &str, what: &str| at(&field(name), format!("missing: expected {what}"));

    let limit = fields
        .get("limit")
        .ok_or_else(|| missing("limit", "a whole number of requests"))?;
    let limit = count_of(limit).map_err(|message| at(&field("limit"), message))?;
    let period = fields
        .get("period")
        .ok_or_else(|| missing("period", EXPECTED_PERIOD))?;
    let period = period_of(period).map_err(|message| at(&field("period"), message))?;

    let quota = Quota::new(limit, period).map_err(|error| {
        let name = if error == QuotaError::ZeroLimit {
            "limit"
        } else {
            "period"
        };
        at(&field(name), error)
    })?;
    let quota = match fields.get("burst") {
        None => quota,
        Some(burst) => {
            let burst = count_of(burst).map_err(|message| at(&field("burst"), message))?;
            quota
                .try_with_burst(burst)
                .map_err(|error| at(&field("burst"), error))?
        }
    };
    match fields.get("anchored") {
        None | Some(Raw::Bool(false)) => Ok(quota),
        Some(Raw::Bool(true)) => Ok(quota.anchored()),
        Some(other) => Err(at(
            &field("anchored"),
            format!("expected true or false, found {}", other.describe()),
        )),
    }
}

/// A whole number of requests that fits a `u32`; zero is left to `Quota` to refuse.
fn count_of(value: &Raw) -> Result<u32, String> {
    match value {
        Raw::Int(count) if *count < 0 => Err(format!(
            "expected a whole number of requests, found the negative number {count}"
        )),
        Raw::Int(count) => u32::try_from(*count)
            .map_err(|_| format!("{count} is too large (the maximum is {})", u32::MAX)),
        other => Err(format!(
            "expected a whole number of requests, found {}",
            other.describe()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn map(entries: &[(&str, Raw)]) -> Raw {
        Raw::Map(
            entries
                .iter()
                .map(|(key, value)| (Raw::Str((*key).into()), value.clone()))
                .collect(),
        )
    }

    #[test]
    fn both_forms_give_the_same_quota() {
        let text = quota_of(&Raw::Str("100/minute burst 20".into()), "").unwrap();
        let parts = map(&[
            ("limit", Raw::Int(100)),
            ("period", Raw::Str("1m".into())),
            ("burst", Raw::Int(20)),
        ]);
        assert_eq!(quota_of(&parts, "").unwrap(), text);
        let seconds = map(&[("limit", Raw::Int(5)), ("period", Raw::Int(30))]);
        assert_eq!(
            quota_of(&seconds, "").unwrap(),
            Quota::new(5, Duration::from_secs(30)).unwrap()
        );
    }

    #[test]
    fn each_bad_field_is_named_under_its_path() {
        let error = |entries: &[(&str, Raw)]| quota_of(&map(entries), "quota").unwrap_err();
        let period = ("period", Raw::Int(1));
        assert_eq!(
            error(&[("limit", Raw::Int(0)), period.clone()]),
            "quota.limit: a quota's limit must be at least 1 request"
        );
        assert_eq!(
            error(&[("limit", Raw::Int(1)), ("period", Raw::Int(0))]),
            "quota.period: a quota's period must be longer than zero"
        );
        assert_eq!(
            error(&[
                ("limit", Raw::Int(1)),
                period.clone(),
                ("burst", Raw::Int(0))
            ]),
            "quota.burst: a quota's burst must be at least 1 request"
        );
        assert_eq!(
            error(&[("limit", Raw::Int(5_000_000_000)), period.clone()]),
            "quota.limit: 5000000000 is too large (the maximum is 4294967295)"
        );
        assert_eq!(
            error(&[("limit", Raw::Str("ten".into())), period.clone()]),
            "quota.limit: expected a whole number of requests, found the string \"ten\""
        );
        assert_eq!(
            error(std::slice::from_ref(&period)),
            "quota.limit: missing: expected a whole number of requests"
        );
        assert_eq!(
            error(&[("limit", Raw::Int(1)), period.clone(), ("per", Raw::Int(1))]),
            "quota.per: unknown field: expected limit, period, burst or anchored"
        );
        assert_eq!(
            error(&[
                ("limit", Raw::Int(1)),
                period.clone(),
                ("limit", Raw::Int(2))
            ]),
            "quota.limit: given twice"
        );
        assert_eq!(
            quota_of(&Raw::Str("0/s".into()), "quota").unwrap_err(),
            "quota: invalid quota \"0/s\": a quota's limit must be at least 1 request"
        );
        assert_eq!(
            quota_of(&Raw::Bool(true), "").unwrap_err(),
            format!("expected {EXPECTED_QUOTA}, found true")
        );
    }
}
