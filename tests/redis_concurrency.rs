//! Many tasks, two connections, two limiters standing for two servers, one Redis: with time
//! frozen, exactly the quota is admitted, for every algorithm, while each connection batches
//! the calls that queue behind its call in flight; and on Redis's own clock, a
//! quota whose refill is far slower than the test admits exactly its burst too.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::redis::{RedisLimiter, RedisTime, TimeSource};
use sluicegate::Algorithm;
use sluicegate::Quota;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

const TASKS: usize = 64;
const CHECKS_PER_TASK: usize = 12;
const KEYS: [&str; 3] = ["alice", "bob", "carol"];

/// Two "servers" (limiters with their own connections) hammer three keys from many tasks;
/// returns how many checks each key admitted.
async fn hammer<A: Algorithm, C: TimeSource + Default>(
    url: &str,
    quota: Quota,
    prefix: &str,
    clock: C,
) -> Vec<u32> {
    let mut servers = Vec::new();
    for cache in [true, false] {
        // One server answers repeated denials from its deny cache, the other always asks.
        let limiter = RedisLimiter::<A, C>::builder(quota, url)
            .clock(clock.clone())
            .prefix(prefix)
            .deny_cache(cache)
            .timeout(Duration::from_secs(2))
            .connect()
            .await
            .unwrap();
        servers.push(limiter);
    }
    let admitted: Arc<Vec<AtomicU32>> = Arc::new(KEYS.iter().map(|_| AtomicU32::new(0)).collect());
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let limiter = servers[task % 2].clone();
            let admitted = Arc::clone(&admitted);
            tokio::spawn(async move {
                for i in 0..CHECKS_PER_TASK {
                    let k = (task + i) % KEYS.len();
                    if limiter.check(KEYS[k]).await.unwrap().is_allowed() {
                        admitted[k].fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    for server in &servers {
        let stats = server.stats();
        assert!(
            stats.largest_batch > 1,
            "calls queued into batches: {stats:?}"
        );
    }
    admitted.iter().map(|a| a.load(Ordering::Relaxed)).collect()
}

async fn exactly_the_quota<A: Algorithm>(url: &str, name: &str) {
    // 50 per minute (burst 50): 256 checks per key arrive at one frozen instant.
    let quota = Quota::per_minute(50);
    let clock = ManualClock::starting_at(Duration::from_secs(1_700_000_000));
    let admitted = hammer::<A, ManualClock>(url, quota, &format!("{name}:"), clock).await;
    let expected = 50;
    assert!(
        admitted.iter().all(|&n| n == expected),
        "{name}: admitted {admitted:?}, expected {expected} per key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn frozen_time_admits_exactly_the_quota_for_every_algorithm() {
    let server = RedisServer::start();
    let url = server.url();
    assert!(
        TASKS * CHECKS_PER_TASK / KEYS.len() > 200,
        "each key is flooded"
    );
    exactly_the_quota::<Gcra>(&url, "gcra").await;
    exactly_the_quota::<TokenBucket>(&url, "token-bucket").await;
    exactly_the_quota::<LeakyBucket>(&url, "leaky-bucket").await;
    exactly_the_quota::<FixedWindow>(&url, "fixed-window").await;
    exactly_the_quota::<SlidingWindow>(&url, "sliding-window").await;
    exactly_the_quota::<SlidingLog>(&url, "sliding-log").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_the_redis_clock_a_slow_refill_admits_exactly_the_burst() {
    let server = RedisServer::start();
    let url = server.url();
    // 40 per hour: one more request every 90 s, far longer than the test.
    let quota = Quota::per_hour(40);
    let gcra = hammer::<Gcra, RedisTime>(&url, quota, "time-gcra:", RedisTime).await;
    assert!(gcra.iter().all(|&n| n == 40), "gcra admitted {gcra:?}");
    let log = hammer::<SlidingLog, RedisTime>(&url, quota, "time-log:", RedisTime).await;
    assert!(log.iter().all(|&n| n == 40), "sliding log admitted {log:?}");
}
