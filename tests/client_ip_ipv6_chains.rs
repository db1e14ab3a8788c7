//! Chains of trusted IPv6 proxies: the walk from an IPv6 peer back through IPv6 (and mixed
//! IPv4) proxies gives the rightmost untrusted address, keyed by its /64; spoofed entries
//! beyond it are never read. At the extractor (synthetic peers) and end to end over [::1].
#![cfg(all(feature = "http", feature = "tokio"))]

mod http_support;

use axum::extract::ConnectInfo;
use axum::routing::get;
use axum::Router;
use http_support::net::{self, get as fetch};
use sluicegate::http::{
    ClientIp, ForwardedHeaders, KeyBuf, KeyExtractor, RateLimitLayer, RequestLimit,
};
use sluicegate::{KeyedLimiter, Quota};
use std::net::SocketAddr;

fn request(peer: &str, headers: &[(&str, &str)]) -> http::request::Parts {
    let mut builder = http::Request::get("/");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let mut request = builder.body(()).unwrap();
    request
        .extensions_mut()
        .insert(peer.parse::<SocketAddr>().unwrap());
    request.into_parts().0
}

fn key(
    extractor: &ClientIp,
    peer: &str,
    headers: &[(&str, &str)],
) -> Result<String, sluicegate::http::KeyError> {
    let mut key = KeyBuf::new();
    extractor.extract(&request(peer, headers), &mut key)?;
    Ok(key.as_str().to_owned())
}

/// Unique-local proxies and one provider range of IPv6 proxies.
fn ipv6_proxies() -> ClientIp {
    ClientIp::new().trust("fd00::/8, 2001:db8:ffff::/48".parse().unwrap())
}

fn xff(chain: &str) -> [(&str, &str); 1] {
    [("x-forwarded-for", chain)]
}

#[test]
fn a_chain_of_ipv6_proxies_gives_the_rightmost_untrusted_address_by_its_64() {
    let proxies = ipv6_proxies();
    let chain = "2001:db8:bad::1, 2001:db8:aaaa:1::9, fd12::7, 2001:db8:ffff::3";
    assert_eq!(
        key(&proxies, "[fd00::1]:443", &xff(chain)).unwrap(),
        "2001:db8:aaaa:1::/64"
    );
    // What the client prepends is never read: another spoof, the same key.
    let rotated = "2001:db8:beef::1, 2001:db8:aaaa:1::9, fd12::7, 2001:db8:ffff::3";
    assert_eq!(
        key(&proxies, "[fd00::1]:443", &xff(rotated)).unwrap(),
        "2001:db8:aaaa:1::/64"
    );
    // Several header lines are one list, the last line nearest.
    let lines = [
        ("x-forwarded-for", "2001:db8:bad::1, 2001:db8:aaaa:1::9"),
        ("x-forwarded-for", "fd12::7, 2001:db8:ffff::3"),
    ];
    assert_eq!(
        key(&proxies, "[fd00::1]:443", &lines).unwrap(),
        "2001:db8:aaaa:1::/64"
    );
}

#[test]
fn an_untrusted_ipv6_hop_ends_the_walk() {
    let proxies = ipv6_proxies();
    // 2001:db8:bbbb::1 is not a proxy of ours: whatever it forwarded is the client's say.
    let chain = "2001:db8:aaaa:4::1, 2001:db8:bbbb::1, fd00::2";
    assert_eq!(
        key(&proxies, "[fd00::1]:443", &xff(chain)).unwrap(),
        "2001:db8:bbbb::/64"
    );
    // Just outside the trusted /8 (fe00:: is not fd00::/8): the peer itself is the client.
    assert_eq!(
        key(&proxies, "[fe00::1]:443", &xff("2001:db8:aaaa:4::1")).unwrap(),
        "fe00::/64"
    );
    // An untrusted IPv6 peer's headers are never read.
    assert_eq!(
        key(&proxies, "[2001:db8:cccc::1]:1", &xff("2001:db8:aaaa:5::1")).unwrap(),
        "2001:db8:cccc::/64"
    );
}

#[test]
fn every_hop_trusted_makes_the_farthest_the_client() {
    let proxies = ipv6_proxies();
    assert_eq!(
        key(&proxies, "[fd00::1]:443", &xff("fd00:1:2:3::7, fd00::8")).unwrap(),
        "fd00:1:2:3::/64"
    );
}

#[test]
fn ipv4_and_ipv6_proxies_mix_in_one_chain() {
    let mixed = ClientIp::new().trust("fd00::/8, 10.0.0.0/8".parse().unwrap());
    // An IPv6 client through an IPv4 proxy and an IPv6 one.
    assert_eq!(
        key(
            &mixed,
            "[fd00::1]:443",
            &xff("2001:db8:aaaa:3::1, 10.0.0.5, fd00::2")
        )
        .unwrap(),
        "2001:db8:aaaa:3::/64"
    );
    // An IPv4 client behind IPv6 proxies.
    assert_eq!(
        key(&mixed, "[fd00::1]:443", &xff("198.51.100.7, fd00::2")).unwrap(),
        "198.51.100.7"
    );
    // An IPv4-mapped hop is its IPv4 address: trusted by 10.0.0.0/8.
    assert_eq!(
        key(
            &mixed,
            "[fd00::1]:443",
            &xff("2001:db8:aaaa:7::1, ::ffff:10.0.0.5")
        )
        .unwrap(),
        "2001:db8:aaaa:7::/64"
    );
    // And an IPv4 peer forwarding through IPv6 proxies.
    assert_eq!(
        key(&mixed, "10.1.1.1:80", &xff("2001:db8:aaaa:8::1, fd00::3")).unwrap(),
        "2001:db8:aaaa:8::/64"
    );
}

#[test]
fn forwarded_chains_of_bracketed_ipv6_proxies_with_ports() {
    let proxies = ipv6_proxies().forwarded_headers(ForwardedHeaders::Forwarded);
    let chain = [(
        "forwarded",
        "for=\"[2001:db8:bad::1]\", for=\"[2001:db8:aaaa:2::9]:1234\";proto=https, \
         for=\"[fd00::5]\", for=\"[2001:db8:ffff::1]:80\"",
    )];
    assert_eq!(
        key(&proxies, "[fd00::1]:443", &chain).unwrap(),
        "2001:db8:aaaa:2::/64"
    );
    // A bare IPv6 address (RFC 7239 wants brackets; X-Forwarded-For writes it bare) is read
    // as one, as the shared node parser does for both headers.
    let bare = [("forwarded", "for=2001:db8:aaaa:2::9, for=\"[fd00::5]\"")];
    assert_eq!(
        key(&proxies, "[fd00::1]:443", &bare).unwrap(),
        "2001:db8:aaaa:2::/64"
    );
    // An unclosed bracket where the walk reads it: a 400.
    let unclosed = [(
        "forwarded",
        "for=\"[2001:db8:aaaa:2::9\", for=\"[fd00::5]\"",
    )];
    let error = key(&proxies, "[fd00::1]:443", &unclosed).unwrap_err();
    assert_eq!(error.status(), http::StatusCode::BAD_REQUEST, "{error}");
}

#[test]
fn unreadable_ipv6_entries_in_a_trusted_chain_are_client_errors() {
    let proxies = ipv6_proxies();
    for chain in [
        "[fd00::1",
        "fd00::1::2",
        "2001:db8::1%eth0",
        "fd00::1, 2001:db8::zz",
    ] {
        let error = key(&proxies, "[fd00::1]:443", &xff(chain)).unwrap_err();
        assert_eq!(
            error.status(),
            http::StatusCode::BAD_REQUEST,
            "{chain}: {error}"
        );
    }
}

/// A server on [::1] keyed by client address, 1 request a minute per client, trusting `[::1]`
/// (the test's own connection) and the unique-local proxies.
async fn one_per_minute_behind_ipv6_proxies() -> SocketAddr {
    let client_ip = ClientIp::new()
        .peer_from(|info: &ConnectInfo<SocketAddr>| info.0)
        .trust("::1, fd00::/8".parse().unwrap())
        .forwarded_headers(ForwardedHeaders::Both);
    let limiter = KeyedLimiter::<String>::new(Quota::per_minute(1)).unwrap();
    let layer = RateLimitLayer::new(RequestLimit::new("ip", limiter).key(client_ip)).unwrap();
    let app = Router::new()
        .route("/", get(|| async { "ok" }))
        .layer(layer);
    net::serve(app, "[::1]:0").await
}

#[tokio::test]
async fn a_chain_of_ipv6_proxies_limits_the_client_end_to_end() {
    let address = one_per_minute_behind_ipv6_proxies().await;
    let client = net::http1();
    assert_eq!(
        fetch(
            &client,
            address,
            &xff("6.6.6.6, 2001:db8:aaaa:6::1, fd00::2, fd00::3")
        )
        .await
        .status,
        200
    );
    // The same /64 through other proxies, with another spoof in front: the same client.
    assert_eq!(
        fetch(
            &client,
            address,
            &xff("7.7.7.7, 2001:db8:aaaa:6::ffff, fd12::9")
        )
        .await
        .status,
        429
    );
    assert_eq!(
        fetch(
            &client,
            address,
            &[(
                "forwarded",
                "for=\"[2001:db8:aaaa:6::5]:80\", for=\"[fd00::2]\""
            )]
        )
        .await
        .status,
        429
    );
    // Another /64 is another client; an untrusted hop is the client it names.
    assert_eq!(
        fetch(&client, address, &xff("2001:db8:aaaa:7::1, fd00::2"))
            .await
            .status,
        200
    );
    assert_eq!(
        fetch(
            &client,
            address,
            &xff("2001:db8:aaaa:7::1, 2001:db8:dddd::1, fd00::2")
        )
        .await
        .status,
        200
    );
}
