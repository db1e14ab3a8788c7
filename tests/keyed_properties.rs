//! Random multi-key traces through a `KeyedLimiter` and through a `HashMap` of reference
//! models (one per key): identical decisions and numbers, across table growth (tiny shards
//! that start empty) and sweeps, which must remove exactly the keys whose state is fresh.

mod harness;
mod reference;

use proptest::prelude::*;
use reference::{
    probe, AnchoredWindowModel, FixedWindowModel, GcraModel, LeakyModel, Model, SlidingLogModel,
    SlidingWindowModel,
};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// One operation of a keyed trace.
#[derive(Debug, Clone)]
enum Op {
    Check { gap: u64, key: u64, cost: u32 },
    Hit { key: u64, cost: u32 },
    Peek { key: u64 },
    Sweep,
}

fn quota() -> impl Strategy<Value = Quota> {
    (
        1u32..=5,
        prop_oneof![Just(1_000_000u64), Just(7_000_003), 1_000u64..=100_000_000],
        1u32..=6,
    )
        .prop_map(|(limit, period, burst)| {
            Quota::new(limit, Duration::from_nanos(period))
                .unwrap()
                .with_burst(burst)
        })
}

/// Keys from a domain of `keys`, gaps up to two periods, occasional long idles and sweeps.
fn ops(quota: Quota, keys: u64) -> impl Strategy<Value = Vec<Op>> {
    let p = quota.period().as_nanos() as u64;
    let gap = prop_oneof![4 => Just(0u64), 4 => 0..=2 * p, 1 => 0..=50 * p];
    let op = prop_oneof![
        12 => (gap, 0..keys, 0u32..=3).prop_map(|(gap, key, cost)| Op::Check { gap, key, cost }),
        2 => (0..keys).prop_map(|key| Op::Peek { key }),
        2 => (0..keys, 0u32..=12).prop_map(|(key, cost)| Op::Hit { key, cost }),
        1 => Just(Op::Sweep),
    ];
    proptest::collection::vec(op, 1..250)
}

fn case() -> impl Strategy<Value = (Quota, usize, Vec<Op>)> {
    (
        quota(),
        prop_oneof![Just(1usize), Just(2), Just(8)],
        prop_oneof![Just(6u64), Just(60), Just(400)],
    )
        .prop_flat_map(|(q, shards, keys)| (Just(q), Just(shards), ops(q, keys)))
}

fn keyed<A: Algorithm>(
    quota: Quota,
    shards: usize,
) -> (KeyedLimiter<u64, A, ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<u64, A, ManualClock>::builder(quota)
        .clock(clock.clone())
        .shards(shards)
        .initial_capacity(0)
        .build()
        .unwrap();
    (limiter, clock)
}

/// Runs `ops` through the keyed limiter and a map of models, comparing every decision with
/// what probing the key's model finds, and every sweep's effect on `len()`.
fn assert_keyed_equals_models<A: Algorithm, M: Model>(
    quota: Quota,
    shards: usize,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let (limiter, clock) = keyed::<A>(quota, shards);
    // Hits may owe up to 12 units each.
    let horizon = harness::debt_horizon(quota, 12 * ops.len() as u64);
    let mut models: HashMap<u64, M> = HashMap::new();
    // Keys ever consumed (only those are stored; peeks and zero costs store nothing).
    let mut held: HashSet<u64> = HashSet::new();
    let mut now = 0u64;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Check { gap, key, cost } => {
                now += gap;
                clock.set_nanos(now);
                let cost = cost.min(limiter.max_cost());
                let decision = limiter.check_n(&key, cost).unwrap();
                let model = models.entry(key).or_insert_with(|| M::new(quota));
                let expected = model.check(now, cost);
                if cost > 0 {
                    held.insert(key);
                }
                prop_assert_eq!(
                    decision.is_allowed(),
                    expected.is_some(),
                    "op {} key {}",
                    i,
                    key
                );
                prop_assert_eq!(decision.wait().as_nanos() as u64, expected.unwrap_or(0));
                prop_assert_eq!(
                    decision.remaining(),
                    probe::remaining(model, now),
                    "op {}",
                    i
                );
                let fresh = probe::first_fresh(model, now, horizon).unwrap();
                prop_assert_eq!(
                    decision.reset_after().as_nanos() as u64,
                    fresh - now,
                    "op {}",
                    i
                );
                if decision.is_denied() {
                    let at = probe::first_admission(model, now, cost, horizon).unwrap();
                    prop_assert_eq!(decision.retry_after(), Some(Duration::from_nanos(at - now)));
                }
            }
            Op::Hit { key, cost } => {
                let decision = limiter.hit(&key, cost);
                let model = models.entry(key).or_insert_with(|| M::new(quota));
                let within = model.hit(now, cost);
                if cost > 0 {
                    held.insert(key);
                }
                prop_assert_eq!(decision.is_allowed(), within.is_some(), "op {} hit", i);
                prop_assert_eq!(decision.remaining(), probe::remaining(model, now));
                if decision.is_denied() {
                    let horizon = harness::debt_horizon(quota, 12 * ops.len() as u64);
                    let at = probe::first_admission(model, now, 1, horizon).unwrap();
                    prop_assert_eq!(decision.retry_after(), Some(Duration::from_nanos(at - now)));
                }
            }
            Op::Peek { key } => {
                let fresh = M::new(quota);
                let model = models.get(&key).unwrap_or(&fresh);
                let decision = limiter.peek(&key);
                prop_assert_eq!(decision.is_allowed(), model.clone().check(now, 1).is_some());
                prop_assert_eq!(
                    decision.remaining(),
                    probe::remaining(model, now).saturating_sub(u32::from(decision.is_allowed()))
                );
            }
            Op::Sweep => {
                // Shards also sweep themselves before growing, so the count removed here is
                // not fixed; what is fixed is what remains: exactly the keys with state.
                let swept = limiter.sweep();
                let with_state = held.iter().filter(|k| !models[*k].is_fresh_at(now)).count();
                prop_assert_eq!(
                    limiter.len(),
                    with_state,
                    "op {}: sweep kept the wrong keys",
                    i
                );
                prop_assert!(swept <= held.len() - with_state);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(harness::cases(120))]

    #[test]
    fn keyed_gcra_equals_a_map_of_models((q, shards, ops) in case()
        .prop_filter("GCRA's integral mode", |(q, _, _)| {
            let (l, p) = (u64::from(q.limit()), q.period().as_nanos() as u64);
            l / gcd(p, l) <= 3
        })) {
        assert_keyed_equals_models::<Gcra, GcraModel>(q, shards, &ops)?;
    }

    #[test]
    fn keyed_leaky_bucket_equals_a_map_of_models((q, shards, ops) in case()
        .prop_filter("integral mode", |(q, _, _)| {
            let (l, p) = (u64::from(q.limit()), q.period().as_nanos() as u64);
            l / gcd(p, l) <= 3
        })) {
        assert_keyed_equals_models::<LeakyBucket, LeakyModel>(q, shards, &ops)?;
    }

    #[test]
    fn keyed_fixed_window_equals_a_map_of_models((q, shards, ops) in case()) {
        assert_keyed_equals_models::<FixedWindow, FixedWindowModel>(q, shards, &ops)?;
    }

    #[test]
    fn keyed_anchored_fixed_window_equals_a_map_of_models((q, shards, ops) in case()) {
        assert_keyed_equals_models::<FixedWindow, AnchoredWindowModel>(q.anchored(), shards, &ops)?;
    }

    #[test]
    fn keyed_sliding_window_equals_a_map_of_models((q, shards, ops) in case()) {
        assert_keyed_equals_models::<SlidingWindow, SlidingWindowModel>(q, shards, &ops)?;
    }

    #[test]
    fn keyed_sliding_log_equals_a_map_of_models((q, shards, ops) in case()) {
        assert_keyed_equals_models::<SlidingLog, SlidingLogModel>(q, shards, &ops)?;
    }

    /// The token bucket is not exact (see its header), so its keyed form is compared with a
    /// map of direct token-bucket limiters, themselves checked against the exact model.
    #[test]
    fn keyed_token_bucket_equals_a_map_of_direct_limiters((q, shards, ops) in case()
        .prop_filter("TokenBucket accepts", |(q, _, _)| {
            Limiter::<TokenBucket, ManualClock>::with_clock(*q, ManualClock::new()).is_ok()
        })) {
        let (limiter, clock) = keyed::<TokenBucket>(q, shards);
        let mut direct: HashMap<u64, Limiter<TokenBucket, ManualClock>> = HashMap::new();
        let mut now = 0;
        for op in &ops {
            match *op {
                Op::Check { gap, key, cost } => {
                    now += gap;
                    clock.set_nanos(now);
                    let cost = cost.min(limiter.max_cost());
                    let one = direct.entry(key).or_insert_with(|| {
                        Limiter::with_clock(q, clock.clone()).unwrap()
                    });
                    prop_assert_eq!(
                        limiter.check_n(&key, cost).unwrap(),
                        one.check_n(cost).unwrap()
                    );
                }
                Op::Peek { key } => {
                    if let Some(one) = direct.get(&key) {
                        prop_assert_eq!(limiter.peek(&key), one.peek());
                    }
                }
                Op::Hit { key, cost } => {
                    let one = direct.entry(key).or_insert_with(|| {
                        Limiter::with_clock(q, clock.clone()).unwrap()
                    });
                    prop_assert_eq!(limiter.hit(&key, cost), one.hit(cost));
                }
                Op::Sweep => {
                    limiter.sweep();
                }
            }
        }
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[test]
fn string_keys_are_checked_by_str_and_compared_exactly() {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_minute(2), clock).unwrap();
    for round in 0..2 {
        for n in 0..2_000 {
            let key = format!("user-{n}");
            let decision = limiter.check(key.as_str());
            assert!(decision.is_allowed(), "round {round} {key}");
            assert_eq!(decision.remaining(), 1 - round);
        }
    }
    assert!(limiter.check("user-7").is_denied());
    assert_eq!(limiter.len(), 2_000);
    let owned = String::from("user-7");
    assert!(limiter.check(&owned).is_denied());
}
