//! Composite checks: all limits allow and consume, or none keeps anything.

mod reference;

use proptest::prelude::*;
use reference::{FixedWindowModel, GcraModel, Model, SlidingLogModel};
use sluicegate::algorithm::{FixedWindow, Gcra, SlidingLog};
use sluicegate::clock::ManualClock;
use sluicegate::{Composite, KeyedLimiter, Limit, Limiter, Quota};
use std::time::Duration;

fn clock() -> ManualClock {
    ManualClock::new()
}

#[test]
fn a_per_user_and_a_global_limit() {
    let clock = clock();
    let global = Limiter::<Gcra, _>::with_clock(Quota::per_second(3), clock.clone()).unwrap();
    let per_user =
        KeyedLimiter::<u64, Gcra, _>::with_clock(Quota::per_second(2), clock.clone()).unwrap();
    let check = |user: u64| Composite::new(&[&global, &per_user.key(&user)]).check();

    assert!(check(1).is_allowed());
    assert!(check(1).is_allowed());
    // User 1's own limit denies: the global limit keeps what it had.
    assert!(check(1).is_denied());
    assert_eq!(
        global.peek().remaining(),
        0,
        "one left globally, after this peek 0"
    );
    let last = check(2);
    assert!(last.is_allowed());
    assert_eq!(
        last.remaining(),
        0,
        "the tightest limit, the global one, is exhausted"
    );
    // Now the global limit denies: user 3, checked after it, is untouched.
    let denied = check(3);
    assert!(denied.is_denied());
    assert_eq!(per_user.check_n(&3, 0).unwrap().remaining(), 2);
    // The longest retry: the global limit refills one request in 1/3 s.
    assert_eq!(
        denied.retry_after(),
        Some(Duration::from_nanos(333_333_334))
    );
    clock.advance(Duration::from_nanos(333_333_333));
    assert!(check(3).is_denied());
    clock.advance(Duration::from_nanos(1));
    assert!(check(3).is_allowed());
    // Each composite counts once in the keyed limiter (4 admitted, 3 denied), and so does the
    // direct `check_n(&3, 0)` above (admitted).
    assert_eq!((per_user.allowed(), per_user.denied()), (5, 3));
}

#[test]
fn a_denial_by_a_later_limit_undoes_the_earlier_ones() {
    let clock = clock();
    let per_second =
        KeyedLimiter::<u64, Gcra, _>::with_clock(Quota::per_second(10), clock.clone()).unwrap();
    let per_hour =
        KeyedLimiter::<u64, SlidingLog, _>::with_clock(Quota::per_hour(3), clock.clone()).unwrap();
    let check = || Composite::new(&[&per_second.key(&9), &per_hour.key(&9)]).check();
    for _ in 0..3 {
        assert!(check().is_allowed());
    }
    let denied = check();
    assert!(denied.is_denied());
    assert_eq!(denied.remaining(), 0);
    // The per-second limit consumed first, then was undone: 7 of 10 left, not 6.
    assert_eq!(per_second.check_n(&9, 0).unwrap().remaining(), 7);
    assert_eq!(denied.retry_after(), Some(Duration::from_secs(3_600)));
}

#[test]
fn costs_beyond_the_smallest_capacity_are_errors() {
    let clock = clock();
    let big = Limiter::<Gcra, _>::with_clock(Quota::per_second(100), clock.clone()).unwrap();
    let small = Limiter::<FixedWindow, _>::with_clock(Quota::per_second(5), clock).unwrap();
    let limits = [&big as &dyn Limit, &small];
    let both = Composite::new(&limits);
    assert_eq!(both.max_cost(), 5);
    let error = both.check_n(6).unwrap_err();
    assert_eq!((error.requested(), error.capacity()), (6, 5));
    assert!(both.check_n(5).unwrap().is_allowed());
    assert!(both.peek().is_denied());
    assert_eq!(
        big.peek().remaining(),
        94,
        "5 consumed by the composite, 1 by this peek"
    );
}

#[test]
fn a_full_table_denies_the_composite_as_table_full() {
    let clock = clock();
    let global = Limiter::<Gcra, _>::with_clock(Quota::per_second(100), clock.clone()).unwrap();
    let per_user = KeyedLimiter::<u64, Gcra>::builder(Quota::per_second(1))
        .clock(clock)
        .shards(1)
        .max_keys(1)
        .build()
        .unwrap();
    assert!(Composite::new(&[&global, &per_user.key(&1)])
        .check()
        .is_allowed());
    let full = Composite::new(&[&global, &per_user.key(&2)]).check();
    assert!(full.is_denied() && full.is_table_full(), "{full:?}");
    assert_eq!(
        global.peek().remaining(),
        98,
        "the global consumption was undone"
    );
}

proptest! {
    /// Sequentially, a composite decides exactly as "every model admits, then all consume".
    #[test]
    fn a_composite_equals_the_conjunction_of_its_models(
        steps in proptest::collection::vec((0u64..400_000_000, 0u64..3, 1u32..=2), 1..120)
    ) {
        let clock = clock();
        let (qa, qb, qc) = (Quota::per_second(5), Quota::per_second(3), Quota::per_second(4));
        let a = Limiter::<Gcra, _>::with_clock(qa, clock.clone()).unwrap();
        let b = KeyedLimiter::<u64, FixedWindow, _>::with_clock(qb, clock.clone()).unwrap();
        let c = KeyedLimiter::<u64, SlidingLog, _>::with_clock(qc, clock.clone()).unwrap();
        let mut ma = GcraModel::new(qa);
        let mut mb: Vec<FixedWindowModel> = (0..3).map(|_| FixedWindowModel::new(qb)).collect();
        let mut mc: Vec<SlidingLogModel> = (0..3).map(|_| SlidingLogModel::new(qc)).collect();
        let mut now = 0;
        for (gap, key, cost) in steps {
            now += gap;
            clock.set_nanos(now);
            let k = key as usize;
            let decision = Composite::new(&[&a, &b.key(&key), &c.key(&key)]).check_n(cost).unwrap();
            let expected = ma.clone().check(now, cost).is_some()
                && mb[k].clone().check(now, cost).is_some()
                && mc[k].clone().check(now, cost).is_some();
            prop_assert_eq!(decision.is_allowed(), expected);
            if expected {
                ma.check(now, cost);
                mb[k].check(now, cost);
                mc[k].check(now, cost);
            }
        }
    }
}
