//! A real local Redis Cluster changing under load: a slot moved to another master (`ASK` while
//! it migrates, `MOVED` after), a replica promoted by `CLUSTER FAILOVER`, and a master killed
//! so that its replica takes over. The limiter follows every change (redis-rs routes, the
//! link sends `EVAL` where the new owner lacks the script); where the data moves whole (a
//! migration, a manual failover) every key still admits exactly its quota, and a call that
//! fails does so as an outage (so the fallback answers it) and never decides anything.
//!
//! While a slot migrates, concurrent calls to it may fail: redis-rs sends `ASKING` to the new
//! owner as a request of its own on the connection every task shares, so another task's
//! command can take the one-shot flag, and the redirected call is sent back (`MOVED`) until
//! its retries run out. The test counts those failures and requires them to be outages
//! confined to the migrating slot and window, with some calls still followed through `ASK`.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisCluster;
use sluicegate::algorithm::Gcra;
use sluicegate::clock::ManualClock;
use sluicegate::redis::RedisLimiter;
use sluicegate::Quota;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Each key's quota: with time frozen, every key admits exactly this many.
const QUOTA: u32 = 90;
/// Concurrent callers (so calls batch per slot).
const CALLERS: usize = 24;
/// A call's timeout: a manual failover pauses writes on the old master for a moment.
const TIMEOUT: Duration = Duration::from_secs(5);
/// How long a test waits for the cluster to change: real timers (replication, elections)
/// in other processes, with the slack a loaded two-core machine needs.
const SETTLED_WITHIN: Duration = Duration::from_secs(30);

async fn limiter(cluster: &RedisCluster, prefix: &str) -> RedisLimiter<Gcra, ManualClock> {
    RedisLimiter::<Gcra, ManualClock>::builder(Quota::per_hour(QUOTA), &cluster.urls())
        .cluster(true)
        .clock(ManualClock::starting_at(Duration::from_secs(1_700_000_000)))
        .prefix(prefix)
        .timeout(TIMEOUT)
        .deny_cache(false)
        .connect()
        .await
        .expect("a cluster limiter")
}

/// Callers checking `keys` in turn until stopped: per key, the calls admitted and denied,
/// and every error with the key it was for.
#[derive(Default, Debug)]
struct Tally {
    admitted: BTreeMap<String, u32>,
    denied: BTreeMap<String, u32>,
    /// Decided calls per (phase, key).
    decided: BTreeMap<(u8, String), u32>,
    /// Each failed call: its key, the phase it ended in, whether it was an outage, the error.
    errors: Vec<(String, u8, bool, String)>,
}

struct Load {
    /// What the test is doing to the cluster, as the calls see it when they end.
    phase: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    calls: Arc<AtomicU64>,
    tally: Arc<Mutex<Tally>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(limiter: &RedisLimiter<Gcra, ManualClock>, keys: &[String]) -> Load {
        let phase = Arc::new(AtomicU8::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let calls = Arc::new(AtomicU64::new(0));
        let tally = Arc::new(Mutex::new(Tally::default()));
        let tasks = (0..CALLERS)
            .map(|caller| {
                let (limiter, keys) = (limiter.clone(), keys.to_vec());
                let (phase, stop) = (phase.clone(), stop.clone());
                let (calls, tally) = (calls.clone(), tally.clone());
                tokio::spawn(async move {
                    let mut i = caller;
                    while !stop.load(Relaxed) {
                        let key = &keys[i % keys.len()];
                        let result = limiter.check(key).await;
                        let now = phase.load(Relaxed);
                        let mut tally = tally.lock().unwrap();
                        if result.is_ok() {
                            *tally.decided.entry((now, key.clone())).or_default() += 1;
                        }
                        match result {
                            Ok(d) if d.is_allowed() => {
                                *tally.admitted.entry(key.clone()).or_default() += 1
                            }
                            Ok(_) => *tally.denied.entry(key.clone()).or_default() += 1,
                            Err(e) => {
                                tally
                                    .errors
                                    .push((key.clone(), now, e.is_outage(), e.to_string()))
                            }
                        }
                        drop(tally);
                        calls.fetch_add(1, Relaxed);
                        i += 1;
                    }
                })
            })
            .collect();
        Load {
            phase,
            stop,
            calls,
            tally,
            tasks,
        }
    }

    /// Waits until `more` calls have ended since this was called.
    async fn run_for(&self, more: u64) {
        let target = self.calls.load(Relaxed) + more;
        let deadline = Instant::now() + SETTLED_WITHIN;
        while self.calls.load(Relaxed) < target {
            assert!(
                Instant::now() < deadline,
                "the load stalled: {:?}",
                self.tally.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn enter(&self, phase: u8) {
        self.phase.store(phase, Relaxed);
    }

    async fn stop(self) -> Tally {
        self.stop.store(true, Relaxed);
        for task in self.tasks {
            task.await.expect("no caller panicked");
        }
        Arc::try_unwrap(self.tally).unwrap().into_inner().unwrap()
    }
}

/// Every key was asked more than its quota and admitted exactly its quota.
fn exact(tally: &Tally, keys: &[String]) {
    for key in keys {
        assert!(
            tally.denied.get(key).copied().unwrap_or(0) > 0,
            "{key} was not asked past its quota: {tally:?}"
        );
        assert_eq!(
            tally.admitted.get(key).copied().unwrap_or(0),
            QUOTA,
            "{key}: {tally:?}"
        );
    }
}

/// `errorstat_NOSCRIPT` of a node: the `EVALSHA`s it answered with "no such script".
fn noscript_errors(cluster: &RedisCluster, node: usize) -> u64 {
    let stats = cluster.nodes()[node].cli(&["INFO", "errorstats"]);
    stats
        .lines()
        .find_map(|line| line.strip_prefix("errorstat_NOSCRIPT:count="))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// A role line of `INFO replication`: `master` or `slave`.
fn role(cluster: &RedisCluster, node: usize) -> String {
    let info = cluster.nodes()[node].cli(&["INFO", "replication"]);
    info.lines()
        .find_map(|line| line.strip_prefix("role:"))
        .unwrap_or("")
        .trim()
        .to_owned()
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + SETTLED_WITHIN;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{what}: not within {SETTLED_WITHIN:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The phases of a slot's migration, as the calls see them.
const BEFORE: u8 = 0;
const MIGRATING: u8 = 1;
const ASKING: u8 = 2;
const MOVED: u8 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_moved_under_load_loses_no_state_and_admits_exactly_each_quota() {
    let cluster = RedisCluster::start(3);
    let limiter = limiter(&cluster, "moving:").await;
    // The hot key, on the slot to move, and keys on the other slots.
    let hot = "hot".to_owned();
    let slot = cluster.slot(&hot);
    let source = cluster.owner(slot);
    let target = (source + 1) % 3;
    let keys: Vec<String> = (0..6)
        .map(|i| format!("k{i}"))
        .chain([hot.clone()])
        .collect();
    // The new owner has never run the script.
    cluster.nodes()[target].cli(&["SCRIPT", "FLUSH"]);
    let noscript_before = noscript_errors(&cluster, target);

    let load = Load::start(&limiter, &keys);
    load.run_for(200).await;
    let (source_id, target_id) = (cluster.id(source), cluster.id(target));
    let slot_text = slot.to_string();
    let node = |i: usize| &cluster.nodes()[i];
    node(target).cli(&["CLUSTER", "SETSLOT", &slot_text, "IMPORTING", &source_id]);
    node(source).cli(&["CLUSTER", "SETSLOT", &slot_text, "MIGRATING", &target_id]);
    load.enter(MIGRATING);
    load.run_for(100).await;
    // The hot key moves: from now on the source answers ASK for it.
    load.enter(ASKING);
    let moved_keys = node(source).cli(&["CLUSTER", "GETKEYSINSLOT", &slot_text, "100"]);
    assert!(!moved_keys.is_empty(), "the hot key is on its slot");
    let target_port = node(target).port().to_string();
    for key in moved_keys.lines() {
        let reply = node(source).cli(&["MIGRATE", "127.0.0.1", &target_port, key, "0", "5000"]);
        assert_eq!(reply, "OK", "MIGRATE {key}");
    }
    load.run_for(200).await;
    // The slot is the target's (told first, as Redis's manual asks): MOVED from the others.
    for i in [target, source, 3 - target - source] {
        node(i).cli(&["CLUSTER", "SETSLOT", &slot_text, "NODE", &target_id]);
    }
    load.enter(MOVED);
    load.run_for(500).await;
    let tally = load.stop().await;

    assert_eq!(cluster.owner(slot), target);
    assert_eq!(
        node(source).cli(&["CLUSTER", "COUNTKEYSINSLOT", &slot_text]),
        "0"
    );
    assert_eq!(
        node(target).cli(&["CLUSTER", "COUNTKEYSINSLOT", &slot_text]),
        "1"
    );
    // Nothing lost, nothing admitted twice: a call redirected and failed was never run.
    exact(&tally, &keys);
    // Calls fail only while the slot migrates, only on it, and only as outages.
    for (key, phase, outage, error) in &tally.errors {
        assert!(
            key == &hot && *phase == ASKING && *outage,
            "{key} failed in phase {phase}: {error}"
        );
    }
    let decided = |phase: u8| {
        tally
            .decided
            .get(&(phase, hot.clone()))
            .copied()
            .unwrap_or(0)
    };
    assert!(decided(BEFORE) > 0 && decided(MIGRATING) > 0);
    assert!(
        decided(ASKING) > 0,
        "no call followed ASK: {:?}",
        tally.errors
    );
    assert!(decided(MOVED) > 0, "no call followed MOVED");
    assert!(
        noscript_errors(&cluster, target) > noscript_before,
        "the new owner lacked the script, and the limiter sent it"
    );
    eprintln!(
        "while the slot migrated: {} calls to it decided, {} failed",
        decided(ASKING),
        tally.errors.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_promoted_by_cluster_failover_takes_over_and_every_count_stays_exact() {
    let cluster = RedisCluster::start_with_replicas(3, 1, &[]);
    let limiter = limiter(&cluster, "failover:").await;
    let hot = "hot".to_owned();
    let old_master = cluster.owner(cluster.slot(&hot));
    let replica = cluster.replica_of(old_master);
    let keys: Vec<String> = (0..6)
        .map(|i| format!("k{i}"))
        .chain([hot.clone()])
        .collect();
    // Scripts are replicated as their writes: the replica never cached the script.
    let noscript_before = noscript_errors(&cluster, replica);

    let load = Load::start(&limiter, &keys);
    load.run_for(300).await;
    // A manual failover: the master pauses writes until the replica has them all.
    assert_eq!(cluster.nodes()[replica].cli(&["CLUSTER", "FAILOVER"]), "OK");
    wait_for("the replica promoted", || {
        role(&cluster, replica) == "master" && role(&cluster, old_master) == "slave"
    })
    .await;
    load.run_for(600).await;
    let tally = load.stop().await;

    assert_eq!(cluster.owner(cluster.slot(&hot)), replica);
    assert!(tally.errors.is_empty(), "calls failed: {:?}", tally.errors);
    exact(&tally, &keys);
    assert!(
        noscript_errors(&cluster, replica) > noscript_before,
        "the promoted replica lacked the script, and the limiter sent it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_master_fails_only_its_own_keys_until_its_replica_takes_over() {
    // The other masters keep serving while a slot range has no master (Redis's default stops
    // the whole cluster then: `cluster-require-full-coverage yes`).
    let mut cluster =
        RedisCluster::start_with_replicas(3, 1, &["--cluster-require-full-coverage", "no"]);
    let limiter = limiter(&cluster, "killed:").await;
    let hot = "hot".to_owned();
    let dead = cluster.owner(cluster.slot(&hot));
    let replica = cluster.replica_of(dead);
    // Keys on the other masters only (besides the hot one).
    let others: Vec<String> = (0..100)
        .map(|i| format!("k{i}"))
        .filter(|key| cluster.owner(cluster.slot(key)) != dead)
        .take(6)
        .collect();
    let keys: Vec<String> = others.iter().cloned().chain([hot.clone()]).collect();

    let load = Load::start(&limiter, &keys);
    load.run_for(300).await;
    load.enter(1);
    cluster.nodes_mut()[dead].kill();
    // After the node timeout (2 s) the replica is elected; until then the hot key's calls
    // fail (refused connections, timeouts) and the others' go on.
    wait_for("the replica elected", || {
        role(&cluster, replica) == "master"
    })
    .await;
    cluster.wait_until_settled(SETTLED_WITHIN);
    load.enter(2);
    load.run_for(600).await;
    let tally = load.stop().await;

    assert_eq!(cluster.owner(cluster.slot(&hot)), replica);
    for (key, phase, outage, error) in &tally.errors {
        assert!(
            key == &hot && *outage,
            "{key} failed in phase {phase}: {error}"
        );
    }
    // Once the cluster settled, at most the calls already out to the dead node fail.
    let late = tally
        .errors
        .iter()
        .filter(|(_, phase, ..)| *phase == 2)
        .count();
    assert!(
        late <= CALLERS,
        "{late} calls failed after the takeover: {:?}",
        tally.errors
    );
    assert!(
        tally.decided.get(&(2, hot.clone())).copied().unwrap_or(0) > 0,
        "the hot key is decided by its new master"
    );
    // The other keys never noticed: exact.
    exact(&tally, &others);
}
