//! One writer of the rate-limit headers: the same limit decided by the library's tower layer
//! and by the service's `/json` with `--response-headers` gets byte-for-byte the same
//! `RateLimit-Policy`, `RateLimit` and `Retry-After`, a limit name with non-ASCII
//! characters included; and the longest times a decision can hold are written alike.

#[path = "support/service.rs"]
mod service;

use serde_json::Value;
use service::Service;
use sluicegate::backend::{Backend, Call, Op};
use sluicegate::dynamic::AnyKeyedLimiter;
use sluicegate::http::front_end::DecidedLimit;
use sluicegate::http::{HeaderKey, RateLimitHeaders, RateLimitLayer, RequestLimit};
use sluicegate::policy::AlgorithmKind;
use sluicegate::{Decision, Quota};
use std::convert::Infallible;
use std::time::Duration;
use tower::{Layer, ServiceExt};

const NAME: &str = "café ☕ \"per user\"";

fn config() -> String {
    format!(
        "domain: web\ndescriptors:\n  - key: user\n    rate_limit: {{name: {NAME:?}, quota: \"3/minute\", algorithm: gcra}}\n"
    )
}

/// The rate-limit headers of one response from the layer, as (lowercase name, value).
async fn through_layer(layer: &RateLimitLayer, user: &str) -> (u16, Vec<(String, String)>) {
    let service = layer.layer(tower::service_fn(|_: http::Request<()>| async {
        Ok::<_, Infallible>(http::Response::new(bytes::Bytes::new()))
    }));
    let request = http::Request::get("/")
        .header("x-user", user)
        .body(())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    let headers = ["ratelimit-policy", "ratelimit", "retry-after"]
        .into_iter()
        .filter_map(|name| {
            let value = response.headers().get(name)?;
            Some((name.to_owned(), value.to_str().unwrap().to_owned()))
        })
        .collect();
    (response.status().as_u16(), headers)
}

/// The `responseHeadersToAdd` of one `/json` answer, and its own `Retry-After`.
fn through_service(service: &Service, user: &str) -> (u16, Vec<(String, String)>, Option<String>) {
    let body = format!(
        r#"{{"domain":"web","descriptors":[{{"entries":[{{"key":"user","value":"{user}"}}]}}]}}"#
    );
    let (code, head, text) = service.json(&body);
    let reply: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let headers = reply["responseHeadersToAdd"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|h| {
                    let field = |f: &str| h[f].as_str().unwrap().to_owned();
                    (field("key"), field("value"))
                })
                .collect()
        })
        .unwrap_or_default();
    let retry = head.lines().find_map(|line| {
        line.to_ascii_lowercase()
            .strip_prefix("retry-after: ")
            .map(str::to_owned)
    });
    (code, headers, retry)
}

#[tokio::test]
async fn the_layer_and_the_service_write_the_same_bytes() {
    let service = Service::start(&config(), &["--response-headers"]);
    let quota: Quota = "3/minute".parse().unwrap();
    let limiter = AnyKeyedLimiter::<String>::new(quota, AlgorithmKind::Gcra).unwrap();
    let layer = RateLimitLayer::new(
        RequestLimit::new(NAME, limiter).key(HeaderKey::parse("x-user").unwrap()),
    )
    .unwrap();
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let (layer_status, from_layer) = through_layer(&layer, "alice").await;
        let (service_status, from_service, retry) = through_service(&service, "alice");
        assert_eq!(from_layer, from_service);
        assert_eq!(layer_status, service_status);
        let layer_retry = from_layer.iter().find(|(n, _)| n == "retry-after");
        assert_eq!(layer_retry.map(|(_, v)| v.clone()), retry);
        statuses.push(layer_status);
    }
    assert_eq!(statuses, [200, 200, 200, 429, 429]);
    // The name went out percent-encoded, escapes and all, as a valid Structured Field.
    let (_, headers) = through_layer(&layer, "bob").await;
    assert_eq!(
        headers[0],
        (
            "ratelimit-policy".to_owned(),
            r#""caf%c3%a9 %e2%98%95 \"per user\"";q=3;w=60"#.to_owned()
        )
    );
}

/// A backend outside the crate that answers with times no real limiter reaches: the most a
/// `Decision` holds (2^64 - 1 ns, 11 digits of seconds; the writer's cap at Structured
/// Fields' 15 digits is below any decision, and `headers.rs` tests it on a `Duration::MAX`).
struct Distant;

impl Backend<str> for Distant {
    fn quota(&self) -> Quota {
        Quota::per_second(1)
    }

    fn max_cost(&self) -> u32 {
        1
    }

    fn decide<'a>(&'a self, _key: &'a str, _cost: u32, _op: Op) -> Call<'a> {
        Call::ready(Ok(distant()))
    }

    fn immediate(&self) -> bool {
        true
    }
}

fn distant() -> Decision {
    let forever = Duration::from_secs(10_u64.pow(17)); // kept as 2^64 - 1 ns
    Decision::new(false, 1, 0, Some(forever), forever, Duration::ZERO)
}

#[tokio::test]
async fn the_longest_times_are_written_alike() {
    let layer = RateLimitLayer::new(RequestLimit::new("naïve", Distant)).unwrap();
    let service = layer.layer(tower::service_fn(|_: http::Request<()>| async {
        Ok::<_, Infallible>(http::Response::new(bytes::Bytes::new()))
    }));
    let response = service.oneshot(http::Request::new(())).await.unwrap();
    assert_eq!(response.status(), 429);
    let from_layer: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str().contains("ratelimit") || *name == "retry-after")
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    let limits = [DecidedLimit {
        name: "naïve",
        quota: 1,
        period: Duration::from_secs(1),
        decision: distant(),
    }];
    let written: Vec<(String, String)> = RateLimitHeaders::for_decisions(&limits, false)
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    assert_eq!(from_layer, written);
    assert_eq!(written[1].1, r#""na%c3%afve";r=0;t=18446744074"#);
    assert_eq!(written[2].1, "18446744074");
}
