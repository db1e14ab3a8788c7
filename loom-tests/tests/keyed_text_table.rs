#![cfg(loom)]
//! The keyed table with string keys, which it stores in text slots (the bytes in the slot, or
//! one heap copy owned by the slot past 48 bytes): inserting, probing by tag and bytes,
//! migrating (copying each key into the new array), sweeping, and reclaiming arrays whose
//! slots own heap keys, on one shard whose arrays start at 2 slots.
//!
//! Each model also checks linearizability against the textbook GCRA per key.

mod linearizable;
#[path = "../../tests/reference/mod.rs"]
mod reference;

use linearizable::{
    assert_linearizable, long_model, seeded, Collide, History, Keyed, Observed, Op,
};
use loom::model;
use loom::sync::Arc;
use loom::thread;
use reference::{GcraModel, Model};
use sluicegate::algorithm::Gcra;
use sluicegate::clock::ManualClock;
use sluicegate::{KeyedLimiter, Quota};
use std::hash::BuildHasher;

type Limiter<S> = KeyedLimiter<String, Gcra, ManualClock, S>;
type KeyedOps = &'static [(u64, Op)];

/// Key ids of the models; [`text`] spells each as a string.
const A: u64 = 1;
const B: u64 = 2;
const C: u64 = 3;

/// How long the models' keys are.
#[derive(Clone, Copy)]
enum Length {
    /// In the slot.
    Short,
    /// Past the slot's 48 bytes: on the heap.
    Long,
}

/// Key `id` as text of `length`: keys differ only in their last byte, so a compare must read
/// them to the end.
fn text(id: u64, length: Length) -> String {
    let stem = match length {
        Length::Short => "k".repeat(7),
        Length::Long => "k".repeat(63),
    };
    format!("{stem}{id}")
}

fn build<S: BuildHasher>(quota: Quota, clock: &ManualClock, hasher: S) -> Limiter<S> {
    KeyedLimiter::<String, Gcra, ManualClock>::builder(quota)
        .clock(clock.clone())
        .hasher(hasher)
        .shards(1)
        .initial_capacity(0)
        .build()
        .unwrap()
}

fn run_ops<S: BuildHasher>(
    limiter: &Limiter<S>,
    length: Length,
    ops: &[(u64, Op)],
) -> History<(u64, Op)> {
    ops.iter()
        .map(|&(id, op)| {
            let key = text(id, length);
            let decision = match op {
                Op::Check(1) => limiter.check(key.as_str()),
                Op::Peek(1) => limiter.peek(key.as_str()),
                other => unreachable!("the text models use single checks and peeks: {other:?}"),
            };
            ((id, op), Observed::of(&decision))
        })
        .collect()
}

/// `setup` on the main thread, one loom thread per entry of `threads`, then `then` after the
/// join: linearizable per key, and `keys` keys held at the end.
fn race<S: BuildHasher + Clone + Send + Sync + 'static>(
    quota: Quota,
    hasher: S,
    length: Length,
    (setup, threads, then): (KeyedOps, &'static [KeyedOps], KeyedOps),
    keys: usize,
) {
    model(move || {
        let clock = ManualClock::new();
        let limiter = Arc::new(build(quota, &clock, hasher.clone()));
        let mut spec = Keyed::new(GcraModel::new(quota), 0);
        let setup = run_ops(&limiter, length, setup);
        for &(op, _) in &setup {
            linearizable::Spec::apply(&mut spec, op);
        }
        let handles: Vec<_> = threads
            .iter()
            .map(|&ops| {
                let limiter = limiter.clone();
                thread::spawn(move || run_ops(&limiter, length, ops))
            })
            .collect();
        let histories: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let after = run_ops(&limiter, length, then);
        assert_linearizable(&spec, &histories, &after);
        assert_eq!(limiter.len(), keys, "keys held");
    });
}

/// Two threads insert the same new key: one state (burst 1, so one admission in all).
#[test]
fn same_new_text_key_gets_one_state() {
    for length in [Length::Short, Length::Long] {
        race(
            Quota::per_second(1),
            seeded(),
            length,
            (
                &[],
                &[&[(A, Op::Check(1))], &[(A, Op::Check(1))]],
                &[(A, Op::Check(1)), (A, Op::Peek(1))],
            ),
            1,
        );
    }
}

/// Keys whose hashes (so whose tags) collide get distinct states: their bytes tell them apart,
/// in the slot and on the heap. The second insert migrates the 2-slot array, copying keys.
#[test]
fn colliding_text_keys_get_distinct_states() {
    for length in [Length::Short, Length::Long] {
        race(
            Quota::per_second(2),
            Collide,
            length,
            (
                &[],
                &[
                    &[(A, Op::Check(1)), (A, Op::Check(1))],
                    &[(B, Op::Check(1)), (B, Op::Check(1))],
                ],
                &[(A, Op::Check(1)), (B, Op::Check(1)), (A, Op::Peek(1))],
            ),
            2,
        );
    }
}

/// A check of a key races with inserts that migrate the shard twice (2 -> 3 -> 5 slots) and a
/// sweep that frees the retired arrays, heap keys and all, when no reader holds them: the
/// check finds its key through MOVED slots, in the new array at the home its tag gives (a
/// migration places keys by their tags, copying a key in the slot whole and a heap key to a
/// heap copy of its own), and under loom any touch of a freed array fails the model.
#[test]
fn text_keys_survive_growth_and_reclamation() {
    for length in [Length::Short, Length::Long] {
        growth_race(length);
    }
}

fn growth_race(length: Length) {
    let quota = Quota::per_second(1).with_burst(3);
    long_model(5_000, move || {
        let clock = ManualClock::new();
        let limiter = Arc::new(build(quota, &clock, seeded()));
        let mut spec = Keyed::new(GcraModel::new(quota), 0);
        let setup = run_ops(&limiter, length, &[(A, Op::Check(1))]);
        linearizable::Spec::apply(&mut spec, setup[0].0);
        let reader = {
            let limiter = limiter.clone();
            thread::spawn(move || {
                run_ops(&limiter, length, &[(A, Op::Check(1)), (A, Op::Check(1))])
            })
        };
        let writer = {
            let limiter = limiter.clone();
            thread::spawn(move || {
                let history = run_ops(&limiter, length, &[(B, Op::Check(1)), (C, Op::Check(1))]);
                assert_eq!(limiter.sweep(), 0);
                history
            })
        };
        let histories = vec![reader.join().unwrap(), writer.join().unwrap()];
        let then = run_ops(&limiter, length, &[(A, Op::Peek(1)), (C, Op::Peek(1))]);
        assert_linearizable(&spec, &histories, &then);
        assert_eq!(limiter.len(), 3);
    });
}

/// `sweep()` tombstones a fresh heap key while a check of it races: the admission is never
/// lost (burst 1: the next check is denied), and the tombstoned slot's key stays readable.
#[test]
fn sweep_racing_with_a_text_key_check_loses_nothing() {
    let quota = Quota::per_second(1);
    model(move || {
        let clock = ManualClock::new();
        let limiter = Arc::new(build(quota, &clock, seeded()));
        let key = text(A, Length::Long);
        assert!(limiter.check(key.as_str()).is_allowed());
        clock.set_nanos(1_000_000_000);
        let checker = {
            let limiter = limiter.clone();
            let key = key.clone();
            thread::spawn(move || limiter.check(key.as_str()).is_allowed())
        };
        let sweeper = {
            let limiter = limiter.clone();
            thread::spawn(move || limiter.sweep())
        };
        assert!(checker.join().unwrap(), "the refilled key was denied");
        sweeper.join().unwrap();
        assert!(
            limiter.check(key.as_str()).is_denied(),
            "the racing admission was lost to the sweep"
        );
        assert_eq!(limiter.len(), 1);
    });
}
