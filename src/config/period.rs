//! A quota's period in the map form: `"1m"`, `"60s"`, `"1 minute"`, `"500ms"`, `"hour"`, or
//! a whole number of seconds.

use super::raw::Raw;
use crate::error::QuotaError;
use crate::quota::Quota;
use std::time::Duration;

/// What a period may be, for messages.
pub(super) const EXPECTED_PERIOD: &str =
    "a duration such as \"1m\", \"60s\", \"1 minute\" or \"500ms\", or a whole number of seconds";

/// The period `value` names, or what was wrong with it.
pub(super) fn period_of(value: &Raw) -> Result<Duration, String> {
    match value {
        Raw::Str(text) => parse_period(text),
        Raw::Int(seconds) => {
            let seconds = u64::try_from(*seconds).map_err(|_| {
                format!("expected {EXPECTED_PERIOD}, found the negative number {seconds}")
            })?;
            Ok(Duration::from_secs(seconds))
        }
        other => Err(format!(
            "expected {EXPECTED_PERIOD}, found {}",
            other.describe()
        )),
    }
}

/// Reads `[count] unit` with the quota parser's units, so that a period is spelled the same
/// in both forms (`"100/30s"` and `period = "30s"`).
fn parse_period(text: &str) -> Result<Duration, String> {
    let invalid = |reason: &str| format!("invalid period {text:?}: {reason}");
    if text.trim().is_empty() {
        return Err(invalid("the period is empty"));
    }
    if !is_count_and_unit(text) {
        return Err(invalid(
            "expected a count and a unit, as in \"1m\", \"60s\", \"1 minute\" or \"500ms\"",
        ));
    }
    // The shape check above leaves the parser nothing to read but the period itself.
    match format!("1/{text}").parse::<Quota>() {
        Ok(quota) => Ok(quota.period()),
        Err(QuotaError::Parse { reason, column, .. }) => Err(invalid(&format!(
            "{reason} at column {}",
            column.saturating_sub(2).max(1)
        ))),
        Err(other) => Err(other.to_string()),
    }
}

/// True for optional spaces, an optional count (digits and `_`), optional spaces, a word
/// and optional spaces: `"30s"`, `" 1 minute "`, `"hour"`.
fn is_count_and_unit(text: &str) -> bool {
    let rest = text.trim();
    let rest = if rest.starts_with(|c: char| c.is_ascii_digit()) {
        rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_')
    } else {
        rest
    };
    let rest = rest.trim_start();
    !rest.is_empty() && rest.chars().all(char::is_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_a_minute_agree() {
        for text in ["1m", "60s", "1 minute", "minute", " 1min ", "60_000ms"] {
            assert_eq!(
                period_of(&Raw::Str(text.into())),
                Ok(Duration::from_secs(60)),
                "{text}"
            );
        }
        assert_eq!(period_of(&Raw::Int(60)), Ok(Duration::from_secs(60)));
    }

    #[test]
    fn bad_periods_say_what_was_wrong() {
        let error = |raw: Raw| period_of(&raw).unwrap_err();
        assert_eq!(
            error(Raw::Str("".into())),
            "invalid period \"\": the period is empty"
        );
        assert_eq!(
            error(Raw::Str("1m burst 5".into())),
            "invalid period \"1m burst 5\": expected a count and a unit, as in \"1m\", \"60s\", \
             \"1 minute\" or \"500ms\""
        );
        assert!(error(Raw::Str("5 fortnights".into())).starts_with(
            "invalid period \"5 fortnights\": unknown period unit 'fortnights' (expected ns,"
        ));
        assert!(error(Raw::Str("5 fortnights".into())).ends_with("at column 3"));
        assert_eq!(
            error(Raw::Str("0s".into())),
            "invalid period \"0s\": the period count must be at least 1 at column 1"
        );
        assert!(error(Raw::Str("_5s".into())).contains("expected a count and a unit"));
        assert_eq!(
            error(Raw::Int(-5)),
            format!("expected {EXPECTED_PERIOD}, found the negative number -5")
        );
        assert_eq!(
            error(Raw::Float(1.5)),
            format!("expected {EXPECTED_PERIOD}, found the number 1.5")
        );
    }
}
