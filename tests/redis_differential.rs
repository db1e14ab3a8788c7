//! Differential tests: random boundary-aimed traces, on whole microseconds, through
//! `RedisLimiter<A, ManualClock>` (each algorithm's Lua script on a real `redis-server`) and
//! the textbook reference models. Checks and hits are mixed; every decision and every
//! number on it must be identical to the model probed on the microsecond grid, the grid
//! Redis's time moves on: `retry_after` is the time until the first whole microsecond at
//! which the model admits, `reset_after` until the first at which it is fresh, `wait`
//! (leaky bucket) the model's wait rounded up to the microsecond.
//!
//! The token bucket on Redis is exact (tokens in units that refill whole per microsecond),
//! so it is compared exactly too. One run goes through the deny cache as well: its local
//! answers must be Redis's, exactly.
#![cfg(feature = "redis")]

mod harness;
#[path = "support/redis_server.rs"]
mod redis_server;
mod reference;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redis_server::RedisServer;
use reference::{
    probe, AnchoredWindowModel, FixedWindowModel, GcraModel, LeakyModel, Model, SlidingLogModel,
    SlidingWindowModel, TokenBucketModel,
};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::redis::RedisLimiter;
use sluicegate::Algorithm;
use sluicegate::Quota;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Cases per algorithm: each is a trace of up to 80 steps, two or three round trips each.
const CASES: u32 = 256;

#[derive(Debug, Clone, Copy)]
struct Step {
    gap_us: u64,
    cost: u32,
    hit: bool,
}

/// Gaps in whole microseconds aimed at the instants that matter: the same instant, whole
/// emission intervals rounded down and up (and a microsecond either side), the period's
/// length, anything within two periods, and long idles.
fn gap_us(quota: Quota) -> impl Strategy<Value = u64> {
    let p = quota.period().as_nanos() as u64;
    let l = u64::from(quota.limit());
    let interval = (1u64..=4, 0u64..=1, -1i64..=1).prop_map(move |(k, up, nudge)| {
        let ns = k * p / l;
        let us = if up == 1 {
            ns.div_ceil(1_000)
        } else {
            ns / 1_000
        };
        us.saturating_add_signed(nudge)
    });
    let period = p / 1_000;
    prop_oneof![
        3 => Just(0u64),
        3 => interval,
        3 => 0..=2 * period + 1,
        1 => prop_oneof![
            Just(period.saturating_sub(1)),
            Just(period),
            Just(period + 1),
            Just(p.div_ceil(1_000))
        ],
        1 => 0..=1_000 * period,
    ]
}

/// Checks (costs up to `max_cost`) with hits mixed in (one in six, costs up to three times
/// `max_cost`, so some go well beyond the limit).
fn trace(quota: Quota, max_cost: u32) -> impl Strategy<Value = Vec<Step>> {
    let check = prop_oneof![6 => Just(1u32), 1 => Just(0u32), 3 => 0..=max_cost]
        .prop_map(|cost| (cost, false));
    let hit = (0..=3 * max_cost).prop_map(|cost| (cost, true));
    let kind = prop_oneof![5 => check, 1 => hit];
    proptest::collection::vec(
        (gap_us(quota), kind).prop_map(|(gap_us, (cost, hit))| Step { gap_us, cost, hit }),
        1..80,
    )
}

fn case(anchored: bool) -> impl Strategy<Value = (Quota, u64, Vec<Step>)> {
    let quota = harness::quota().prop_map(move |q| if anchored { q.anchored() } else { q });
    quota.prop_flat_map(|q| {
        let cap = q.limit().max(q.burst()).min(6);
        let start = prop_oneof![Just(0u64), 0u64..=1_000_000_000_000];
        (Just(q), start, trace(q, cap))
    })
}

/// How far ahead the probes look, in µs: a full refill, three periods, and the hits' debt.
fn horizon_us(quota: Quota, hit_cost: u64) -> u64 {
    harness::debt_horizon(quota, hit_cost).div_ceil(1_000) + 2
}

/// Runs one trace through Redis and the model; any difference fails with the step.
async fn compare<A: Algorithm, M: Model>(
    url: &str,
    quota: Quota,
    start_us: u64,
    trace: &[Step],
    deny_cache: bool,
) -> Result<(), TestCaseError> {
    static CASE: AtomicU32 = AtomicU32::new(0);
    let clock = ManualClock::new();
    let prefix = format!("diff{}:", CASE.fetch_add(1, Ordering::Relaxed));
    let limiter = RedisLimiter::<A, ManualClock>::builder(quota, url)
        .clock(clock.clone())
        .prefix(prefix)
        .deny_cache(deny_cache)
        .timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect("every quota of the strategy runs on Redis");
    let capacity = limiter.max_cost();
    let mut model = M::new(quota);
    let (mut now, mut hit_cost) = (start_us, 0u64);
    for (i, step) in trace.iter().enumerate() {
        now += step.gap_us;
        clock.set_nanos(now * 1_000);
        let ns = now * 1_000;
        let (decision, expected, retry_cost) = if step.hit {
            hit_cost += u64::from(step.cost);
            let decision = limiter.hit("k", step.cost).await.unwrap();
            (decision, model.hit(ns, step.cost), 1)
        } else {
            let cost = step.cost.min(capacity);
            let peeked = limiter.peek_n("k", cost).await.unwrap();
            let decision = limiter.check_n("k", cost).await.unwrap();
            prop_assert_eq!(peeked, decision, "peek differs at step {}", i);
            (decision, model.check(ns, cost), cost)
        };
        prop_assert_eq!(
            decision.is_allowed(),
            expected.is_some(),
            "step {} at {} us, cost {}, hit {}: {:?} vs model {:?}",
            i,
            now,
            step.cost,
            step.hit,
            decision,
            model
        );
        let wait_us = expected.unwrap_or(0).div_ceil(1_000);
        prop_assert_eq!(
            decision.wait(),
            Duration::from_micros(wait_us),
            "wait, step {}",
            i
        );
        prop_assert_eq!(
            decision.remaining(),
            probe::remaining(&model, ns),
            "remaining, step {}",
            i
        );
        let horizon = horizon_us(quota, hit_cost);
        let fresh = harness::first_us(now, horizon, |t| model.is_fresh_at(t * 1_000))
            .expect("fresh within the horizon");
        prop_assert_eq!(
            decision.reset_after(),
            Duration::from_micros(fresh - now),
            "reset_after, step {}",
            i
        );
        if decision.is_denied() {
            let at = harness::first_us(now, horizon, |t| {
                model.clone().check(t * 1_000, retry_cost).is_some()
            })
            .expect("admissible within the horizon");
            prop_assert_eq!(
                decision.retry_after(),
                Some(Duration::from_micros(at - now)),
                "retry_after, step {} ({:?})",
                i,
                decision
            );
        }
    }
    Ok(())
}

/// Runs [`CASES`] random traces of `A` against `M` on a fresh server.
fn differential<A: Algorithm, M: Model>(deny_cache: bool, cases: u32) {
    run::<A, M>(deny_cache, cases, false);
}

/// [`differential`] on anchored quotas.
fn anchored<A: Algorithm, M: Model>(deny_cache: bool, cases: u32) {
    run::<A, M>(deny_cache, cases, true);
}

fn run<A: Algorithm, M: Model>(deny_cache: bool, cases: u32, anchored: bool) {
    let server = RedisServer::start();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&case(anchored), |(quota, start, trace)| {
        runtime.block_on(compare::<A, M>(&url, quota, start, &trace, deny_cache))
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}

#[test]
fn gcra_script_equals_textbook_gcra() {
    differential::<Gcra, GcraModel>(false, CASES);
}

#[test]
fn token_bucket_script_equals_an_exact_continuous_bucket() {
    differential::<TokenBucket, TokenBucketModel>(false, CASES);
}

#[test]
fn leaky_bucket_script_equals_a_queue_drained_at_the_rate() {
    differential::<LeakyBucket, LeakyModel>(false, CASES);
}

#[test]
fn fixed_window_script_equals_counts_per_window() {
    differential::<FixedWindow, FixedWindowModel>(false, CASES);
}

#[test]
fn anchored_fixed_window_script_equals_a_window_from_each_first_request() {
    anchored::<FixedWindow, AnchoredWindowModel>(false, CASES);
}

#[test]
fn sliding_window_script_equals_the_weighted_estimate() {
    differential::<SlidingWindow, SlidingWindowModel>(false, CASES);
}

#[test]
fn sliding_log_script_equals_a_vec_of_timestamps() {
    differential::<SlidingLog, SlidingLogModel>(false, CASES);
}

/// The deny cache answers repeated denials itself: on the client's clock its numbers must be
/// exactly the model's too.
#[test]
fn the_deny_cache_answers_exactly_as_the_model() {
    differential::<Gcra, GcraModel>(true, CASES / 2);
    differential::<SlidingWindow, SlidingWindowModel>(true, CASES / 2);
    differential::<SlidingLog, SlidingLogModel>(true, CASES / 2);
    anchored::<FixedWindow, AnchoredWindowModel>(true, CASES / 2);
}
