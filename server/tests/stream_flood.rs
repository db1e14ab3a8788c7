//! One HTTP/2 connection cannot open streams without bound (issue 23, finding 3): the gRPC
//! port advertises MAX_CONCURRENT_STREAMS, and a real HTTP/2 client (the h2 crate) opening
//! 50,000 `ShouldRateLimit` streams on one connection, sending their headers but never a
//! message and never reading, leaves the server's resident memory (`VmRSS` from `/proc`)
//! bounded, during the flood and after it closes, while other connections are answered.

#[path = "support/service.rs"]
mod service;

use bytes::Bytes;
use service::*;
use std::time::{Duration, Instant};

const STREAMS: usize = 50_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_cannot_hold_unbounded_streams() {
    let service = Service::start(
        "domain: streams
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 5}
",
        &[],
    );
    let before = service.rss_kib();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", service.grpc))
        .await
        .unwrap();
    let (mut sender, connection) = h2::client::Builder::new()
        // The client never reads: its windows are never given back.
        .initial_window_size(65_535)
        .handshake::<_, Bytes>(tcp)
        .await
        .expect("an HTTP/2 connection");
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let started = Instant::now();
    let deadline = started + Duration::from_secs(15);
    let mut held = Vec::new();
    let mut advertised = usize::MAX;
    let mut stopped = "all sent".to_string();
    for _ in 0..STREAMS {
        // Ready once the server's limit lets another stream open; give up waiting after a
        // while (the limit holds and the answers are never read, so no slot comes back).
        let ready = tokio::time::timeout(Duration::from_millis(500), sender.clone().ready()).await;
        let Ok(Ok(ready)) = ready else {
            stopped = "no stream slot within 500 ms".into();
            break;
        };
        sender = ready;
        advertised = sender.current_max_send_streams();
        let req = http::Request::post(
            "http://127.0.0.1/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
        )
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
        // The stream stays open: its message never comes.
        let (response, stream) = match sender.send_request(req, false) {
            Ok(sent) => sent,
            Err(e) => {
                stopped = format!("the connection refused a stream: {e}");
                break;
            }
        };
        held.push((response, stream));
        if Instant::now() > deadline {
            stopped = "out of time".into();
            break;
        }
    }
    // Let the server work through what it was sent.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = service.rss_kib();
    eprintln!(
        "{} streams opened in {:?} ({stopped}; advertised limit {advertised}): VmRSS {before} → {during} KiB",
        held.len(),
        started.elapsed()
    );
    assert!(
        during < before + 32 * 1024,
        "VmRSS grew from {before} to {during} KiB"
    );
    assert!(
        advertised <= 1000,
        "MAX_CONCURRENT_STREAMS advertised: {advertised}"
    );

    // Other connections are answered meanwhile.
    let mut client = service.client().await;
    let r = ask(
        &mut client,
        request("streams", vec![descriptor(&[("client", "other")])]),
    )
    .await;
    assert_eq!(r.overall_code, OK);

    drop(held);
    drop(sender);
    driver.abort();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = service.rss_kib();
    assert!(
        after < before + 32 * 1024,
        "VmRSS after the connection closed: {after} KiB"
    );
}
