//! Client addresses: spoofed forwarding headers from untrusted peers change nothing, trusted
//! chains give the rightmost untrusted address, IPv6 clients share a limit per /64. Both at
//! the extractor (synthetic peers) and end to end over 127.0.0.1 and [::1].
#![cfg(all(feature = "http", feature = "tokio"))]

mod http_support;

use axum::extract::ConnectInfo;
use axum::routing::get;
use axum::Router;
use http_support::net::{self, get as fetch};
use sluicegate::http::{
    ClientAddr, ClientIp, ForwardedHeaders, KeyBuf, KeyErrorKind, KeyExtractor, RateLimitLayer,
    RequestLimit,
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

#[test]
fn untrusted_peers_are_the_client_whatever_they_forward() {
    let nobody = ClientIp::new();
    let some = ClientIp::new().trust("10.0.0.0/8".parse().unwrap());
    let spoof = [("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=5.6.7.8")];
    assert_eq!(
        key(&nobody, "203.0.113.9:1000", &spoof).unwrap(),
        "203.0.113.9"
    );
    assert_eq!(
        key(&some, "203.0.113.9:1000", &spoof).unwrap(),
        "203.0.113.9"
    );
    assert_eq!(key(&nobody, "10.0.0.1:1000", &spoof).unwrap(), "10.0.0.1");
}

#[test]
fn trusted_chains_give_the_rightmost_untrusted_address() {
    let proxies = ClientIp::new().trust("10.0.0.0/8, 192.168.0.0/16".parse().unwrap());
    let xff = [(
        "x-forwarded-for",
        "6.6.6.6, 198.51.100.7, 192.168.1.1, 10.0.0.5",
    )];
    assert_eq!(key(&proxies, "10.0.0.9:1", &xff).unwrap(), "198.51.100.7");
    // Several header lines are one list, the last line nearest.
    let lines = [
        ("x-forwarded-for", "6.6.6.6, 198.51.100.7"),
        ("x-forwarded-for", "10.0.0.5"),
    ];
    assert_eq!(key(&proxies, "10.0.0.9:1", &lines).unwrap(), "198.51.100.7");
    let forwarded = proxies
        .clone()
        .forwarded_headers(ForwardedHeaders::Forwarded);
    let rfc = [(
        "forwarded",
        "for=6.6.6.6, for=\"[2001:db8:cafe::17]:4711\";proto=https, for=10.0.0.5",
    )];
    assert_eq!(
        key(&forwarded, "10.0.0.9:1", &rfc).unwrap(),
        "2001:db8:cafe::/64"
    );
    // X-Forwarded-For is not read when Forwarded is configured, and vice versa.
    assert_eq!(key(&forwarded, "10.0.0.9:1", &xff).unwrap(), "10.0.0.9");
    assert_eq!(key(&proxies, "10.0.0.9:1", &rfc).unwrap(), "10.0.0.9");
}

#[test]
fn both_headers_must_agree() {
    let both = ClientIp::new()
        .trust("10.0.0.0/8".parse().unwrap())
        .forwarded_headers(ForwardedHeaders::Both);
    let agree = [
        ("x-forwarded-for", "198.51.100.7"),
        ("forwarded", "for=198.51.100.7"),
    ];
    assert_eq!(key(&both, "10.0.0.1:1", &agree).unwrap(), "198.51.100.7");
    assert_eq!(
        key(&both, "10.0.0.1:1", &agree[1..]).unwrap(),
        "198.51.100.7"
    );
    let disagree = [
        ("x-forwarded-for", "198.51.100.7"),
        ("forwarded", "for=6.6.6.6"),
    ];
    let error = key(&both, "10.0.0.1:1", &disagree).unwrap_err();
    assert_eq!(error.kind(), KeyErrorKind::Invalid);
    assert_eq!(
        error.message(),
        "the X-Forwarded-For and Forwarded headers name different clients"
    );
}

#[test]
fn unreadable_chains_are_client_errors() {
    let proxies = ClientIp::new().trust("10.0.0.0/8".parse().unwrap());
    for chain in ["garbage", "unknown", "1.2.3.4:99999", "10.1.1.1, 1.2.3"] {
        let error = key(&proxies, "10.0.0.1:1", &[("x-forwarded-for", chain)]).unwrap_err();
        assert_eq!(
            error.status(),
            http::StatusCode::BAD_REQUEST,
            "{chain}: {error}"
        );
    }
    // Garbage beyond the client is never read.
    assert_eq!(
        key(
            &proxies,
            "10.0.0.1:1",
            &[("x-forwarded-for", "garbage, 8.8.8.8")]
        )
        .unwrap(),
        "8.8.8.8"
    );
    // No forwarding header from a trusted peer: the peer is the client.
    assert_eq!(key(&proxies, "10.0.0.1:1", &[]).unwrap(), "10.0.0.1");
    // No peer address at all: the server's setup is at fault.
    let mut bare = KeyBuf::new();
    let error = proxies
        .extract(&http::Request::new(()).into_parts().0, &mut bare)
        .unwrap_err();
    assert_eq!(
        (error.kind(), error.status().as_u16()),
        (KeyErrorKind::Unavailable, 500)
    );
}

#[test]
fn ipv6_clients_group_by_prefix_and_mapped_ipv4_is_ipv4() {
    let default = ClientIp::new();
    assert_eq!(
        key(&default, "[2001:db8:1:2::1]:1", &[]).unwrap(),
        "2001:db8:1:2::/64"
    );
    assert_eq!(
        key(&default, "[2001:db8:1:2:ffff::9]:1", &[]).unwrap(),
        "2001:db8:1:2::/64"
    );
    assert_ne!(
        key(&default, "[2001:db8:1:3::1]:1", &[]).unwrap(),
        "2001:db8:1:2::/64"
    );
    assert_eq!(
        key(&default, "[::ffff:192.0.2.1]:1", &[]).unwrap(),
        "192.0.2.1"
    );
    let wide = ClientIp::new().ipv6_prefix(48).unwrap();
    assert_eq!(
        key(&wide, "[2001:db8:1:3::1]:1", &[]).unwrap(),
        "2001:db8:1::/48"
    );
    assert!(ClientIp::new().ipv6_prefix(129).is_err());
    let trusted = ClientIp::new().trust("::ffff:10.0.0.0/104".parse().unwrap());
    assert_eq!(
        key(
            &trusted,
            "10.9.9.9:1",
            &[("x-forwarded-for", "::ffff:198.51.100.1")]
        )
        .unwrap(),
        "198.51.100.1"
    );
    let client = ClientIp::new();
    let parts = request("[2001:db8::5]:1", &[]);
    assert_eq!(
        client.client_addr(&parts).unwrap(),
        ClientAddr::Ip("2001:db8::5".parse().unwrap())
    );
}

/// A server keyed by peer-ip, 1 request a minute per client.
async fn one_per_minute(client_ip: ClientIp, bind: &str) -> SocketAddr {
    let limiter = KeyedLimiter::<String>::new(Quota::per_minute(1)).unwrap();
    let layer = RateLimitLayer::new(RequestLimit::new("ip", limiter).key(client_ip)).unwrap();
    let app = Router::new()
        .route("/", get(|| async { "ok" }))
        .layer(layer);
    net::serve(app, bind).await
}

fn from_connect_info() -> ClientIp {
    ClientIp::new().peer_from(|info: &ConnectInfo<SocketAddr>| info.0)
}

#[tokio::test]
async fn spoofed_forwarding_from_an_untrusted_peer_does_not_change_the_key() {
    let address = one_per_minute(from_connect_info(), "127.0.0.1:0").await;
    let client = net::http1();
    let first = fetch(&client, address, &[("x-forwarded-for", "1.1.1.1")]).await;
    assert_eq!(first.status, 200);
    for spoof in [
        ("x-forwarded-for", "2.2.2.2"),
        ("forwarded", "for=3.3.3.3"),
        ("x-real-ip", "4.4.4.4"),
    ] {
        assert_eq!(
            fetch(&client, address, &[spoof]).await.status,
            429,
            "{spoof:?}"
        );
    }
}

#[tokio::test]
async fn a_trusted_loopback_proxy_forwards_the_rightmost_untrusted_address() {
    let client_ip = from_connect_info()
        .trust("127.0.0.1".parse().unwrap())
        .forwarded_headers(ForwardedHeaders::Both);
    let address = one_per_minute(client_ip, "127.0.0.1:0").await;
    let client = net::http1();
    let xff = |chain: &'static str| [("x-forwarded-for", chain)];
    assert_eq!(
        fetch(&client, address, &xff("9.9.9.9, 203.0.113.1"))
            .await
            .status,
        200
    );
    // The client rotates what it prepends: same rightmost untrusted address, same key.
    assert_eq!(
        fetch(&client, address, &xff("8.8.8.8, 203.0.113.1"))
            .await
            .status,
        429
    );
    assert_eq!(
        fetch(&client, address, &[("forwarded", "for=203.0.113.1")])
            .await
            .status,
        429
    );
    assert_eq!(
        fetch(&client, address, &xff("203.0.113.2")).await.status,
        200
    );
    let bad = fetch(&client, address, &xff("203.0.113.3, nonsense")).await;
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("X-Forwarded-For"), "{}", bad.body);
    // Thousands of hops, all trusted: refused quickly, with a reason.
    let long = vec!["127.0.0.1"; 5000].join(", ");
    let request = http::Request::get(format!("http://{address}/"))
        .header("x-forwarded-for", long)
        .body(http_body_util::Empty::new())
        .unwrap();
    assert_eq!(client.request(request).await.unwrap().status(), 400);
}

#[tokio::test]
async fn ipv6_clients_in_one_64_share_a_limit_end_to_end() {
    // Over [::1]: the peer is trusted, so the addresses come from the forwarding headers.
    let client_ip = from_connect_info()
        .trust("::1".parse().unwrap())
        .forwarded_headers(ForwardedHeaders::Both);
    let address = one_per_minute(client_ip, "[::1]:0").await;
    let client = net::http2();
    let xff = |chain: &'static str| [("x-forwarded-for", chain)];
    assert_eq!(
        fetch(&client, address, &xff("2001:db8:1:2::1"))
            .await
            .status,
        200
    );
    assert_eq!(
        fetch(&client, address, &xff("2001:db8:1:2:ffff::7"))
            .await
            .status,
        429
    );
    assert_eq!(
        fetch(
            &client,
            address,
            &[("forwarded", "for=\"[2001:db8:1:2::9]:443\"")]
        )
        .await
        .status,
        429
    );
    assert_eq!(
        fetch(&client, address, &xff("2001:db8:1:3::1"))
            .await
            .status,
        200
    );
    // And the IPv6 peer itself, untrusted elsewhere, is keyed by its /64.
    let direct = one_per_minute(from_connect_info(), "[::1]:0").await;
    assert_eq!(
        fetch(&client, direct, &xff("2001:db8::1")).await.status,
        200
    );
    assert_eq!(
        fetch(&client, direct, &xff("2001:db8::2")).await.status,
        429
    );
}

#[tokio::test]
async fn no_recorded_peer_address_is_a_500_that_says_why() {
    let limiter = KeyedLimiter::<String>::new(Quota::per_minute(1)).unwrap();
    let layer = RateLimitLayer::new(RequestLimit::new("ip", limiter).key(ClientIp::new())).unwrap();
    let app = Router::new()
        .route("/", get(|| async { "ok" }))
        .layer(layer);
    // Served without connect info, and ClientIp reading the default SocketAddr extension.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let reply = fetch(&net::http1(), address, &[]).await;
    assert_eq!(reply.status, 500);
    assert!(
        reply.body.contains("did not record the client's address"),
        "{}",
        reply.body
    );
}

#[test]
fn forwarded_headers_parse_from_the_one_spelling_every_front_end_takes() {
    for (text, headers) in [
        ("x-forwarded-for", ForwardedHeaders::XForwardedFor),
        ("XFF", ForwardedHeaders::XForwardedFor),
        (" Forwarded ", ForwardedHeaders::Forwarded),
        ("both", ForwardedHeaders::Both),
    ] {
        assert_eq!(
            text.parse::<ForwardedHeaders>().unwrap(),
            headers,
            "{text:?}"
        );
    }
    let error = "x-real-ip".parse::<ForwardedHeaders>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "forwarded headers are x-forwarded-for, forwarded or both, not \"x-real-ip\""
    );
}
