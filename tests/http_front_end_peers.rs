//! What the Node and Python front ends hand the library beside a request: peers without an
//! IP address (a Unix socket, a test client's placeholder host) keyed and never a `500`, a
//! trusted Unix socket walked as a proxy, the one-time warning's condition and text, a
//! missing key's `400` naming its limit once, and a full table's retry.
#![cfg(feature = "http")]

use sluicegate::http::front_end::{request_parts, request_parts_from, GivenKey, GivenKeys};
use sluicegate::http::{
    ClientIp, Deciding, ForwardedHeaders, KeyBuf, KeyErrorKind, KeyExtractor, Peer, RequestLimit,
    RequestLimiter, Verdict, UNIX_PEER_KEY,
};
use sluicegate::{KeyedLimiter, Quota, TABLE_FULL_RETRY_AFTER};

fn parts(peer: Peer, headers: &[(&str, &str)]) -> http::request::Parts {
    let headers = headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
    request_parts_from("GET", "/", headers, peer)
}

fn key(client_ip: &ClientIp, peer: Peer, headers: &[(&str, &str)]) -> String {
    let mut key = KeyBuf::new();
    client_ip
        .extract(&parts(peer, headers), &mut key)
        .expect("a key");
    key.as_str().to_owned()
}

fn per_ip(client_ip: ClientIp, quota: Quota) -> RequestLimiter {
    let table = KeyedLimiter::<String>::new(quota).unwrap();
    RequestLimiter::builder()
        .limit(RequestLimit::new("ip", table).key(client_ip))
        .limiter()
        .unwrap()
}

/// The status of `limiter`'s verdict on `parts` (0: passed), and the body of a refusal.
fn decide(limiter: &RequestLimiter, parts: &http::request::Parts) -> (u16, String) {
    let Deciding::Now(verdict) = limiter.decide(parts) else {
        panic!("in process, decided at once")
    };
    match verdict {
        Verdict::Pass { .. } => (0, String::new()),
        Verdict::Refuse(response) => (
            response.status().as_u16(),
            String::from_utf8_lossy(response.body()).into_owned(),
        ),
    }
}

#[test]
fn an_untrusted_unix_socket_is_one_key_whatever_it_forwards() {
    let spoof = [("x-forwarded-for", "198.51.100.7")];
    for client_ip in [
        ClientIp::new(),
        ClientIp::new().trust("127.0.0.1".parse().unwrap()),
    ] {
        assert_eq!(key(&client_ip, Peer::unix(), &spoof), UNIX_PEER_KEY);
        assert_eq!(key(&client_ip, Peer::from_host(None, 0), &[]), "unix");
    }
    // Decided, never a 500: the second request in the second is refused as any client's.
    let limiter = per_ip(ClientIp::new(), Quota::per_second(1));
    assert_eq!(decide(&limiter, &parts(Peer::unix(), &[])).0, 0);
    assert_eq!(decide(&limiter, &parts(Peer::unix(), &spoof)).0, 429);
}

#[test]
fn a_trusted_unix_socket_is_walked_as_a_proxy() {
    let behind_nginx = ClientIp::new().trust("unix".parse().unwrap());
    let forwarded = |xff: &str| key(&behind_nginx, Peer::unix(), &[("x-forwarded-for", xff)]);
    assert_eq!(forwarded("198.51.100.7"), "198.51.100.7");
    // Only the entry the proxy wrote is believed, unless it forwards from a trusted proxy.
    assert_eq!(forwarded("6.6.6.6, 198.51.100.7"), "198.51.100.7");
    assert_eq!(forwarded("2001:db8::1:2"), "2001:db8::/64");
    // No header: nothing names another client, the socket's peer is the key.
    assert_eq!(key(&behind_nginx, Peer::unix(), &[]), "unix");
    let chained = ClientIp::new().trust("unix, 10.0.0.0/8".parse().unwrap());
    assert_eq!(
        key(
            &chained,
            Peer::unix(),
            &[("x-forwarded-for", "198.51.100.7, 10.0.0.2")]
        ),
        "198.51.100.7"
    );
    let rfc7239 = behind_nginx
        .clone()
        .forwarded_headers(ForwardedHeaders::Forwarded);
    assert_eq!(
        key(&rfc7239, Peer::unix(), &[("forwarded", "for=192.0.2.60")]),
        "192.0.2.60"
    );
    let mut error = KeyBuf::new();
    let garbage = parts(Peer::unix(), &[("x-forwarded-for", "not-an-address")]);
    let refused = behind_nginx.extract(&garbage, &mut error).unwrap_err();
    assert_eq!(refused.kind(), KeyErrorKind::Invalid);
    // An IP peer is not trusted by `unix`.
    assert_eq!(
        key(
            &behind_nginx,
            Peer::from_host(Some("127.0.0.1"), 5000),
            &[("x-forwarded-for", "198.51.100.7")]
        ),
        "127.0.0.1"
    );
}

#[test]
fn a_named_host_is_its_own_key_and_an_ip_host_an_address() {
    let client_ip = ClientIp::new().trust("unix".parse().unwrap());
    let testclient = Peer::from_host(Some("testclient"), 50000);
    assert_eq!(key(&client_ip, testclient.clone(), &[]), "testclient");
    assert_eq!(
        key(
            &client_ip,
            Peer::from_host(Some("x".repeat(100).as_str()), 1),
            &[]
        ),
        "x".repeat(64)
    );
    assert_eq!(
        key(
            &client_ip,
            Peer::from_host(Some("::ffff:192.0.2.1"), 1),
            &[]
        ),
        "192.0.2.1"
    );
    let limiter = per_ip(ClientIp::new(), Quota::per_second(1));
    assert_eq!(decide(&limiter, &parts(testclient.clone(), &[])).0, 0);
    assert_eq!(decide(&limiter, &parts(testclient, &[])).0, 429);
    assert_eq!(
        decide(&limiter, &parts(Peer::from_host(Some("other"), 1), &[])).0,
        0,
        "another name, another key"
    );
}

#[test]
fn the_warning_applies_to_an_untrusted_unix_socket_alone() {
    let untrusted = ClientIp::new().trust("127.0.0.1".parse().unwrap());
    assert!(untrusted.shares_one_key(&Peer::unix()));
    let warning = untrusted
        .shared_key_warning(&Peer::unix(), "trusted_proxies")
        .expect("a warning");
    assert_eq!(
        warning,
        "requests arrive on a Unix socket, which has no client address: every limit keyed by \
         client address counts all of them under the one key \"unix\", so all clients share \
         it. Behind a proxy on this machine that sets X-Forwarded-For (nginx: \
         proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for), add \"unix\" to \
         trusted_proxies to key each client by the address the proxy forwards"
    );
    let rfc7239 = ClientIp::new().forwarded_headers(ForwardedHeaders::Forwarded);
    assert!(rfc7239
        .shared_key_warning(&Peer::unix(), "x")
        .unwrap()
        .contains("that sets Forwarded (nginx"));
    let trusted = ClientIp::new().trust("unix".parse().unwrap());
    assert!(!trusted.shares_one_key(&Peer::unix()));
    for peer in [
        Peer::from_host(Some("testclient"), 1),
        Peer::from_host(Some("192.0.2.1"), 1),
    ] {
        assert!(!untrusted.shares_one_key(&peer), "{peer:?}");
        assert_eq!(untrusted.shared_key_warning(&peer, "x"), None);
    }
}

#[test]
fn an_ip_peer_from_either_call_is_the_same_request() {
    let client_ip = ClientIp::new();
    let from = parts(Peer::from_host(Some("192.0.2.7"), 4000), &[]);
    let plain = request_parts("GET", "/", [], Some("192.0.2.7:4000".parse().unwrap()));
    assert_eq!(
        from.extensions.get::<std::net::SocketAddr>(),
        plain.extensions.get::<std::net::SocketAddr>()
    );
    assert!(from.extensions.get::<Peer>().is_none());
    assert_eq!(
        client_ip.peer_addr(&from).unwrap(),
        "192.0.2.7".parse::<std::net::IpAddr>().unwrap()
    );
    assert_eq!(
        client_ip
            .peer_addr(&parts(Peer::unix(), &[]))
            .unwrap_err()
            .kind(),
        KeyErrorKind::Unavailable
    );
}

#[test]
fn no_peer_at_all_is_a_setup_error_that_says_what_to_insert() {
    let limiter = per_ip(ClientIp::new(), Quota::per_second(1));
    let (status, body) = decide(&limiter, &request_parts("GET", "/", [], None));
    assert_eq!(status, 500);
    assert!(body.starts_with("limit \"ip\": the server did not record the client's address"));
    assert!(
        body.contains("ConnectInfo through ClientIp::peer_from"),
        "{body}"
    );
    assert!(body.contains("Peer::unix() on a Unix socket"), "{body}");
}

#[test]
fn a_missing_given_key_names_its_limit_once() {
    let table = KeyedLimiter::<String>::new(Quota::per_second(5)).unwrap();
    let limiter = RequestLimiter::builder()
        .limit(RequestLimit::new("user", table).key(GivenKey::new("user")))
        .limiter()
        .unwrap();
    let mut request = parts(Peer::unix(), &[]);
    let mut keys = GivenKeys::new();
    keys.insert("user", None);
    request.extensions.insert(keys);
    let (status, body) = decide(&limiter, &request);
    assert_eq!(status, 400);
    assert_eq!(
        body,
        "limit \"user\": its key function found no key in this request\n"
    );
    request.extensions.remove::<GivenKeys>();
    let (status, body) = decide(&limiter, &request);
    assert_eq!(status, 500);
    assert_eq!(
        body,
        "limit \"user\": the front end gave no key for this limit (a GivenKeys request \
         extension)\n"
    );
}

#[test]
fn a_full_table_answers_the_one_retry_every_front_end_reports() {
    let table = KeyedLimiter::<String>::builder(Quota::per_second(5))
        .shards(1)
        .max_keys(1)
        .build()
        .unwrap();
    let limiter = RequestLimiter::builder()
        .limit(RequestLimit::new("ip", table).key(ClientIp::new()))
        .limiter()
        .unwrap();
    let first = parts(Peer::from_host(Some("192.0.2.1"), 1), &[]);
    assert_eq!(decide(&limiter, &first).0, 0);
    let second = parts(Peer::from_host(Some("192.0.2.2"), 1), &[]);
    let Deciding::Now(Verdict::Refuse(full)) = limiter.decide(&second) else {
        panic!("a new key refused while the table is full")
    };
    assert_eq!(full.status(), 503);
    assert_eq!(TABLE_FULL_RETRY_AFTER.as_secs(), 1);
    assert_eq!(full.headers()["retry-after"], "1");
    assert_eq!(
        String::from_utf8_lossy(full.body()),
        "limit \"ip\" is tracking as many clients as it can; retry after 1 second\n"
    );
}
