//! Clocks that step back, limiters idle for a century, and the extreme quotas.

mod harness;
mod reference;

use proptest::prelude::*;
use reference::{
    FixedWindowModel, GcraModel, LeakyModel, Model, SlidingLogModel, SlidingWindowModel,
    TokenBucketModel,
};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{Limiter, Quota, QuotaError};
use std::time::Duration;

const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);

/// Requests whose clock readings step back by up to 50 µs. The rule: a reading earlier than
/// the state's time (its latest admission) counts as that time. So every admission must be one
/// that the exact model admits at `max(reading, latest admitted reading)`, fed the limiter's
/// admissions. (A denial writes nothing, so readings of denied requests are not remembered.)
fn assert_never_over_admits<A: Algorithm, M: Model>(
    quota: Quota,
    steps: &[(u64, u32, u64)],
) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let limiter = Limiter::<A, _>::with_clock(quota, clock.clone()).unwrap();
    let mut model = M::new(quota);
    let (mut physical, mut admitted_at) = (0u64, 0u64);
    for (i, &(gap, cost, back)) in steps.iter().enumerate() {
        physical += gap;
        let reading = physical.saturating_sub(back);
        clock.set_nanos(reading);
        let cost = cost.min(limiter.max_cost());
        if limiter.check_n(cost).unwrap().is_allowed() {
            admitted_at = admitted_at.max(reading);
            prop_assert!(
                model.check(admitted_at, cost).is_some(),
                "{} step {}: admitted at reading {} what the model denies at {}",
                std::any::type_name::<A>(),
                i,
                reading,
                admitted_at
            );
        }
    }
    Ok(())
}

/// `(gap, cost, step back)`: gaps cluster around one period minus a step back, where an
/// entry logged at a lagging reading would expire early.
fn skewed_steps(quota: Quota) -> impl Strategy<Value = Vec<(u64, u32, u64)>> {
    let p = quota.period().as_nanos() as u64;
    let gap = prop_oneof![
        Just(0u64),
        0u64..=100_000,
        p - 60_000..=p + 10_000,
        0..=2 * p,
    ];
    proptest::collection::vec((gap, 1u32..=3, 0u64..=50_000), 1..150)
}

fn skew_quota() -> impl Strategy<Value = Quota> {
    // Periods of 100 µs to 10 ms, so a 50 µs step back is a large fraction of a period.
    (1u32..=8, 100_000u64..=10_000_000, 1u32..=8).prop_map(|(limit, period, burst)| {
        Quota::new(limit, Duration::from_nanos(period))
            .unwrap()
            .with_burst(burst)
    })
}

proptest! {
    #![proptest_config(harness::cases(200))]

    #[test]
    fn a_clock_stepping_back_never_over_admits(
        (quota, steps) in skew_quota().prop_flat_map(|q| (Just(q), skewed_steps(q)))
    ) {
        assert_never_over_admits::<Gcra, GcraModel>(quota, &steps)?;
        assert_never_over_admits::<LeakyBucket, LeakyModel>(quota, &steps)?;
        assert_never_over_admits::<TokenBucket, TokenBucketModel>(quota, &steps)?;
        assert_never_over_admits::<FixedWindow, FixedWindowModel>(quota, &steps)?;
        assert_never_over_admits::<SlidingWindow, SlidingWindowModel>(quota, &steps)?;
        assert_never_over_admits::<SlidingLog, SlidingLogModel>(quota, &steps)?;
    }
}

/// Exhausts a limiter, leaves it idle for a century, then runs `trace` through it and through
/// a limiter built at that moment: every decision must match.
fn idle_century_is_fresh<A: Algorithm>(quota: Quota) {
    let old_clock = ManualClock::new();
    let old = Limiter::<A, _>::with_clock(quota, old_clock.clone()).unwrap();
    while old.check().is_allowed() {}
    old_clock.advance(CENTURY);
    let new_clock = ManualClock::starting_at(CENTURY);
    let new = Limiter::<A, _>::with_clock(quota, new_clock.clone()).unwrap();
    for (i, gap_ms) in [0, 0, 0, 0, 0, 0, 90, 110, 500, 999, 1, 0, 0, 3_000]
        .iter()
        .enumerate()
    {
        for clock in [&old_clock, &new_clock] {
            clock.advance(Duration::from_millis(*gap_ms));
        }
        let (a, b) = (old.check(), new.check());
        assert_eq!(a, b, "{} step {i}", std::any::type_name::<A>());
    }
}

#[test]
fn a_limiter_idle_for_a_century_behaves_like_a_fresh_one() {
    let quota = Quota::per_second(4).with_burst(3);
    idle_century_is_fresh::<Gcra>(quota);
    idle_century_is_fresh::<TokenBucket>(quota);
    idle_century_is_fresh::<LeakyBucket>(quota);
    idle_century_is_fresh::<FixedWindow>(quota);
    idle_century_is_fresh::<SlidingWindow>(quota);
    idle_century_is_fresh::<SlidingLog>(quota);
}

/// Builds `A` for `quota`, or the refusal.
fn build<A: Algorithm>(quota: Quota) -> Result<(Limiter<A, ManualClock>, ManualClock), QuotaError> {
    let clock = ManualClock::new();
    Limiter::<A, _>::with_clock(quota, clock.clone()).map(|limiter| (limiter, clock))
}

fn assert_refused<A: Algorithm>(quota: Quota) {
    match build::<A>(quota) {
        Err(error @ QuotaError::Unsupported { .. }) => {
            let message = error.to_string();
            assert!(message.contains(" cannot run this quota: "), "{message}");
            assert!(message.len() > 60, "a refusal says why: {message}");
        }
        other => panic!("{quota} should be refused, got {other:?}"),
    }
}

/// The whole capacity at once at t = 0, then nothing until exactly `retry`, then one request.
fn assert_exact<A: Algorithm>(quota: Quota, retry: Duration) {
    let (limiter, clock) = build::<A>(quota).unwrap_or_else(|e| panic!("{quota}: {e}"));
    assert!(
        limiter.check_n(limiter.max_cost()).unwrap().is_allowed(),
        "{quota}"
    );
    let denied = limiter.check();
    assert_eq!(denied.retry_after(), Some(retry), "{quota}");
    clock.advance(retry - Duration::from_nanos(1));
    assert!(limiter.check().is_denied(), "{quota} one nanosecond early");
    clock.advance(Duration::from_nanos(1));
    assert!(limiter.check().is_allowed(), "{quota} at retry_after");
}

#[test]
fn one_per_day_works_exactly_everywhere() {
    let quota = Quota::per_day(1);
    let day = Duration::from_secs(86_400);
    assert_exact::<Gcra>(quota, day);
    assert_exact::<TokenBucket>(quota, day);
    assert_exact::<LeakyBucket>(quota, day);
    assert_exact::<FixedWindow>(quota, day);
    assert_exact::<SlidingLog>(quota, day);
    // At the first instant of the next day the previous window still weighs (P - 0)/P = 1,
    // so the estimate is 1, not below the limit: the next request fits one nanosecond later.
    assert_exact::<SlidingWindow>(quota, day + Duration::from_nanos(1));
}

#[test]
fn a_billion_per_second_works_exactly_or_is_refused() {
    let quota = Quota::per_second(1_000_000_000);
    assert_exact::<Gcra>(quota, Duration::from_nanos(1));
    assert_exact::<LeakyBucket>(quota, Duration::from_nanos(1));
    assert_exact::<FixedWindow>(quota, Duration::from_secs(1));
    assert_refused::<TokenBucket>(quota);
    assert_refused::<SlidingWindow>(quota);
    assert_refused::<SlidingLog>(quota);
}

#[test]
fn u32_max_per_hour_works_exactly_or_is_refused() {
    let quota = Quota::per_hour(u32::MAX);
    // The emission interval is 838.19 ns: the first refill lands at 839 ns.
    assert_exact::<Gcra>(quota, Duration::from_nanos(839));
    assert_exact::<LeakyBucket>(quota, Duration::from_nanos(839));
    assert_exact::<FixedWindow>(quota, Duration::from_secs(3_600));
    assert_refused::<TokenBucket>(quota);
    assert_refused::<SlidingWindow>(quota);
    assert_refused::<SlidingLog>(quota);

    // And the whole hour's worth is back exactly one hour after it was spent.
    let (gcra, clock) = build::<Gcra>(quota).unwrap();
    assert!(gcra.check_n(u32::MAX).unwrap().is_allowed());
    clock.advance(Duration::from_secs(3_600) - Duration::from_nanos(1));
    assert!(gcra.peek_n(u32::MAX).unwrap().is_denied());
    clock.advance(Duration::from_nanos(1));
    assert!(gcra.check_n(u32::MAX).unwrap().is_allowed());
}

#[test]
fn zero_cost_is_always_allowed_and_consumes_nothing() {
    fn check<A: Algorithm>() {
        let (limiter, _clock) = build::<A>(Quota::per_minute(2)).unwrap();
        limiter.check_n(2).unwrap();
        let zero = limiter.check_n(0).unwrap();
        assert!(zero.is_allowed(), "{}", std::any::type_name::<A>());
        assert_eq!(zero.remaining(), 0);
        assert!(limiter.check().is_denied());
    }
    check::<Gcra>();
    check::<TokenBucket>();
    check::<LeakyBucket>();
    check::<FixedWindow>();
    check::<SlidingWindow>();
    check::<SlidingLog>();
}

#[test]
fn a_cost_beyond_capacity_is_an_error_naming_it() {
    let (rate, _) = build::<Gcra>(Quota::per_second(10).with_burst(4)).unwrap();
    let error = rate.check_n(5).unwrap_err();
    assert_eq!((error.requested(), error.capacity()), (5, 4));
    assert_eq!(
        error.to_string(),
        "a request of cost 5 can never be admitted: the capacity is 4"
    );
    assert!(rate.peek_n(5).is_err());
    // Window algorithms admit up to the limit per window, whatever the burst.
    let (window, _) = build::<SlidingLog>(Quota::per_second(10).with_burst(4)).unwrap();
    assert_eq!(window.max_cost(), 10);
    assert!(window.check_n(10).unwrap().is_allowed());
}

#[test]
fn time_beyond_146_years_stops_refilling_but_never_panics_or_over_admits() {
    fn check<A: Algorithm>() {
        let (limiter, clock) = build::<A>(Quota::per_second(2)).unwrap();
        clock.set_nanos(u64::MAX);
        assert!(limiter.check_n(2).unwrap().is_allowed());
        assert!(limiter.check().is_denied());
        clock.set_nanos(u64::MAX - 1);
        assert!(limiter.check().is_denied());
    }
    check::<Gcra>();
    check::<TokenBucket>();
    check::<LeakyBucket>();
    check::<FixedWindow>();
    check::<SlidingWindow>();
    check::<SlidingLog>();
}

#[test]
fn sliding_window_accepts_exactly_the_documented_ranges() {
    let accepts = |quota: Quota| build::<SlidingWindow>(quota).is_ok();
    for (largest, per) in [
        (32_767, Quota::per_second as fn(u32) -> Quota),
        (262_143, Quota::per_minute),
        (2_097_151, Quota::per_hour),
        (16_777_215, Quota::per_day),
    ] {
        assert!(accepts(per(largest)), "{largest}");
        assert!(!accepts(per(largest + 1)), "{}", largest + 1);
    }
}
