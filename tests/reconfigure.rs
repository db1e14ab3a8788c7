//! Runtime reconfiguration (`set_quota`): a trace, a change of quota, more trace, through each
//! limiter and its reference model, whose `reconfigure` states the carry-over rule the
//! textbook way (what was consumed stays consumed, rounded toward denial). Exact for the
//! window algorithms and the log; for the rate algorithms, whose state is kept in units the
//! model does not share, the limiter must never admit what the model denies and stay within
//! one request of it. Also: keyed tables convert every key as direct limiters do, and checks
//! racing a stream of changes admit exactly what the rule allows.

mod harness;
mod reference;

use harness::{quota, start, trace, trace_with_hits, Lockstep, Step};
use proptest::prelude::*;
use reference::{
    probe, AnchoredWindowModel, FixedWindowModel, GcraModel, LeakyModel, Model, SlidingLogModel,
    SlidingWindowModel, TokenBucketModel,
};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Two quotas, a start, a trace under the first, the gap before the change, a trace after.
type Case = (Quota, Quota, u64, Vec<Step>, u64, Vec<Step>);

fn case(with_hits: bool) -> impl Strategy<Value = Case> {
    (quota(), quota()).prop_flat_map(move |(q1, q2)| {
        let steps = |q: Quota| {
            let cap = q.limit().max(q.burst()).min(6);
            if with_hits {
                trace_with_hits(q, cap, 40).boxed()
            } else {
                trace(q, cap, 40).boxed()
            }
        };
        let p = q1.period().as_nanos() as u64;
        let gap = prop_oneof![Just(0u64), 0..=p];
        (Just(q1), Just(q2), start(), steps(q1), gap, steps(q2))
    })
}

fn window_capacity(trace: &mut [Step], quota: Quota) {
    for step in trace.iter_mut().filter(|s| !s.hit) {
        step.cost = step.cost.min(quota.limit());
    }
}

fn exact<A: Algorithm, M: Model>(
    (q1, q2, start, mut before, gap, mut after): Case,
) -> Result<(), TestCaseError> {
    window_capacity(&mut before, q1);
    window_capacity(&mut after, q2);
    let mut run = Lockstep::<A, M>::new(q1, start);
    for (i, step) in before.iter().enumerate() {
        run.step(i, step)?;
    }
    run.set_quota(q2, gap);
    for (i, step) in after.iter().enumerate() {
        run.step(before.len() + i, step)?;
    }
    Ok(())
}

/// The rate algorithms: never admits what the model denies, and within one request of it.
fn bounded<A: Algorithm, M: Model>(
    (q1, q2, start, before, gap, after): Case,
) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    clock.set_nanos(start);
    let limiter = Limiter::<A, ManualClock>::with_clock(q1, clock.clone()).unwrap();
    let mut model = M::new(q1);
    let mut now = start;
    let steps = before
        .iter()
        .map(|s| (q1, s))
        .chain(after.iter().map(|s| (q2, s)));
    for (i, (quota, step)) in steps.enumerate() {
        if i == before.len() {
            now += gap;
            clock.set_nanos(now);
            limiter.set_quota(q2).unwrap();
            model.reconfigure(q2, now);
        }
        now += step.gap;
        clock.set_nanos(now);
        let cost = if step.hit {
            step.cost
        } else {
            step.cost.min(limiter.max_cost())
        };
        let model_admits = model.clone().check(now, cost).is_some();
        let decision = if step.hit {
            model.hit(now, cost);
            limiter.hit(cost)
        } else {
            let decision = limiter.check_n(cost).unwrap();
            if decision.is_allowed() {
                model.check(now, cost);
            }
            decision
        };
        prop_assert!(
            !decision.is_allowed() || model_admits,
            "step {} under {}: admitted what the model denies",
            i,
            quota
        );
        let exact = probe::remaining(&model, now);
        prop_assert!(
            decision.remaining() <= exact,
            "step {}: remaining above the model's",
            i
        );
        prop_assert!(
            decision.remaining() + 1 >= exact,
            "step {}: {} vs {}",
            i,
            decision.remaining(),
            exact
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(harness::cases(300))]

    #[test]
    fn fixed_window_carries_its_count_over(case in case(true)) {
        exact::<FixedWindow, FixedWindowModel>(case)?;
    }

    #[test]
    fn anchored_fixed_window_carries_its_window_over(case in case(true)) {
        let (q1, q2, start, before, gap, after) = case;
        exact::<FixedWindow, AnchoredWindowModel>(
            (q1.anchored(), q2.anchored(), start, before, gap, after),
        )?;
    }

    #[test]
    fn sliding_window_carries_its_counts_over(case in case(true)) {
        exact::<SlidingWindow, SlidingWindowModel>(case)?;
    }

    /// The log carries the entries it holds; those are all that still count when the period
    /// does not grow (a longer period could revive entries the ring no longer holds).
    #[test]
    fn sliding_log_carries_its_live_entries_over(
        case in case(false).prop_filter("period not longer", |c| c.1.period() <= c.0.period())
    ) {
        exact::<SlidingLog, SlidingLogModel>(case)?;
    }

    #[test]
    fn gcra_keeps_the_requests_owed(case in case(true)) {
        bounded::<Gcra, GcraModel>(case)?;
    }

    #[test]
    fn leaky_bucket_keeps_its_queue(case in case(true)) {
        bounded::<LeakyBucket, LeakyModel>(case)?;
    }

    #[test]
    fn token_bucket_keeps_the_tokens_consumed(
        case in case(true).prop_filter("TokenBucket accepts both", |c| {
            let ok = |q: Quota| Limiter::<TokenBucket, ManualClock>::with_clock(q, ManualClock::new()).is_ok();
            ok(c.0) && ok(c.1)
        })
    ) {
        bounded::<TokenBucket, TokenBucketModel>(case)?;
    }
}

/// A keyed table converts every key exactly as a direct limiter converts its one state,
/// whatever shards and migrations the keys went through.
fn keyed_equals_direct<A: Algorithm>() {
    let clock = ManualClock::new();
    let q1 = Quota::per_second(5).with_burst(7);
    let q2 = Quota::new(3, Duration::from_millis(700))
        .unwrap()
        .with_burst(4);
    let keyed = KeyedLimiter::<u64, A, ManualClock>::builder(q1)
        .clock(clock.clone())
        .shards(4)
        .build()
        .unwrap();
    let direct: Vec<_> = (0..300u64)
        .map(|_| Limiter::<A, _>::with_clock(q1, clock.clone()).unwrap())
        .collect();
    for round in 0..3u64 {
        for key in 0..300u64 {
            let cost = ((key * 7 + round) % 5) as u32;
            let cost = cost.min(keyed.max_cost());
            assert_eq!(
                keyed.check_n(&key, cost).unwrap(),
                direct[key as usize].check_n(cost).unwrap(),
                "{} key {key} round {round}",
                A::default_name()
            );
        }
        clock.advance(Duration::from_millis(130));
        let quota = if round % 2 == 0 { q2 } else { q1 };
        keyed.set_quota(quota).unwrap();
        for limiter in &direct {
            limiter.set_quota(quota).unwrap();
        }
        assert_eq!(keyed.quota(), quota);
        for key in 0..300u64 {
            assert_eq!(
                keyed.peek(&key),
                direct[key as usize].peek(),
                "{} key {key} after change {round}",
                A::default_name()
            );
        }
    }
}

trait Named {
    fn default_name() -> &'static str;
}

impl<A: Algorithm> Named for A {
    fn default_name() -> &'static str {
        std::any::type_name::<A>()
    }
}

#[test]
fn keyed_tables_convert_every_key_as_direct_limiters_do() {
    keyed_equals_direct::<Gcra>();
    keyed_equals_direct::<TokenBucket>();
    keyed_equals_direct::<LeakyBucket>();
    keyed_equals_direct::<FixedWindow>();
    keyed_equals_direct::<SlidingWindow>();
    keyed_equals_direct::<SlidingLog>();
}

/// Quotas that shrink and grow again, ending with the largest capacity.
const UP_AND_DOWN: [(u32, u32); 5] = [(40, 40), (10, 10), (25, 30), (5, 5), (50, 60)];

/// Quotas that only grow (window counts are held up to the limit: see the next test).
const ONLY_UP: [(u32, u32); 4] = [(10, 10), (25, 25), (40, 40), (60, 60)];

/// Frozen time, four threads checking one key (direct and keyed) while another changes the
/// quota through `series` (per second, with bursts), which ends with the largest capacity:
/// what was consumed stays consumed, so exactly that capacity is admitted in all, whatever
/// the interleaving.
fn racing_changes<A: Algorithm>(series: &[(u32, u32)]) {
    let quotas: Vec<Quota> = series
        .iter()
        .map(|&(limit, burst)| Quota::per_second(limit).with_burst(burst))
        .collect();

    for keyed in [false, true] {
        let clock = ManualClock::starting_at(Duration::from_secs(1_000));
        let direct = Limiter::<A, _>::with_clock(quotas[0], clock.clone()).unwrap();
        let table = KeyedLimiter::<u64, A, _>::with_clock(quotas[0], clock.clone()).unwrap();
        let admitted = AtomicU64::new(0);
        let done = Arc::new(AtomicU64::new(0));
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    // Keep checking until the changes are over and the state is exhausted.
                    let mut denied_after_done = 0;
                    while denied_after_done < 50 {
                        let allowed = if keyed {
                            table.check(&7).is_allowed()
                        } else {
                            direct.check().is_allowed()
                        };
                        if allowed {
                            admitted.fetch_add(1, Ordering::Relaxed);
                        } else if done.load(Ordering::Acquire) == 1 {
                            denied_after_done += 1;
                        }
                    }
                });
            }
            scope.spawn(|| {
                for &quota in &quotas[1..] {
                    std::thread::sleep(Duration::from_micros(200));
                    if keyed {
                        table.set_quota(quota).unwrap();
                    } else {
                        direct.set_quota(quota).unwrap();
                    }
                }
                done.store(1, Ordering::Release);
            });
        });
        // The last capacity (the burst, or the limit for windows and the log) is the largest.
        let last = if keyed {
            table.max_cost()
        } else {
            direct.max_cost()
        };
        assert_eq!(
            admitted.load(Ordering::Relaxed),
            u64::from(last),
            "{} keyed={keyed}",
            A::default_name()
        );
    }
}

#[test]
fn checks_racing_changes_admit_exactly_what_the_rule_allows() {
    racing_changes::<Gcra>(&UP_AND_DOWN);
    racing_changes::<TokenBucket>(&UP_AND_DOWN);
    racing_changes::<LeakyBucket>(&UP_AND_DOWN);
    racing_changes::<SlidingLog>(&UP_AND_DOWN);
    racing_changes::<FixedWindow>(&ONLY_UP);
    racing_changes::<SlidingWindow>(&ONLY_UP);
}

/// The documented exception: a window's count is held up to its limit, so a count above a
/// smaller limit, grown again within the same window, comes back as that smaller limit.
#[test]
fn a_window_shrunk_below_its_count_then_grown_forgets_the_excess() {
    let clock = ManualClock::new();
    let window = Limiter::<FixedWindow, _>::with_clock(Quota::per_minute(40), clock).unwrap();
    assert!(window.check_n(30).unwrap().is_allowed());
    window.set_quota(Quota::per_minute(10)).unwrap();
    assert_eq!(window.peek().remaining(), 0);
    window.set_quota(Quota::per_minute(40)).unwrap();
    assert_eq!(
        window.check_n(0).unwrap().remaining(),
        30,
        "held as 10 of 40"
    );
}

#[test]
fn a_used_burst_stays_used_across_an_upgrade_and_a_downgrade() {
    let clock = ManualClock::new();
    let limiter = Limiter::<Gcra, _>::with_clock(Quota::per_minute(10), clock.clone()).unwrap();
    assert!(limiter.check_n(10).unwrap().is_allowed());
    limiter.set_quota(Quota::per_minute(100)).unwrap();
    assert_eq!(limiter.peek().remaining(), 89, "10 of the new 100 are used");
    limiter.set_quota(Quota::per_minute(5)).unwrap();
    let denied = limiter.check();
    assert!(denied.is_denied());
    // 10 requests owed at 12 s each under 5/minute: the next fits when 4 are repaid.
    assert_eq!(denied.retry_after(), Some(Duration::from_secs(72)));
    // The log keeps its entries when its limit shrinks, so growing it back gains nothing.
    let log = Limiter::<SlidingLog, _>::with_clock(Quota::per_minute(10), clock.clone()).unwrap();
    assert!(log.check_n(10).unwrap().is_allowed());
    log.set_quota(Quota::per_minute(3)).unwrap();
    log.set_quota(Quota::per_minute(12)).unwrap();
    assert_eq!(log.peek_n(2).unwrap().remaining(), 0);
    assert!(log.check_n(3).unwrap().is_denied());
}

#[test]
fn a_quota_the_algorithm_cannot_run_changes_nothing() {
    let limiter =
        KeyedLimiter::<u64, TokenBucket, _>::with_clock(Quota::per_second(10), ManualClock::new())
            .unwrap();
    limiter.check_n(&1, 4).unwrap();
    let error = limiter
        .set_quota(Quota::per_second(1_000_000_000))
        .unwrap_err();
    assert!(error.to_string().contains("TokenBucket"), "{error}");
    assert_eq!(limiter.quota(), Quota::per_second(10));
    assert_eq!(limiter.peek(&1).remaining(), 5);
}

/// Through enum dispatch, a keyed table and a direct limiter carry a state over alike.
#[test]
fn enum_dispatched_limiters_change_quota_keyed_and_direct_alike() {
    use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
    use sluicegate::policy::AlgorithmKind;
    let (q1, q2) = (Quota::per_second(8), Quota::per_second(3).with_burst(5));
    for kind in AlgorithmKind::ALL {
        let clock = ManualClock::new();
        let keyed = AnyKeyedLimiter::<u64, _>::with_clock(q1, kind, clock.clone()).unwrap();
        let direct = AnyLimiter::with_clock(q1, kind, clock.clone()).unwrap();
        for _ in 0..6 {
            assert_eq!(keyed.check(&1), direct.check());
        }
        clock.advance(Duration::from_millis(100));
        keyed.set_quota(q2).unwrap();
        direct.set_quota(q2).unwrap();
        assert_eq!((keyed.quota(), direct.quota()), (q2, q2));
        for _ in 0..4 {
            let (k, d) = (keyed.check(&1), direct.check());
            assert_eq!(k, d, "{kind}");
        }
    }
}
