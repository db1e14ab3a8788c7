//! Random traces and the step-by-step comparison of a limiter with its reference model.
#![allow(dead_code)]

use crate::reference::{probe, Model};
use proptest::prelude::*;
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{Limiter, Quota};
use std::time::Duration;

/// One request: how long after the previous one it comes, its cost, and whether it is a hit
/// (recorded whatever the answer) rather than a check.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub gap: u64,
    pub cost: u32,
    pub hit: bool,
}

/// A proptest config of `cases` cases, or of `PROPTEST_CASES` when that is set (CI's
/// debug-profile run asks for fewer: `ProptestConfig::with_cases` alone would ignore it).
pub fn cases(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(cases);
    ProptestConfig::with_cases(cases)
}

/// A small random quota: limits and bursts up to 15, periods from 1 µs to 10 s, biased toward
/// the awkward ones (primes, emission intervals that are not whole nanoseconds).
pub fn quota() -> impl Strategy<Value = Quota> {
    let period = prop_oneof![
        Just(1_000u64),
        Just(1_000_000),
        Just(7_000_003),
        Just(1_000_000_000),
        Just(60_000_000_000),
        1_000u64..=10_000_000_000,
    ];
    (1u32..=12, period, 1u32..=15).prop_map(|(limit, period, burst)| {
        Quota::new(limit, Duration::from_nanos(period))
            .unwrap()
            .with_burst(burst)
    })
}

/// Gaps that land on and around the interesting instants: the same instant, whole emission
/// intervals (rounded both ways, and one nanosecond either side), window edges, anything in
/// two periods, and long idles.
fn gap(quota: Quota) -> impl Strategy<Value = u64> {
    let p = quota.period().as_nanos() as u64;
    let l = u64::from(quota.limit());
    let on_interval = (1u64..=4, 0u64..=1, -1i64..=1).prop_map(move |(k, round_up, nudge)| {
        let t = (k * p + round_up * (l - 1)) / l;
        t.saturating_add_signed(nudge)
    });
    prop_oneof![
        3 => Just(0u64),
        3 => on_interval,
        3 => 0..=2 * p,
        1 => prop_oneof![Just(p - 1), Just(p), Just(p + 1)],
        1 => 0..=1_000 * p,
    ]
}

/// A trace of up to `len` checks with costs up to `max_cost` (mostly 1, sometimes 0).
pub fn trace(quota: Quota, max_cost: u32, len: usize) -> impl Strategy<Value = Vec<Step>> {
    let cost = prop_oneof![6 => Just(1u32), 1 => Just(0u32), 3 => 0..=max_cost];
    proptest::collection::vec(
        (gap(quota), cost).prop_map(|(gap, cost)| Step {
            gap,
            cost,
            hit: false,
        }),
        1..len,
    )
}

/// A trace of checks (costs up to `max_cost`) with hits mixed in (one in six, costs up to
/// three times `max_cost`, so that some go well beyond the limit).
pub fn trace_with_hits(
    quota: Quota,
    max_cost: u32,
    len: usize,
) -> impl Strategy<Value = Vec<Step>> {
    let check = prop_oneof![6 => Just(1u32), 1 => Just(0u32), 3 => 0..=max_cost]
        .prop_map(|cost| (cost, false));
    let hit = (0..=3 * max_cost).prop_map(|cost| (cost, true));
    let kind = prop_oneof![5 => check, 1 => hit];
    proptest::collection::vec(
        (gap(quota), kind).prop_map(|(gap, (cost, hit))| Step { gap, cost, hit }),
        1..len,
    )
}

/// A start time: window phases and idle histories start anywhere.
pub fn start() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 0u64..=1_000_000_000_000_000]
}

/// A limiter on a manual clock set to `start`.
pub fn limiter<A: Algorithm>(quota: Quota, start: u64) -> (Limiter<A, ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    clock.set_nanos(start);
    let limiter = Limiter::<A, ManualClock>::with_clock(quota, clock.clone())
        .expect("the quota strategy only makes quotas every algorithm accepts");
    (limiter, clock)
}

/// How far ahead a probe may need to look: a full refill plus two windows (times the hits'
/// debt, where hits may owe more than a burst: see [`debt_horizon`]).
pub fn horizon(quota: Quota) -> u64 {
    let p = quota.period().as_nanos() as u64;
    let refill = p * u64::from(quota.burst()) / u64::from(quota.limit());
    2 * refill + 3 * p + 4
}

/// [`horizon`] widened for a trace whose hits so far total `hit_cost`: each unit of debt
/// takes at most one emission interval to repay.
pub fn debt_horizon(quota: Quota, hit_cost: u64) -> u64 {
    let p = quota.period().as_nanos() as u64;
    horizon(quota) + hit_cost * p.div_ceil(u64::from(quota.limit()))
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}

/// Runs `trace` through the limiter and the model and requires identical decisions and
/// identical numbers: `remaining`, `retry_after`, `reset_after` and `wait` must equal what
/// probing the model finds; `peek` must answer exactly as the check that follows it. A hit
/// must be within the limit exactly when the model says so, and its numbers are those of the
/// model after the hit (its `retry_after` is the next single request's).
pub fn assert_identical<A: Algorithm, M: Model>(
    quota: Quota,
    start: u64,
    trace: &[Step],
) -> Result<(), TestCaseError> {
    let mut run = Lockstep::<A, M>::new(quota, start);
    for (i, step) in trace.iter().enumerate() {
        run.step(i, step)?;
    }
    Ok(())
}

/// A limiter and its model driven in lockstep by [`Lockstep::step`], which compares every
/// decision; [`Lockstep::set_quota`] changes both quotas midway.
pub struct Lockstep<A: Algorithm, M: Model> {
    pub limiter: Limiter<A, ManualClock>,
    pub clock: ManualClock,
    pub model: M,
    pub now: u64,
    quota: Quota,
    hit_cost: u64,
}

impl<A: Algorithm, M: Model> Lockstep<A, M> {
    pub fn new(quota: Quota, start: u64) -> Self {
        let (limiter, clock) = limiter::<A>(quota, start);
        Lockstep {
            limiter,
            clock,
            model: M::new(quota),
            now: start,
            quota,
            hit_cost: 0,
        }
    }

    /// Moves time on by `step.gap`, then checks or hits both and compares the decisions.
    pub fn step(&mut self, i: usize, step: &Step) -> Result<(), TestCaseError> {
        self.now += step.gap;
        let now = self.now;
        self.clock.set_nanos(now);
        let (decision, expected, retry_cost) = if step.hit {
            self.hit_cost += u64::from(step.cost);
            (
                self.limiter.hit(step.cost),
                self.model.hit(now, step.cost),
                1,
            )
        } else {
            let peeked = self.limiter.peek_n(step.cost).unwrap();
            let decision = self.limiter.check_n(step.cost).unwrap();
            prop_assert_eq!(peeked, decision, "peek differs at step {}", i);
            (decision, self.model.check(now, step.cost), step.cost)
        };
        let model = &self.model;
        let horizon = debt_horizon(self.quota, self.hit_cost);
        prop_assert_eq!(
            decision.is_allowed(),
            expected.is_some(),
            "step {} at {} cost {} hit {}: {:?} vs model {:?}",
            i,
            now,
            step.cost,
            step.hit,
            decision,
            model
        );
        prop_assert_eq!(
            nanos(decision.wait()),
            expected.unwrap_or(0),
            "wait, step {}",
            i
        );
        prop_assert_eq!(
            decision.remaining(),
            probe::remaining(model, now),
            "remaining, step {}",
            i
        );
        let fresh = probe::first_fresh(model, now, horizon).expect("refills within the horizon");
        prop_assert_eq!(
            nanos(decision.reset_after()),
            fresh - now,
            "reset_after, step {}",
            i
        );
        if decision.is_denied() {
            let at = probe::first_admission(model, now, retry_cost, horizon)
                .expect("admissible within the horizon");
            prop_assert_eq!(
                decision.retry_after(),
                Some(Duration::from_nanos(at - now)),
                "retry_after, step {}",
                i
            );
        }
        Ok(())
    }

    /// Changes both to `quota`, `gap` ns after the last step.
    pub fn set_quota(&mut self, quota: Quota, gap: u64) {
        self.now += gap;
        self.clock.set_nanos(self.now);
        self.limiter
            .set_quota(quota)
            .expect("the quota strategy only makes quotas every algorithm accepts");
        self.model.reconfigure(quota, self.now);
        // What was consumed carries over in requests: at most a burst, plus the hits' debt.
        self.hit_cost += u64::from(self.quota.burst().max(self.quota.limit()));
        self.quota = quota;
    }
}

/// The first whole microsecond in `[now, now + horizon]` (µs) at which `holds` (monotone in
/// time) is true: where a model on the Redis scripts' microsecond grid admits or is fresh.
pub fn first_us(now: u64, horizon: u64, holds: impl Fn(u64) -> bool) -> Option<u64> {
    probe::first_true(now, now + horizon, holds)
}
