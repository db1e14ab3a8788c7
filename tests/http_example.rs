//! The `http_server` example as a black box: the command line of DESIGN.md §2, spawned as a
//! process and spoken to over HTTP. Needs the example built, as `cargo test --features
//! http,tokio` (or `--all-features`) does before running tests.
#![cfg(all(feature = "http", feature = "tokio"))]

mod http_support;
#[cfg(feature = "redis")]
#[path = "support/redis_server.rs"]
mod redis_server;

use http_support::net::{self, get as fetch};
use http_support::sf::parse_list;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
#[cfg(feature = "redis")]
use {
    redis_server::RedisServer, sluicegate::algorithm::AlgorithmKind,
    sluicegate::http::redis_prefix, sluicegate::redis::AnyRedisLimiter,
};

/// target/<profile>/examples/http_server, beside this test's own binary.
fn binary() -> PathBuf {
    let mut path = std::env::current_exe().unwrap();
    path.pop();
    if path.ends_with("deps") {
        path.pop();
    }
    path.push("examples");
    path.push(format!("http_server{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build --example http_server --features http,tokio`",
        path.display()
    );
    path
}

fn run(args: &[&str]) -> Output {
    Command::new(binary()).args(args).output().unwrap()
}

/// The running server, killed (by its own pid) when dropped.
struct Server {
    child: Child,
    address: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Server {
    let mut child = Command::new(binary())
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    Server { child, address }
}

#[test]
fn help_lists_every_flag() {
    let output = run(&["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for flag in [
        "--listen",
        "--limit",
        "--trusted-proxy",
        "--ipv6-prefix",
        "--redis",
        "--on-backend-error",
        "--forwarded-header",
        "--legacy-headers",
        "--problem-json",
        "--help",
    ] {
        assert!(help.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn bad_flags_and_quotas_exit_non_zero_with_a_message() {
    for (args, says) in [
        (&["--bogus"][..], "unknown argument \"--bogus\""),
        (&["--limit", "name=x; quota=5/fortnight"], "--limit"),
        (&["--limit", "name=x; quota=0/second"], "at least 1"),
        (
            &["--limit", "name=x; quota=5/s; algorithm=magic"],
            "unknown algorithm",
        ),
        (&["--limit", "name=x; quota=5/s; key=cookie"], "unknown key"),
        (
            &[
                "--limit",
                "name=x; quota=5/s",
                "--limit",
                "name=x; quota=6/s",
            ],
            "two limits",
        ),
        (&["--ipv6-prefix", "129"], "--ipv6-prefix"),
        (&["--trusted-proxy", "10.1.0.0/8"], "--trusted-proxy"),
        (&["--on-backend-error", "maybe"], "allow or deny"),
        (&["--listen", "nowhere"], "--listen"),
        (&["--limit"], "--limit needs"),
    ] {
        let output = run(args);
        assert!(!output.status.success(), "{args:?} succeeded");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[tokio::test]
async fn limits_answer_200_then_429_with_headers() {
    let server = start(&[
        "--limit", "name=ip; key=peer-ip; quota=2/minute; algorithm=gcra",
        "--limit=name=token; key=header:x-api-key; quota=100/minute burst 20; algorithm=sliding-window",
    ]);
    let client = net::http1();
    let key = [("x-api-key", "k1")];
    let mut seen = Vec::new();
    for _ in 0..3 {
        let reply = fetch(&client, server.address, &key).await;
        let current = parse_list(reply.header("ratelimit").unwrap()).unwrap();
        parse_list(reply.header("ratelimit-policy").unwrap()).unwrap();
        seen.push((
            reply.status,
            current[0].string().unwrap().to_owned(),
            current[0].int("r").unwrap(),
        ));
        if reply.status == 429 {
            assert_eq!(
                reply.header("retry-after"),
                Some(current[0].int("t").unwrap().to_string().as_str())
            );
        }
    }
    assert_eq!(
        seen,
        [
            (200, "ip".into(), 1),
            (200, "ip".into(), 0),
            (429, "ip".into(), 0)
        ]
    );
    assert_eq!(
        fetch(&net::http2(), server.address, &[]).await.status,
        400,
        "no x-api-key: 400 before any limit is consumed"
    );
}

#[tokio::test]
async fn without_limits_there_is_no_layer() {
    let server = start(&[]);
    let reply = fetch(&net::http1(), server.address, &[]).await;
    assert_eq!((reply.status, reply.body.as_str()), (200, "ok\n"));
    assert_eq!(reply.header("ratelimit-policy"), None);
}

#[tokio::test]
async fn trusted_proxies_forward_the_client_address() {
    let server = start(&[
        "--limit",
        "name=ip; key=peer-ip; quota=1/minute",
        "--trusted-proxy",
        "127.0.0.1",
    ]);
    let client = net::http1();
    let from = |chain: &'static str| [("x-forwarded-for", chain)];
    assert_eq!(
        fetch(&client, server.address, &from("203.0.113.1"))
            .await
            .status,
        200
    );
    assert_eq!(
        fetch(&client, server.address, &from("1.1.1.1, 203.0.113.1"))
            .await
            .status,
        429
    );
    assert_eq!(
        fetch(&client, server.address, &[("forwarded", "for=203.0.113.2")])
            .await
            .status,
        200
    );
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn with_redis_it_starts_while_redis_is_down_and_uses_it_once_up() {
    let port = redis_server::unused_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let server = start(&[
        "--redis",
        &url,
        "--on-backend-error",
        "deny",
        "--limit",
        "name=ip; key=peer-ip; quota=2/minute; algorithm=sliding-window",
    ]);
    let client = net::http1();
    let down = fetch(&client, server.address, &[]).await;
    assert_eq!(down.status, 503, "{}", down.body);
    assert_eq!(down.header("retry-after"), Some("1"));
    let redis = RedisServer::start_on_port(port);
    // The limiter finds Redis within its probe interval.
    let mut statuses = Vec::new();
    for _ in 0..50 {
        let reply = fetch(&client, server.address, &[]).await;
        if reply.status != 503 {
            statuses.push(reply.status);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for _ in 0..2 {
        statuses.push(fetch(&client, server.address, &[]).await.status);
    }
    assert_eq!(statuses, [200, 200, 429]);
    // A second server on the same Redis shares the limit.
    let other = start(&[
        "--redis",
        &url,
        "--limit",
        "name=ip; key=peer-ip; quota=2/minute; algorithm=sliding-window",
    ]);
    let mut shared = 0;
    for _ in 0..50 {
        let reply = fetch(&client, other.address, &[]).await;
        if reply.header("ratelimit").is_some() {
            shared = reply.status;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(shared, 429);
    // The state lies under the library's prefix for HTTP limits, where any front end (a
    // RedisLimiter here) that names the limit alike finds it.
    let keys = redis.cli(&["--scan", "--pattern", "sluicegate:http:ip:*"]);
    assert_eq!(keys.lines().count(), 1, "{keys}");
    let same = AnyRedisLimiter::builder(
        "2/minute".parse().unwrap(),
        AlgorithmKind::SlidingWindow,
        &url,
    )
    .prefix(redis_prefix("ip"))
    .connect()
    .await
    .unwrap();
    assert_eq!(same.redis_key("127.0.0.1"), keys.trim());
    assert!(same.peek("127.0.0.1").await.unwrap().is_denied());
}
