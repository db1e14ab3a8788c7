//! What a decided request reports (`Report`): the numbers its `RateLimit` header is written
//! from, for front ends that hand them to their users (the Node middleware's
//! `req.rateLimit`), on a passed request through its headers and on a refused one through its
//! response's extensions; none where no limit decided.
#![cfg(feature = "http")]

use sluicegate::algorithm::FixedWindow;
use sluicegate::clock::ManualClock;
use sluicegate::http::{
    ClientIp, Deciding, HeaderKey, RateLimitLayer, Report, RequestLimit, RequestLimiter, Verdict,
};
use sluicegate::{KeyedLimiter, Quota};
use std::net::SocketAddr;

fn limiter(standard_headers: bool) -> RequestLimiter {
    let keyed = KeyedLimiter::<String, FixedWindow, _>::with_clock(
        Quota::per_minute(2),
        ManualClock::new(),
    )
    .unwrap();
    let per_token = KeyedLimiter::<String, FixedWindow, _>::with_clock(
        Quota::per_minute(100),
        ManualClock::new(),
    )
    .unwrap();
    RateLimitLayer::builder()
        .limit(RequestLimit::new("ip", keyed).key(ClientIp::new()))
        .limit(RequestLimit::new("token", per_token).key(HeaderKey::parse("x-api-key").unwrap()))
        .standard_headers(standard_headers)
        .limiter()
        .unwrap()
}

fn request(api_key: Option<&str>) -> http::request::Parts {
    let mut request = http::Request::get("/");
    if let Some(key) = api_key {
        request = request.header("x-api-key", key);
    }
    let mut request = request.body(()).unwrap();
    let peer: SocketAddr = "192.0.2.7:4000".parse().unwrap();
    request.extensions_mut().insert(peer);
    request.into_parts().0
}

fn decide(limiter: &RequestLimiter, parts: &http::request::Parts) -> Verdict {
    match limiter.decide(parts) {
        Deciding::Now(verdict) => verdict,
        Deciding::Later(_) => panic!("in-process limits decide at once"),
    }
}

fn numbers(report: Report) -> (usize, u32, u32, u64) {
    (report.limit, report.quota, report.remaining, report.reset)
}

#[test]
fn a_passed_request_reports_its_tightest_limit_with_or_without_headers() {
    for standard_headers in [true, false] {
        let limiter = limiter(standard_headers);
        let Verdict::Pass { headers, .. } = decide(&limiter, &request(Some("k"))) else {
            panic!("admitted");
        };
        // "ip" has 1 of 2 left, "token" 99 of 100: "ip" is reported, its window ends in 60 s.
        assert_eq!(numbers(headers.report().unwrap()), (0, 2, 1, 60));
        assert_eq!(headers.is_empty(), !standard_headers);
    }
}

#[test]
fn a_refused_request_carries_its_report_in_the_response_extensions() {
    let limiter = limiter(true);
    let parts = request(Some("k"));
    decide(&limiter, &parts);
    decide(&limiter, &parts);
    let Verdict::Refuse(response) = decide(&limiter, &parts) else {
        panic!("the third request in a minute is over \"ip\"'s 2");
    };
    assert_eq!(response.status(), 429);
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(numbers(report), (0, 2, 0, 60));
    assert_eq!(response.headers()["ratelimit"], r#""ip";r=0;t=60"#);
}

#[test]
fn nothing_is_reported_when_no_limit_decided() {
    let Verdict::Refuse(response) = decide(&limiter(true), &request(None)) else {
        panic!("a missing key is refused");
    };
    assert_eq!(response.status(), 400);
    assert!(response.extensions().get::<Report>().is_none());
}

/// With every rate-limit header off, a 429 says no Retry-After either (as express-rate-limit,
/// slowapi and Flask-Limiter); its report still has the wait.
#[test]
fn a_refusal_with_every_header_off_sends_no_retry_after() {
    for standard_headers in [true, false] {
        let limiter = limiter(standard_headers);
        let parts = request(Some("k"));
        decide(&limiter, &parts);
        decide(&limiter, &parts);
        let Verdict::Refuse(response) = decide(&limiter, &parts) else {
            panic!("the third request in a minute is over \"ip\"'s 2");
        };
        assert_eq!(response.status(), 429);
        assert_eq!(
            response.headers().contains_key("retry-after"),
            standard_headers,
            "standard headers {standard_headers}"
        );
        let report = *response.extensions().get::<Report>().unwrap();
        assert_eq!(numbers(report), (0, 2, 0, 60));
    }
}
