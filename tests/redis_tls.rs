//! Redis where managed services run it: `rediss://` with the server's certificate verified
//! (against a CA the test made), mutual TLS (a server that refuses clients without a
//! certificate), and ACL users with passwords (`user:password@` in the URL), a wrong one
//! refused saying so.
#![cfg(feature = "redis-tls")]

#[path = "support/redis_server.rs"]
mod redis_server;
#[path = "support/tls_files.rs"]
mod tls_files;

use redis_server::{unused_port, RedisServer};
use sluicegate::algorithm::FixedWindow;
use sluicegate::clock::ManualClock;
use sluicegate::redis::{RedisBuilder, RedisError, RedisLimiter};
use sluicegate::Quota;
use std::time::Duration;
use tls_files::TlsFiles;

/// A `redis-server` serving TLS on its own port (beside the plain one the harness uses).
fn tls_server(files: &TlsFiles, mutual: bool) -> (RedisServer, u16) {
    let port = unused_port();
    let args = files.server_args(port, mutual);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (RedisServer::start_with(&args), port)
}

type Builder = RedisBuilder<FixedWindow, ManualClock>;

/// Two an hour, on a clock that does not move.
fn builder(url: &str) -> Builder {
    RedisLimiter::<FixedWindow, ManualClock>::builder(Quota::per_hour(2), url)
        .clock(ManualClock::new())
        .deny_cache(false)
        .connect_timeout(Duration::from_secs(2))
}

/// Three checks of one key: allowed, allowed, denied when Redis decided them.
async fn three(limiter: &RedisLimiter<FixedWindow, ManualClock>) -> Vec<bool> {
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(limiter.check("k").await.expect("a decision").is_allowed());
    }
    answers
}

#[tokio::test]
async fn rediss_verifies_the_server_against_the_given_ca() {
    let files = TlsFiles::make("verify");
    let (server, port) = tls_server(&files, false);
    let url = format!("rediss://127.0.0.1:{port}/");
    let limiter = builder(&url)
        .ca_cert(files.read("ca.crt"))
        .connect()
        .await
        .unwrap();
    assert_eq!(three(&limiter).await, [true, true, false]);
    // The state is on this server (read over its plain port).
    assert!(
        server.cli(&["DBSIZE"]).starts_with('1'),
        "{}",
        server.cli(&["DBSIZE"])
    );
    // A certificate that chains to no trusted root is refused: the system's roots, or
    // another CA.
    for (what, builder) in [
        ("the system's roots", builder(&url)),
        (
            "another CA",
            builder(&url).ca_cert(files.read("other-ca.crt")),
        ),
    ] {
        let error = builder.connect().await.unwrap_err();
        assert!(error.is_outage(), "{what}: {error:?}");
        assert!(
            error.to_string().contains("certificate"),
            "{what}: the error says why: {error}"
        );
    }
    // A certificate from the trusted CA, for another host name, is refused too.
    let stranger_port = unused_port();
    let args = files.server_args_as("stranger", stranger_port, false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _stranger = RedisServer::start_with(&args);
    let error = builder(&format!("rediss://127.0.0.1:{stranger_port}/"))
        .ca_cert(files.read("ca.crt"))
        .connect()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("certificate"), "{error}");
}

#[tokio::test]
async fn mutual_tls_needs_the_client_certificate() {
    let files = TlsFiles::make("mutual");
    let (_server, port) = tls_server(&files, true);
    let url = format!("rediss://127.0.0.1:{port}/");
    let without = builder(&url).ca_cert(files.read("ca.crt")).connect().await;
    let error = without.expect_err("a server that wants a client certificate refuses one without");
    assert!(error.is_outage(), "{error:?}");
    let limiter = builder(&url)
        .ca_cert(files.read("ca.crt"))
        .client_cert(files.read("client.crt"))
        .client_key(files.read("client.key"))
        .connect()
        .await
        .expect("with the client certificate");
    assert_eq!(three(&limiter).await, [true, true, false]);
}

#[tokio::test]
async fn tls_files_are_checked_before_connecting() {
    let files = TlsFiles::make("checks");
    for (builder, why) in [
        (
            builder("redis://127.0.0.1:1/").ca_cert(files.read("ca.crt")),
            "need a TLS URL",
        ),
        (
            builder("rediss://127.0.0.1:1/").client_cert(files.read("client.crt")),
            "go together",
        ),
        (
            builder("rediss://127.0.0.1:1/").ca_cert(b"not a certificate".to_vec()),
            "holds no PEM certificate",
        ),
        (
            builder("rediss://127.0.0.1:1/")
                .client_cert(files.read("client.crt"))
                .client_key(files.read("client.crt")),
            "client_key holds no private key",
        ),
    ] {
        let error = builder.lazy(true).connect().await.unwrap_err();
        assert!(matches!(error, RedisError::Config { .. }), "{error:?}");
        assert!(error.to_string().contains(why), "{error}");
    }
}

/// An ACL user allowed what the limiter runs, on keys under its prefix.
fn add_user(server: &RedisServer) {
    let reply = server.cli(&[
        "ACL",
        "SETUSER",
        "limiter",
        "on",
        ">s3cret",
        "~sluicegate:*",
        "&*",
        "+@read",
        "+@write",
        "+@scripting",
        "+ping",
        "+time",
    ]);
    assert_eq!(reply, "OK");
}

#[tokio::test]
async fn an_acl_user_with_a_password_decides_and_a_wrong_password_is_refused() {
    let files = TlsFiles::make("acl");
    let (server, tls_port) = tls_server(&files, false);
    add_user(&server);
    let plain = format!("redis://limiter:s3cret@127.0.0.1:{}/", server.port());
    let tls = format!("rediss://limiter:s3cret@127.0.0.1:{tls_port}/");
    for (url, ca) in [(&plain, None), (&tls, Some(files.read("ca.crt")))] {
        let mut builder = builder(url).prefix(format!("sluicegate:{}:", url.len()));
        if let Some(ca) = ca {
            builder = builder.ca_cert(ca);
        }
        let limiter = builder.connect().await.expect("the ACL user connects");
        assert_eq!(three(&limiter).await, [true, true, false], "{url}");
    }
    // A wrong password: connecting fails, saying Redis refused the credentials.
    let wrong = format!("redis://limiter:wrong@127.0.0.1:{}/", server.port());
    let error = builder(&wrong).connect().await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("Redis refused the credentials"), "{text}");
    assert!(
        !text.contains("wrong@"),
        "the password is not shown: {text}"
    );
    // Lazily built, each call fails fast, and says why.
    let lazy = builder(&wrong).lazy(true).connect().await.unwrap();
    let error = lazy.check("k").await.unwrap_err();
    assert!(error.is_outage(), "{error:?}");
    assert!(
        error.to_string().contains("Redis refused the credentials"),
        "{error}"
    );
    // A user without the scripts' permissions gets Redis's NOPERM, saying so.
    let reply = server.cli(&[
        "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read", "+ping",
    ]);
    assert_eq!(reply, "OK");
    let reader = format!("redis://reader:pw@127.0.0.1:{}/", server.port());
    let limiter = builder(&reader).connect().await.unwrap();
    let error = limiter.check("k").await.unwrap_err();
    assert!(error.to_string().contains("no permissions"), "{error}");
}
