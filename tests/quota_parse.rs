//! Quota strings: every documented form, clear errors with columns, and a round trip.

use proptest::prelude::*;
use sluicegate::{Quota, QuotaError};
use std::time::Duration;

fn parse(s: &str) -> Result<Quota, QuotaError> {
    s.parse()
}

fn quota(limit: u32, period: Duration) -> Quota {
    Quota::new(limit, period).unwrap()
}

#[test]
fn accepts_every_documented_form() {
    let second = Duration::from_secs(1);
    let cases = [
        ("100/s", quota(100, second)),
        ("100/second", quota(100, second)),
        ("100 per second", quota(100, second)),
        ("100/SECONDS", quota(100, second)),
        ("  100 / Sec  ", quota(100, second)),
        ("5/30s", quota(5, Duration::from_secs(30))),
        ("5 per 30 seconds", quota(5, Duration::from_secs(30))),
        ("10/500ms", quota(10, Duration::from_millis(500))),
        ("1000/h", quota(1000, Duration::from_secs(3600))),
        ("1000/hour", quota(1000, Duration::from_secs(3600))),
        ("3/m", quota(3, Duration::from_secs(60))),
        ("3/min", quota(3, Duration::from_secs(60))),
        ("1/day", Quota::per_day(1)),
        ("7/250us", quota(7, Duration::from_micros(250))),
        ("7/250µs", quota(7, Duration::from_micros(250))),
        ("9/10ns", quota(9, Duration::from_nanos(10))),
        ("1_000/s", quota(1000, second)),
        ("100/minute burst 20", Quota::per_minute(100).with_burst(20)),
        (
            "100/minute, burst=20",
            Quota::per_minute(100).with_burst(20),
        ),
        (
            "100/MINUTE BURST: 20",
            Quota::per_minute(100).with_burst(20),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(text), Ok(expected), "{text:?}");
    }
}

/// The error's column and a fragment of its reason.
fn error_at(text: &str) -> (usize, String) {
    match parse(text) {
        Err(QuotaError::Parse { column, reason, .. }) => (column, reason),
        other => panic!("{text:?} should not parse, got {other:?}"),
    }
}

#[test]
fn errors_say_what_was_expected_and_where() {
    let cases = [
        ("", 1, "expected a limit"),
        ("   ", 4, "expected a limit"),
        ("abc/s", 1, "expected a limit"),
        ("100", 4, "expected '/' or 'per' after the limit"),
        ("100 s", 5, "expected '/' or 'per' after the limit"),
        ("100/", 5, "expected a period unit after '/'"),
        ("100 per", 8, "expected a period unit after 'per'"),
        ("100/5", 6, "expected a period unit after '/'"),
        ("100/fortnight", 5, "unknown period unit 'fortnight'"),
        ("100/0s", 5, "the period count must be at least 1"),
        ("100/s burst", 12, "expected a burst size after 'burst'"),
        ("100/s bursts 3", 7, "unexpected 'bursts 3'"),
        ("100/s extra", 7, "unexpected 'extra'"),
        ("5000000000/s", 1, "the limit 5000000000 is too large"),
        ("99999999999999999999999/s", 1, "number is too large"),
    ];
    for (text, column, reason) in cases {
        let (found_column, found_reason) = error_at(text);
        assert_eq!(found_column, column, "{text:?}: {found_reason}");
        assert!(found_reason.contains(reason), "{text:?}: {found_reason}");
    }
    assert_eq!(
        parse("100/").unwrap_err().to_string(),
        "invalid quota \"100/\": expected a period unit after '/' at column 5"
    );
}

#[test]
fn zero_and_oversized_values_get_their_own_errors() {
    assert_eq!(parse("0/s"), Err(QuotaError::ZeroLimit));
    assert_eq!(parse("1/s burst 0"), Err(QuotaError::ZeroBurst));
    assert!(matches!(
        parse("1/3650d"),
        Err(QuotaError::PeriodTooLong { .. })
    ));
    assert!(matches!(
        parse("1/18446744073709551615d"),
        Err(QuotaError::PeriodTooLong { .. })
    ));
}

#[test]
fn displays_in_the_form_it_parses() {
    assert_eq!(Quota::per_minute(100).to_string(), "100/minute");
    assert_eq!(
        Quota::per_second(5).with_burst(9).to_string(),
        "5/second burst 9"
    );
    assert_eq!(quota(5, Duration::from_secs(30)).to_string(), "5/30s");
    assert_eq!(
        quota(10, Duration::from_millis(500)).to_string(),
        "10/500ms"
    );
    assert_eq!(quota(2, Duration::from_secs(5400)).to_string(), "2/90min");
    assert_eq!(
        quota(1, Duration::from_nanos(1_500)).to_string(),
        "1/1500ns"
    );
}

proptest! {
    #[test]
    fn display_round_trips(
        limit in 1u32..,
        period in 1u64..=(1 << 58),
        burst in 1u32..,
        anchored: bool,
    ) {
        let q = Quota::new(limit, Duration::from_nanos(period)).unwrap().with_burst(burst);
        let q = if anchored { q.anchored() } else { q };
        prop_assert_eq!(q.to_string().parse::<Quota>(), Ok(q));
    }
}

/// `anchored` ends a quota (after its burst, a comma allowed), in one quota or several.
#[test]
fn anchored_is_read_after_the_burst_and_written_back() {
    let plain = Quota::per_minute(100);
    assert!(!plain.is_anchored());
    for text in [
        "100/minute anchored",
        "100 per minute, ANCHORED",
        " 100/1m  anchored ",
    ] {
        assert_eq!(parse(text), Ok(plain.anchored()), "{text}");
    }
    let bursty = Quota::per_second(5).with_burst(9).anchored();
    assert_eq!(parse("5/s burst 9 anchored"), Ok(bursty));
    assert_eq!(parse("5/s, burst 9, anchored"), Ok(bursty));
    assert_eq!(bursty.to_string(), "5/second burst 9 anchored");
    assert_ne!(plain, plain.anchored());
    let (column, reason) = error_at("5/s anchored burst 9");
    assert_eq!(column, 14);
    assert!(reason.contains("'anchored'"), "{reason}");
    assert!(parse("5/s anchor").is_err());
    assert_eq!(
        Quota::parse_many("5/minute anchored; 100/hour"),
        Ok(vec![Quota::per_minute(5).anchored(), Quota::per_hour(100)])
    );
}

/// Weeks, months and years, fixed lengths as the service's config and `limits` count them.
#[test]
fn weeks_months_and_years_are_7_30_and_365_days() {
    let day = 86_400;
    for (text, days) in [
        ("5/week", 7),
        ("5 per 2 weeks", 14),
        ("5/month", 30),
        ("5/mo", 30),
        ("5 per 3 months", 90),
        ("5/year", 365),
        ("5/y", 365),
    ] {
        let quota: Quota = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(quota.period(), Duration::from_secs(days * day), "{text}");
        assert_eq!(
            quota.to_string().parse::<Quota>().unwrap(),
            quota,
            "{text} round trip"
        );
    }
    assert_eq!("5/week".parse::<Quota>().unwrap().to_string(), "5/week");
    assert_eq!("5/60d".parse::<Quota>().unwrap().to_string(), "5/2mo");
    // `m` stays a minute.
    assert_eq!(
        "5/m".parse::<Quota>().unwrap().period(),
        Duration::from_secs(60)
    );
}

/// Several limits in one string, as slowapi and Flask-Limiter users write them.
#[test]
fn several_quotas_parse_in_order() {
    let quotas = Quota::parse_many("5 per minute; 10 per hour").unwrap();
    assert_eq!(quotas, vec![Quota::per_minute(5), Quota::per_hour(10)]);
    let quotas = Quota::parse_many("5/minute, 100/hour burst 20|7/day").unwrap();
    assert_eq!(
        quotas,
        vec![
            Quota::per_minute(5),
            Quota::per_hour(100).with_burst(20),
            Quota::per_day(7)
        ]
    );
    // A `,` before `burst` belongs to its quota.
    assert_eq!(
        Quota::parse_many("100/hour, burst 20").unwrap(),
        vec![Quota::per_hour(100).with_burst(20)]
    );
    assert_eq!(
        Quota::parse_many("1/s").unwrap(),
        vec![Quota::per_second(1)]
    );
    // Errors name the column in the whole string.
    let error = Quota::parse_many("5/minute; 10/fortnight")
        .unwrap_err()
        .to_string();
    assert!(error.contains("column 14"), "{error}");
    assert!(Quota::parse_many("5/minute;").is_err());
    assert!(Quota::parse_many("").is_err());
}
