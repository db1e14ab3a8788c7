#![cfg(loom)]
//! The CAS cell (`cell::apply`) under every packed algorithm: racing `check`, `check_n` and
//! `peek` on one direct limiter are linearizable against the textbook reference model.

mod linearizable;
#[path = "../../tests/reference/mod.rs"]
mod reference;

use linearizable::{assert_linearizable, History, Op, Outcomes, Single};
use loom::model;
use loom::sync::Arc;
use loom::thread;
use reference::{
    FixedWindowModel, GcraModel, LeakyModel, Model, SlidingWindowModel, TokenBucketModel,
};
use sluicegate::algorithm::{FixedWindow, Gcra, LeakyBucket, SlidingWindow, TokenBucket};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{Limiter, Quota};
use std::time::Duration;

/// 2.5 s: inside a window (not at its edge), after the epoch, for every algorithm.
const NOW: u64 = 2_500_000_000;

/// Runs one loom thread per entry of `threads` on a fresh limiter of `quota` at [`NOW`], each
/// making its operations in order, then requires the decisions to be linearizable against
/// `M`, including what one more `check` and a final `peek` of the main thread find. Also
/// requires the race to have decided differently in different interleavings.
fn racing<A: Algorithm, M: Model + 'static>(quota: Quota, threads: &'static [&'static [Op]]) {
    let outcomes = Outcomes::new();
    let seen = outcomes.clone();
    model(move || {
        let clock = ManualClock::new();
        clock.set_nanos(NOW);
        let limiter = Arc::new(Limiter::<A, ManualClock>::with_clock(quota, clock).unwrap());
        let handles: Vec<_> = threads
            .iter()
            .map(|&ops| {
                let limiter = limiter.clone();
                thread::spawn(move || -> History<Op> {
                    ops.iter().map(|&op| (op, op.run(&limiter))).collect()
                })
            })
            .collect();
        let histories: Vec<History<Op>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        // The state left behind must be the sequential one too.
        let then: Vec<_> = [Op::Peek(1), Op::Check(1), Op::Peek(1)]
            .into_iter()
            .map(|op| (op, op.run(&limiter)))
            .collect();
        assert_linearizable(&Single::new(M::new(quota), NOW), &histories, &then);
        seen.record(histories);
    });
    outcomes.assert_at_least(2);
}

/// Burst (or limit) 2: `check` and `check_n(2)` cannot both be admitted, and which one wins
/// changes every number.
const CHECK_VS_CHECK_N: &[&[Op]] = &[&[Op::Check(1), Op::Peek(1)], &[Op::Check(2)]];
/// Two plain checks racing with a peek of cost 2 (which some orders admit and others deny).
const CHECKS_VS_PEEK: &[&[Op]] = &[&[Op::Check(1)], &[Op::Check(1)], &[Op::Peek(2)]];
/// Two threads each checking and then peeking.
const CHECK_PEEK_PAIRS: &[&[Op]] = &[&[Op::Check(1), Op::Peek(1)], &[Op::Peek(2), Op::Check(1)]];

/// Three threads of two operations each, on a capacity of 3.
const THREE_BY_TWO: &[&[Op]] = &[
    &[Op::Check(1), Op::Peek(1)],
    &[Op::Check(2), Op::Check(1)],
    &[Op::Peek(2), Op::Check(1)],
];

fn two_per_second() -> Quota {
    Quota::per_second(2)
}

/// A rate of 1 per second with room for a burst of 2 (GCRA's integral mode: exact).
fn burst_two() -> Quota {
    Quota::per_second(1).with_burst(2)
}

fn three_per_second() -> Quota {
    Quota::per_second(3)
}

/// A rate of 1 per second with room for a burst of 3.
fn burst_three() -> Quota {
    Quota::per_second(1).with_burst(3)
}

#[test]
fn gcra_check_vs_check_n() {
    racing::<Gcra, GcraModel>(burst_two(), CHECK_VS_CHECK_N);
}

#[test]
fn gcra_checks_vs_peek() {
    racing::<Gcra, GcraModel>(burst_two(), CHECKS_VS_PEEK);
}

#[test]
fn gcra_check_peek_pairs() {
    racing::<Gcra, GcraModel>(burst_two(), CHECK_PEEK_PAIRS);
}

#[test]
fn gcra_three_threads_two_ops_each() {
    racing::<Gcra, GcraModel>(burst_three(), THREE_BY_TWO);
}

#[test]
fn token_bucket_check_vs_check_n() {
    racing::<TokenBucket, TokenBucketModel>(burst_two(), CHECK_VS_CHECK_N);
}

#[test]
fn token_bucket_checks_vs_peek() {
    racing::<TokenBucket, TokenBucketModel>(burst_two(), CHECKS_VS_PEEK);
}

#[test]
fn token_bucket_check_peek_pairs() {
    racing::<TokenBucket, TokenBucketModel>(burst_two(), CHECK_PEEK_PAIRS);
}

#[test]
fn token_bucket_three_threads_two_ops_each() {
    racing::<TokenBucket, TokenBucketModel>(burst_three(), THREE_BY_TWO);
}

#[test]
fn leaky_bucket_check_vs_check_n() {
    // The leaky bucket's waits depend on the order: the second admitted request waits T.
    racing::<LeakyBucket, LeakyModel>(burst_two(), CHECK_VS_CHECK_N);
}

#[test]
fn leaky_bucket_checks_vs_peek() {
    racing::<LeakyBucket, LeakyModel>(burst_two(), CHECKS_VS_PEEK);
}

#[test]
fn leaky_bucket_check_peek_pairs() {
    racing::<LeakyBucket, LeakyModel>(burst_two(), CHECK_PEEK_PAIRS);
}

#[test]
fn leaky_bucket_three_threads_two_ops_each() {
    racing::<LeakyBucket, LeakyModel>(burst_three(), THREE_BY_TWO);
}

#[test]
fn fixed_window_check_vs_check_n() {
    racing::<FixedWindow, FixedWindowModel>(two_per_second(), CHECK_VS_CHECK_N);
}

#[test]
fn fixed_window_checks_vs_peek() {
    racing::<FixedWindow, FixedWindowModel>(two_per_second(), CHECKS_VS_PEEK);
}

#[test]
fn fixed_window_check_peek_pairs() {
    racing::<FixedWindow, FixedWindowModel>(two_per_second(), CHECK_PEEK_PAIRS);
}

#[test]
fn fixed_window_three_threads_two_ops_each() {
    racing::<FixedWindow, FixedWindowModel>(three_per_second(), THREE_BY_TWO);
}

#[test]
fn sliding_window_check_vs_check_n() {
    racing::<SlidingWindow, SlidingWindowModel>(two_per_second(), CHECK_VS_CHECK_N);
}

#[test]
fn sliding_window_checks_vs_peek() {
    racing::<SlidingWindow, SlidingWindowModel>(two_per_second(), CHECKS_VS_PEEK);
}

#[test]
fn sliding_window_check_peek_pairs() {
    racing::<SlidingWindow, SlidingWindowModel>(two_per_second(), CHECK_PEEK_PAIRS);
}

#[test]
fn sliding_window_three_threads_two_ops_each() {
    racing::<SlidingWindow, SlidingWindowModel>(three_per_second(), THREE_BY_TWO);
}

/// The sliding window with a previous window to weigh: 3 per second, 2 admitted in the
/// window before, half of it still counting, so 2 more fit where a plain count says 3.
#[test]
fn sliding_window_with_history() {
    let quota = Quota::per_second(3);
    model(move || {
        let clock = ManualClock::new();
        clock.set_nanos(1_000_000_000);
        let limiter = Arc::new(
            Limiter::<SlidingWindow, ManualClock>::with_clock(quota, clock.clone()).unwrap(),
        );
        let mut reference = SlidingWindowModel::new(quota);
        for _ in 0..2 {
            assert!(limiter.check().is_allowed());
            reference.check(1_000_000_000, 1).unwrap();
        }
        clock.advance(Duration::from_millis(1_500));
        let now = 2_500_000_000;
        let ops: [&'static [Op]; 2] = [&[Op::Check(1), Op::Peek(1)], &[Op::Check(2)]];
        let handles: Vec<_> = ops
            .iter()
            .map(|&ops| {
                let limiter = limiter.clone();
                thread::spawn(move || -> History<Op> {
                    ops.iter().map(|&op| (op, op.run(&limiter))).collect()
                })
            })
            .collect();
        let histories: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let then: Vec<_> = [Op::Peek(1), Op::Check(1)]
            .into_iter()
            .map(|op| (op, op.run(&limiter)))
            .collect();
        assert_linearizable(&Single::new(reference, now), &histories, &then);
    });
}
