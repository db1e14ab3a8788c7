//! Snapshots for dashboards: each limiter's figures after a known trace, and one key's
//! numbers read by a peek that consumes nothing.

use sluicegate::algorithm::{FixedWindow, Gcra};
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::policy::AlgorithmKind;
use sluicegate::telemetry::{Counts, KeyState, Observed, Snapshot};
use sluicegate::tiers::TieredLimiter;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::time::Duration;

#[test]
fn a_keyed_limiter_reports_its_totals_keys_and_memory() {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_second(2), clock).unwrap();
    for user in ["alice", "alice", "alice", "bob"] {
        limiter.check(user);
    }
    limiter.peek("carol"); // neither counted nor stored
    let snapshot = Snapshot::of("api", &limiter);
    assert_eq!(snapshot.limiter, "api");
    assert_eq!(snapshot.quota, Some(Quota::per_second(2)));
    assert_eq!((snapshot.allowed, snapshot.denied), (Some(3), Some(1)));
    assert_eq!(snapshot.keys, Some(2));
    assert_eq!(snapshot.memory_bytes, Some(limiter.memory_bytes()));
    assert!(limiter.memory_bytes() > 0);
    assert_eq!(
        (snapshot.swept_keys, snapshot.table_full),
        (Some(0), Some(0))
    );
}

#[test]
fn dynamic_and_tiered_limiters_report_the_same_way() {
    let clock = ManualClock::new();
    let any = AnyKeyedLimiter::<u64, _>::with_clock(
        Quota::per_second(1),
        AlgorithmKind::TokenBucket,
        clock.clone(),
    )
    .unwrap();
    any.check(&1);
    any.check(&1);
    any.check(&2);
    assert_eq!(
        any.counts(),
        Some(Counts {
            allowed: 2,
            denied: 1
        })
    );
    let snapshot = Snapshot::of("any", &any);
    assert_eq!(
        (snapshot.keys, snapshot.memory_bytes),
        (Some(2), Some(any.memory_bytes()))
    );

    let tiers = TieredLimiter::<&str, u64>::builder()
        .clock(clock)
        .tier("free", Quota::per_second(1))
        .tier("pro", Quota::per_second(3))
        .build()
        .unwrap();
    tiers.check(&"free", &1).unwrap();
    tiers.check(&"free", &1).unwrap();
    tiers.check(&"pro", &1).unwrap();
    let snapshot = Snapshot::of("tiers", &tiers);
    assert_eq!(
        (snapshot.allowed, snapshot.denied, snapshot.keys),
        (Some(2), Some(1), Some(2))
    );
    assert_eq!(snapshot.quota, None); // one quota per tier, none for the whole
    let free = Snapshot::of("tiers-free", tiers.tier(&"free").unwrap());
    assert_eq!(
        (free.allowed, free.denied, free.keys),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(free.quota, Some(Quota::per_second(1)));
}

#[test]
fn direct_limiters_report_their_quota_memory_and_with_metrics_their_counts() {
    let limiter = Limiter::<Gcra, ManualClock>::new(Quota::per_minute(5)).unwrap();
    limiter.check();
    let snapshot = Snapshot::of("global", &limiter);
    assert_eq!(snapshot.quota, Some(Quota::per_minute(5)));
    // Direct limiters count their checks only with the `metrics` feature.
    let counted = cfg!(feature = "metrics").then_some(1);
    assert_eq!(
        (snapshot.allowed, snapshot.keys, snapshot.memory_bytes),
        (counted, None, Some(limiter.memory_bytes()))
    );
    let any =
        AnyLimiter::<ManualClock>::new(Quota::per_minute(5), AlgorithmKind::SlidingLog).unwrap();
    assert_eq!(
        Snapshot::of("global", &any).quota,
        Some(Quota::per_minute(5))
    );
}

fn state(limiter: &KeyedLimiter<String, FixedWindow, ManualClock>, key: &str) -> KeyState {
    KeyState::peek(limiter, key)
        .now()
        .expect("in-process")
        .expect("no error")
}

#[test]
fn a_key_state_is_read_without_consuming() {
    let clock = ManualClock::new();
    let limiter =
        KeyedLimiter::<String, FixedWindow, _>::with_clock(Quota::per_minute(3), clock.clone())
            .unwrap();
    clock.set(Duration::from_secs(20));
    limiter.check("alice");
    let alice = state(&limiter, "alice");
    assert!(alice.allowed);
    assert_eq!((alice.limit, alice.remaining), (3, 2));
    assert_eq!(alice.retry_after, None);
    assert_eq!(alice.reset_after, Duration::from_secs(40)); // the window ends at 1:00
                                                            // Reading again gives the same numbers: nothing was consumed, nothing counted.
    assert_eq!(state(&limiter, "alice"), alice);
    assert_eq!((limiter.allowed(), limiter.denied()), (1, 0));

    limiter.check_n("alice", 2).unwrap();
    let alice = state(&limiter, "alice");
    assert_eq!((alice.allowed, alice.remaining), (false, 0));
    assert_eq!(alice.retry_after, Some(Duration::from_secs(40)));
    // A key never seen reads as fresh and is not stored.
    let bob = state(&limiter, "bob");
    assert_eq!(
        (bob.allowed, bob.remaining, bob.reset_after),
        (true, 3, Duration::ZERO)
    );
    assert_eq!(limiter.len(), 1);
}

#[test]
fn a_key_state_reads_through_any_backend() {
    let clock = ManualClock::new();
    let direct = AnyLimiter::with_clock(Quota::per_second(2), AlgorithmKind::Gcra, clock).unwrap();
    direct.check();
    let state = KeyState::peek(&direct, "ignored").now().unwrap().unwrap();
    assert_eq!((state.allowed, state.remaining), (true, 1));
    assert_eq!(state.reset_after, Duration::from_millis(500));
    let tiers = TieredLimiter::<&str, u64, ManualClock>::builder()
        .tier("free", Quota::per_second(1))
        .build()
        .unwrap();
    tiers.check(&"free", &7).unwrap();
    let state = KeyState::peek(tiers.tier(&"free").unwrap(), &7)
        .now()
        .unwrap()
        .unwrap();
    assert_eq!((state.allowed, state.remaining), (false, 0));
    assert_eq!(state.retry_after, Some(Duration::from_secs(1)));
}

#[cfg(feature = "serde")]
#[test]
fn snapshots_serialize_for_status_endpoints() {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<u64, Gcra, _>::with_clock(Quota::per_second(4), clock).unwrap();
    limiter.check(&1);
    let snapshot = serde_json::to_value(Snapshot::of("api", &limiter)).unwrap();
    assert_eq!(
        snapshot,
        serde_json::json!({
            "limiter": "api",
            "quota": "4/second",
            "allowed": 1,
            "denied": 0,
            "keys": 1,
            "memory_bytes": limiter.memory_bytes(),
            "swept_keys": 0,
            "table_full": 0,
        })
    );
    let state = KeyState::peek(&limiter, &1).now().unwrap().unwrap();
    let state = serde_json::to_value(state).unwrap();
    assert_eq!(
        state,
        serde_json::json!({
            "allowed": true,
            "limit": 4,
            "remaining": 3,
            "retry_after": null,
            "reset_after": 0.25,
        })
    );
}
