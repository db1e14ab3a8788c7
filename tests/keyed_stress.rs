//! Real threads on a frozen `ManualClock`: exact admission counts under contention, while
//! tables grow and a sweeper races the checkers. (Exhaustive interleavings of the same paths
//! are explored by the loom models in `loom-tests/`.)

use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Quota};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::Duration;

const THREADS: usize = 4;

fn limiter<A: Algorithm>(quota: Quota) -> (KeyedLimiter<u64, A, ManualClock>, ManualClock) {
    let clock = ManualClock::starting_at(Duration::from_secs(1_000));
    let limiter = KeyedLimiter::<u64, A, ManualClock>::builder(quota)
        .clock(clock.clone())
        .shards(2)
        .initial_capacity(0)
        .build()
        .unwrap();
    (limiter, clock)
}

/// Runs `work(thread)` on `THREADS` threads released together.
fn on_threads(work: impl Fn(usize) + Sync) {
    let start = Barrier::new(THREADS);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (start, work) = (&start, &work);
            scope.spawn(move || {
                start.wait();
                work(thread);
            });
        }
    });
}

/// Every thread hammers one key; exactly `expected` checks may pass.
fn one_key_admits_exactly<A: Algorithm>(expected: usize) {
    let (limiter, _clock) = limiter::<A>(Quota::per_minute(50).with_burst(30));
    let admitted = AtomicUsize::new(0);
    on_threads(|_| {
        for _ in 0..300 {
            if limiter.check(&7).is_allowed() {
                admitted.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    let name = std::any::type_name::<A>();
    assert_eq!(admitted.into_inner(), expected, "{name}");
    assert_eq!(limiter.allowed() as usize, expected, "{name}");
    assert_eq!(
        limiter.denied() as usize,
        THREADS * 300 - expected,
        "{name}"
    );
}

#[test]
fn threads_hammering_one_key_admit_exactly_its_quota() {
    one_key_admits_exactly::<Gcra>(30);
    one_key_admits_exactly::<TokenBucket>(30);
    one_key_admits_exactly::<LeakyBucket>(30);
    one_key_admits_exactly::<FixedWindow>(50);
    one_key_admits_exactly::<SlidingWindow>(50);
    one_key_admits_exactly::<SlidingLog>(50);
}

/// Each thread owns 400 keys and checks each three times while every thread's inserts grow
/// the shared shards: each key is admitted exactly twice (burst 2).
fn distinct_keys_get_their_own_quota<A: Algorithm>() {
    let (limiter, _clock) = limiter::<A>(Quota::per_minute(2));
    on_threads(|thread| {
        let keys = (thread as u64 * 1_000)..(thread as u64 * 1_000 + 400);
        for round in 0..3 {
            for key in keys.clone() {
                let allowed = limiter.check(&key).is_allowed();
                assert_eq!(
                    allowed,
                    round < 2,
                    "{} key {key} round {round}",
                    std::any::type_name::<A>()
                );
            }
        }
    });
    assert_eq!(limiter.len(), THREADS * 400);
}

#[test]
fn threads_on_distinct_keys_each_get_their_own_quota_while_the_table_grows() {
    distinct_keys_get_their_own_quota::<Gcra>();
    distinct_keys_get_their_own_quota::<TokenBucket>();
    distinct_keys_get_their_own_quota::<LeakyBucket>();
    distinct_keys_get_their_own_quota::<FixedWindow>();
    distinct_keys_get_their_own_quota::<SlidingWindow>();
    distinct_keys_get_their_own_quota::<SlidingLog>();
}

/// Four threads insert 8,000 keys each, so their shared table grows through its sparse
/// arrays into dense ones (past 4 MiB) while they check: every key is still admitted exactly
/// twice (burst 2), and no key is lost in the migrations between the two sizes.
#[test]
fn threads_growing_a_table_from_sparse_to_dense_lose_no_admission() {
    let (limiter, _clock) = limiter::<Gcra>(Quota::per_minute(2));
    on_threads(|thread| {
        let keys = (thread as u64 * 100_000)..(thread as u64 * 100_000 + 8_000);
        for round in 0..3 {
            for key in keys.clone() {
                let allowed = limiter.check(&key).is_allowed();
                assert_eq!(allowed, round < 2, "key {key} round {round}");
            }
        }
    });
    assert_eq!(limiter.len(), THREADS * 8_000);
    // Dense by now: 16-byte slots at most 85% used, within the budget's floor.
    assert!(
        limiter.slots() * 16 <= (4 << 20) + 2 * 16,
        "{} slots",
        limiter.slots()
    );
    assert!(
        limiter.slots() * 85 >= THREADS * 8_000 * 100,
        "{} slots",
        limiter.slots()
    );
}

/// Rounds at frozen instants two periods apart, so every key is fresh when a round starts.
/// In each round every key is checked twice (admitted, then denied) while a sweeper keeps
/// sweeping: a sweep that lost the first admission would let the second through. The
/// sweeper's first sweep of a round runs before the checkers start, so it must remove every
/// key of the previous round; the rest race the checkers.
fn sweeper_loses_no_admission<A: Algorithm>() {
    let (limiter, clock) = limiter::<A>(Quota::per_second(1));
    let keys = |thread: usize| (thread as u64 * 1_000)..(thread as u64 * 1_000 + 250);
    for round in 0..8u64 {
        clock.set(Duration::from_secs(1_000 + 2 * round));
        let start = Barrier::new(THREADS + 1);
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let first = limiter.sweep();
                let expected = if round == 0 { 0 } else { THREADS * 250 };
                assert_eq!(first, expected, "round {round}: fresh keys left behind");
                start.wait();
                while !done.load(Ordering::Acquire) {
                    limiter.sweep();
                }
            });
            let workers: Vec<_> = (0..THREADS)
                .map(|thread| {
                    let (start, limiter) = (&start, &limiter);
                    scope.spawn(move || {
                        start.wait();
                        for key in keys(thread) {
                            assert!(limiter.check(&key).is_allowed(), "round {round} key {key}");
                            let again = limiter.check(&key);
                            assert!(again.is_denied(), "round {round} key {key}: lost update");
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().unwrap();
            }
            done.store(true, Ordering::Release);
        });
        assert_eq!(limiter.len(), THREADS * 250);
    }
}

#[test]
fn a_sweeper_racing_the_checkers_loses_no_admission() {
    sweeper_loses_no_admission::<Gcra>();
    sweeper_loses_no_admission::<TokenBucket>();
    sweeper_loses_no_admission::<FixedWindow>();
    sweeper_loses_no_admission::<SlidingWindow>();
    sweeper_loses_no_admission::<SlidingLog>();
}

#[test]
fn max_keys_denies_new_keys_only_while_every_key_has_state() {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<u64, Gcra>::builder(Quota::per_second(1))
        .clock(clock.clone())
        .shards(1)
        .max_keys(8)
        .build()
        .unwrap();
    for key in 0..8 {
        assert!(limiter.check(&key).is_allowed());
    }
    let full = limiter.check(&8);
    assert!(full.is_denied() && full.is_table_full());
    assert_eq!(full.retry_after(), None);
    assert!(
        limiter.peek(&8).is_allowed(),
        "a peek stores nothing, so it is not refused"
    );
    assert!(limiter.check(&3).is_denied() && !limiter.check(&3).is_table_full());
    assert_eq!(limiter.len(), 8);
    // Once the old keys' states are fresh, the new key evicts them by itself.
    clock.advance(Duration::from_secs(1));
    assert!(limiter.check(&8).is_allowed());
    assert!(limiter.len() <= 8);
}

#[test]
fn a_limiter_with_ten_keys_stays_small() {
    let limiter = KeyedLimiter::<u64>::new(Quota::per_second(5)).unwrap();
    for key in 0..10 {
        limiter.check(&key);
    }
    assert_eq!(limiter.len(), 10);
    assert!(limiter.slots() < 2_048, "{}", limiter.slots());
    assert!(
        limiter.memory_bytes() < 64 * 1024,
        "{} bytes",
        limiter.memory_bytes()
    );
}

#[test]
fn memory_is_reclaimed_after_growth_and_sweeps() {
    let (limiter, clock) = limiter::<Gcra>(Quota::per_second(1));
    // Past the 4 MiB a table keeps sparse, slots are 16 bytes at most 85% full: about 19–24
    // bytes a key once old arrays are reclaimed.
    let keys = 400_000;
    for key in 0..keys {
        limiter.check(&key);
    }
    let grown = limiter.memory_bytes();
    assert!(grown < keys as usize * 26, "{grown} bytes for {keys} keys");
    clock.advance(Duration::from_secs(1));
    assert_eq!(limiter.sweep(), keys as usize);
    assert!(
        limiter.memory_bytes() < 64 * 1024,
        "{} bytes",
        limiter.memory_bytes()
    );
}

/// A table small enough for the caches is kept sparse (at most 4% of its slots used, so
/// that probes end at their key's home slot), never takes more than its 4 MiB budget for
/// that however many shards it has, and a budget of 0 keeps it dense.
#[test]
fn a_small_table_is_sparse_within_its_budget() {
    for shards in [1, 8, 64] {
        let limiter = KeyedLimiter::<u64>::builder(Quota::per_second(5))
            .shards(shards)
            .build()
            .unwrap();
        for key in 0..2_000 {
            limiter.check(&key);
        }
        assert!(
            limiter.slots() * 4 >= 2_000 * 100,
            "{} slots",
            limiter.slots()
        );
        for key in 2_000..60_000 {
            limiter.check(&key);
        }
        // Past the budget, each shard's array is dense but at least one slot over its share
        // of the 4 MiB (so that it is never judged by the sparse load).
        assert!(
            limiter.slots() <= (4 << 20) / 16 + shards,
            "{} slots of 16 bytes",
            limiter.slots()
        );
    }
    let dense = KeyedLimiter::<u64>::builder(Quota::per_second(5))
        .shards(8)
        .sparse_bytes(0)
        .build()
        .unwrap();
    for key in 0..2_000 {
        dense.check(&key);
    }
    // 68-85% used, and shards grow 1.25x at a time: never twice the keys.
    assert!(dense.slots() < 2 * 2_000, "{} slots", dense.slots());
}
