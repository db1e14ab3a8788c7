//! The log events limiters emit through `tracing` on a known trace, through the public API:
//! a denial at `debug` with the limiter's name, the key's hash (never the key) and the wait;
//! a full key table at `warn`, at most once a second, counting what it held back.
#![cfg(feature = "tracing")]

#[path = "support/tracing_recorder.rs"]
mod recorder;

use recorder::{event, Recorder};
use sluicegate::algorithm::{FixedWindow, Gcra};
use sluicegate::clock::ManualClock;
use sluicegate::telemetry::key_hash;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::time::Duration;
use tracing::Level;

const TOKEN: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";

#[test]
fn denials_are_logged_at_debug_with_the_name_and_a_hash_of_the_key() {
    let clock = ManualClock::new();
    let keyed = KeyedLimiter::<String, Gcra, ManualClock>::builder(Quota::per_second(2))
        .clock(clock.clone())
        .name("api")
        .build()
        .unwrap();
    let direct = Limiter::<FixedWindow, _>::with_clock(Quota::per_minute(1), clock.clone())
        .unwrap()
        .named("global");
    let events = Recorder::new(Level::DEBUG).record(|| {
        keyed.check(TOKEN);
        keyed.check(TOKEN);
        clock.advance(Duration::from_millis(100));
        keyed.check(TOKEN); // denied: admitted again 400 ms later
        keyed.peek(TOKEN); // a peek is not a denial to log
        direct.check();
        direct.check(); // denied until the minute ends, 59.9 s later
    });
    assert_eq!(
        events,
        [
            event(
                Level::DEBUG,
                &[
                    ("message", "request denied".into()),
                    ("limiter", "api".into()),
                    ("key", key_hash(TOKEN).to_string()),
                    ("retry_after_ms", "400".into()),
                ]
            ),
            event(
                Level::DEBUG,
                &[
                    ("message", "request denied".into()),
                    ("limiter", "global".into()),
                    ("retry_after_ms", "59900".into()),
                ]
            ),
        ]
    );
    assert!(events
        .iter()
        .all(|e| e.fields.values().all(|v| !v.contains(TOKEN))));
}

#[test]
fn a_full_table_warns_once_a_second_and_counts_what_it_held_back() {
    let clock = ManualClock::new();
    let keyed = KeyedLimiter::<u64, Gcra, ManualClock>::builder(Quota::per_hour(1))
        .clock(clock.clone())
        .shards(1)
        .max_keys(2)
        .name("per-user")
        .build()
        .unwrap();
    let events = Recorder::new(Level::WARN).record(|| {
        keyed.check(&1);
        keyed.check(&2);
        for key in 3..6 {
            assert!(keyed.check(&key).is_table_full());
        }
        clock.advance(Duration::from_secs(1));
        assert!(keyed.check(&6).is_table_full());
    });
    let warning = |key: u64, suppressed: u64| {
        event(
            Level::WARN,
            &[
                ("message", "key table full: a new key was denied".into()),
                ("limiter", "per-user".into()),
                ("key", key_hash(&key).to_string()),
                ("suppressed", suppressed.to_string()),
            ],
        )
    };
    // Debug events are off: only the warnings, the first at once, then one a second.
    assert_eq!(events, [warning(3, 0), warning(6, 2)]);
    assert_eq!(keyed.table_full_denials(), 4);
}
