//! What the one HTTP decision allocates: for one in-process limit, one header value (the
//! `RateLimit` field) and nothing else, whether the request passes or is refused its headers
//! are written. (Its own test binary: the global allocator counts every allocation in it.)
#![cfg(feature = "http")]

#[path = "support/allocations.rs"]
mod allocations;

use allocations::allocations_during;
use sluicegate::algorithm::Gcra;
use sluicegate::clock::ManualClock;
use sluicegate::http::{ClientIp, Deciding, RateLimitLayer, RequestLimit, Verdict};
use sluicegate::{KeyedLimiter, Quota};
use std::net::SocketAddr;

#[test]
fn an_admitted_request_allocates_its_ratelimit_value_only() {
    let keyed =
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_hour(1_000), ManualClock::new())
            .unwrap();
    let limiter = RateLimitLayer::builder()
        .limit(RequestLimit::new("ip", keyed).key(ClientIp::new()))
        .limiter()
        .unwrap();
    let mut request = http::Request::get("/").body(()).unwrap();
    let peer: SocketAddr = "192.0.2.7:4000".parse().unwrap();
    request.extensions_mut().insert(peer);
    let (parts, ()) = request.into_parts();
    // The key's first check inserts it (and a thread's first check allocates its record).
    assert!(matches!(
        limiter.decide(&parts),
        Deciding::Now(Verdict::Pass { .. })
    ));
    let mut headers = http::HeaderMap::with_capacity(8);
    let count = allocations_during(|| {
        let Deciding::Now(Verdict::Pass { headers: add, .. }) = limiter.decide(&parts) else {
            panic!("admitted at once");
        };
        add.apply(&mut headers);
    });
    assert_eq!(count, 1, "the RateLimit value, and nothing else");
    assert_eq!(headers["ratelimit"], r#""ip";r=998;t=8"#);
}
