//! Without a client clock, every decision is made on Redis's `TIME`: waiting out the
//! `retry_after` it reports is what admits again, and windows align to Redis's wall clock.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use sluicegate::algorithm::{FixedWindow, Gcra, SlidingLog};
use sluicegate::clock::ManualClock;
use sluicegate::redis::RedisLimiter;
use sluicegate::Quota;
use std::time::Duration;

/// Redis's `TIME`, in microseconds since the UNIX epoch.
fn redis_time_us(server: &RedisServer) -> u64 {
    let time = server.cli(&["TIME"]);
    let mut parts = time.lines().map(|line| line.trim().parse::<u64>().unwrap());
    parts.next().unwrap() * 1_000_000 + parts.next().unwrap()
}

#[tokio::test]
async fn decisions_follow_redis_time_across_a_short_period() {
    let server = RedisServer::start();
    // Two per 300 ms: a new request every 150 ms.
    let quota = Quota::new(2, Duration::from_millis(300)).unwrap();
    let limiter = RedisLimiter::<Gcra>::builder(quota, &server.url())
        .deny_cache(false)
        .timeout(Duration::from_secs(1))
        .connect()
        .await
        .unwrap();
    assert!(limiter.check("k").await.unwrap().is_allowed());
    assert!(limiter.check("k").await.unwrap().is_allowed());
    let denied = limiter.check("k").await.unwrap();
    assert!(denied.is_denied());
    let retry = denied.retry_after().unwrap();
    assert!(
        retry > Duration::from_millis(50) && retry <= Duration::from_millis(150),
        "{retry:?}: the next slot is 150 ms after the first request"
    );
    // Time passes on the server only: nothing local is involved in the decision.
    tokio::time::sleep(retry).await;
    let again = limiter.check("k").await.unwrap();
    assert!(again.is_allowed(), "{again:?}");
    assert!(limiter.check("k").await.unwrap().is_denied());

    // The sliding log too: sleeping one period empties it.
    let log = RedisLimiter::<SlidingLog>::builder(quota, &server.url())
        .deny_cache(false)
        .connect()
        .await
        .unwrap();
    assert!(log.check_n("k", 2).await.unwrap().is_allowed());
    let denied = log.check("k").await.unwrap();
    assert!(denied.is_denied());
    tokio::time::sleep(denied.retry_after().unwrap()).await;
    assert!(log.check("k").await.unwrap().is_allowed());
}

#[tokio::test]
async fn windows_align_to_redis_wall_clock() {
    let server = RedisServer::start();
    let quota = Quota::per_second(1);
    let limiter = RedisLimiter::<FixedWindow>::connect(quota, &server.url())
        .await
        .unwrap();
    let before = redis_time_us(&server);
    let decision = limiter.check("k").await.unwrap();
    let after = redis_time_us(&server);
    assert!(decision.is_allowed());
    // The window ends at Redis's next whole second.
    let reset = decision.reset_after().as_micros() as u64;
    let earliest = 1_000_000 - after % 1_000_000;
    let latest = 1_000_000 - before % 1_000_000;
    let crossed = after / 1_000_000 != before / 1_000_000;
    assert!(
        crossed || (earliest..=latest).contains(&reset),
        "reset_after {reset} us, Redis's second ends in {earliest}..={latest} us"
    );

    // A client clock replaces TIME: at 0.25 s past the epoch the window has 0.75 s left.
    let clock = ManualClock::starting_at(Duration::from_millis(250));
    let manual = RedisLimiter::<FixedWindow, ManualClock>::builder(quota, &server.url())
        .clock(clock)
        .prefix("manual:")
        .connect()
        .await
        .unwrap();
    let decision = manual.check("k").await.unwrap();
    assert_eq!(decision.reset_after(), Duration::from_millis(750));
}
