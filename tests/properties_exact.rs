//! Random traces through each exact algorithm and its textbook model: every decision and every
//! number on it must be identical. Traces mix hits (recorded whatever the answer) into the
//! checks, so debt and its repayment are compared too.

mod harness;
mod reference;

use harness::{assert_identical, quota, start, trace_with_hits};
use proptest::prelude::*;
use reference::{
    AnchoredWindowModel, FixedWindowModel, GcraModel, LeakyModel, SlidingLogModel,
    SlidingWindowModel, TokenBucketModel,
};
use sluicegate::algorithm::{FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow};
use sluicegate::Quota;

/// GCRA is exact when a unit can be a whole fraction of a nanosecond: `L / gcd(P, L) <= 3`.
fn integral(quota: &Quota) -> bool {
    let (l, p) = (u64::from(quota.limit()), quota.period().as_nanos() as u64);
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    l / gcd(p, l) <= 3
}

fn integral_quota() -> impl Strategy<Value = Quota> {
    quota().prop_filter("GCRA's integral mode", integral)
}

fn case<S: Strategy<Value = Quota>>(
    quotas: S,
) -> impl Strategy<Value = (Quota, u64, Vec<harness::Step>)> {
    quotas.prop_flat_map(|q| {
        let cap = q.limit().max(q.burst()).min(6);
        (Just(q), start(), trace_with_hits(q, cap, 80))
    })
}

/// Keeps checks' costs within what the algorithm accepts (hits accept any cost).
fn clamp_costs(trace: &mut [harness::Step], capacity: u32) {
    for step in trace.iter_mut().filter(|step| !step.hit) {
        step.cost = step.cost.min(capacity);
    }
}

proptest! {
    #![proptest_config(harness::cases(300))]

    #[test]
    fn gcra_equals_textbook_gcra((q, start, mut trace) in case(integral_quota())) {
        clamp_costs(&mut trace, q.burst());
        assert_identical::<Gcra, GcraModel>(q, start, &trace)?;
    }

    #[test]
    fn gcra_equals_a_continuous_token_bucket((q, start, mut trace) in case(integral_quota())) {
        clamp_costs(&mut trace, q.burst());
        assert_identical::<Gcra, TokenBucketModel>(q, start, &trace)?;
    }

    #[test]
    fn leaky_bucket_equals_a_queue_drained_at_the_rate((q, start, mut trace) in case(integral_quota())) {
        clamp_costs(&mut trace, q.burst());
        assert_identical::<LeakyBucket, LeakyModel>(q, start, &trace)?;
    }

    #[test]
    fn fixed_window_equals_counts_per_window((q, start, mut trace) in case(quota())) {
        clamp_costs(&mut trace, q.limit());
        assert_identical::<FixedWindow, FixedWindowModel>(q, start, &trace)?;
    }

    #[test]
    fn anchored_fixed_window_equals_a_window_from_each_first_request(
        (q, start, mut trace) in case(quota().prop_map(Quota::anchored))
    ) {
        clamp_costs(&mut trace, q.limit());
        assert_identical::<FixedWindow, AnchoredWindowModel>(q, start, &trace)?;
    }

    #[test]
    fn sliding_window_equals_the_weighted_estimate((q, start, mut trace) in case(quota())) {
        clamp_costs(&mut trace, q.limit());
        assert_identical::<SlidingWindow, SlidingWindowModel>(q, start, &trace)?;
    }

    #[test]
    fn sliding_log_equals_a_vec_of_timestamps((q, start, mut trace) in case(quota())) {
        clamp_costs(&mut trace, q.limit());
        assert_identical::<SlidingLog, SlidingLogModel>(q, start, &trace)?;
    }
}
