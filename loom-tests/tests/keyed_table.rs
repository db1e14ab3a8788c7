#![cfg(loom)]
//! The keyed table: inserting, probing, migrating (MOVED forwarding), sweeping (tombstones,
//! the sliding log's DEAD bit) and epoch reclamation, on one shard whose arrays start at 2
//! slots, so the second key already migrates.
//!
//! Every model also checks linearizability: each key's decisions must be those of its own
//! textbook model under some interleaving of the threads' operations.

mod linearizable;
#[path = "../../tests/reference/mod.rs"]
mod reference;

use linearizable::{
    assert_linearizable, long_model, seeded, Collide, History, Keyed, Observed, Op, Outcomes,
};
use loom::model;
use loom::sync::Arc;
use loom::thread;
use reference::{GcraModel, Model, SlidingLogModel};
use sluicegate::algorithm::{Gcra, SlidingLog};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Quota};
use std::hash::BuildHasher;

type Limiter<A, S> = KeyedLimiter<u64, A, ManualClock, S>;
type KeyedOps = &'static [(u64, Op)];

/// One shard, arrays as small as they get (2 slots under loom).
fn build<A: Algorithm, S: BuildHasher>(
    quota: Quota,
    clock: &ManualClock,
    hasher: S,
) -> Limiter<A, S> {
    KeyedLimiter::<u64, A, ManualClock>::builder(quota)
        .clock(clock.clone())
        .hasher(hasher)
        .shards(1)
        .initial_capacity(0)
        .build()
        .unwrap()
}

fn run_ops<A: Algorithm, S: BuildHasher>(
    limiter: &Limiter<A, S>,
    ops: &[(u64, Op)],
) -> History<(u64, Op)> {
    ops.iter()
        .map(|&(key, op)| ((key, op), op.run_keyed(limiter, key)))
        .collect()
}

/// A keyed model: `setup` runs on the main thread at `now`, then one loom thread per entry of
/// `threads`, then `then` on the main thread after the join. Requires linearizability against
/// `M` per key and `len() == keys` at the end; returns the distinct histories seen.
fn keyed_race<A: Algorithm, M: Model + 'static, S: BuildHasher + Clone + Send + Sync + 'static>(
    quota: Quota,
    hasher: S,
    setup: KeyedOps,
    threads: &'static [KeyedOps],
    then: KeyedOps,
    keys: usize,
) -> Outcomes<Vec<History<(u64, Op)>>> {
    let outcomes = Outcomes::new();
    let seen = outcomes.clone();
    model(move || {
        let now = 0;
        let clock = ManualClock::new();
        let limiter = Arc::new(build::<A, S>(quota, &clock, hasher.clone()));
        let mut spec = Keyed::new(M::new(quota), now);
        let setup = run_ops(&limiter, setup);
        assert_linearizable(&spec, std::slice::from_ref(&setup), &[]);
        for &(op, _) in &setup {
            linearizable::Spec::apply(&mut spec, op);
        }
        let handles: Vec<_> = threads
            .iter()
            .map(|&ops| {
                let limiter = limiter.clone();
                thread::spawn(move || run_ops(&limiter, ops))
            })
            .collect();
        let histories: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let after = run_ops(&limiter, then);
        assert_linearizable(&spec, &histories, &after);
        assert_eq!(limiter.len(), keys, "keys held");
        seen.record(histories);
    });
    outcomes
}

const A: u64 = 1;
const B: u64 = 2;
const C: u64 = 3;

/// Two threads insert the same new key: it gets one state, so with a burst of 1 exactly one
/// is admitted, and the table holds one key.
fn same_new_key<A: Algorithm, M: Model + 'static>() {
    let outcomes = keyed_race::<A, M, _>(
        Quota::per_second(1),
        seeded(),
        &[],
        &[&[(A, Op::Check(1))], &[(A, Op::Check(1))]],
        &[(A, Op::Check(1)), (A, Op::Peek(1))],
        1,
    );
    // Loom found executions in which each of the two threads won the insert race.
    outcomes.assert_at_least(2);
    for histories in outcomes.all() {
        let admitted = histories
            .iter()
            .flatten()
            .filter(|(_, o)| o.allowed)
            .count();
        assert_eq!(admitted, 1, "{histories:?}");
    }
}

#[test]
fn gcra_same_new_key_gets_one_state() {
    same_new_key::<Gcra, GcraModel>();
}

#[test]
fn sliding_log_same_new_key_gets_one_state() {
    same_new_key::<SlidingLog, SlidingLogModel>();
}

/// Keys whose hashes collide get distinct states: each is admitted its full quota (2), the
/// next check of each is denied. The second insert also migrates the 2-slot array.
fn colliding_keys<A: Algorithm, M: Model + 'static>() {
    let outcomes = keyed_race::<A, M, _>(
        Quota::per_second(2),
        Collide,
        &[],
        &[
            &[(A, Op::Check(1)), (A, Op::Check(1))],
            &[(B, Op::Check(1)), (B, Op::Check(1))],
        ],
        &[(A, Op::Check(1)), (B, Op::Check(1))],
        2,
    );
    for histories in outcomes.all() {
        assert!(
            histories.iter().flatten().all(|(_, o)| o.allowed),
            "{histories:?}"
        );
    }
}

#[test]
fn gcra_colliding_keys_get_distinct_states() {
    colliding_keys::<Gcra, GcraModel>();
}

#[test]
fn sliding_log_colliding_keys_get_distinct_states() {
    colliding_keys::<SlidingLog, SlidingLogModel>();
}

/// A check of key A races with inserts of B and C, which migrate the shard twice (2 -> 3 -> 5
/// slots): the check finds A (following MOVED if need be) and its admission survives the
/// migrations. Burst 3: one admitted before, one by the racing thread, so after the join
/// one more is admitted and then the next is denied.
fn lookup_vs_growth<A: Algorithm, M: Model + 'static>() {
    let outcomes = keyed_race::<A, M, _>(
        Quota::per_second(3),
        seeded(),
        &[(A, Op::Check(1))],
        &[
            &[(A, Op::Check(1)), (A, Op::Peek(1))],
            &[(B, Op::Check(1)), (C, Op::Check(1))],
        ],
        &[(A, Op::Check(1)), (A, Op::Check(1)), (B, Op::Peek(1))],
        3,
    );
    for histories in outcomes.all() {
        assert!(histories[0][0].1.allowed, "{histories:?}");
    }
}

#[test]
fn gcra_lookup_racing_with_growth() {
    lookup_vs_growth::<Gcra, GcraModel>();
}

#[test]
fn sliding_log_lookup_racing_with_growth() {
    lookup_vs_growth::<SlidingLog, SlidingLogModel>();
}

/// `sweep()` races with a check of a key whose state is fresh (admitted at 0, refilled by
/// 1 s): whether the sweep tombstones the key first (the check then inserts it anew) or the
/// check lands first (the sweep then keeps it), the admission is never lost: burst 1, so the
/// next check is denied. For the sliding log the sweep retires the key's ring with its DEAD
/// bit and frees it after a grace period.
fn sweep_vs_check<A: Algorithm, M: Model + 'static>() {
    let quota = Quota::per_second(1);
    let outcomes = Outcomes::new();
    let seen = outcomes.clone();
    model(move || {
        let clock = ManualClock::new();
        let limiter = Arc::new(build::<A, _>(quota, &clock, seeded()));
        let mut reference = M::new(quota);
        assert!(limiter.check(&A).is_allowed());
        reference.check(0, 1).unwrap();
        let now = 1_000_000_000;
        clock.set_nanos(now);
        assert!(reference.is_fresh_at(now));

        let checker = {
            let limiter = limiter.clone();
            thread::spawn(move || Observed::of(&limiter.check(&A)))
        };
        let sweeper = {
            let limiter = limiter.clone();
            thread::spawn(move || limiter.sweep())
        };
        let checked = checker.join().unwrap();
        let swept = sweeper.join().unwrap();

        assert!(checked.allowed, "the refilled key was denied");
        let after = Observed::of(&limiter.check(&A));
        assert!(!after.allowed, "the racing admission was lost to the sweep");
        assert_eq!(limiter.len(), 1);
        let mut spec = Keyed::new(M::new(quota), now);
        spec.keys.insert(A, reference);
        assert_linearizable(
            &spec,
            &[vec![((A, Op::Check(1)), checked)]],
            &[((A, Op::Check(1)), after)],
        );
        seen.record((swept, garbage_left(&limiter)));
    });
    // Both orders were explored: the sweep kept the key (0), or removed it (1), retiring its
    // word (for the log, its ring) and the array it compacted away; and when it removed it,
    // reclamation both freed that memory at once and, with the checker still pinned, left it.
    let all = outcomes.all();
    for expected in [(0, false), (1, false), (1, true)] {
        assert!(all.contains(&expected), "{expected:?} not among {all:?}");
    }
}

/// True when retired memory was still awaiting reclamation at the join: a sweep with nobody
/// pinned frees it now. Only for models whose final sweep removes no key and migrates nothing
/// (every key holds state, and no tombstones are left).
fn garbage_left<A: Algorithm, S: BuildHasher>(limiter: &Limiter<A, S>) -> bool {
    let before = limiter.memory_bytes();
    assert_eq!(limiter.sweep(), 0);
    limiter.memory_bytes() < before
}

#[test]
fn gcra_sweep_racing_with_a_check_loses_nothing() {
    sweep_vs_check::<Gcra, GcraModel>();
}

#[test]
fn sliding_log_sweep_racing_with_a_check_loses_nothing() {
    sweep_vs_check::<SlidingLog, SlidingLogModel>();
}

/// Reclamation never frees an array a reader still holds: a reader checks key A twice while
/// another thread inserts B and C (migrating the shard twice, 2 -> 3 -> 5 slots, retiring two
/// arrays) and then calls `sweep()`, which frees what no reader can still hold. Under loom a
/// freed array is only marked freed, and any later access by a reader fails the model ("a
/// reader touched an array after reclamation freed it"). Also requires linearizability, and
/// that loom explored both sweeps that freed the retired arrays and sweeps that had to leave
/// them because the reader was still pinned.
#[test]
fn reclamation_never_frees_an_array_a_reader_holds() {
    let quota = Quota::per_second(1).with_burst(3);
    let outcomes = Outcomes::new();
    let seen = outcomes.clone();
    long_model(5_000, move || {
        let clock = ManualClock::new();
        let limiter = Arc::new(build::<Gcra, _>(quota, &clock, seeded()));
        let mut spec = Keyed::new(GcraModel::new(quota), 0);
        let first = ((A, Op::Check(1)), Op::Check(1).run_keyed(&limiter, A));
        assert_linearizable(&spec, &[vec![first]], &[]);
        linearizable::Spec::apply(&mut spec, first.0);

        let reader = {
            let limiter = limiter.clone();
            thread::spawn(move || run_ops(&limiter, &[(A, Op::Check(1)), (A, Op::Check(1))]))
        };
        let writer = {
            let limiter = limiter.clone();
            thread::spawn(move || {
                let history = run_ops(&limiter, &[(B, Op::Check(1)), (C, Op::Check(1))]);
                assert_eq!(limiter.sweep(), 0);
                history
            })
        };
        let histories = vec![reader.join().unwrap(), writer.join().unwrap()];
        let then = run_ops(&limiter, &[(A, Op::Check(1)), (B, Op::Peek(1))]);
        assert_linearizable(&spec, &histories, &then);
        assert_eq!(limiter.len(), 3);
        seen.record(garbage_left(&limiter));
    });
    assert_eq!(
        outcomes.all(),
        vec![false, true],
        "expected executions where the writer's sweep freed the old arrays and executions \
         where a pinned reader made it leave them"
    );
}

/// Two readers, each checking its own key, while a third thread inserts C (migrating the
/// shard from 3 to 5 slots) and sweeps: as above, with two pinned readers to wait for.
#[test]
fn reclamation_waits_for_every_reader() {
    let quota = Quota::per_second(1).with_burst(3);
    let outcomes = Outcomes::new();
    let seen = outcomes.clone();
    long_model(5_000, move || {
        let clock = ManualClock::new();
        let limiter = Arc::new(build::<Gcra, _>(quota, &clock, seeded()));
        let mut spec = Keyed::new(GcraModel::new(quota), 0);
        let setup = run_ops(&limiter, &[(A, Op::Check(1)), (B, Op::Check(1))]);
        assert_linearizable(&spec, std::slice::from_ref(&setup), &[]);
        for &(op, _) in &setup {
            linearizable::Spec::apply(&mut spec, op);
        }

        let threads: [KeyedOps; 2] = [&[(A, Op::Check(1))], &[(B, Op::Check(1))]];
        let readers: Vec<_> = threads
            .iter()
            .map(|&ops| {
                let limiter = limiter.clone();
                thread::spawn(move || run_ops(&limiter, ops))
            })
            .collect();
        let writer = {
            let limiter = limiter.clone();
            thread::spawn(move || {
                let history = run_ops(&limiter, &[(C, Op::Check(1))]);
                assert_eq!(limiter.sweep(), 0);
                history
            })
        };
        let mut histories: Vec<_> = readers.into_iter().map(|h| h.join().unwrap()).collect();
        histories.push(writer.join().unwrap());
        let then = run_ops(&limiter, &[(A, Op::Check(1)), (B, Op::Check(1))]);
        assert_linearizable(&spec, &histories, &then);
        assert_eq!(limiter.len(), 3);
        seen.record(garbage_left(&limiter));
    });
    assert_eq!(outcomes.all(), vec![false, true]);
}
