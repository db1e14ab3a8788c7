//! The local deny cache: exact (on the limiter's clock, the numbers Redis would give), aware
//! of cost, never used by hits, and saving nearly every round trip of a denied flood.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use sluicegate::algorithm::{Gcra, SlidingWindow};
use sluicegate::clock::ManualClock;
use sluicegate::redis::RedisLimiter;
use sluicegate::Algorithm;
use sluicegate::{Decision, Quota};
use std::time::Duration;

fn summary(d: &Decision) -> (bool, u32, Option<Duration>, Duration, Duration) {
    (
        d.is_allowed(),
        d.remaining(),
        d.retry_after(),
        d.reset_after(),
        d.wait(),
    )
}

/// A limiter on `clock` under `prefix`, with or without the cache.
async fn limiter<A: Algorithm>(
    url: &str,
    quota: Quota,
    prefix: &str,
    clock: &ManualClock,
    cache: bool,
) -> RedisLimiter<A, ManualClock> {
    RedisLimiter::<A, ManualClock>::builder(quota, url)
        .clock(clock.clone())
        .prefix(prefix)
        .deny_cache(cache)
        .timeout(Duration::from_secs(1))
        .connect()
        .await
        .unwrap()
}

#[tokio::test]
async fn cached_denials_carry_exactly_the_numbers_redis_gives() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    // 5 per second, burst 5: one request every 200 ms.
    let quota = Quota::per_second(5);
    let cached = limiter::<Gcra>(&server.url(), quota, "shared:", &clock, true).await;
    // The same state, read without the cache: what Redis says.
    let direct = limiter::<Gcra>(&server.url(), quota, "shared:", &clock, false).await;

    assert!(cached.check_n("k", 5).await.unwrap().is_allowed());
    let denied = cached.check_n("k", 3).await.unwrap();
    assert_eq!(denied.retry_after(), Some(Duration::from_millis(600)));
    let calls = cached.stats().calls;

    for elapsed_ms in [0u64, 1, 150, 199] {
        clock.set(Duration::from_millis(elapsed_ms));
        for cost in [1, 3] {
            let local = cached.check_n("k", cost).await.unwrap();
            let redis = direct.peek_n("k", cost).await.unwrap();
            assert!(local.is_denied());
            assert_eq!(
                summary(&local),
                summary(&redis),
                "cost {cost} at {elapsed_ms} ms"
            );
            let local_peek = cached.peek_n("k", cost).await.unwrap();
            assert_eq!(summary(&local_peek), summary(&redis));
        }
    }
    let stats = cached.stats();
    assert_eq!(stats.calls, calls, "every one of those came from the cache");
    assert_eq!(stats.deny_cache_hits, 16);

    // Cost-aware: a denial of 3 says nothing exact about 2, which asks Redis.
    cached.check_n("k", 2).await.unwrap();
    assert_eq!(cached.stats().calls, calls + 1);

    // At exactly the instant a single request is admitted, Redis is asked, and admits.
    clock.set(Duration::from_millis(200));
    let admitted = cached.check("k").await.unwrap();
    assert!(admitted.is_allowed(), "{admitted:?}");
    assert_eq!(cached.stats().calls, calls + 2);
}

#[tokio::test]
async fn a_denial_that_leaves_room_for_one_caches_nothing() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    let quota = Quota::per_minute(4);
    let cached = limiter::<SlidingWindow>(&server.url(), quota, "room:", &clock, true).await;
    assert!(cached.check_n("k", 3).await.unwrap().is_allowed());
    // 3 of 4 used: a request of 2 is denied, but a single one fits.
    let denied = cached.check_n("k", 2).await.unwrap();
    assert!(denied.is_denied());
    assert_eq!(denied.remaining(), 1);
    assert_eq!(cached.deny_cache_len(), 0);
    let calls = cached.stats().calls;
    assert!(cached.check("k").await.unwrap().is_allowed());
    assert_eq!(cached.stats().calls, calls + 1);
    assert_eq!(cached.stats().deny_cache_hits, 0);
}

#[tokio::test]
async fn hits_always_ask_redis_and_refresh_the_cache() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    let quota = Quota::per_second(2);
    let cached = limiter::<Gcra>(&server.url(), quota, "hits:", &clock, true).await;
    let direct = limiter::<Gcra>(&server.url(), quota, "hits:", &clock, false).await;
    assert!(cached.check_n("k", 2).await.unwrap().is_allowed());
    assert!(cached.check("k").await.unwrap().is_denied()); // cached now: retry 500 ms
    let calls = cached.stats().calls;
    // A hit goes to Redis even though the cache holds a denial, and records its debt.
    let hit = cached.hit("k", 3).await.unwrap();
    assert!(hit.is_denied());
    assert_eq!(cached.stats().calls, calls + 1);
    assert_eq!(hit.retry_after(), Some(Duration::from_millis(2_000)));
    // The cache learned the debt: its answer is Redis's.
    clock.set(Duration::from_millis(700));
    let local = cached.check("k").await.unwrap();
    assert_eq!(cached.stats().calls, calls + 1);
    assert_eq!(summary(&local), summary(&direct.peek("k").await.unwrap()));
    assert_eq!(local.retry_after(), Some(Duration::from_millis(1_300)));
}

/// One client keeps asking, a request every millisecond for 10 s of (manual) time, against
/// 10 per second: both limiters give the same answers at every step, and the cache saves
/// nearly every round trip.
#[tokio::test]
async fn a_denied_flood_costs_one_call_per_retry_after() {
    let server = RedisServer::start();
    let quota = Quota::per_second(10);
    let clock = ManualClock::starting_at(Duration::from_secs(1_000));
    let cached = limiter::<Gcra>(&server.url(), quota, "flood-a:", &clock, true).await;
    let direct = limiter::<Gcra>(&server.url(), quota, "flood-b:", &clock, false).await;
    let mut admitted = 0;
    for _ in 0..10_000 {
        clock.advance(Duration::from_millis(1));
        let a = cached.check("client").await.unwrap();
        let b = direct.check("client").await.unwrap();
        assert_eq!(summary(&a), summary(&b));
        admitted += u32::from(a.is_allowed());
    }
    let (with, without) = (cached.stats().calls, direct.stats().calls);
    assert_eq!(without, 10_000);
    // A burst of 10, then one every 100 ms: about 110 admitted, and after each admission one
    // denial reaches Redis, whose retry_after the cache then waits out.
    assert!((100..=111).contains(&admitted), "{admitted} admitted");
    assert!(
        with <= 2 * u64::from(admitted) + 2,
        "{with} calls with the cache"
    );
    assert_eq!(cached.stats().deny_cache_hits, 10_000 - with);
    println!(
        "Redis calls per 10,000 requests of one denied client: {with} with the deny cache, \
         {without} without"
    );
}
