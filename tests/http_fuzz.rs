//! Property tests: whatever bytes arrive in forwarding headers or key headers, extraction
//! never panics and never blames the server; keys from different header values never
//! collide; the RateLimit headers always parse as Structured Fields and say what was set.
#![cfg(all(feature = "http", feature = "tokio"))]

mod http_support;

use http::HeaderValue;
use http_support::sf::parse_list;
use proptest::prelude::*;
use sluicegate::algorithm::Gcra;
use sluicegate::http::{
    ClientIp, ForwardedHeaders, HeaderKey, KeyBuf, KeyErrorKind, KeyExtractor, RateLimitLayer,
    RequestLimit,
};
use sluicegate::{Limiter, Quota};
use std::net::SocketAddr;
use std::time::Duration;
use tower::{Layer, ServiceExt};

/// Bytes a header value may hold (control characters but tab become 'x'), biased toward
/// the characters the parsers care about.
fn header_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    let structural = prop::sample::select(b",;=\"\\[]:._- \tfoFORunknw0123456789abcdef.".to_vec());
    let any_byte = any::<u8>();
    prop::collection::vec(prop_oneof![3 => structural, 1 => any_byte], 0..max).prop_map(|bytes| {
        bytes
            .into_iter()
            .map(|b| {
                if (b < 0x20 && b != b'\t') || b == 0x7f {
                    b'x'
                } else {
                    b
                }
            })
            .collect()
    })
}

fn parts(peer: &str, headers: &[(&'static str, Vec<u8>)]) -> http::request::Parts {
    let mut request = http::Request::new(());
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_bytes(value) {
            request.headers_mut().append(*name, value);
        }
    }
    request
        .extensions_mut()
        .insert(peer.parse::<SocketAddr>().unwrap());
    request.into_parts().0
}

/// A name as the headers write it, decoded: `%xx` back to its byte (RFC 9651's Display
/// String escaping, which the String items of the headers use for what is not printable
/// ASCII).
fn percent_decoded(text: &str) -> String {
    let mut bytes = Vec::new();
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' {
            let hex = std::str::from_utf8(&tail[..2]).unwrap();
            bytes.push(u8::from_str_radix(hex, 16).unwrap());
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    String::from_utf8(bytes).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn forwarding_headers_of_any_bytes_never_panic(
        xff in prop::collection::vec(header_bytes(120), 0..3),
        forwarded in prop::collection::vec(header_bytes(120), 0..3),
        mode in 0..3usize,
        trusted_peer in any::<bool>(),
    ) {
        let headers = [ForwardedHeaders::XForwardedFor, ForwardedHeaders::Forwarded, ForwardedHeaders::Both];
        let extractor = ClientIp::new().trust("10.0.0.0/8, 2001:db8::/32".parse().unwrap()).forwarded_headers(headers[mode]);
        let mut lines: Vec<(&'static str, Vec<u8>)> = xff.into_iter().map(|v| ("x-forwarded-for", v)).collect();
        lines.extend(forwarded.into_iter().map(|v| ("forwarded", v)));
        let peer = if trusted_peer { "10.0.0.1:80" } else { "198.51.100.1:80" };
        let mut key = KeyBuf::new();
        match extractor.extract(&parts(peer, &lines), &mut key) {
            Ok(()) => {
                prop_assert!(!key.is_empty());
                if !trusted_peer {
                    prop_assert_eq!(key.as_str(), "198.51.100.1");
                }
            }
            Err(error) => {
                prop_assert!(trusted_peer, "an untrusted peer's headers are never read: {error}");
                prop_assert_eq!(error.kind(), KeyErrorKind::Invalid);
            }
        }
    }

    #[test]
    fn different_header_values_never_share_a_key(a in header_bytes(40), b in header_bytes(40)) {
        let extractor = HeaderKey::parse("x-api-key").unwrap();
        let key = |value: &[u8]| {
            let mut key = KeyBuf::new();
            extractor.extract(&parts("127.0.0.1:1", &[("x-api-key", value.to_vec())]), &mut key).ok()?;
            Some(key.as_str().to_owned())
        };
        if let (Some(ka), Some(kb)) = (key(&a), key(&b)) {
            prop_assert_eq!(a == b, ka == kb, "{:?} {:?} -> {:?} {:?}", a, b, ka, kb);
        }
    }

    #[test]
    fn ratelimit_headers_are_valid_structured_fields(
        name in "(.|\t|\n){1,64}",
        limit in 1u32..1_000_000,
        period_ms in 1u64..100_000_000,
        requests in 1usize..4,
    ) {
        let period = Duration::from_millis(period_ms);
        let quota = Quota::new(limit, period).unwrap();
        let layer = RateLimitLayer::new(RequestLimit::new(name.clone(), Limiter::<Gcra>::new(quota).unwrap())).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for _ in 0..requests {
            let service = layer.layer(tower::service_fn(|_: http::Request<()>| async {
                Ok::<_, std::convert::Infallible>(http::Response::new(
                    http_body_util::Full::<bytes::Bytes>::default(),
                ))
            }));
            let response = runtime.block_on(service.oneshot(http::Request::new(()))).unwrap();
            let policy = parse_list(response.headers()["ratelimit-policy"].to_str().unwrap()).unwrap();
            prop_assert_eq!(policy[0].string().map(percent_decoded), Some(name.clone()));
            prop_assert_eq!(policy[0].int("q"), Some(i64::from(limit)));
            let whole = period.subsec_nanos() == 0;
            prop_assert_eq!(policy[0].int("w"), whole.then_some(period.as_secs() as i64));
            let current = parse_list(response.headers()["ratelimit"].to_str().unwrap()).unwrap();
            prop_assert_eq!(current[0].string().map(percent_decoded), Some(name.clone()));
            prop_assert!(current[0].int("r").unwrap() >= 0 && current[0].int("t").unwrap() >= 0);
        }
    }
}

#[test]
fn huge_and_deep_forwarding_headers_are_refused_with_a_reason() {
    let proxies = ClientIp::new().trust("10.0.0.0/8".parse().unwrap());
    let deep = vec!["10.0.0.1"; 100_000].join(",").into_bytes();
    let mut key = KeyBuf::new();
    let error = proxies
        .extract(
            &parts("10.0.0.2:1", &[("x-forwarded-for", deep.clone())]),
            &mut key,
        )
        .unwrap_err();
    assert_eq!(
        error.message(),
        "the X-Forwarded-For chain is longer than 16 entries"
    );
    let forwarded = proxies
        .clone()
        .forwarded_headers(ForwardedHeaders::Forwarded);
    let big = vec!["for=10.0.0.1"; 100_000].join(",").into_bytes();
    let error = forwarded
        .extract(&parts("10.0.0.2:1", &[("forwarded", big)]), &mut key)
        .unwrap_err();
    assert_eq!(
        error.message(),
        "the Forwarded header is longer than 8192 bytes"
    );
    // A huge header from an untrusted peer is not even read.
    key.clear();
    proxies
        .extract(
            &parts("192.0.2.1:1", &[("x-forwarded-for", deep)]),
            &mut key,
        )
        .unwrap();
    assert_eq!(key.as_str(), "192.0.2.1");
}
