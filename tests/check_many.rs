//! `check_many` and `peek_many` decide a batch exactly as `check` and `peek` one by one, in
//! order (duplicates included), across table growth, for every algorithm.

mod harness;
mod reference;

use proptest::prelude::*;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Quota};
use std::time::Duration;

/// Batches of keys from a small domain (so batches repeat keys), with a gap before each.
fn batches() -> impl Strategy<Value = Vec<(u64, Vec<u64>)>> {
    let batch = (
        0u64..=300_000_000,
        proptest::collection::vec(0u64..40, 0..40),
    );
    proptest::collection::vec(batch, 1..12)
}

/// Seeded alike, so that both tables lay keys out (and sweep them) identically.
fn limiter<A: Algorithm>(
    clock: &ManualClock,
) -> KeyedLimiter<u64, A, ManualClock, ahash::RandomState> {
    KeyedLimiter::<u64, A, ManualClock>::builder(Quota::per_second(3).with_burst(4))
        .clock(clock.clone())
        .hasher(ahash::RandomState::with_seeds(1, 2, 3, 4))
        .shards(2)
        .initial_capacity(0)
        .build()
        .unwrap()
}

fn batch_equals_one_by_one<A: Algorithm>(batches: &[(u64, Vec<u64>)]) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let (batched, single) = (limiter::<A>(&clock), limiter::<A>(&clock));
    for (gap, keys) in batches {
        clock.advance(Duration::from_nanos(*gap));
        let peeked = batched.peek_many(keys);
        let expected: Vec<_> = keys.iter().map(|k| single.peek(k)).collect();
        prop_assert_eq!(peeked.to_vec(), expected);
        let decided = batched.check_many(keys);
        let expected: Vec<_> = keys.iter().map(|k| single.check(k)).collect();
        prop_assert_eq!(decided.to_vec(), expected);
    }
    prop_assert_eq!(batched.len(), single.len());
    prop_assert_eq!(
        (batched.allowed(), batched.denied()),
        (single.allowed(), single.denied())
    );
    Ok(())
}

proptest! {
    #![proptest_config(harness::cases(100))]

    #[test]
    fn batches_decide_as_single_checks(batches in batches()) {
        batch_equals_one_by_one::<Gcra>(&batches)?;
        batch_equals_one_by_one::<TokenBucket>(&batches)?;
        batch_equals_one_by_one::<LeakyBucket>(&batches)?;
        batch_equals_one_by_one::<FixedWindow>(&batches)?;
        batch_equals_one_by_one::<SlidingWindow>(&batches)?;
        batch_equals_one_by_one::<SlidingLog>(&batches)?;
    }
}

#[test]
fn string_keys_batch_by_str() {
    let limiter =
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_second(1), ManualClock::new())
            .unwrap();
    let decisions = limiter.check_many::<str, _>(&["a", "b", "a", "c"]);
    let allowed: Vec<bool> = decisions.iter().map(|d| d.is_allowed()).collect();
    assert_eq!(allowed, [true, true, false, true]);
    assert!(limiter.check_many::<str, _>(&[] as &[&str]).is_empty());
}
