//! The front-end specification on Redis (a real redis-server): every limit, each quota and
//! each tier, under the HTTP prefix of its name; open tiers made on first use; a front end
//! built while Redis is down; `on_backend_error: local` deciding in process meanwhile.
#![cfg(all(feature = "http", feature = "serde", feature = "redis"))]

#[path = "support/redis_server.rs"]
mod redis_server;

use http::request::Parts;
use redis_server::{unused_port, RedisServer};
use sluicegate::http::front_end::{request_parts, GivenTiers};
use sluicegate::http::spec::FrontEndSpec;
use sluicegate::http::{RequestLimiter, Verdict};
use std::time::{Duration, Instant};

fn spec(json: &str) -> FrontEndSpec {
    serde_json::from_str(json).expect("a spec")
}

fn request(headers: &[(&str, &str)]) -> Parts {
    let headers = headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
    request_parts("GET", "/", headers, Some("192.0.2.7:4000".parse().unwrap()))
}

/// The status and the `RateLimit-Policy` and `RateLimit` headers.
async fn decide(limiter: &RequestLimiter, parts: &Parts) -> (u16, Option<String>, Option<String>) {
    let text = |headers: &http::HeaderMap, name: &str| {
        headers.get(name).map(|v| v.to_str().unwrap().to_owned())
    };
    match limiter.decide(parts).verdict().await {
        Verdict::Pass { headers, .. } => {
            let mut map = http::HeaderMap::new();
            headers.apply(&mut map);
            (200, text(&map, "ratelimit-policy"), text(&map, "ratelimit"))
        }
        Verdict::Refuse(response) => (
            response.status().as_u16(),
            text(response.headers(), "ratelimit-policy"),
            text(response.headers(), "ratelimit"),
        ),
    }
}

#[tokio::test]
async fn quotas_and_tiers_live_under_their_names_prefixes() {
    let redis = RedisServer::start();
    let front_end = spec(&format!(
        r#"{{ "limits": [
            {{ "name": "q", "quota": "2/minute; 9/hour" }},
            {{ "name": "plan", "tiers": {{ "by": "header:x-plan", "default": "free",
               "quotas": {{ "free": "1/minute", "pro": "3/minute; 50/hour" }} }} }}
        ], "redis": "{}" }}"#,
        redis.url()
    ))
    .build_async()
    .await
    .unwrap();
    assert_eq!(front_end.redis_limiters().len(), 5);
    let limiter = front_end.limiter();
    let (status, policy, _) = decide(limiter, &request(&[("x-plan", "pro")])).await;
    assert_eq!(status, 200);
    assert_eq!(
        policy.as_deref(),
        Some(r#""q-1";q=2;w=60, "q-2";q=9;w=3600, "plan-1";q=3;w=60, "plan-2";q=50;w=3600"#)
    );
    let (status, _, ratelimit) = decide(limiter, &request(&[])).await;
    assert_eq!(
        (status, ratelimit.as_deref()),
        (200, Some(r#""plan";r=0;t=60"#))
    );
    assert_eq!(decide(limiter, &request(&[])).await.0, 429);
    for part in ["q-1", "q-2", "plan", "plan-1", "plan-2"] {
        let keys = redis.cli(&["KEYS", &format!("sluicegate:http:{part}:*")]);
        assert!(!keys.trim().is_empty(), "nothing under {part}");
    }
}

#[tokio::test]
async fn open_tiers_are_made_on_redis_when_first_named() {
    let redis = RedisServer::start();
    let front_end = spec(&format!(
        r#"{{ "limits": [{{ "name": "open", "algorithm": "fixed-window",
               "tiers": {{ "by": "given", "open": 2 }} }}],
             "redis": {{ "url": "{}", "connect": "lazy" }} }}"#,
        redis.url()
    ))
    .build_async()
    .await
    .unwrap();
    let with = |tier: &str| {
        let mut parts = request(&[]);
        let mut tiers = GivenTiers::new();
        tiers.insert("open", tier);
        parts.extensions.insert(tiers);
        parts
    };
    let limiter = front_end.limiter();
    let deadline = Instant::now() + Duration::from_secs(10);
    // A lazy connection: the first decisions wait for it within the call timeout.
    let first = loop {
        let decided = decide(limiter, &with("1/60000ms anchored")).await;
        if decided.2.is_some() || Instant::now() > deadline {
            break decided;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(first.1.as_deref(), Some(r#""open";q=1;w=60"#));
    assert_eq!(decide(limiter, &with("1/60000ms anchored")).await.0, 429);
    assert_eq!(decide(limiter, &with("2/60000ms anchored")).await.0, 200);
    assert_eq!(decide(limiter, &with("3/60000ms anchored")).await.0, 500);
    assert!(!redis
        .cli(&["KEYS", "sluicegate:http:open:*"])
        .trim()
        .is_empty());
}

#[tokio::test]
async fn built_while_redis_is_down_and_local_decides_meanwhile() {
    let port = unused_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let started = Instant::now();
    let front_end = spec(&format!(
        r#"{{ "limits": [{{ "name": "ip", "quota": "2/minute" }}],
             "redis": "{url}", "on_backend_error": "local" }}"#
    ))
    .build_async()
    .await
    .expect("built while Redis is down");
    assert!(started.elapsed() < Duration::from_secs(5));
    let limiter = front_end.limiter();
    // Decided in this process while Redis is down: the quota still holds.
    let mut decided = Vec::new();
    for _ in 0..3 {
        decided.push(decide(limiter, &request(&[])).await.0);
    }
    assert_eq!(decided, [200, 200, 429]);
    assert!(!front_end.redis_limiters()[0].is_available());
}
