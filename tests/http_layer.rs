//! The rate-limit layer end to end: a real axum server on 127.0.0.1, real hyper clients over
//! HTTP/1.1 (keep-alive) and HTTP/2, headers parsed as Structured Fields and checked against
//! the decisions of twin limiters fed the same requests.
#![cfg(all(feature = "http", feature = "tokio"))]

mod http_support;

use axum::extract::ConnectInfo;
use axum::routing::get;
use axum::Router;
use http_support::net::{self, get as fetch, HttpClient};
use http_support::sf::parse_list;
use sluicegate::algorithm::{FixedWindow, Gcra, LeakyBucket};
use sluicegate::backend::{Backend, BackendError, BackendErrorKind, Call, Op};
use sluicegate::clock::ManualClock;
use sluicegate::http::{HeaderKey, OnBackendError, ProblemJson, RateLimitLayer, RequestLimit};
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Whole seconds, rounded up.
fn ceil(d: Duration) -> i64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)) as i64
}

fn hello() -> Router {
    Router::new().route("/", get(|| async { "ok" }))
}

/// Checks `RateLimit` and `RateLimit-Policy` as Structured Fields: the policy lists every
/// limit, and `RateLimit` names one with its `r` and `t`. Returns (name, r, t).
fn ratelimit(reply: &net::Reply, policy: &[(&str, i64, Option<i64>)]) -> (String, i64, i64) {
    let items = parse_list(reply.header("ratelimit-policy").expect("RateLimit-Policy")).unwrap();
    assert_eq!(items.len(), policy.len());
    for (item, (name, q, w)) in items.iter().zip(policy) {
        assert_eq!(item.string(), Some(*name));
        assert_eq!(item.int("q"), Some(*q));
        assert_eq!(item.int("w"), *w);
    }
    let items = parse_list(reply.header("ratelimit").expect("RateLimit")).unwrap();
    assert_eq!(items.len(), 1);
    let item = &items[0];
    (
        item.string().unwrap().to_owned(),
        item.int("r").unwrap(),
        item.int("t").unwrap(),
    )
}

async fn one_limit_matches_its_twin(client: HttpClient, version: http::Version) {
    let clock = ManualClock::new();
    let quota = Quota::per_second(3);
    let served = KeyedLimiter::<String, Gcra, _>::with_clock(quota, clock.clone()).unwrap();
    let twin = KeyedLimiter::<String, Gcra, _>::with_clock(quota, clock.clone()).unwrap();
    let ports = Arc::new(Mutex::new(Vec::new()));
    let seen = ports.clone();
    let app = Router::new()
        .route(
            "/",
            get(move |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
                seen.lock().unwrap().push(peer.port());
                async { "ok" }
            }),
        )
        .layer(
            RateLimitLayer::new(
                RequestLimit::new("per-key", served).key(HeaderKey::parse("x-key").unwrap()),
            )
            .unwrap(),
        );
    let address = net::serve(app, "127.0.0.1:0").await;
    let policy = [("per-key", 3, Some(1))];
    for step in 0..8 {
        clock.advance(Duration::from_millis(130));
        let reply = fetch(&client, address, &[("x-key", "alice")]).await;
        assert_eq!(reply.version, version);
        let expected = twin.check("alice");
        let (name, r, t) = ratelimit(&reply, &policy);
        assert_eq!(name, "per-key");
        assert_eq!(r, i64::from(expected.remaining()), "step {step}");
        if expected.is_allowed() {
            assert_eq!(reply.status, 200, "step {step}");
            assert_eq!(reply.body, "ok");
            assert_eq!(t, ceil(expected.reset_after()));
            assert_eq!(reply.header("retry-after"), None);
        } else {
            assert_eq!(reply.status, 429, "step {step}");
            let retry = ceil(expected.retry_after().unwrap());
            assert_eq!(t, retry);
            assert_eq!(
                reply.header("retry-after"),
                Some(retry.to_string().as_str())
            );
            assert!(reply
                .body
                .contains("too many requests for limit \"per-key\""));
        }
    }
    // Another key has its own quota.
    let reply = fetch(&client, address, &[("x-key", "bob")]).await;
    assert_eq!((reply.status, ratelimit(&reply, &policy).1), (200, 2));
    if version == http::Version::HTTP_11 {
        // Keep-alive: every request came over one connection (one client port).
        let ports = ports.lock().unwrap();
        assert!(
            ports.len() >= 3 && ports.iter().all(|p| *p == ports[0]),
            "{ports:?}"
        );
    }
}

#[tokio::test]
async fn http1_keep_alive_headers_match_the_decisions() {
    one_limit_matches_its_twin(net::http1(), http::Version::HTTP_11).await;
}

#[tokio::test]
async fn http2_headers_match_the_decisions() {
    one_limit_matches_its_twin(net::http2(), http::Version::HTTP_2).await;
}

#[tokio::test]
async fn several_limits_report_the_tightest_and_a_denial_consumes_nothing() {
    let clock = ManualClock::new();
    let burst =
        Arc::new(Limiter::<Gcra, _>::with_clock(Quota::per_second(10), clock.clone()).unwrap());
    let hourly = Arc::new(
        KeyedLimiter::<String, FixedWindow, _>::with_clock(Quota::per_hour(4), clock.clone())
            .unwrap(),
    );
    let costly = Arc::new(
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_minute(6), clock.clone()).unwrap(),
    );
    let layer = RateLimitLayer::builder()
        .limit(RequestLimit::shared("burst", burst.clone()))
        .limit(RequestLimit::shared("hour", hourly.clone()).key(HeaderKey::parse("x-key").unwrap()))
        .limit(
            RequestLimit::shared("cost", costly.clone())
                .key(HeaderKey::parse("x-key").unwrap())
                .cost_fn(|request| {
                    request
                        .headers
                        .get("x-cost")
                        .and_then(|v| v.to_str().ok()?.parse().ok())
                        .unwrap_or(1)
                }),
        )
        .build()
        .unwrap();
    let address = net::serve(hello().layer(layer), "127.0.0.1:0").await;
    let client = net::http1();
    let policy = [
        ("burst", 10, Some(1)),
        ("hour", 4, Some(3600)),
        ("cost", 6, Some(60)),
    ];

    // burst 9 left, hour 3, cost 5: the hour is tightest.
    let reply = fetch(&client, address, &[("x-key", "a")]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(ratelimit(&reply, &policy), ("hour".into(), 3, 3600));
    // Costing 4 leaves cost 1 while hour has 2: the cost limit is tightest now.
    let reply = fetch(&client, address, &[("x-key", "a"), ("x-cost", "4")]).await;
    assert_eq!(reply.status, 200);
    let (name, r, _) = ratelimit(&reply, &policy);
    assert_eq!((name.as_str(), r), ("cost", 1));
    // Costing 2 is denied by "cost" alone, and consumes nothing anywhere.
    let before = (burst.peek().remaining(), hourly.peek("a").remaining());
    let reply = fetch(&client, address, &[("x-key", "a"), ("x-cost", "2")]).await;
    assert_eq!(reply.status, 429);
    let (name, r, t) = ratelimit(&reply, &policy);
    assert_eq!((name.as_str(), r), ("cost", 1));
    // One more unit of the 6/minute comes every 10 s; the request needs one more.
    assert_eq!(t, 10);
    assert_eq!(reply.header("retry-after"), Some("10"));
    assert_eq!(
        before,
        (burst.peek().remaining(), hourly.peek("a").remaining())
    );
    // A cost above the capacity is the client's to fix: 413, never 429.
    let reply = fetch(&client, address, &[("x-key", "a"), ("x-cost", "7")]).await;
    assert_eq!(reply.status, 413);
    assert!(
        reply
            .body
            .contains("more than the 6 limit \"cost\" can ever admit"),
        "{}",
        reply.body
    );
    assert_eq!(reply.header("retry-after"), None);
}

#[tokio::test]
async fn missing_or_unusable_keys_are_400_with_a_reason() {
    let limiter = KeyedLimiter::<String>::new(Quota::per_second(100)).unwrap();
    let layer = RateLimitLayer::new(
        RequestLimit::new("token", limiter).key(HeaderKey::parse("x-api-key").unwrap().max_len(16)),
    )
    .unwrap();
    let address = net::serve(hello().layer(layer), "127.0.0.1:0").await;
    let client = net::http1();
    let missing = fetch(&client, address, &[]).await;
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.body,
        "limit \"token\": the x-api-key header is missing or empty\n"
    );
    let twice = fetch(&client, address, &[("x-api-key", "a"), ("x-api-key", "b")]).await;
    assert_eq!(twice.status, 400);
    assert!(twice.body.contains("more than once"));
    let long = fetch(&client, address, &[("x-api-key", "0123456789abcdefg")]).await;
    assert_eq!(long.status, 400);
    assert!(long.body.contains("longer than 16 bytes"));
    // A non-UTF-8 value is a key like any other (escaped losslessly), not an error.
    let request = http::Request::get(format!("http://{address}/"))
        .header(
            "x-api-key",
            http::HeaderValue::from_bytes(b"k\xff").unwrap(),
        )
        .body(http_body_util::Empty::new())
        .unwrap();
    assert_eq!(client.request(request).await.unwrap().status(), 200);
}

/// A backend that is always down.
struct Down;

impl Backend<str> for Down {
    fn quota(&self) -> Quota {
        Quota::per_second(1)
    }
    fn max_cost(&self) -> u32 {
        1
    }
    fn decide<'a>(&'a self, _key: &'a str, _cost: u32, _op: Op) -> Call<'a> {
        Call::new(async { Err(BackendError::new(BackendErrorKind::Timeout, "no answer")) })
    }
}

#[tokio::test]
async fn backend_errors_allow_by_default_keeping_the_other_limits() {
    let local = Limiter::<Gcra>::new(Quota::per_minute(1)).unwrap();
    let layer = RateLimitLayer::builder()
        .limit(RequestLimit::new("shared", Down))
        .limit(RequestLimit::new("local", local))
        .build()
        .unwrap();
    let address = net::serve(hello().layer(layer), "127.0.0.1:0").await;
    let client = net::http1();
    let first = fetch(&client, address, &[]).await;
    assert_eq!(first.status, 200);
    // The failed limit is left out; the local one still answers and still limits.
    let (name, r, _) = ratelimit(&first, &[("shared", 1, Some(1)), ("local", 1, Some(60))]);
    assert_eq!((name.as_str(), r), ("local", 0));
    assert_eq!(fetch(&client, address, &[]).await.status, 429);
}

#[tokio::test]
async fn backend_errors_deny_with_503_when_asked() {
    let layer = RateLimitLayer::builder()
        .limit(RequestLimit::new("shared", Down))
        .on_backend_error(OnBackendError::Deny)
        .responder(ProblemJson)
        .build()
        .unwrap();
    let address = net::serve(hello().layer(layer), "127.0.0.1:0").await;
    let reply = fetch(&net::http2(), address, &[]).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(
        reply.header("content-type"),
        Some("application/problem+json")
    );
    let body: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(body["status"], 503);
    assert_eq!(
        body["type"],
        "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
    );
    assert_eq!(body["violated-policies"][0], "shared");
}

/// An in-process limiter seen through a backend that answers later, as a remote one does.
struct Remote(KeyedLimiter<String, Gcra, ManualClock>);

impl Backend<str> for Remote {
    fn quota(&self) -> Quota {
        Backend::<str>::quota(&self.0)
    }
    fn max_cost(&self) -> u32 {
        Backend::<str>::max_cost(&self.0)
    }
    fn decide<'a>(&'a self, key: &'a str, cost: u32, op: Op) -> Call<'a> {
        Call::new(async move {
            tokio::task::yield_now().await;
            self.0.decide(key, cost, op).await
        })
    }
}

#[tokio::test]
async fn remote_backends_decide_alike_through_the_boxed_path() {
    let clock = ManualClock::new();
    let quota = Quota::per_minute(2);
    let remote = || Remote(KeyedLimiter::with_clock(quota, clock.clone()).unwrap());
    let single = RateLimitLayer::new(RequestLimit::new("r", remote())).unwrap();
    let mixed = RateLimitLayer::builder()
        .limit(RequestLimit::new("r", remote()))
        .limit(RequestLimit::new(
            "local",
            Limiter::<Gcra, _>::with_clock(Quota::per_minute(5), clock.clone()).unwrap(),
        ))
        .build()
        .unwrap();
    for layer in [single, mixed] {
        let address = net::serve(hello().layer(layer), "127.0.0.1:0").await;
        let client = net::http1();
        let mut seen = Vec::new();
        for _ in 0..3 {
            let reply = fetch(&client, address, &[]).await;
            let items = parse_list(reply.header("ratelimit").unwrap()).unwrap();
            seen.push((
                reply.status,
                items[0].int("r").unwrap(),
                reply.header("retry-after").map(str::to_owned),
            ));
        }
        assert_eq!(
            seen,
            [
                (200, 1, None),
                (200, 0, None),
                (429, 0, Some("30".to_owned()))
            ]
        );
    }
}

#[tokio::test]
async fn a_cors_layer_outside_sees_the_429_and_preflights_can_be_exempt() {
    // Stands in for tower-http's CorsLayer: it wraps the rate limiter, so it adds its header
    // to the limiter's own 429s too.
    let cors = tower::util::MapResponseLayer::new(|mut response: axum::response::Response| {
        response.headers_mut().insert(
            "access-control-allow-origin",
            http::HeaderValue::from_static("*"),
        );
        response
    });
    let layer = RateLimitLayer::builder()
        .limit(RequestLimit::new(
            "global",
            Limiter::<Gcra>::new(Quota::per_minute(1)).unwrap(),
        ))
        .exempt_preflight(true)
        .build()
        .unwrap();
    let app = Router::new()
        .route(
            "/",
            get(|| async { "ok" }).options(|| async { "preflight" }),
        )
        .layer(layer)
        .layer(cors);
    let address = net::serve(app, "127.0.0.1:0").await;
    let client = net::http1();
    assert_eq!(fetch(&client, address, &[]).await.status, 200);
    let denied = fetch(&client, address, &[]).await;
    assert_eq!(denied.status, 429);
    assert_eq!(denied.header("access-control-allow-origin"), Some("*"));
    let preflight = net::send(
        &client,
        http::Method::OPTIONS,
        address,
        "/",
        &[
            ("origin", "https://a.example"),
            ("access-control-request-method", "GET"),
        ],
    )
    .await;
    assert_eq!(
        (preflight.status, preflight.body.as_str()),
        (200, "preflight")
    );
    assert_eq!(preflight.header("ratelimit"), None);
    // A plain OPTIONS is no preflight: it is counted.
    let plain = net::send(&client, http::Method::OPTIONS, address, "/", &[]).await;
    assert_eq!(plain.status, 429);
}

#[tokio::test]
async fn legacy_headers_and_a_full_table() {
    let table = KeyedLimiter::<String>::builder(Quota::per_minute(5))
        .shards(1)
        .max_keys(1)
        .build()
        .unwrap();
    let layer = RateLimitLayer::builder()
        .limit(RequestLimit::new("k", table).key(HeaderKey::parse("x-key").unwrap()))
        .legacy_headers(true)
        .build()
        .unwrap();
    let address = net::serve(hello().layer(layer), "127.0.0.1:0").await;
    let client = net::http1();
    let reply = fetch(&client, address, &[("x-key", "one")]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("x-ratelimit-limit"), Some("5"));
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("4"));
    // A Unix timestamp in seconds: now, rounded up, plus the 12 seconds `t` says.
    let reset: u64 = reply.header("x-ratelimit-reset").unwrap().parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        (now + 12..=now + 14).contains(&reset),
        "X-RateLimit-Reset {reset} at {now}"
    );
    // The one key the table may hold is taken and not idle: the server is at capacity.
    let full = fetch(&client, address, &[("x-key", "two")]).await;
    assert_eq!(full.status, 503);
    assert_eq!(full.header("retry-after"), Some("1"));
}

#[tokio::test]
async fn a_leaky_bucket_delays_admitted_requests_to_its_rate() {
    let shaper = Limiter::<LeakyBucket>::new(Quota::per_second(10).with_burst(5)).unwrap();
    let address = net::serve(
        hello().layer(RateLimitLayer::new(RequestLimit::new("shaped", shaper)).unwrap()),
        "127.0.0.1:0",
    )
    .await;
    let client = net::http1();
    let start = Instant::now();
    for _ in 0..4 {
        assert_eq!(fetch(&client, address, &[]).await.status, 200);
    }
    // Four requests leave the shaper 100 ms apart: at least 300 ms in all.
    assert!(
        start.elapsed() >= Duration::from_millis(290),
        "{:?}",
        start.elapsed()
    );
}
