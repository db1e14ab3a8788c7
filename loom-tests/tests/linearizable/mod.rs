//! The linearizability checker shared by every loom model, and the small helpers the models
//! have in common.
//!
//! A model runs a few operations on two or three loom threads, records what each returned
//! (an [`Observed`]), joins, and hands the per-thread histories to [`assert_linearizable`].
//! That enumerates every interleaving of the operations that keeps each thread's program
//! order, replays it through a sequential [`Spec`] (built on the textbook reference models of
//! `tests/reference`, all at one fixed time), and requires that at least one replay
//! reproduces every observed decision exactly. Operations the main thread makes after the
//! join (`then`) must follow all of them.
#![allow(dead_code)]

use crate::reference::{probe, Model};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{Decision, KeyedLimiter, Limiter};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::{BuildHasher, Hasher};

/// The numbers of a decision that a model can predict exactly at a fixed time.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Observed {
    pub allowed: bool,
    /// Single requests still admissible after this one (a peek counts itself, as a check
    /// would).
    pub remaining: u32,
    /// Nanoseconds to wait (the leaky bucket's shaping; 0 elsewhere and for denials).
    pub wait: u64,
}

impl Observed {
    pub fn of(decision: &Decision) -> Observed {
        Observed {
            allowed: decision.is_allowed(),
            remaining: decision.remaining(),
            wait: u64::try_from(decision.wait().as_nanos()).unwrap(),
        }
    }
}

/// One operation on one limit: `Check(n)` is `check_n(n)` (`check()` for 1), `Peek(n)` is
/// `peek_n(n)` (`peek()` for 1), `SetQuota` is `set_quota(limit per second, burst)`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Op {
    Check(u32),
    Peek(u32),
    SetQuota { per_second: u32, burst: u32 },
}

/// What a `set_quota` observes (nothing: it always succeeds in the models).
const CHANGED: Observed = Observed {
    allowed: true,
    remaining: 0,
    wait: 0,
};

fn quota_of(per_second: u32, burst: u32) -> sluicegate::Quota {
    sluicegate::Quota::per_second(per_second).with_burst(burst)
}

impl Op {
    /// What `op` returns on `model` at `now`, advancing the model if it consumes.
    pub fn apply<M: Model>(self, model: &mut M, now: u64) -> Observed {
        match self {
            Op::Check(cost) => {
                let admitted = model.check(now, cost);
                Observed {
                    allowed: admitted.is_some(),
                    remaining: probe::remaining(model, now),
                    wait: admitted.unwrap_or(0),
                }
            }
            // A peek answers exactly as the check would, consuming nothing.
            Op::Peek(_) => self.as_check().apply(&mut model.clone(), now),
            Op::SetQuota { per_second, burst } => {
                model.reconfigure(quota_of(per_second, burst), now);
                CHANGED
            }
        }
    }

    fn as_check(self) -> Op {
        match self {
            Op::Check(n) | Op::Peek(n) => Op::Check(n),
            op => op,
        }
    }

    /// Runs `op` on a direct limiter.
    pub fn run<A: Algorithm>(self, limiter: &Limiter<A, ManualClock>) -> Observed {
        let decision = match self {
            Op::Check(1) => limiter.check(),
            Op::Check(n) => limiter.check_n(n).expect("models stay within capacity"),
            Op::Peek(1) => limiter.peek(),
            Op::Peek(n) => limiter.peek_n(n).expect("models stay within capacity"),
            Op::SetQuota { per_second, burst } => {
                limiter.set_quota(quota_of(per_second, burst)).unwrap();
                return CHANGED;
            }
        };
        Observed::of(&decision)
    }

    /// Runs `op` on `key` of a keyed limiter.
    pub fn run_keyed<A: Algorithm, S: BuildHasher>(
        self,
        limiter: &KeyedLimiter<u64, A, ManualClock, S>,
        key: u64,
    ) -> Observed {
        let decision = match self {
            Op::Check(1) => limiter.check(&key),
            Op::Check(n) => limiter.check_n(&key, n).expect("within capacity"),
            Op::Peek(1) => limiter.peek(&key),
            Op::Peek(n) => limiter.peek_n(&key, n).expect("within capacity"),
            Op::SetQuota { per_second, burst } => {
                limiter.set_quota(quota_of(per_second, burst)).unwrap();
                return CHANGED;
            }
        };
        Observed::of(&decision)
    }
}

/// A sequential specification: a state that operations advance, each answering an
/// [`Observed`].
pub trait Spec: Clone + Debug {
    type Op: Copy + Debug;
    fn apply(&mut self, op: Self::Op) -> Observed;
}

/// One limit's reference model at a fixed time.
#[derive(Clone, Debug)]
pub struct Single<M> {
    pub model: M,
    pub now: u64,
}

impl<M: Model> Single<M> {
    pub fn new(model: M, now: u64) -> Self {
        Single { model, now }
    }
}

impl<M: Model> Spec for Single<M> {
    type Op = Op;
    fn apply(&mut self, op: Op) -> Observed {
        op.apply(&mut self.model, self.now)
    }
}

/// A keyed limiter: one reference model per key, each starting fresh when first consumed.
#[derive(Clone, Debug)]
pub struct Keyed<M> {
    pub fresh: M,
    pub keys: BTreeMap<u64, M>,
    pub now: u64,
}

impl<M: Model> Keyed<M> {
    pub fn new(fresh: M, now: u64) -> Self {
        Keyed {
            fresh,
            keys: BTreeMap::new(),
            now,
        }
    }
}

impl<M: Model> Spec for Keyed<M> {
    type Op = (u64, Op);
    fn apply(&mut self, (key, op): (u64, Op)) -> Observed {
        if let Op::SetQuota { .. } = op {
            // Every key changes quota, and new keys start under the new one.
            for model in self.keys.values_mut().chain([&mut self.fresh]) {
                op.apply(model, self.now);
            }
            return CHANGED;
        }
        let model = self.keys.entry(key).or_insert_with(|| self.fresh.clone());
        op.apply(model, self.now)
    }
}

/// One thread's history: each operation with what it returned, in program order.
pub type History<O> = Vec<(O, Observed)>;

/// An interleaving (thread index and operation, in order) of `threads`, followed by `then`,
/// under which `initial` reproduces every observed decision; `None` if there is none.
pub fn linearization<S: Spec>(
    initial: &S,
    threads: &[History<S::Op>],
    then: &[(S::Op, Observed)],
) -> Option<Vec<(usize, S::Op)>> {
    let mut positions = vec![0; threads.len()];
    let mut order = Vec::new();
    if search(initial, threads, then, &mut positions, &mut order) {
        Some(order)
    } else {
        None
    }
}

fn search<S: Spec>(
    state: &S,
    threads: &[History<S::Op>],
    then: &[(S::Op, Observed)],
    positions: &mut [usize],
    order: &mut Vec<(usize, S::Op)>,
) -> bool {
    let mut progressed = false;
    for t in 0..threads.len() {
        let Some(&(op, observed)) = threads[t].get(positions[t]) else {
            continue;
        };
        progressed = true;
        let mut next = state.clone();
        if next.apply(op) != observed {
            continue;
        }
        positions[t] += 1;
        order.push((t, op));
        if search(&next, threads, then, positions, order) {
            return true;
        }
        order.pop();
        positions[t] -= 1;
    }
    if progressed {
        return false;
    }
    let mut last = state.clone();
    then.iter()
        .all(|&(op, observed)| last.apply(op) == observed)
}

/// Panics unless some interleaving of `threads` (then `then`) reproduces the observations.
pub fn assert_linearizable<S: Spec>(
    initial: &S,
    threads: &[History<S::Op>],
    then: &[(S::Op, Observed)],
) -> Vec<(usize, S::Op)> {
    match linearization(initial, threads, then) {
        Some(order) => order,
        None => panic!(
            "not linearizable: no interleaving of the threads' histories {threads:?} \
             (then {then:?}) reproduces them from {initial:?}"
        ),
    }
}

/// `loom::model` for executions longer than loom's default 1,000 branches (each epoch advance
/// reads all 64 thread records of a chunk); `LOOM_MAX_PREEMPTIONS` applies as usual, and a
/// larger `LOOM_MAX_BRANCHES` wins.
pub fn long_model<F: Fn() + Sync + Send + 'static>(max_branches: usize, f: F) {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = builder.max_branches.max(max_branches);
    builder.check(f);
}

/// Runs `model` expecting it to fail with a panic whose message contains `expected`, and
/// returns that message.
pub fn expect_violation(expected: &str, model: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(model)
        .expect_err("loom explored every interleaving without finding the violation");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        message.contains(expected),
        "the model failed, but not as expected: {message}"
    );
    message
}

/// The distinct outcomes a model saw over all its executions, kept outside loom (which
/// re-runs the model's closure once per interleaving).
#[derive(Clone, Debug)]
pub struct Outcomes<T>(std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<T>>>);

impl<T: Ord + Clone + Debug> Outcomes<T> {
    pub fn new() -> Self {
        Outcomes(Default::default())
    }

    pub fn record(&self, outcome: T) {
        self.0.lock().unwrap().insert(outcome);
    }

    pub fn all(&self) -> Vec<T> {
        self.0.lock().unwrap().iter().cloned().collect()
    }

    /// Panics unless the executions produced at least `n` distinct outcomes: the race the
    /// model is about really was explored both ways.
    pub fn assert_at_least(&self, n: usize) {
        let all = self.all();
        assert!(
            all.len() >= n,
            "expected at least {n} distinct outcomes over all interleavings, saw {all:?}"
        );
    }
}

/// A seeded hasher, so every execution lays keys out identically.
pub fn seeded() -> ahash::RandomState {
    ahash::RandomState::with_seeds(1, 2, 3, 4)
}

/// A hasher under which every key collides: all probe sequences start at the same slot.
#[derive(Clone, Copy, Debug, Default)]
pub struct Collide;

pub struct Constant;

impl Hasher for Constant {
    fn finish(&self) -> u64 {
        0x9e37_79b9_7f4a_7c15
    }
    fn write(&mut self, _bytes: &[u8]) {}
}

impl BuildHasher for Collide {
    type Hasher = Constant;
    fn build_hasher(&self) -> Constant {
        Constant
    }
}
