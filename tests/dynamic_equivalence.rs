//! `AnyLimiter` and `AnyKeyedLimiter` decide exactly as the generic limiter of the algorithm
//! they were given, for all six algorithms, on random traces (checks, peeks and hits, with
//! every number of every decision compared), directly and through the backend seam.

mod harness;
mod reference;

use harness::{summary, Step};
use proptest::prelude::*;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::{Backend, Op};
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::policy::AlgorithmKind;
use sluicegate::Algorithm;
use sluicegate::{CapacityError, Decision, KeyedLimiter, Limiter, Quota};

type Summary = (
    bool,
    u32,
    Option<std::time::Duration>,
    std::time::Duration,
    std::time::Duration,
);

/// A decision (or the error instead of one) as plain numbers, limit included.
fn numbers(result: Result<Decision, CapacityError>) -> Result<(Summary, u32, bool), CapacityError> {
    result.map(|d| (summary(&d), d.limit(), d.is_table_full()))
}

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
) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let generic = Limiter::<A, _>::with_clock(quota, clock.clone());
    let dynamic = AnyLimiter::with_clock(quota, kind, clock.clone());
    let (generic, dynamic) = match (generic, dynamic) {
        (Ok(generic), Ok(dynamic)) => (generic, dynamic),
        (generic, dynamic) => {
            prop_assert_eq!(generic.err(), dynamic.err(), "building differs");
            return Ok(());
        }
    };
    prop_assert_eq!(dynamic.algorithm(), kind);
    prop_assert_eq!(dynamic.quota(), generic.quota());
    prop_assert_eq!(dynamic.max_cost(), generic.max_cost());
    for (i, (step, op)) in trace.iter().zip(ops).enumerate() {
        clock.advance(std::time::Duration::from_nanos(step.gap));
        let (expected, got) = match op {
            Op3::Check => (
                numbers(generic.check_n(step.cost)),
                numbers(dynamic.check_n(step.cost)),
            ),
            Op3::Peek => (
                numbers(generic.peek_n(step.cost)),
                numbers(dynamic.peek_n(step.cost)),
            ),
            Op3::Hit => (
                numbers(Ok(generic.hit(step.cost))),
                numbers(Ok(dynamic.hit(step.cost))),
            ),
        };
        prop_assert_eq!(got, expected, "{:?} differs at step {}", op, i);
        prop_assert_eq!(summary(&dynamic.peek()), summary(&generic.peek()));
    }
    // The single-unit calls, once more at the end.
    prop_assert_eq!(summary(&dynamic.check()), summary(&generic.check()));
    Ok(())
}

fn keyed_agrees<A: Algorithm>(
    kind: AlgorithmKind,
    quota: Quota,
    trace: &[Step],
    ops: &[Op3],
    keys: &[u8],
) -> Result<(), TestCaseError> {
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
            prop_assert_eq!(generic.err(), dynamic.err(), "building differs");
            return Ok(());
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
                numbers(generic.check_n(key, step.cost)),
                numbers(dynamic.check_n(key, step.cost)),
            ),
            Op3::Peek => (
                numbers(generic.peek_n(key, step.cost)),
                numbers(dynamic.peek_n(key, step.cost)),
            ),
            Op3::Hit => (
                numbers(Ok(generic.hit(key, step.cost))),
                numbers(Ok(dynamic.hit(key, step.cost))),
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
    Ok(())
}

/// Through `dyn Backend<str>`: the seam delegates to the generic limiter's implementation.
fn seam_agrees<A: Algorithm>(
    kind: AlgorithmKind,
    quota: Quota,
    trace: &[Step],
    ops: &[Op3],
    keys: &[u8],
) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let (Ok(generic), Ok(dynamic)) = (
        KeyedLimiter::<String, A, _>::with_clock(quota, clock.clone()),
        AnyKeyedLimiter::<String, _>::with_clock(quota, kind, clock.clone()),
    ) else {
        return Ok(()); // refused alike: compared in keyed_agrees
    };
    let (Ok(generic_direct), Ok(dynamic_direct)) = (
        Limiter::<A, _>::with_clock(quota, clock.clone()),
        AnyLimiter::with_clock(quota, kind, clock.clone()),
    ) else {
        return Ok(());
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
                result.map(|d| summary(&d)).map_err(|e| e.kind())
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
    Ok(())
}

macro_rules! for_each_algorithm {
    ($check:ident, $($arg:expr),*) => {{
        $check::<Gcra>(AlgorithmKind::Gcra, $($arg),*)?;
        $check::<TokenBucket>(AlgorithmKind::TokenBucket, $($arg),*)?;
        $check::<LeakyBucket>(AlgorithmKind::LeakyBucket, $($arg),*)?;
        $check::<FixedWindow>(AlgorithmKind::FixedWindow, $($arg),*)?;
        $check::<SlidingWindow>(AlgorithmKind::SlidingWindow, $($arg),*)?;
        $check::<SlidingLog>(AlgorithmKind::SlidingLog, $($arg),*)?;
    }};
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn any_limiter_decides_as_the_generic_one((quota, trace, ops, _keys) in case()) {
        for_each_algorithm!(direct_agrees, quota, &trace, &ops);
    }

    #[test]
    fn any_keyed_limiter_decides_as_the_generic_one((quota, trace, ops, keys) in case()) {
        for_each_algorithm!(keyed_agrees, quota, &trace, &ops, &keys);
    }

    #[test]
    fn the_seam_answers_as_the_generic_ones((quota, trace, ops, keys) in case()) {
        for_each_algorithm!(seam_agrees, quota, &trace, &ops, &keys);
    }
}
