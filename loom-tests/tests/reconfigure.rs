#![cfg(loom)]
//! Runtime reconfiguration (`set_quota`) racing checks, on a direct limiter (generation 0
//! frozen, the state carried into a published pending generation) and on a keyed table (every
//! shard migrated into an array with the new parameters, each word converted as it moves).
//!
//! The sequential specification is each algorithm's reference model, whose `reconfigure`
//! applies the documented carry-over rule: every observed history must be what some
//! interleaving of the checks and the change gives, and the change must really race (the
//! decisions differ between interleavings).

mod linearizable;
#[path = "../../tests/reference/mod.rs"]
mod reference;

use linearizable::{assert_linearizable, long_model, History, Keyed, Op, Outcomes, Single};
use loom::sync::Arc;
use loom::thread;
use reference::{FixedWindowModel, GcraModel, Model, SlidingLogModel, TokenBucketModel};
use sluicegate::algorithm::{FixedWindow, Gcra, SlidingLog, TokenBucket};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Limiter, Quota};

/// 2.5 s: inside a window, after the epoch.
const NOW: u64 = 2_500_000_000;

/// One per second, burst 2: one check leaves one request owed, which converts exactly.
fn start() -> Quota {
    Quota::per_second(1).with_burst(2)
}

/// Two checks against a change to 2/s with a burst of 3: with the change first, both are
/// admitted; with one check first, the owed request (half a second under the new rate) still
/// leaves room; the numbers differ by order.
const CHECKS_VS_CHANGE: &[&[Op]] = &[
    &[Op::Check(1), Op::Check(1)],
    &[Op::SetQuota {
        per_second: 2,
        burst: 3,
    }],
];

/// A check of 2 against a change that shrinks the burst to 1: admitted before the change, it
/// leaves the new quota owing; after it, it is beyond the capacity... so it checks 1 instead.
const CHECK_VS_SHRINK: &[&[Op]] = &[
    &[Op::Check(1), Op::Peek(1)],
    &[Op::SetQuota {
        per_second: 1,
        burst: 1,
    }],
];

fn direct<A: Algorithm, M: Model + 'static>(threads: &'static [&'static [Op]]) {
    let outcomes = Outcomes::new();
    let seen = outcomes.clone();
    long_model(5_000, move || {
        let clock = ManualClock::new();
        clock.set_nanos(NOW);
        let limiter = Arc::new(Limiter::<A, ManualClock>::with_clock(start(), clock).unwrap());
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
        let then: Vec<_> = [Op::Peek(1), Op::Check(1), Op::Peek(1)]
            .into_iter()
            .map(|op| (op, op.run(&limiter)))
            .collect();
        assert_linearizable(&Single::new(M::new(start()), NOW), &histories, &then);
        seen.record(histories);
    });
    outcomes.assert_at_least(2);
}

#[test]
fn direct_gcra_checks_vs_change() {
    direct::<Gcra, GcraModel>(CHECKS_VS_CHANGE);
}

#[test]
fn direct_gcra_check_vs_shrink() {
    direct::<Gcra, GcraModel>(CHECK_VS_SHRINK);
}

#[test]
fn direct_token_bucket_checks_vs_change() {
    direct::<TokenBucket, TokenBucketModel>(CHECKS_VS_CHANGE);
}

#[test]
fn direct_fixed_window_checks_vs_change() {
    direct::<FixedWindow, FixedWindowModel>(CHECKS_VS_CHANGE);
}

#[test]
fn direct_sliding_log_checks_vs_change() {
    direct::<SlidingLog, SlidingLogModel>(CHECKS_VS_CHANGE);
}

type KeyedOps = &'static [(u64, Op)];

/// Key 1 holds state before the threads start (so the change converts a live word); one
/// thread checks it while another changes the quota; a third key arrives meanwhile.
const KEYED_CHECK_VS_CHANGE: &[KeyedOps] = &[
    &[(1, Op::Check(1)), (2, Op::Check(1))],
    &[(
        0,
        Op::SetQuota {
            per_second: 2,
            burst: 3,
        },
    )],
];

fn keyed<A: Algorithm, M: Model + 'static>(threads: &'static [KeyedOps]) {
    let outcomes = Outcomes::new();
    let seen = outcomes.clone();
    long_model(20_000, move || {
        let clock = ManualClock::new();
        clock.set_nanos(NOW);
        let limiter = Arc::new(
            KeyedLimiter::<u64, A, ManualClock>::builder(start())
                .clock(clock)
                .hasher(ahash::RandomState::with_seeds(1, 2, 3, 4))
                .shards(1)
                .initial_capacity(0)
                .build()
                .unwrap(),
        );
        let mut spec = Keyed::new(M::new(start()), NOW);
        let setup = (1, Op::Check(1));
        let observed = setup.1.run_keyed(&limiter, setup.0);
        assert_eq!(linearizable::Spec::apply(&mut spec, setup), observed);
        let handles: Vec<_> = threads
            .iter()
            .map(|&ops| {
                let limiter = limiter.clone();
                thread::spawn(move || -> History<(u64, Op)> {
                    ops.iter()
                        .map(|&(key, op)| ((key, op), op.run_keyed(&limiter, key)))
                        .collect()
                })
            })
            .collect();
        let histories: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let then: Vec<_> = [(1, Op::Peek(1)), (2, Op::Peek(1))]
            .into_iter()
            .map(|(key, op)| ((key, op), op.run_keyed(&limiter, key)))
            .collect();
        assert_linearizable(&spec, &histories, &then);
        seen.record(histories);
    });
    outcomes.assert_at_least(2);
}

#[test]
fn keyed_gcra_check_vs_change() {
    keyed::<Gcra, GcraModel>(KEYED_CHECK_VS_CHANGE);
}

#[test]
fn keyed_sliding_log_check_vs_change() {
    keyed::<SlidingLog, SlidingLogModel>(KEYED_CHECK_VS_CHANGE);
}
