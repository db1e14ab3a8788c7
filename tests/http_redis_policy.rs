//! HTTP limits built from policies on Redis: `from_policy_on_redis_connected` decides on Redis
//! from its first request when Redis answers, and is built all the same while Redis is down.
#![cfg(all(feature = "redis", feature = "http"))]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::{unused_port, RedisServer};
use sluicegate::http::front_end::request_parts;
use sluicegate::http::{ClientIp, RequestLimit, RequestLimiter, Verdict, RATELIMIT};
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
