//! `AnyLimiter` and `AnyKeyedLimiter` decide exactly as the generic limiter of the algorithm
//! they were given, for all six algorithms, on random traces (checks, peeks and hits, with
//! every number of every decision compared), directly and through the backend seam.

mod harness;
mod reference;

use harness::Step;
use proptest::prelude::*;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::{Backend, Op};
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::policy::AlgorithmKind;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// What one step does besides moving the clock. Costs go up to twice the capacity, so some
/// checks are refused as never admissible and some hits run into debt.
#[derive(Debug, Clone, Copy)]
enum Op3 {
    Check,
    Peek,
    Hit,
}

fn ops(len: usize) -> impl Strategy<Value = Vec<Op3>> {
    proptest::collection::vec(
        prop_oneof![5 => Just(Op3::Check), 2 => Just(Op3::Peek), 1 => Just(Op3::Hit)],
        len,
    )
}

/// A quota and a trace for it (costs up to twice the burst), with an op per step and a key
/// (of four) per step.
fn case() -> impl Strategy<Value = (Quota, Vec<Step>, Vec<Op3>, Vec<u8>)> {
    harness::quota()
        .prop_flat_map(|quota| {
            let max_cost = 2 * quota.burst().max(quota.limit());
            (Just(quota), harness::trace(quota, max_cost, 80))
        })
        .prop_flat_map(|(quota, trace)| {
            let len = trace.len();
            (
                Just(quota),
                Just(trace),
                ops(len),
                proptest::collection::vec(0u8..4, len),
            )
        })
}

fn direct_agrees<A: Algorithm>(
    kind: AlgorithmKind,
    quota: Quota,
    trace: &[Step],
    ops: &[Op3],
) -> Result<Built, TestCaseError> {
    let clock = ManualClock::new();
    let generic = Limiter::<A, _>::with_clock(quota, clock.clone());
    let dynamic = AnyLimiter::with_clock(quota, kind, clock.clone());
    let (generic, dynamic) = match (generic, dynamic) {
        (Ok(generic), Ok(dynamic)) => (generic, dynamic),
        (generic, dynamic) => {
            let reason = generic.err();
            prop_assert!(reason.is_some(), "only the dynamic limiter was refused");
            prop_assert_eq!(dynamic.err(), reason, "building differs");
            return Ok(Built::Refused);
        }
    };
    prop_assert_eq!(dynamic.algorithm(), kind);
    prop_assert_eq!(dynamic.quota(), generic.quota());
    prop_assert_eq!(dynamic.max_cost(), generic.max_cost());
    for (i, (step, op)) in trace.iter().zip(ops).enumerate() {
        clock.advance(std::time::Duration::from_nanos(step.gap));
        let (expected, got) = match op {
            Op3::Check => (generic.check_n(step.cost), dynamic.check_n(step.cost)),
            Op3::Peek => (generic.peek_n(step.cost), dynamic.peek_n(step.cost)),
            Op3::Hit => (Ok(generic.hit(step.cost)), Ok(dynamic.hit(step.cost))),
        };
        prop_assert_eq!(got, expected, "{:?} differs at step {}", op, i);
        prop_assert_eq!(dynamic.peek(), generic.peek());
    }
    // The single-unit calls, once more at the end.
    prop_assert_eq!(dynamic.check(), generic.check());
    Ok(Built::Compared)
}

fn keyed_agrees<A: Algorithm>(
    kind: AlgorithmKind,
    quota: Quota,
    trace: &[Step],
    ops: &[Op3],
    keys: &[u8],
) -> Result<Built, TestCaseError> {
    let clock = ManualClock::new();
    // Two shards and room for three keys: the fourth key finds the table full while the
    // others carry state, so table-full denials are compared too.
    let generic = KeyedLimiter::<String, A, ManualClock>::builder(quota)
        .clock(clock.clone())
        .shards(1)
        .max_keys(3)
        .build();
    let dynamic = AnyKeyedLimiter::<String>::builder(quota, kind)
        .clock(clock.clone())
        .shards(1)
        .max_keys(3)
        .build();
    let (generic, dynamic) = match (generic, dynamic) {
        (Ok(generic), Ok(dynamic)) => (generic, dynamic),
        (generic, dynamic) => {
            let reason = generic.err();
            prop_assert!(reason.is_some(), "only the dynamic limiter was refused");
            prop_assert_eq!(dynamic.err(), reason, "building differs");
            return Ok(Built::Refused);
        }
    };
    prop_assert_eq!(dynamic.algorithm(), kind);
    prop_assert_eq!(dynamic.max_cost(), generic.max_cost());
    for (i, ((step, op), key)) in trace.iter().zip(ops).zip(keys).enumerate() {
        clock.advance(std::time::Duration::from_nanos(step.gap));
        let key = format!("user-{key}");
        let key = key.as_str();
        let (expected, got) = match op {
            Op3::Check => (
                generic.check_n(key, step.cost),
                dynamic.check_n(key, step.cost),
            ),
            Op3::Peek => (
                generic.peek_n(key, step.cost),
                dynamic.peek_n(key, step.cost),
            ),
            Op3::Hit => (
                Ok(generic.hit(key, step.cost)),
                Ok(dynamic.hit(key, step.cost)),
            ),
        };
        prop_assert_eq!(got, expected, "{:?} of {} differs at step {}", op, key, i);
        if i % 16 == 15 {
            prop_assert_eq!(dynamic.sweep(), generic.sweep(), "sweep at step {}", i);
        }
        prop_assert_eq!(dynamic.len(), generic.len(), "keys held at step {}", i);
    }
    prop_assert_eq!(
        (dynamic.allowed(), dynamic.denied()),
        (generic.allowed(), generic.denied())
    );
    Ok(Built::Compared)
}

/// Through `dyn Backend<str>`: the seam delegates to the generic limiter's implementation.
fn seam_agrees<A: Algorithm>(
    kind: AlgorithmKind,
    quota: Quota,
    trace: &[Step],
    ops: &[Op3],
    keys: &[u8],
) -> Result<Built, TestCaseError> {
    let clock = ManualClock::new();
    let built = (
        KeyedLimiter::<String, A, _>::with_clock(quota, clock.clone()),
        AnyKeyedLimiter::<String, _>::with_clock(quota, kind, clock.clone()),
        Limiter::<A, _>::with_clock(quota, clock.clone()),
        AnyLimiter::with_clock(quota, kind, clock.clone()),
    );
    let (generic, dynamic, generic_direct, dynamic_direct) = match built {
        (Ok(generic), Ok(dynamic), Ok(generic_direct), Ok(dynamic_direct)) => {
            (generic, dynamic, generic_direct, dynamic_direct)
        }
        (generic, dynamic, generic_direct, dynamic_direct) => {
            // Refused: alike, for the same reason, keyed and direct.
            let reason = generic.as_ref().err();
            prop_assert!(reason.is_some(), "only some were refused");
            prop_assert_eq!(dynamic.as_ref().err(), reason, "keyed building differs");
            prop_assert_eq!(
                generic_direct.as_ref().err(),
                reason,
                "direct building differs"
            );
            prop_assert_eq!(
                dynamic_direct.as_ref().err(),
                reason,
                "direct building differs"
            );
            return Ok(Built::Refused);
        }
    };
    let pairs: [(&dyn Backend<str>, &dyn Backend<str>); 2] =
        [(&generic, &dynamic), (&generic_direct, &dynamic_direct)];
    for (generic, dynamic) in pairs {
        prop_assert_eq!(dynamic.quota(), generic.quota());
        prop_assert_eq!(dynamic.max_cost(), generic.max_cost());
    }
    for (i, ((step, op), key)) in trace.iter().zip(ops).zip(keys).enumerate() {
        clock.advance(std::time::Duration::from_nanos(step.gap));
        let key = format!("user-{key}");
        let op = match op {
            Op3::Check => Op::Check,
            Op3::Peek => Op::Peek,
            Op3::Hit => Op::Hit,
        };
        for (generic, dynamic) in pairs {
            let answer = |backend: &dyn Backend<str>| {
                let result = backend
                    .decide(&key, step.cost, op)
                    .now()
                    .expect("in-process");
                result.map_err(|e| e.kind())
            };
            prop_assert_eq!(answer(dynamic), answer(generic), "{:?} at step {}", op, i);
        }
        // A reservation undone leaves both as they were, and both agree it was undone.
        if i % 7 == 0 {
            for (generic, dynamic) in pairs {
                let reserve_and_undo = |backend: &dyn Backend<str>| match backend
                    .reserve(&key, 1)
                    .now()
                    .expect("in-process")
                {
                    Ok(reservation) => {
                        let allowed = reservation.decision.is_allowed();
                        let undone = backend.undo(&key, reservation.receipt).now();
                        Some((allowed, undone.expect("in-process").expect("no error")))
                    }
                    Err(_) => None,
                };
                prop_assert_eq!(reserve_and_undo(dynamic), reserve_and_undo(generic));
            }
        }
    }
    Ok(Built::Compared)
}

/// Whether a case was compared, or refused alike by both limiters (a quota the algorithm
/// does not take) and so compared no decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Built {
    Compared,
    Refused,
}

/// One comparison of a case on one algorithm: (kind, quota, trace, ops, keys).
type Agrees = fn(AlgorithmKind, &Quota, &[Step], &[Op3], &[u8]) -> Result<Built, TestCaseError>;

/// Cases per test: each runs all six algorithms.
const CASES: u32 = 150;

/// Runs `agrees` on [`CASES`] random cases for every algorithm, then requires each algorithm to
/// have been compared on most of them: a case both sides refuse compares nothing, so refusals
/// are counted (the random quotas include some the token bucket cannot represent, and none
/// that the other algorithms refuse).
fn run_for_each_algorithm(agrees: Agrees) {
    let refused: [AtomicU32; 6] = Default::default();
    let config = ProptestConfig {
        source_file: Some(file!()),
        ..harness::cases(CASES)
    };
    let cases = config.cases;
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(&case(), |(quota, trace, ops, keys)| {
        for (i, kind) in AlgorithmKind::ALL.into_iter().enumerate() {
            if agrees(kind, &quota, &trace, &ops, &keys)? == Built::Refused {
                refused[i].fetch_add(1, Relaxed);
            }
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    for (kind, refused) in AlgorithmKind::ALL.into_iter().zip(&refused) {
        let refused = refused.load(Relaxed);
        let most = if kind == AlgorithmKind::TokenBucket {
            // Periods down to 1 µs with limit times burst up to 180: the token bucket needs
            // about 8 ns per unit of `burst * limit` (its documented range).
            cases / 4
        } else {
            0
        };
        assert!(
            refused <= most,
            "{kind:?} refused {refused} of the {cases} cases (at most {most} expected): \
             those compared nothing"
        );
    }
}

/// Calls `check::<A>` with the algorithm type named by `kind`.
macro_rules! dispatch {
    ($check:ident, $kind:expr, $($arg:expr),*) => {
        match $kind {
            AlgorithmKind::Gcra => $check::<Gcra>($kind, $($arg),*),
            AlgorithmKind::TokenBucket => $check::<TokenBucket>($kind, $($arg),*),
            AlgorithmKind::LeakyBucket => $check::<LeakyBucket>($kind, $($arg),*),
            AlgorithmKind::FixedWindow => $check::<FixedWindow>($kind, $($arg),*),
            AlgorithmKind::SlidingWindow => $check::<SlidingWindow>($kind, $($arg),*),
            AlgorithmKind::SlidingLog => $check::<SlidingLog>($kind, $($arg),*),
        }
    };
}

#[test]
fn any_limiter_decides_as_the_generic_one() {
    run_for_each_algorithm(|kind, quota, trace, ops, _keys| {
        dispatch!(direct_agrees, kind, *quota, trace, ops)
    });
}

#[test]
fn any_keyed_limiter_decides_as_the_generic_one() {
    run_for_each_algorithm(|kind, quota, trace, ops, keys| {
        dispatch!(keyed_agrees, kind, *quota, trace, ops, keys)
    });
}

#[test]
fn the_seam_answers_as_the_generic_ones() {
    run_for_each_algorithm(|kind, quota, trace, ops, keys| {
        dispatch!(seam_agrees, kind, *quota, trace, ops, keys)
    });
}
