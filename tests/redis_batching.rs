//! Coalescing: calls that arrive while another is in flight go to Redis together in one
//! batch script, and each is decided exactly as if it had been sent alone.
//!
//! - Random traces, one per key, sent as concurrent bursts (one task per key, a random subset
//!   of the keys in each burst, so batches of many sizes form) on frozen client time: every
//!   decision equals the reference model's and that of the same call sent sequentially.
//! - Faults inside a batch: a key of another type fails only its own call; `SCRIPT FLUSH`
//!   mid-run loses no call; Redis killed under load fails each call within its timeout.
#![cfg(feature = "redis")]

mod harness;
#[path = "support/redis_server.rs"]
mod redis_server;
mod reference;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redis_server::RedisServer;
use reference::{
    probe, FixedWindowModel, GcraModel, LeakyModel, Model, SlidingLogModel, SlidingWindowModel,
    TokenBucketModel,
};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::{all_of, Member, Op};
use sluicegate::clock::ManualClock;
use sluicegate::redis::{RedisError, RedisLimiter};
use sluicegate::Algorithm;
use sluicegate::{Decision, Quota};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Keys, and so tasks per burst at most.
const KEYS: usize = 40;
/// Random cases per algorithm.
const CASES: u32 = 24;

/// One key's request in one burst.
#[derive(Debug, Clone, Copy)]
struct Call {
    op: Op,
    cost: u32,
}

/// A quota, a start, and bursts: each a gap in µs and, per key, its request or none.
type Case = (Quota, u64, Vec<(u64, Vec<Option<Call>>)>);

fn case() -> impl Strategy<Value = Case> {
    harness::quota().prop_flat_map(|quota| {
        let cap = quota.limit().max(quota.burst()).min(6);
        let period = (quota.period().as_nanos() as u64).div_ceil(1_000);
        let gap = prop_oneof![
            3 => Just(0u64),
            3 => 0..=2 * period + 1,
            1 => prop_oneof![Just(period.saturating_sub(1)), Just(period), Just(period + 1)],
            1 => 0..=100 * period,
        ];
        let call = prop_oneof![
            6 => (0..=cap).prop_map(|cost| Call { op: Op::Check, cost }),
            1 => (0..=cap).prop_map(|cost| Call { op: Op::Peek, cost }),
            1 => (0..=3 * cap).prop_map(|cost| Call { op: Op::Hit, cost }),
        ];
        // Each key takes part in a burst with its own odds, so bursts vary in size.
        let calls = proptest::collection::vec(proptest::option::weighted(0.6, call), KEYS);
        let bursts = proptest::collection::vec((gap, calls), 4..16);
        (Just(quota), 0u64..=1_000_000_000_000, bursts)
    })
}

/// `decision` against the model for `call` at `now` µs (the model then steps), as the
/// sequential differential test checks it: on the microsecond grid.
fn expect<M: Model>(
    model: &mut M,
    call: Call,
    now: u64,
    hits: u64,
    quota: Quota,
    decision: &Decision,
) -> Result<(), String> {
    let ns = now * 1_000;
    // A peek answers as the check would, consuming nothing: probe a copy.
    let mut copy;
    let model = if call.op == Op::Peek {
        copy = model.clone();
        &mut copy
    } else {
        model
    };
    let (expected, retry_cost) = match call.op {
        Op::Check | Op::Peek => (model.check(ns, call.cost), call.cost),
        Op::Hit => (model.hit(ns, call.cost), 1),
    };
    let horizon = harness::debt_horizon(quota, hits).div_ceil(1_000) + 2;
    let fresh =
        harness::first_us(now, horizon, |t| model.is_fresh_at(t * 1_000)).ok_or("never fresh")?;
    let retry = (expected.is_none())
        .then(|| {
            harness::first_us(now, horizon, |t| {
                model.clone().check(t * 1_000, retry_cost).is_some()
            })
        })
        .flatten()
        .map(|at| Duration::from_micros(at - now));
    let want = Decision::new(
        expected.is_some(),
        quota.limit(),
        probe::remaining(model, ns),
        retry,
        Duration::from_micros(fresh - now),
        Duration::from_micros(expected.unwrap_or(0).div_ceil(1_000)),
    );
    if *decision == want {
        Ok(())
    } else {
        Err(format!(
            "{call:?} at {now} us: {decision:?}, model {want:?}"
        ))
    }
}

/// Batches sent and the largest one, over every case of one algorithm.
#[derive(Default)]
struct Seen {
    batches: AtomicU64,
    largest: AtomicU64,
}

async fn on_clock<A: Algorithm>(
    url: &str,
    quota: Quota,
    prefix: String,
    clock: &ManualClock,
) -> RedisLimiter<A, ManualClock> {
    RedisLimiter::<A, ManualClock>::builder(quota, url)
        .clock(clock.clone())
        .prefix(prefix)
        .deny_cache(false)
        .timeout(Duration::from_secs(5))
        .connect()
        .await
        .expect("every quota of the strategy runs on Redis")
}

/// One case: each burst concurrently on one limiter, then call by call on another (its own
/// keys), at the same frozen instant; both must equal the models.
async fn bursts<A: Algorithm, M: Model>(
    url: &str,
    case: Case,
    seen: &Seen,
) -> Result<(), TestCaseError> {
    static CASE: AtomicU32 = AtomicU32::new(0);
    let (quota, start, bursts) = case;
    let n = CASE.fetch_add(1, Ordering::Relaxed);
    let clock = ManualClock::new();
    let batched = on_clock::<A>(url, quota, format!("burst{n}:"), &clock).await;
    let sequential = on_clock::<A>(url, quota, format!("seq{n}:"), &clock).await;
    let capacity = batched.max_cost();
    let mut models: Vec<M> = (0..KEYS).map(|_| M::new(quota)).collect();
    let mut hits = vec![0u64; KEYS];
    let mut now = start;
    for (b, (gap, calls)) in bursts.iter().enumerate() {
        now += gap;
        clock.set_nanos(now * 1_000);
        let calls: Vec<(usize, Call)> = (calls.iter().enumerate())
            .filter_map(|(key, call)| call.map(|c| (key, c)))
            .map(|(key, mut call)| {
                if call.op != Op::Hit {
                    call.cost = call.cost.min(capacity);
                }
                (key, call)
            })
            .collect();
        let tasks: Vec<_> = (calls.iter())
            .map(|&(key, call)| {
                let limiter = batched.clone();
                tokio::spawn(async move {
                    let key = format!("k{key}");
                    match call.op {
                        Op::Check => limiter.check_n(&key, call.cost).await,
                        Op::Peek => limiter.peek_n(&key, call.cost).await,
                        Op::Hit => limiter.hit(&key, call.cost).await,
                    }
                })
            })
            .collect();
        let mut answers = Vec::with_capacity(tasks.len());
        for task in tasks {
            answers.push(
                task.await
                    .expect("no task panicked")
                    .expect("Redis answers"),
            );
        }
        for (&(key, call), got) in calls.iter().zip(&answers) {
            let name = format!("k{key}");
            let alone = match call.op {
                Op::Check => sequential.check_n(&name, call.cost).await,
                Op::Peek => sequential.peek_n(&name, call.cost).await,
                Op::Hit => sequential.hit(&name, call.cost).await,
            }
            .expect("Redis answers");
            prop_assert_eq!(*got, alone, "burst {}, key {}", b, key);
            if call.op == Op::Hit {
                hits[key] += u64::from(call.cost);
            }
            let checked = expect(&mut models[key], call, now, hits[key], quota, got);
            prop_assert!(
                checked.is_ok(),
                "burst {}, key {}: {}",
                b,
                key,
                checked.unwrap_err()
            );
        }
    }
    let stats = batched.stats();
    seen.largest
        .fetch_max(stats.largest_batch, Ordering::Relaxed);
    seen.batches.fetch_add(stats.batches, Ordering::Relaxed);
    prop_assert_eq!(sequential.stats().batches, 0, "sequential calls go alone");
    Ok(())
}

fn differential<A: Algorithm, M: Model>() {
    let server = RedisServer::start();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let seen = Seen::default();
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&case(), |case| {
        runtime.block_on(bursts::<A, M>(&url, case, &seen))
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    let (largest, batches) = (
        seen.largest.load(Ordering::Relaxed),
        seen.batches.load(Ordering::Relaxed),
    );
    assert!(
        batches >= u64::from(CASES) && largest >= 8,
        "batches of several calls formed: {batches} batches, the largest of {largest}"
    );
}

#[test]
fn gcra_bursts_equal_the_model_and_sequential_calls() {
    differential::<Gcra, GcraModel>();
}

#[test]
fn token_bucket_bursts_equal_the_model_and_sequential_calls() {
    differential::<TokenBucket, TokenBucketModel>();
}

#[test]
fn leaky_bucket_bursts_equal_the_model_and_sequential_calls() {
    differential::<LeakyBucket, LeakyModel>();
}

#[test]
fn fixed_window_bursts_equal_the_model_and_sequential_calls() {
    differential::<FixedWindow, FixedWindowModel>();
}

#[test]
fn sliding_window_bursts_equal_the_model_and_sequential_calls() {
    differential::<SlidingWindow, SlidingWindowModel>();
}

#[test]
fn sliding_log_bursts_equal_the_model_and_sequential_calls() {
    differential::<SlidingLog, SlidingLogModel>();
}

/// A key of another type in the middle of a batch: its call (a single decision, or a
/// composite group with it) fails as it would alone, naming the key; every other call in the
/// batch is decided and written.
#[tokio::test(flavor = "current_thread")]
async fn a_wrong_type_key_fails_only_its_own_call_in_a_batch() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    let quota = Quota::per_second(5);
    let gcra = on_clock::<Gcra>(&server.url(), quota, "wt:".into(), &clock).await;
    let log = on_clock::<SlidingLog>(&server.url(), quota, "wtlog:".into(), &clock).await;
    let victim = gcra.redis_key("k20");
    server.cli(&["RPUSH", &victim, "a"]);
    // On one thread, tasks run in spawn order: the first goes alone, the rest queue behind
    // it and go as one batch, k20 and the group on it in the middle.
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let (gcra, log) = (gcra.clone(), log.clone());
            tokio::spawn(async move {
                let key = format!("k{i}");
                if i % 10 == 5 || i == 20 {
                    let members = [Member::new(&log, &key), Member::new(&gcra, &key)];
                    all_of(&members, 1, Op::Check)
                        .await
                        .map_err(|e| e.to_string())
                } else {
                    gcra.check(&key).await.map_err(|e| match e {
                        RedisError::WrongType { key } => format!("wrong type: {key}"),
                        other => other.to_string(),
                    })
                }
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let result = task.await.unwrap();
        if i == 20 {
            let error = result.expect_err("k20 holds a list");
            assert!(error.contains("another type"), "{error}");
        } else {
            let decision = result.unwrap_or_else(|e| panic!("call {i}: {e}"));
            assert!(decision.is_allowed(), "call {i}");
        }
    }
    let stats = gcra.stats();
    assert!(stats.largest_batch >= 30, "{stats:?}");
    assert_eq!(
        server.cli(&["LRANGE", &victim, "0", "-1"]),
        "a",
        "left untouched"
    );
    // Every other call wrote: each key has one unit used (its group's log too).
    for i in [0, 19, 21, 39] {
        assert_eq!(gcra.peek(&format!("k{i}")).await.unwrap().remaining(), 3);
    }
    assert_eq!(log.peek("k15").await.unwrap().remaining(), 3);
    assert_eq!(
        log.peek("k20").await.unwrap().remaining(),
        4,
        "its group wrote nothing"
    );
    // The same call alone fails the same way.
    assert!(matches!(gcra.check("k20").await, Err(RedisError::WrongType { key }) if key == victim));
}

/// `SCRIPT FLUSH` between and during bursts: the batch script is sent again with `EVAL`, and
/// every call is decided once: with time frozen, exactly the quota is admitted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_flush_during_bursts_loses_no_call() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    let limiter = on_clock::<Gcra>(&server.url(), Quota::per_hour(500), "fl:".into(), &clock).await;
    let mut admitted = 0;
    for round in 0..10 {
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let limiter = limiter.clone();
                tokio::spawn(async move { limiter.check("k").await })
            })
            .collect();
        if round % 2 == 0 {
            server.cli(&["SCRIPT", "FLUSH"]);
        }
        for task in tasks {
            admitted += u32::from(task.await.unwrap().expect("no call fails").is_allowed());
        }
    }
    assert_eq!(
        admitted, 500,
        "640 checks at one instant admit exactly the burst"
    );
    assert!(limiter.stats().largest_batch > 1);
    assert_eq!(limiter.stats().errors, 0);
}

/// Redis killed while many tasks have calls queued and in flight: every call ends within
/// its own timeout (plus scheduling slack) with an outage error or a decision; none hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_under_batched_load_fails_each_call_within_its_timeout() {
    const TIMEOUT: Duration = Duration::from_millis(100);
    // What 128 tasks on a loaded two-core machine may add to a call (also before the kill);
    // a call that hung on the dead connection instead would take seconds.
    const SLACK: Duration = Duration::from_millis(400);
    let mut server = RedisServer::start();
    let limiter = RedisLimiter::<Gcra>::builder(Quota::per_second(1_000_000), &server.url())
        .timeout(TIMEOUT)
        .connect_timeout(Duration::from_millis(200))
        .connect()
        .await
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tasks: Vec<_> = (0..128)
        .map(|t| {
            let (limiter, stop) = (limiter.clone(), stop.clone());
            tokio::spawn(async move {
                let (mut worst, mut ok, mut outages) = (Duration::ZERO, 0u32, 0u32);
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    match limiter.check(&format!("t{t}:{}", i % 7)).await {
                        Ok(_) => ok += 1,
                        Err(e) => {
                            assert!(e.is_outage(), "only outage errors: {e:?}");
                            outages += 1;
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                    worst = worst.max(started.elapsed());
                    i += 1;
                }
                (worst, ok, outages)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = limiter.stats();
    server.kill();
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(5);
    while limiter.check("after").await.is_err() {
        assert!(Instant::now() < deadline, "no recovery after the restart");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut ok, mut outages) = (0, 0);
    for task in tasks {
        let (worst, o, e) = task.await.unwrap();
        assert!(worst <= TIMEOUT + SLACK, "a call took {worst:?}");
        (ok, outages) = (ok + o, outages + e);
    }
    assert!(
        before.largest_batch > 1,
        "batches formed before the kill: {before:?}"
    );
    assert!(ok > 0 && outages > 0, "{ok} decided, {outages} failed");
}

/// Redis paused (it accepts calls and answers none) under batched load: each call, alone,
/// queued or in a batch in flight, times out within its own timeout of when it was made,
/// though the batch carrying it went later and runs on to its own timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_redis_times_out_each_batched_call_on_its_own_deadline() {
    // A call kept to its batch's timeout instead of its own would end up to a timeout later
    // (its batch goes when the call ahead of it times out): 1 s tells the two apart with
    // half a second of slack for a loaded two-core machine.
    const TIMEOUT: Duration = Duration::from_secs(1);
    const SLACK: Duration = Duration::from_millis(500);
    let server = RedisServer::start();
    let limiter = RedisLimiter::<Gcra>::builder(Quota::per_second(1_000_000), &server.url())
        .timeout(TIMEOUT)
        .connect()
        .await
        .unwrap();
    limiter.check("warm").await.unwrap();
    server.cli(&["CLIENT", "PAUSE", "4000", "ALL"]);
    // Waves 100 ms apart: the first call goes alone and the rest queue; the 64th fills a
    // batch that goes at once, the rest go when the lone call times out, each wave's
    // deadline a wave later than the last's.
    let mut waves = Vec::new();
    for wave in 0..3u32 {
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let limiter = limiter.clone();
                tokio::spawn(async move {
                    let started = Instant::now();
                    let result = limiter.check(&format!("w{wave}:{i}")).await;
                    (started.elapsed(), result)
                })
            })
            .collect();
        waves.push(tasks);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut slowest = Duration::ZERO;
    for tasks in waves {
        for task in tasks {
            let (took, result) = task.await.unwrap();
            let error = result.expect_err("Redis is paused");
            assert!(matches!(error, RedisError::Timeout { .. }), "{error:?}");
            assert!(
                took >= TIMEOUT - Duration::from_millis(5),
                "a call timed out early, after {took:?}"
            );
            slowest = slowest.max(took);
        }
    }
    assert!(slowest <= TIMEOUT + SLACK, "a call ended after {slowest:?}");
    assert!(limiter.stats().largest_batch > 1, "{:?}", limiter.stats());
}

/// `batching(false)`: every call goes alone, however many are in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_batching_off_every_call_goes_alone() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    let limiter = RedisLimiter::<Gcra, ManualClock>::builder(Quota::per_hour(100), &server.url())
        .clock(clock)
        .batching(false)
        .connect()
        .await
        .unwrap();
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.check("k").await.unwrap().is_allowed() })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        admitted += u32::from(task.await.unwrap());
    }
    assert_eq!(admitted, 64);
    let stats = limiter.stats();
    assert_eq!(
        (stats.calls, stats.batches, stats.largest_batch),
        (64, 0, 0)
    );
}

/// Many calls on one key in one batch (a hot key): each is decided on the state the one
/// before it left, as if sent one after another, though the script reads the key once and
/// writes it once: exactly the capacity is admitted, each admission's `remaining` one less
/// than the last, and the batch ran one `MGET` and one `SET` per call.
async fn hot_key<A: Algorithm>(server: &RedisServer, quota: Quota, capacity: u32) {
    let clock = ManualClock::starting_at(Duration::from_secs(1_000));
    let prefix = format!("hot{}:", A::KIND.name());
    let limiter = on_clock::<A>(&server.url(), quota, prefix, &clock).await;
    // The script known to Redis first (a NOSCRIPT answer counts as a call).
    limiter.peek("warm").await.unwrap();
    server.cli(&["CONFIG", "RESETSTAT"]);
    // On one thread, tasks run in spawn order: the first goes alone, the rest in one batch.
    let tasks: Vec<_> = (0..48)
        .map(|_| {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.check("k").await.unwrap() })
        })
        .collect();
    let mut remaining = Vec::new();
    for task in tasks {
        let decision = task.await.unwrap();
        if decision.is_allowed() {
            remaining.push(decision.remaining());
        }
    }
    let name = A::KIND.name();
    let expected: Vec<u32> = (0..capacity).rev().collect();
    assert_eq!(remaining, expected, "{name}: admissions in arrival order");
    assert_eq!(limiter.peek("k").await.unwrap().remaining(), 0, "{name}");
    let stats = limiter.stats();
    assert!(stats.largest_batch >= 40, "{name}: {stats:?}");
    let calls = |command: &str| -> u64 {
        let info = server.cli(&["INFO", "commandstats"]);
        info.lines()
            .find_map(|line| line.strip_prefix(&format!("cmdstat_{command}:calls=")))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse().unwrap())
    };
    let scripts = calls("evalsha") + calls("eval");
    assert_eq!(calls("get"), 0, "{name}: states are read by MGET");
    if A::KIND.name() != "sliding-log" {
        assert_eq!(calls("mget"), scripts, "{name}: one read per script");
        assert!(
            calls("set") <= scripts,
            "{name}: one write per script at most"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_hot_key_in_one_batch_is_decided_call_after_call() {
    let server = RedisServer::start();
    let quota = Quota::per_hour(20).with_burst(10);
    hot_key::<Gcra>(&server, quota, 10).await;
    hot_key::<TokenBucket>(&server, quota, 10).await;
    hot_key::<LeakyBucket>(&server, quota, 10).await;
    hot_key::<FixedWindow>(&server, quota, 20).await;
    hot_key::<SlidingWindow>(&server, quota, 20).await;
    hot_key::<SlidingLog>(&server, quota, 20).await;
}

/// On Redis's clock a key's expiry moves only when the TTL rule says it must: checks within
/// one window keep the TTL the window's first write set; the next window's first write moves
/// it. With a client clock, every write sets it.
#[tokio::test(flavor = "current_thread")]
async fn the_expiry_moves_only_when_it_must() {
    let server = RedisServer::start();
    let pttl = |key: &str| -> i64 { server.cli(&["PTTL", key]).parse().unwrap() };
    let limiter = RedisLimiter::<FixedWindow>::connect(Quota::per_hour(1_000), &server.url())
        .await
        .unwrap();
    let key = limiter.redis_key("k");
    limiter.check("k").await.unwrap();
    let first = pttl(&key);
    assert!(first > 0 && first <= 3_600_000, "{first}");
    // A stand-in TTL, lower than the rule would set: kept by writes in the same window.
    server.cli(&["PEXPIRE", &key, "500000"]);
    for _ in 0..5 {
        limiter.check("k").await.unwrap();
    }
    assert!(pttl(&key) <= 500_000, "kept: {}", pttl(&key));
    // A client clock: every write sets the expiry.
    let clock = ManualClock::starting_at(Duration::from_secs(7_200));
    let manual =
        RedisLimiter::<FixedWindow, ManualClock>::builder(Quota::per_hour(1_000), &server.url())
            .clock(clock)
            .prefix("manual:")
            .connect()
            .await
            .unwrap();
    let key = manual.redis_key("k");
    manual.check("k").await.unwrap();
    server.cli(&["PEXPIRE", &key, "500000"]);
    manual.check("k").await.unwrap();
    assert!(pttl(&key) > 3_000_000, "set again: {}", pttl(&key));
}
