//! The service on Redis where users run it: over TLS with mutual TLS and an ACL user
//! (`--redis rediss://user:password@...`, `--redis-ca-cert`, `--redis-client-cert`,
//! `--redis-client-key`), and behind Sentinels (`--redis redis-sentinel://...#master`)
//! through a failover.

#[path = "../../tests/support/redis_sentinel.rs"]
mod redis_sentinel;
#[path = "../../tests/support/redis_server.rs"]
mod redis_server;
#[path = "support/service.rs"]
mod service;
#[path = "../../tests/support/tls_files.rs"]
mod tls_files;

use redis_sentinel::{SentinelSet, DOWN_AFTER};
use redis_server::{unused_port, RedisServer};
use service::*;
use std::time::{Duration, Instant};
use tls_files::TlsFiles;

const CONFIG: &str =
    "domain: d\ndescriptors:\n  - key: user\n    rate_limit: {unit: hour, requests_per_unit: 2}\n";

fn body(user: &str) -> String {
    format!(r#"{{"domain":"d","descriptors":[{{"entries":[{{"key":"user","value":"{user}"}}]}}]}}"#)
}

/// The status codes of `n` `/json` requests for `user`.
fn codes(service: &Service, user: &str, n: usize) -> Vec<u16> {
    (0..n).map(|_| service.json(&body(user)).0).collect()
}

#[test]
fn on_redis_over_mutual_tls_with_an_acl_user() {
    let files = TlsFiles::make("service");
    let port = unused_port();
    let args = files.server_args(port, true);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let redis = RedisServer::start_with(&args);
    let added = redis.cli(&[
        "ACL",
        "SETUSER",
        "limiter",
        "on",
        ">s3cret",
        "~sluicegate-server:*",
        "&*",
        "+@read",
        "+@write",
        "+@scripting",
        "+ping",
        "+time",
    ]);
    assert_eq!(added, "OK");
    let url = format!("rediss://limiter:s3cret@127.0.0.1:{port}/");
    let path = |name: &str| files.path(name).display().to_string();
    let (ca, cert, key) = (path("ca.crt"), path("client.crt"), path("client.key"));
    let service = Service::start(
        CONFIG,
        &[
            "--redis",
            &url,
            "--redis-ca-cert",
            &ca,
            "--redis-client-cert",
            &cert,
            "--redis-client-key",
            &key,
        ],
    );
    assert_eq!(codes(&service, "u1", 3), [200, 200, 429]);
    assert!(
        redis
            .cli(&["KEYS", "sluicegate-server:*"])
            .contains("sluicegate-server:"),
        "the state is on this Redis"
    );
}

#[test]
fn a_tls_file_that_cannot_be_read_stops_the_service_naming_its_flag() {
    let output = std::process::Command::new(server_bin())
        .args(["--config", "/dev/null", "--redis", "rediss://127.0.0.1:1/"])
        .args(["--redis-ca-cert", "/nonexistent/ca.pem"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--redis-ca-cert /nonexistent/ca.pem"),
        "{stderr}"
    );
    // A client certificate without its key is refused by the flags themselves.
    let output = std::process::Command::new(server_bin())
        .args(["--config", "/dev/null", "--redis", "rediss://127.0.0.1:1/"])
        .args(["--redis-client-cert", "/dev/null"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--redis-client-key"), "{stderr}");
}

#[test]
fn behind_sentinels_through_a_failover() {
    let mut set = SentinelSet::start();
    let service = Service::start(CONFIG, &["--redis", &set.url("")]);
    assert_eq!(codes(&service, "u1", 3), [200, 200, 429]);
    set.primary.kill();
    let killed = Instant::now();
    // Decisions come back on the promoted replica, with the counts it replicated.
    let mut first = None;
    while killed.elapsed() < Duration::from_secs(20) {
        let (code, _, text) = service.json(&body("u2"));
        if code == 200 {
            first = Some(killed.elapsed());
            break;
        }
        assert_eq!(
            code, 503,
            "an outage, as --on-backend-error error answers: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let recovery = first.expect("decisions resumed after the failover");
    assert!(
        recovery < DOWN_AFTER + Duration::from_secs(10),
        "{recovery:?}"
    );
    assert_eq!(set.master_port(), set.replica.port());
    assert_eq!(
        codes(&service, "u1", 1),
        [429],
        "u1's count survived the failover"
    );
    eprintln!("the service decided again {recovery:?} after the primary was killed");
}
