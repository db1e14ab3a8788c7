//! The client-side layer keeps a real hyper client at its quota against a real server.
#![cfg(all(feature = "http", feature = "tokio"))]

mod http_support;

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http_body_util::Empty;
use http_support::net;
use sluicegate::algorithm::Gcra;
use sluicegate::http::client::ThrottleLayer;
use sluicegate::http::key_fn;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower::{Service, ServiceBuilder, ServiceExt};

#[tokio::test]
async fn a_throttled_client_never_exceeds_the_providers_quota() {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let seen = arrivals.clone();
    let app = Router::new().route(
        "/",
        get(move || {
            seen.lock().unwrap().push(Instant::now());
            async { "sent" }
        }),
    );
    let address = net::serve(app, "127.0.0.1:0").await;
    // 20 a second, bursts of 2.
    let quota = Quota::per_second(20).with_burst(2);
    let client = ServiceBuilder::new()
        .layer(ThrottleLayer::new(Limiter::<Gcra>::new(quota).unwrap()))
        .service(net::http1());
    let start = Instant::now();
    let requests = (0..22).map(|_| {
        let client = client.clone();
        async move {
            let request = http::Request::get(format!("http://{address}/"))
                .body(Empty::<Bytes>::new())
                .unwrap();
            client.oneshot(request).await.unwrap().status()
        }
    });
    let statuses = futures_join_all(requests).await;
    assert!(statuses.iter().all(|s| *s == 200));
    let elapsed = start.elapsed();
    let mut arrivals = arrivals.lock().unwrap().clone();
    arrivals.sort();
    assert_eq!(arrivals.len(), 22);
    // Two at once, then one every 50 ms: 20 more take a second. Any window of 2 + k requests
    // spans at least k intervals (a little less, for network jitter between send and arrival).
    for (i, later) in arrivals.iter().enumerate() {
        for (j, earlier) in arrivals[..i].iter().enumerate() {
            let intervals = (i - j).saturating_sub(1) as u32;
            assert!(
                *later - *earlier + Duration::from_millis(15)
                    >= intervals * Duration::from_millis(50),
                "requests {j} and {i} arrived {:?} apart",
                *later - *earlier
            );
        }
    }
    assert!(elapsed >= Duration::from_millis(990), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[tokio::test]
async fn keys_give_each_host_its_own_quota_and_bad_keys_are_errors() {
    let app = Router::new().route("/", get(|| async { "sent" }));
    let address = net::serve(app, "127.0.0.1:0").await;
    let per_host = KeyedLimiter::<String>::new(Quota::per_minute(1)).unwrap();
    let layer = ThrottleLayer::new(per_host).key(key_fn(|request: &http::request::Parts| {
        request
            .headers
            .get("x-account")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| sluicegate::http::KeyError::missing("no x-account"))
    }));
    let mut client = ServiceBuilder::new().layer(layer).service(net::http1());
    let send = |account: Option<&'static str>| {
        let mut request = http::Request::get(format!("http://{address}/"));
        if let Some(account) = account {
            request = request.header("x-account", account);
        }
        request.body(Empty::<Bytes>::new()).unwrap()
    };
    let start = Instant::now();
    for account in ["a", "b", "c"] {
        let response = client
            .ready()
            .await
            .unwrap()
            .call(send(Some(account)))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    assert!(start.elapsed() < Duration::from_millis(500));
    let error = client
        .ready()
        .await
        .unwrap()
        .call(send(None))
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "no x-account");
    // A second request for "a" would wait a minute: it is still waiting after 200 ms.
    let waiting = tokio::time::timeout(
        Duration::from_millis(200),
        client.ready().await.unwrap().call(send(Some("a"))),
    )
    .await;
    assert!(waiting.is_err());
}

/// Runs futures concurrently on this task (no extra dependency).
async fn futures_join_all<F>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}
