//! A local three-master Redis Cluster: keys spread over every node decide exactly as on one
//! server; a composite on one key's slot is one script, and across slots it reserves and
//! undoes, all-or-nothing either way.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisCluster;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::Op;
use sluicegate::backend::{all_of, Member};
use sluicegate::clock::ManualClock;
use sluicegate::redis::{RedisLimiter, RedisTime};
use sluicegate::Algorithm;
use sluicegate::Quota;
use std::time::Duration;

const KEYS: usize = 60;

async fn on_cluster<A: Algorithm>(
    cluster: &RedisCluster,
    quota: Quota,
    prefix: &str,
    clock: &ManualClock,
) -> RedisLimiter<A, ManualClock> {
    RedisLimiter::<A, ManualClock>::builder(quota, &cluster.urls())
        .cluster(true)
        .clock(clock.clone())
        .prefix(prefix)
        .timeout(Duration::from_secs(2))
        .connect()
        .await
        .unwrap()
}

/// Every key admits exactly 3, and the fourth is told to wait for the same instant.
async fn three_per_key<A: Algorithm>(cluster: &RedisCluster, clock: &ManualClock, retry: Duration) {
    let limiter = on_cluster::<A>(cluster, Quota::per_minute(3), "spread:", clock).await;
    for i in 0..KEYS {
        let key = format!("user:{i}");
        for n in 0..3 {
            let decision = limiter.check(&key).await.unwrap();
            assert!(decision.is_allowed(), "{key}, request {n}");
            assert_eq!(decision.remaining(), 2 - n);
        }
        let denied = limiter.check(&key).await.unwrap();
        assert_eq!(denied.retry_after(), Some(retry), "{key}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_spread_over_every_node_decide_exactly() {
    let cluster = RedisCluster::start(3);
    let clock = ManualClock::starting_at(Duration::from_secs(1_700_000_000));
    let (one_slot, window) = (Duration::from_secs(20), Duration::from_secs(60));
    three_per_key::<Gcra>(&cluster, &clock, one_slot).await;
    three_per_key::<TokenBucket>(&cluster, &clock, one_slot).await;
    three_per_key::<LeakyBucket>(&cluster, &clock, one_slot).await;
    // 1,700,000,000 s is 20 s into its minute.
    three_per_key::<FixedWindow>(&cluster, &clock, Duration::from_secs(40)).await;
    // The next window, once the full previous one weighs less than all of it: 1 us in.
    let faded = Duration::from_secs(40) + Duration::from_micros(1);
    three_per_key::<SlidingWindow>(&cluster, &clock, faded).await;
    three_per_key::<SlidingLog>(&cluster, &clock, window).await;
    let sizes: Vec<usize> = cluster
        .nodes()
        .iter()
        .map(|node| node.cli(&["DBSIZE"]).parse().unwrap())
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 6 * KEYS, "{sizes:?}");
    assert!(
        sizes.iter().all(|&n| n >= 6),
        "every node holds keys: {sizes:?}"
    );

    // On the cluster's own clock too.
    let timed = RedisLimiter::<Gcra, RedisTime>::builder(Quota::per_hour(2), &cluster.urls())
        .cluster(true)
        .prefix("timed:")
        .connect()
        .await
        .unwrap();
    for i in 0..KEYS {
        let key = format!("t{i}");
        assert!(timed.check_n(&key, 2).await.unwrap().is_allowed());
        assert!(timed.check(&key).await.unwrap().is_denied());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composites_are_one_script_in_one_slot_and_reserve_undo_across_slots() {
    let cluster = RedisCluster::start(3);
    let clock = ManualClock::new();
    let per_user = on_cluster::<Gcra>(&cluster, Quota::per_second(5), "user:", &clock).await;
    let daily = on_cluster::<SlidingWindow>(&cluster, Quota::per_day(4), "daily:", &clock).await;
    let global = on_cluster::<FixedWindow>(&cluster, Quota::per_second(2), "global:", &clock).await;
    let slot = |tag: &str| cluster.nodes()[0].cli(&["CLUSTER", "KEYSLOT", tag]);
    assert_ne!(
        slot("u1"),
        slot("everyone"),
        "the composite spans two slots"
    );

    // One slot: per-user and per-user-daily on "u1", decided by one script.
    let same_slot = [Member::new(&per_user, "u1"), Member::new(&daily, "u1")];
    let calls = (per_user.stats().calls, daily.stats().calls);
    for _ in 0..4 {
        assert!(all_of(&same_slot, 1, Op::Check).await.unwrap().is_allowed());
    }
    assert!(all_of(&same_slot, 1, Op::Check).await.unwrap().is_denied());
    assert_eq!(per_user.stats().calls, calls.0 + 5);
    assert_eq!(
        daily.stats().calls,
        calls.1,
        "the first member's connection ran them all"
    );
    // The daily limit denied the fifth: the per-user limit kept its fifth unit.
    assert!(per_user.check("u1").await.unwrap().is_allowed());

    // Two slots: per-user "u2" and the global key, through peek, reserve and undo.
    let across = [
        Member::new(&per_user, "u2"),
        Member::new(&global, "everyone"),
    ];
    assert!(all_of(&across, 2, Op::Check).await.unwrap().is_allowed());
    let denied = all_of(&across, 1, Op::Check).await.unwrap();
    assert!(denied.is_denied(), "the global window is full");
    assert_eq!(denied.retry_after(), Some(Duration::from_secs(1)));
    // The denial consumed nothing per user: 3 of 5 are left.
    assert_eq!(per_user.peek_n("u2", 3).await.unwrap().remaining(), 0);
    assert!(per_user.check_n("u2", 3).await.unwrap().is_allowed());
}

/// Many tasks on a few keys (each key its own slot, spread over the nodes): calls batch per
/// slot, and with time frozen every key admits exactly its quota, single checks and
/// two-limit groups on the key's slot alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_batch_per_slot_and_admit_exactly_the_quota() {
    let cluster = RedisCluster::start(3);
    let clock = ManualClock::starting_at(Duration::from_secs(1_700_000_000));
    let quota = Quota::per_minute(50);
    let gcra = on_cluster::<Gcra>(&cluster, quota, "batch:", &clock).await;
    let window =
        on_cluster::<FixedWindow>(&cluster, Quota::per_minute(1_000), "wide:", &clock).await;
    let keys = ["alice", "bob", "carol", "dave"];
    let tasks: Vec<_> = (0..64)
        .map(|task| {
            let (gcra, window) = (gcra.clone(), window.clone());
            tokio::spawn(async move {
                let mut admitted = [0u32; 4];
                for i in 0..8 {
                    let k = (task + i) % keys.len();
                    let allowed = if task % 4 == 0 {
                        let members = [Member::new(&gcra, keys[k]), Member::new(&window, keys[k])];
                        all_of(&members, 1, Op::Check).await.unwrap().is_allowed()
                    } else {
                        gcra.check(keys[k]).await.unwrap().is_allowed()
                    };
                    admitted[k] += u32::from(allowed);
                }
                admitted
            })
        })
        .collect();
    let mut admitted = [0u32; 4];
    for task in tasks {
        for (total, n) in admitted.iter_mut().zip(task.await.unwrap()) {
            *total += n;
        }
    }
    assert_eq!(admitted, [50; 4], "128 checks per key at one instant");
    let stats = gcra.stats();
    assert!(stats.largest_batch > 1, "calls batched per slot: {stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_on_any_node_reaches_every_process_deny_cache() {
    let cluster = RedisCluster::start(3);
    let clock = ManualClock::new();
    let quota = Quota::per_hour(1);
    // Two processes' limiters of one limit; `here` caches denials (and listens on one node).
    let here = on_cluster::<Gcra>(&cluster, quota, "heard:", &clock).await;
    let there = on_cluster::<Gcra>(&cluster, quota, "heard:", &clock).await;
    // Each limiter subscribes in the background and forgets every cached denial when it
    // does: wait for both subscriptions before caching anything, or a slow subscription
    // would empty the cache this test fills.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while reset_subscribers(&cluster, "heard:") < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the limiters never subscribed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}")).collect();
    for key in &keys {
        assert!(here.check(key).await.unwrap().is_allowed());
        assert!(here.check(key).await.unwrap().is_denied());
    }
    assert_eq!(here.deny_cache_len(), KEYS);
    // The keys' slots are on every node; each reset is published where its key lives.
    for key in &keys {
        assert!(there.reset(key).await.unwrap(), "{key}");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while here.deny_cache_len() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} resets unheard",
            here.deny_cache_len()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for key in &keys {
        assert!(here.check(key).await.unwrap().is_allowed(), "{key}");
    }
}

/// Subscribers of the reset channels under `prefix`, summed over the cluster's nodes (each
/// limiter subscribes on one node; every node hears every `PUBLISH`).
fn reset_subscribers(cluster: &RedisCluster, prefix: &str) -> usize {
    let pattern = format!("{prefix}resets:*");
    cluster
        .nodes()
        .iter()
        .map(|node| {
            node.cli(&["PUBSUB", "CHANNELS", &pattern])
                .lines()
                .map(|channel| {
                    let counts = node.cli(&["PUBSUB", "NUMSUB", channel]);
                    counts
                        .lines()
                        .nth(1)
                        .map_or(0, |n| n.parse::<usize>().unwrap_or(0))
                })
                .sum::<usize>()
        })
        .sum()
}
