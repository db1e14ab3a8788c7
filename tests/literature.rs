//! The worked examples of the rate-limiting literature, as named tests.

use std::time::Duration;

use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{Limiter, Quota};

const MINUTE: f64 = 60.0;

fn at_minutes(minutes: f64) -> Duration {
    Duration::from_secs_f64(minutes * MINUTE)
}

/// Admissions of one request at each instant, in order.
fn run<A: Algorithm>(quota: Quota, instants: &[Duration]) -> Vec<bool> {
    let clock = ManualClock::new();
    let limiter = Limiter::<A, _>::with_clock(quota, clock.clone()).unwrap();
    instants
        .iter()
        .map(|&at| {
            clock.set(at);
            limiter.check().is_allowed()
        })
        .collect()
}

/// Requests at 0.4, 0.7, 0.8, 1.4, 1.5, 1.6 minutes against 3 per minute.
fn three_per_minute_trace() -> Vec<Duration> {
    [0.4, 0.7, 0.8, 1.4, 1.5, 1.6].map(at_minutes).to_vec()
}

#[test]
fn fixed_window_admits_five_within_one_minute_across_the_edge() {
    let trace = three_per_minute_trace();
    let admitted = run::<FixedWindow>(Quota::per_minute(3), &trace);
    assert_eq!(admitted, [true; 6]);
    // Five of them fall inside the one-minute span [0.7, 1.7): the boundary weakness.
    let in_span = trace
        .iter()
        .zip(&admitted)
        .filter(|(&at, &ok)| ok && at >= at_minutes(0.7) && at < at_minutes(1.7))
        .count();
    assert_eq!(in_span, 5);
}

#[test]
fn sliding_log_admits_exactly_three_in_any_minute() {
    let admitted = run::<SlidingLog>(Quota::per_minute(3), &three_per_minute_trace());
    // 0.4 expires exactly at 1.4 (half-open windows), so 1.4 is admitted; 1.5 and 1.6 are not.
    assert_eq!(admitted, [true, true, true, true, false, false]);
}

/// 9 requests at 0:00 and 5 at 1:15, then one more at 1:15.
fn sliding_window_next_request(limit: u32) -> bool {
    let clock = ManualClock::new();
    let limiter =
        Limiter::<SlidingWindow, _>::with_clock(Quota::per_minute(limit), clock.clone()).unwrap();
    for _ in 0..9 {
        assert!(limiter.check().is_allowed());
    }
    clock.set(Duration::from_secs(75));
    for _ in 0..5 {
        assert!(limiter.check().is_allowed());
    }
    limiter.check().is_allowed()
}

#[test]
fn sliding_window_estimate_of_11_75_is_below_12_but_not_11() {
    // 9 x 45/60 + 5 = 11.75
    assert!(sliding_window_next_request(12));
    assert!(!sliding_window_next_request(11));
}

/// 100 per minute; 100 requests at 0:59 and 100 more at 1:01: how many are admitted.
fn boundary_burst_admissions<A: Algorithm>() -> usize {
    let quota = Quota::per_minute(100).with_burst(100);
    let mut trace = vec![Duration::from_secs(59); 100];
    trace.extend(vec![Duration::from_secs(61); 100]);
    run::<A>(quota, &trace).into_iter().filter(|&ok| ok).count()
}

#[test]
fn boundary_burst_of_200_at_0_59_and_1_01() {
    assert_eq!(boundary_burst_admissions::<FixedWindow>(), 200);
    assert_eq!(boundary_burst_admissions::<SlidingLog>(), 100);
    // 3 tokens refill in the 2 s between (one every 600 ms).
    assert_eq!(boundary_burst_admissions::<Gcra>(), 103);
    assert_eq!(boundary_burst_admissions::<TokenBucket>(), 103);
    assert_eq!(boundary_burst_admissions::<LeakyBucket>(), 103);
    // At 1:01 the estimate is 100 x 59/60 = 98.3; two more make 100.3, not below 100.
    assert_eq!(boundary_burst_admissions::<SlidingWindow>(), 102);
}

#[test]
fn gcra_and_token_bucket_decide_alike() {
    // Steady traffic above the rate, a burst after idle, and costs, on a 7-per-second quota
    // whose emission interval is not a whole number of nanoseconds.
    let quota = Quota::per_second(7).with_burst(3);
    let clock = ManualClock::new();
    let gcra = Limiter::<Gcra, _>::with_clock(quota, clock.clone()).unwrap();
    let bucket = Limiter::<TokenBucket, _>::with_clock(quota, clock.clone()).unwrap();
    let mut admitted = 0;
    for step in 0..2_000u64 {
        // Every 100 ms, with an idle second every 200 requests.
        clock.set(Duration::from_millis(step * 100 + step / 200 * 1_000));
        let cost = [1, 1, 2, 0, 3][step as usize % 5];
        let (a, b) = (gcra.check_n(cost).unwrap(), bucket.check_n(cost).unwrap());
        assert_eq!(a.is_allowed(), b.is_allowed(), "step {step}");
        assert_eq!(a.remaining(), b.remaining(), "step {step}");
        admitted += usize::from(a.is_allowed());
    }
    assert!(admitted > 500 && admitted < 2_000, "{admitted}");
}
