//! A hit on an existing key allocates nothing, even for `String` keys looked up by `&str`.
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
    // A miss does allocate: the new key's owned copy.
    assert!(allocations_during(|| assert!(names.check("someone-new").is_allowed())) > 0);
}
