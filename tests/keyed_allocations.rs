//! A hit on an existing key allocates nothing, even for `String` keys looked up by `&str`, and
//! a new string key allocates at most its one heap copy (none up to 48 bytes).
//! (Its own test binary: the global allocator below counts every allocation in it.)

use sluicegate::algorithm::{Gcra, SlidingLog};
use sluicegate::clock::ManualClock;
use sluicegate::{Composite, KeyedLimiter, Limiter, Quota};

#[path = "support/allocations.rs"]
mod allocations;

use allocations::allocations_during;

#[test]
fn hits_allocate_nothing() {
    let clock = ManualClock::new();
    let names =
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_hour(1_000), clock.clone()).unwrap();
    let logs =
        KeyedLimiter::<String, SlidingLog, _>::with_clock(Quota::per_hour(100), clock.clone())
            .unwrap();
    let global = Limiter::<Gcra, _>::with_clock(Quota::per_hour(100_000), clock).unwrap();
    let keys: Vec<String> = (0..1_000).map(|n| format!("user-{n}")).collect();
    for key in &keys {
        names.check(key.as_str());
        logs.check(key.as_str());
    }
    // A thread's first counted check of a limiter allocates its counter record (feature
    // `metrics`); warm the direct limiter as the keyed ones are.
    global.check();
    let hits = allocations_during(|| {
        for key in &keys {
            assert!(names.check(key.as_str()).is_allowed());
            assert!(names.peek(key.as_str()).is_allowed());
            assert!(logs.check(key.as_str()).is_allowed());
            assert!(Composite::new(&[&global, &names.key(key.as_str())])
                .check()
                .is_allowed());
        }
    });
    assert_eq!(hits, 0);
    // In this test, not one of its own: the allocator counts every thread's allocations.
    new_text_keys_allocate_at_most_their_one_copy();
}

/// A new string key of up to 48 bytes lives in its slot: inserting it allocates nothing
/// (in a table sized for it, so no growth); a longer one allocates its one heap copy.
fn new_text_keys_allocate_at_most_their_one_copy() {
    let names = KeyedLimiter::<String, Gcra, ManualClock>::builder(Quota::per_hour(1_000))
        .initial_capacity(100_000)
        .build()
        .unwrap();
    let long = "k".repeat(49);
    // Warm: this thread's first check may allocate its reclamation and counter records.
    for n in 0..64 {
        names.check(format!("warm-up {n}").as_str());
    }
    for n in 0..1_000 {
        let short = format!("{n:0>48}");
        assert_eq!(
            allocations_during(|| assert!(names.check(short.as_str()).is_allowed())),
            0,
            "a new 48-byte key, the {n}th"
        );
    }
    assert_eq!(
        allocations_during(|| assert!(names.check(long.as_str()).is_allowed())),
        1,
        "a new 49-byte key: its heap copy"
    );
    assert_eq!(
        allocations_during(|| assert!(names.check(long.as_str()).is_allowed())),
        0,
        "a hit on it"
    );
}
