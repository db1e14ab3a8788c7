//! Building the dynamic limiters: from policies, from generic limiters (keeping their
//! state), with the builder's knobs, and the errors of quotas an algorithm cannot run.

use sluicegate::algorithm::{SlidingWindow, TokenBucket};
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::policy::{AlgorithmKind, Policy};
use sluicegate::{Composite, KeyedLimiter, Limiter, Quota, QuotaError};
use std::time::Duration;

#[test]
fn a_policy_chooses_quota_and_algorithm() {
    let policy: Policy = "name=api; quota=3/second; algorithm=fixed-window"
        .parse()
        .unwrap();
    let clock = ManualClock::new();
    let direct = AnyLimiter::from_policy_with_clock(&policy, clock.clone()).unwrap();
    assert_eq!(direct.algorithm(), AlgorithmKind::FixedWindow);
    assert_eq!(direct.quota(), Quota::per_second(3));
    let keyed = AnyKeyedLimiter::<u64, ManualClock>::with_clock(
        policy.quota,
        policy.algorithm,
        clock.clone(),
    )
    .unwrap();
    for _ in 0..3 {
        assert!(direct.check().is_allowed());
        assert!(keyed.check(&1).is_allowed());
    }
    assert!(direct.check().is_denied());
    assert!(keyed.check(&1).is_denied());
    // Fixed windows reset on the second boundary.
    clock.advance(Duration::from_secs(1));
    assert!(direct.check().is_allowed());
    assert!(keyed.check(&1).is_allowed());
}

#[test]
fn converting_a_generic_limiter_keeps_its_state() {
    let clock = ManualClock::new();
    let generic =
        Limiter::<TokenBucket, _>::with_clock(Quota::per_minute(2), clock.clone()).unwrap();
    assert!(generic.check().is_allowed());
    let dynamic = AnyLimiter::from(generic);
    assert_eq!(dynamic.algorithm(), AlgorithmKind::TokenBucket);
    assert_eq!(dynamic.check().remaining(), 0);
    assert!(dynamic.check().is_denied());

    let keyed =
        KeyedLimiter::<u64, SlidingWindow, _>::with_clock(Quota::per_minute(1), clock).unwrap();
    assert!(keyed.check(&9).is_allowed());
    let keyed = AnyKeyedLimiter::from(keyed);
    assert_eq!(keyed.algorithm(), AlgorithmKind::SlidingWindow);
    assert_eq!(keyed.len(), 1);
    assert!(keyed.check(&9).is_denied());
}

#[test]
fn the_builder_sets_every_knob() {
    let clock = ManualClock::new();
    let limiter = AnyKeyedLimiter::<u64>::builder(Quota::per_hour(1), AlgorithmKind::Gcra)
        .algorithm(AlgorithmKind::SlidingLog)
        .clock(clock.clone())
        .shards(2)
        .initial_capacity(64)
        .max_keys(2)
        .build()
        .unwrap();
    assert_eq!(limiter.algorithm(), AlgorithmKind::SlidingLog);
    assert_eq!(limiter.shards(), 2);
    assert!(limiter.slots() >= 64);
    // max_keys 2 over 2 shards: one live key per shard. Of 64 keys, two find a free shard
    // (all 64 hashing to one shard has odds of 2^-63) and the others a full table.
    let refused: Vec<_> = (0..64u64)
        .map(|key| limiter.check(&key))
        .filter(|decision| decision.is_table_full())
        .collect();
    assert_eq!(refused.len(), 62);
    assert!(refused
        .iter()
        .all(|d| d.is_denied() && d.retry_after().is_none()));
    assert_eq!(limiter.len(), 2);
    // The clock is the one given: an hour later both keys are fresh and swept.
    clock.advance(Duration::from_secs(3600));
    assert_eq!(limiter.sweep(), 2);
    assert!(limiter.is_empty());
}

#[test]
fn an_algorithm_refusing_a_quota_says_so() {
    // TokenBucket needs burst * limit within about period_ns / 8.
    let quota = Quota::per_second(1_000_000);
    let direct = AnyLimiter::<ManualClock>::new(quota, AlgorithmKind::TokenBucket).unwrap_err();
    let keyed =
        AnyKeyedLimiter::<u64, ManualClock>::new(quota, AlgorithmKind::TokenBucket).unwrap_err();
    let generic = Limiter::<TokenBucket, ManualClock>::new(quota).unwrap_err();
    assert!(matches!(
        direct,
        QuotaError::Unsupported {
            algorithm: "TokenBucket",
            ..
        }
    ));
    assert_eq!(direct, generic);
    assert_eq!(keyed, generic);
    assert!(AnyLimiter::<ManualClock>::new(quota, AlgorithmKind::Gcra).is_ok());
}

#[test]
fn dynamic_limiters_join_composites() {
    let clock = ManualClock::new();
    let global = AnyLimiter::with_clock(
        Quota::per_second(3),
        AlgorithmKind::SlidingLog,
        clock.clone(),
    )
    .unwrap();
    let per_user = AnyKeyedLimiter::<u64, _>::with_clock(
        Quota::per_second(1),
        AlgorithmKind::LeakyBucket,
        clock,
    )
    .unwrap();
    let check = |user: u64| {
        let user = per_user.key(&user);
        Composite::new(&[global.as_limit(), user.as_limit()]).check()
    };
    assert!(check(1).is_allowed());
    assert!(check(1).is_denied()); // the user's limit; the global one keeps its units
    assert_eq!(global.peek().remaining(), 1);
    assert!(check(2).is_allowed());
    assert!(check(3).is_allowed());
    assert!(check(4).is_denied()); // the global limit; user 4 keeps its unit
    assert!(per_user.peek(&4).is_allowed());
}
