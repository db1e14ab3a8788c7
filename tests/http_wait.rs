//! Waiting instead of refusing, on a paused tokio clock that also drives the limiters: each
//! wait is exactly the decision's `retry_after` (or a leaky bucket's `wait`), not a poll.
#![cfg(all(feature = "http", feature = "tokio"))]

mod http_support;

use http_support::TokioClock;
use sluicegate::algorithm::{Gcra, LeakyBucket, SlidingWindow};
use sluicegate::backend::{Backend, BackendErrorKind};
use sluicegate::wait::{Jitter, UntilReady};
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::sync::Arc;
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn sleeps_exactly_until_retry_after() {
    let clock = TokioClock::new();
    let limiter =
        Limiter::<Gcra, _>::with_clock(Quota::per_second(4).with_burst(2), clock.clone()).unwrap();
    let mut admitted_at = Vec::new();
    for _ in 0..5 {
        let expected_wait = limiter.peek().retry_after().unwrap_or_default();
        let before = clock.elapsed();
        let decision = limiter.until_ready().await;
        assert!(decision.is_allowed());
        assert_eq!(clock.elapsed() - before, expected_wait);
        admitted_at.push(clock.elapsed());
    }
    // A burst of 2, then one every 250 ms.
    assert_eq!(
        admitted_at,
        [Duration::ZERO, Duration::ZERO, 250 * MS, 500 * MS, 750 * MS]
    );
}

#[tokio::test(start_paused = true)]
async fn windows_wait_for_the_next_window_and_keys_are_independent() {
    let clock = TokioClock::new();
    let keyed =
        KeyedLimiter::<String, SlidingWindow, _>::with_clock(Quota::per_second(2), clock.clone())
            .unwrap();
    keyed.until_n_ready("a", 2).await.unwrap();
    keyed.until_ready("b").await; // another key: no wait
    assert_eq!(clock.elapsed(), Duration::ZERO);
    // The sliding window admits again 1 ns past the second; tokio's timer counts whole
    // milliseconds, so the wait ends at the first millisecond at or after it.
    let expected = keyed.peek("a").retry_after().unwrap();
    assert_eq!(expected, Duration::from_nanos(1_000_000_001));
    keyed.until_ready("a").await;
    let waited = clock.elapsed();
    assert!(waited >= expected && waited - expected < MS, "{waited:?}");
    // A cost above the capacity fails at once instead of waiting forever.
    let error = keyed.until_n_ready("a", 3).await.unwrap_err();
    assert_eq!((error.requested(), error.capacity()), (3, 2));
    assert_eq!(clock.elapsed(), waited);
}

#[tokio::test(start_paused = true)]
async fn a_leaky_bucket_returns_after_its_shaping_wait() {
    let clock = TokioClock::new();
    let shaper =
        Limiter::<LeakyBucket, _>::with_clock(Quota::per_second(10).with_burst(3), clock.clone())
            .unwrap();
    let mut returned_at = Vec::new();
    for _ in 0..3 {
        let decision = shaper.until_ready().await;
        assert!(decision.is_allowed());
        returned_at.push(clock.elapsed());
    }
    // Admitted at once, released 100 ms apart.
    assert_eq!(returned_at, [Duration::ZERO, 100 * MS, 200 * MS]);
}

#[tokio::test(start_paused = true)]
async fn the_seam_waits_alike_and_reports_capacity_errors() {
    let clock = TokioClock::new();
    let backend: Arc<dyn Backend<str>> = Arc::new(
        KeyedLimiter::<String, Gcra, _>::with_clock(
            Quota::per_second(2).with_burst(1),
            clock.clone(),
        )
        .unwrap(),
    );
    backend.until_ready("k").await.unwrap();
    backend.until_ready("k").await.unwrap();
    assert_eq!(clock.elapsed(), 500 * MS);
    let error = backend.until_n_ready("k", 2).await.unwrap_err();
    assert_eq!(error.kind(), BackendErrorKind::Capacity);
}

#[tokio::test(start_paused = true)]
async fn jitter_adds_a_bounded_random_delay() {
    let clock = TokioClock::new();
    let limiter = Limiter::<Gcra, _>::with_clock(Quota::per_second(1), clock.clone()).unwrap();
    limiter.until_ready().await;
    let jitter = Jitter::new(10 * MS, 50 * MS);
    limiter.until_ready_with_jitter(jitter).await;
    let waited = clock.elapsed();
    assert!(
        (Duration::from_millis(1010)..=Duration::from_millis(1050)).contains(&waited),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelled_waits_consume_nothing() {
    let clock = TokioClock::new();
    let limiter = Limiter::<Gcra, _>::with_clock(Quota::per_second(1), clock.clone()).unwrap();
    limiter.until_ready().await;
    let gave_up = tokio::time::timeout(400 * MS, limiter.until_ready()).await;
    assert!(gave_up.is_err());
    // Nothing was taken: the next request is admitted exactly one second after the first.
    limiter.until_ready().await;
    assert_eq!(clock.elapsed(), 1000 * MS);
}

#[tokio::test(start_paused = true)]
async fn competing_waiters_re_check_and_never_over_admit() {
    let clock = TokioClock::new();
    let limiter =
        Arc::new(Limiter::<Gcra, _>::with_clock(Quota::per_second(1), clock.clone()).unwrap());
    let tasks: Vec<_> = (0..5)
        .map(|_| {
            let (limiter, clock) = (limiter.clone(), clock.clone());
            tokio::spawn(async move {
                limiter.until_ready().await;
                clock.elapsed()
            })
        })
        .collect();
    let mut admitted = Vec::new();
    for task in tasks {
        admitted.push(task.await.unwrap());
    }
    admitted.sort();
    // All five woke together at each retry; only one won each time.
    assert_eq!(admitted, [0, 1000, 2000, 3000, 4000].map(|ms| ms * MS));
}
