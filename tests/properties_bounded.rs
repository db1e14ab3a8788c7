//! The two inexact cases against exact rational models kept in step with the limiter's own
//! admissions: the token bucket (fixed-point tokens) and GCRA in fractional mode (emission
//! intervals that are not a whole fraction of a nanosecond). Neither may ever admit what the
//! exact model would deny; each may deny only within its documented lag. Hits (recorded
//! whatever the answer) are mixed in, and recorded in the model too.

mod harness;
mod reference;

use harness::{debt_horizon, limiter, quota, start, trace_with_hits, Step};
use proptest::prelude::*;
use reference::{probe, GcraModel, Model, TokenBucketModel};
use sluicegate::algorithm::{Gcra, TokenBucket};
use sluicegate::clock::ManualClock;
use sluicegate::{Limiter, Quota};
use std::time::Duration;

fn accepted_by<A: sluicegate::Algorithm>(quota: &Quota) -> bool {
    Limiter::<A, ManualClock>::with_clock(*quota, ManualClock::new()).is_ok()
}

fn case(quotas: impl Strategy<Value = Quota>) -> impl Strategy<Value = (Quota, u64, Vec<Step>)> {
    quotas.prop_flat_map(|q| (Just(q), start(), trace_with_hits(q, q.burst().min(6), 80)))
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}

proptest! {
    #![proptest_config(harness::cases(300))]

    /// Documented: the bucket lags an exact one by fewer than `2 / 2^k <= 1` tokens, never
    /// leads it.
    #[test]
    fn token_bucket_never_leads_and_lags_by_under_one_token(
        (q, start, trace) in case(quota().prop_filter("TokenBucket accepts", accepted_by::<TokenBucket>))
    ) {
        let (limiter, clock) = limiter::<TokenBucket>(q, start);
        let mut model = TokenBucketModel::new(q);
        let emission = q.period().as_nanos() as u64 / u64::from(q.limit()) + 1;
        let (mut now, mut hit_cost) = (start, 0);
        for (i, step) in trace.iter().enumerate() {
            now += step.gap;
            clock.set_nanos(now);
            let cost = if step.hit { step.cost } else { step.cost.min(q.burst()) };
            let (tokens, per_token) = model.tokens_at(now);
            let model_admits = cost == 0 || tokens >= i128::from(cost) * per_token;
            let decision = if step.hit {
                hit_cost += u64::from(cost);
                model.hit(now, cost);
                limiter.hit(cost)
            } else {
                let decision = limiter.check_n(cost).unwrap();
                if decision.is_allowed() {
                    model.check(now, cost);
                }
                decision
            };
            if decision.is_allowed() {
                prop_assert!(model_admits, "step {}: admitted what an exact bucket denies", i);
            } else if model_admits {
                prop_assert!(tokens < i128::from(cost + 1) * per_token,
                    "step {}: denied with a whole token to spare", i);
            }
            let exact_remaining = probe::remaining(&model, now);
            prop_assert!(decision.remaining() <= exact_remaining);
            prop_assert!(decision.remaining() + 1 >= exact_remaining, "step {}", i);
            if let Some(retry) = decision.retry_after() {
                let retry_cost = if step.hit { 1 } else { cost };
                let horizon = debt_horizon(q, hit_cost);
                let exact = probe::first_admission(&model, now, retry_cost, horizon).unwrap() - now;
                prop_assert!(nanos(retry) >= exact, "step {}: retry earlier than exact", i);
                prop_assert!(nanos(retry) <= exact + emission, "step {}: retry {:?} vs {}", i, retry, exact);
            }
        }
    }

    /// Documented: fractional mode never admits what exact GCRA denies, and denies only a
    /// request that exact GCRA would still deny two nanoseconds earlier.
    #[test]
    fn fractional_gcra_never_leads_and_lags_by_under_two_nanoseconds(
        (q, start, trace) in case(quota().prop_filter("fractional mode", |q| {
            let (l, p) = (u64::from(q.limit()), q.period().as_nanos() as u64);
            l / gcd(p, l) > 3
        }))
    ) {
        let (limiter, clock) = limiter::<Gcra>(q, start);
        let mut model = GcraModel::new(q);
        let (mut now, mut hit_cost) = (start, 0);
        for (i, step) in trace.iter().enumerate() {
            now += step.gap;
            clock.set_nanos(now);
            let cost = if step.hit { step.cost } else { step.cost.min(q.burst()) };
            let model_admits = model.clone().check(now, cost).is_some();
            let decision = if step.hit {
                hit_cost += u64::from(cost);
                model.hit(now, cost);
                limiter.hit(cost)
            } else {
                let decision = limiter.check_n(cost).unwrap();
                if decision.is_allowed() {
                    model.check(now, cost);
                }
                decision
            };
            if decision.is_allowed() {
                prop_assert!(model_admits, "step {}: admitted what exact GCRA denies", i);
            } else if model_admits && !step.hit {
                prop_assert!(model.clone().check(now.saturating_sub(2), cost).is_none(),
                    "step {}: denied a request exact GCRA admitted 2 ns earlier", i);
            }
            let exact_remaining = probe::remaining(&model, now);
            prop_assert!(decision.remaining() <= exact_remaining);
            prop_assert!(decision.remaining() + 1 >= exact_remaining, "step {}", i);
            if let Some(retry) = decision.retry_after() {
                let retry_cost = if step.hit { 1 } else { cost };
                let horizon = debt_horizon(q, hit_cost);
                let exact = probe::first_admission(&model, now, retry_cost, horizon).unwrap() - now;
                prop_assert!(nanos(retry) >= exact && nanos(retry) <= exact + 2, "step {}: {:?} vs {}", i, retry, exact);
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
fn token_bucket_accepts_the_documented_ranges() {
    let accepts = |q: Quota| accepted_by::<TokenBucket>(&q);
    assert!(accepts(Quota::per_second(11_000)));
    assert!(accepts(Quota::per_minute(86_000)));
    assert!(accepts(Quota::per_hour(670_000)));
    assert!(accepts(Quota::per_day(1)));
    assert!(!accepts(Quota::per_second(1_000_000_000)));
    assert!(!accepts(Quota::per_hour(u32::MAX)));
}
