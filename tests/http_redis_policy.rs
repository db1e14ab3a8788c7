//! HTTP limits built from policies on Redis: `from_policy_on_redis_connected` decides on Redis
//! from its first request when Redis answers, and is built all the same while Redis is down;
//! `front_end::redis_backend` with each `BackendErrorMode` (`local` decides in process while
//! Redis cannot, and counts it).
#![cfg(all(feature = "redis", feature = "http"))]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::{unused_port, RedisServer};
use sluicegate::http::front_end::{redis_backend, request_parts};
use sluicegate::http::spec::RedisSpec;
use sluicegate::http::{
    BackendErrorMode, ClientIp, RequestLimit, RequestLimiter, Verdict, RATELIMIT,
};
use sluicegate::policy::Policy;
use std::time::{Duration, Instant};

fn policy() -> Policy {
    "name=ip; key=peer-ip; quota=3/minute; algorithm=gcra"
        .parse()
        .expect("a valid policy")
}

async fn limiter(url: &str) -> RequestLimiter {
    let limit =
        RequestLimit::from_policy_on_redis_connected(&policy(), &ClientIp::new(), url, false)
            .await
            .expect("built, whether Redis answers or not");
    RequestLimiter::builder()
        .limit(limit)
        .limiter()
        .expect("one limit")
}

/// The `RateLimit` header of a request from 192.0.2.7: present only when Redis decided (a
/// failed backend lets the request through without it, errors allowing by default).
async fn ratelimit(limiter: &RequestLimiter) -> Option<String> {
    let parts = request_parts("GET", "/", [], Some("192.0.2.7:4000".parse().unwrap()));
    match limiter.decide(&parts).verdict().await {
        Verdict::Pass { headers, .. } => headers
            .iter()
            .find(|(name, _)| *name == RATELIMIT)
            .map(|(_, value)| value.to_str().unwrap().to_owned()),
        Verdict::Refuse(response) => panic!("refused: {response:?}"),
    }
}

#[tokio::test]
async fn the_first_request_is_decided_on_redis_when_it_answers() {
    let redis = RedisServer::start();
    let limiter = limiter(&redis.url()).await;
    assert_eq!(
        ratelimit(&limiter).await.as_deref(),
        Some(r#""ip";r=2;t=20"#)
    );
    assert_eq!(
        ratelimit(&limiter).await.as_deref(),
        Some(r#""ip";r=1;t=40"#)
    );
}

#[tokio::test]
async fn built_while_redis_is_down_it_uses_redis_once_it_answers() {
    let port = unused_port();
    let limiter = limiter(&format!("redis://127.0.0.1:{port}/")).await;
    assert_eq!(ratelimit(&limiter).await, None);
    let _redis = RedisServer::start_on_port(port);
    let deadline = Instant::now() + Duration::from_secs(10);
    let found = loop {
        if let Some(found) = ratelimit(&limiter).await {
            break found;
        }
        assert!(
            Instant::now() < deadline,
            "Redis was never used once it answered"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(found, r#""ip";r=2;t=20"#);
}

/// A limiter of `mode` over the Redis at `url`, and its backend (for its counters).
async fn with_mode(
    url: &str,
    mode: BackendErrorMode,
) -> (RequestLimiter, sluicegate::redis::AnyRedisLimiter) {
    let backend = redis_backend(&policy(), &RedisSpec::new(url), mode, true)
        .await
        .expect("built, whether Redis answers or not");
    let limiter = RequestLimiter::builder()
        .on_backend_error(mode.answer())
        .limit(RequestLimit::new("ip", backend.clone()).key(ClientIp::new()))
        .limiter()
        .expect("one limit");
    (limiter, backend)
}

/// The status (0: passed) and `RateLimit` header of a request from 192.0.2.7.
async fn answer(limiter: &RequestLimiter) -> (u16, Option<String>) {
    let parts = request_parts("GET", "/", [], Some("192.0.2.7:4000".parse().unwrap()));
    let (status, headers) = match limiter.decide(&parts).verdict().await {
        Verdict::Pass { headers, .. } => {
            let found = headers
                .iter()
                .find(|(name, _)| *name == RATELIMIT)
                .map(|(_, value)| value.to_str().unwrap().to_owned());
            return (0, found);
        }
        Verdict::Refuse(response) => (response.status().as_u16(), response.headers().clone()),
    };
    let found = headers
        .get(RATELIMIT)
        .map(|v| v.to_str().unwrap().to_owned());
    (status, found)
}

#[tokio::test]
async fn local_decides_in_process_while_redis_is_down_and_counts_it() {
    let url = format!("redis://127.0.0.1:{}/", unused_port());
    let (limiter, backend) = with_mode(&url, BackendErrorMode::Local).await;
    // 3/minute, decided by an in-process limit of the same quota: three pass, then 429.
    for remaining in [2, 1, 0] {
        let expected = format!(r#""ip";r={remaining};t={}"#, 20 * (3 - remaining));
        assert_eq!(answer(&limiter).await, (0, Some(expected)));
    }
    assert_eq!(answer(&limiter).await.0, 429);
    let stats = backend.stats();
    assert_eq!(stats.fallbacks, 4, "{stats:?}");
    assert_eq!(stats.errors, 4, "{stats:?}");
    assert!(!backend.is_available());
}

#[tokio::test]
async fn allow_and_deny_leave_the_outage_to_the_limiter() {
    let url = format!("redis://127.0.0.1:{}/", unused_port());
    let (allow, backend) = with_mode(&url, BackendErrorMode::Allow).await;
    for _ in 0..4 {
        assert_eq!(answer(&allow).await, (0, None));
    }
    assert_eq!((backend.stats().errors, backend.stats().fallbacks), (4, 0));
    let (deny, _) = with_mode(&url, BackendErrorMode::Deny).await;
    assert_eq!(answer(&deny).await, (503, None));
}

#[tokio::test]
async fn local_decides_on_redis_while_it_answers() {
    let redis = RedisServer::start();
    let (limiter, backend) = with_mode(&redis.url(), BackendErrorMode::Local).await;
    assert_eq!(
        answer(&limiter).await,
        (0, Some(r#""ip";r=2;t=20"#.to_owned()))
    );
    assert_eq!(backend.stats().fallbacks, 0);
    assert!(redis
        .cli(&["--scan", "--pattern", "sluicegate:http:ip:*"])
        .contains("sluicegate:http:ip:{192.0.2.7}"));
}
