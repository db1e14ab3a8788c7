//! The exact events, their throttling and their key hashes, under a recording subscriber.

use super::*;
use crate::algorithm::Gcra;
use crate::clock::ManualClock;
use crate::telemetry::key_hash;
use crate::{Limiter, Quota};
use tracing::Level;

#[path = "../../../tests/support/tracing_recorder.rs"]
mod recorder;
use recorder::{event, Recorder};

const TOKEN: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
const SECOND: u64 = 1_000_000_000;

/// A real denial: 1/second, checked at 0 and again 1 ns after 0.25 s, so the wait is
/// 749.999999 ms, logged rounded up.
fn a_denial() -> Decision {
    let clock = ManualClock::new();
    let limiter = Limiter::<Gcra, _>::with_clock(Quota::per_second(1), clock.clone()).unwrap();
    assert!(limiter.check().is_allowed());
    clock.set_nanos(SECOND / 4 + 1);
    let denial = limiter.check();
    assert_eq!(
        denial.retry_after(),
        Some(std::time::Duration::from_nanos(749_999_999))
    );
    denial
}

#[test]
fn a_denial_is_one_debug_event_with_the_hash_and_the_wait() {
    let log = LimiterLog::new("api");
    let denial = a_denial();
    let events = Recorder::new(Level::DEBUG).record(|| log.denied(TOKEN, &denial));
    assert_eq!(
        events,
        [event(
            Level::DEBUG,
            &[
                ("message", "request denied".into()),
                ("limiter", "api".into()),
                ("key", key_hash(TOKEN).to_string()),
                ("retry_after_ms", "750".into()),
            ]
        )]
    );
}

#[test]
fn a_direct_denial_has_no_key_field() {
    let log = LimiterLog::new("global");
    let denial = a_denial();
    let events = Recorder::new(Level::DEBUG).record(|| log.denied_direct(&denial));
    assert_eq!(
        events,
        [event(
            Level::DEBUG,
            &[
                ("message", "request denied".into()),
                ("limiter", "global".into()),
                ("retry_after_ms", "750".into()),
            ]
        )]
    );
}

#[test]
fn denials_are_silent_unless_debug_is_on() {
    let log = LimiterLog::new("api");
    let denial = a_denial();
    assert_eq!(
        Recorder::new(Level::INFO).record(|| log.denied(TOKEN, &denial)),
        []
    );
}

#[test]
fn a_full_table_warns_once_a_second_counting_the_rest() {
    let log = LimiterLog::new("per-token");
    let events = Recorder::new(Level::WARN).record(|| {
        for now in [
            0,
            SECOND / 2,
            SECOND - 1,
            SECOND,
            SECOND + 200,
            5 * SECOND / 2,
        ] {
            log.table_full(now, TOKEN);
        }
    });
    let warning = |suppressed: u64| {
        event(
            Level::WARN,
            &[
                ("message", "key table full: a new key was denied".into()),
                ("limiter", "per-token".into()),
                ("key", key_hash(TOKEN).to_string()),
                ("suppressed", suppressed.to_string()),
            ],
        )
    };
    assert_eq!(events, [warning(0), warning(2), warning(1)]);
}

#[test]
fn backend_errors_are_throttled_apart_from_full_tables_and_per_limiter() {
    let (redis, other) = (LimiterLog::new("redis"), LimiterLog::new("other"));
    let error = "connection refused";
    let events = Recorder::new(Level::WARN).record(|| {
        redis.backend_error(0, &error);
        redis.backend_error(10, &error); // suppressed
        redis.table_full(10, TOKEN); // another kind: its own throttle
        other.backend_error(10, &error); // another limiter: its own throttle
        redis.backend_error(SECOND + 3, &error);
    });
    let backend = |limiter: &str, suppressed: u64| {
        event(
            Level::WARN,
            &[
                ("message", "backend error".into()),
                ("limiter", limiter.into()),
                ("error", error.into()),
                ("suppressed", suppressed.to_string()),
            ],
        )
    };
    let full = event(
        Level::WARN,
        &[
            ("message", "key table full: a new key was denied".into()),
            ("limiter", "redis".into()),
            ("key", key_hash(TOKEN).to_string()),
            ("suppressed", "0".into()),
        ],
    );
    assert_eq!(
        events,
        [
            backend("redis", 0),
            full,
            backend("other", 0),
            backend("redis", 1)
        ]
    );
}

#[test]
fn with_warnings_off_the_throttle_is_not_spent() {
    let log = LimiterLog::new("api");
    assert_eq!(
        Recorder::new(Level::ERROR).record(|| log.table_full(0, TOKEN)),
        []
    );
    // Had the silent call taken the second, this one would be suppressed.
    let events = Recorder::new(Level::WARN).record(|| log.table_full(1, TOKEN));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].fields["suppressed"], "0");
}

#[test]
fn no_event_carries_the_key() {
    let log = LimiterLog::new("api");
    let denial = a_denial();
    let keys = [TOKEN, "203.0.113.7", "alice@example.com"];
    let events = Recorder::new(Level::DEBUG).record(|| {
        for (i, key) in keys.iter().enumerate() {
            log.denied(*key, &denial);
            log.table_full(i as u64 * 2 * SECOND, *key);
        }
    });
    assert_eq!(events.len(), 2 * keys.len());
    for recorded in &events {
        let text = format!("{recorded:?}");
        for key in keys {
            assert!(!text.contains(key), "{key} leaked into {text}");
        }
        assert_eq!(recorded.fields["key"].len(), 8);
    }
}
