//! The server on Redis (a real `redis-server` per test, on a free port, stopped by PID):
//! the same rules, two server processes sharing one limit exactly, several quotas of a rule in
//! one script call, and what a Redis outage answers under each `--on-backend-error`.

// The workspace's one helper for real redis-servers, shared with the library's tests.
#[path = "../../tests/support/redis_server.rs"]
mod redis_server;
#[path = "support/service.rs"]
mod service;

use redis_server::{unused_port, RedisServer};
use service::*;
use std::time::{Duration, Instant};
use tonic::Code;

const CONFIG: &str = r#"
domain: shared
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: one
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: free
    rate_limit: {unlimited: true}
"#;

fn algorithms_config() -> String {
    let mut config = String::from("domain: algos\ndescriptors:\n");
    for name in [
        "gcra",
        "token-bucket",
        "leaky-bucket",
        "fixed-window",
        "sliding-window",
        "sliding-log",
    ] {
        config.push_str(&format!(
            "  - key: {name}\n    rate_limit: {{quota: \"3/hour\", algorithm: {name}}}\n"
        ));
    }
    config
}

/// Six requests on `name`'s rule (3 an hour) for one value: how many were admitted.
async fn admitted_of_six(
    client: &mut sluicegate_server::proto::rate_limit_service_client::RateLimitServiceClient<
        tonic::transport::Channel,
    >,
    name: &str,
) -> u32 {
    let mut allowed = 0;
    for _ in 0..6 {
        let r = ask(client, request("algos", vec![descriptor(&[(name, "k")])])).await;
        allowed += u32::from(r.overall_code == OK);
    }
    allowed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_algorithm_on_redis() {
    let redis = RedisServer::start();
    let service = Service::start(&algorithms_config(), &["--redis", &redis.url()]);
    let mut client = service.client().await;
    for name in [
        "gcra",
        "token-bucket",
        "leaky-bucket",
        "fixed-window",
        "sliding-window",
        "sliding-log",
    ] {
        assert_eq!(
            admitted_of_six(&mut client, name).await,
            3,
            "{name}:\n{}",
            service.logs()
        );
    }
    // The state is in Redis.
    let keys = redis.cli(&["--scan", "--pattern", "sluicegate-server:*"]);
    assert!(keys.lines().count() >= 6, "{keys}");
}

/// The Redis module cargo built beside these tests (a dev-dependency).
fn redis_module() -> String {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let name = "libsluicegate_redis.so";
    [
        deps.join(name),
        deps.parent().expect("target/<profile>").join(name),
    ]
    .into_iter()
    .find(|path| path.exists())
    .and_then(|path| path.to_str().map(str::to_owned))
    .expect("libsluicegate_redis.so is built with these tests (a dev-dependency)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_module_the_module_decides_and_the_log_stays_a_script() {
    let module = redis_module();
    let redis = RedisServer::start_with(&["--loadmodule", &module]);
    let service = Service::start(
        &algorithms_config(),
        &["--redis", &redis.url(), "--redis-module"],
    );
    let mut client = service.client().await;
    for name in ["gcra", "fixed-window", "sliding-log"] {
        assert_eq!(
            admitted_of_six(&mut client, name).await,
            3,
            "{name}:\n{}",
            service.logs()
        );
    }
    let stats = redis.cli(&["INFO", "commandstats"]);
    let calls = |command: &str| {
        let prefix = format!("cmdstat_{command}:calls=");
        stats
            .lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse::<u64>().expect("a count"))
    };
    // Each limit asks Redis for its three admissions and its first denial (the deny cache
    // answers the rest): GCRA's and the fixed window's by the module, the log's by script.
    assert_eq!(calls("sluicegate.decide"), 8, "{stats}");
    let scripts = calls("evalsha") + calls("eval");
    assert!((4..8).contains(&scripts), "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_all_or_nothing_shadow_and_unlimited_on_redis() {
    let redis = RedisServer::start();
    let service = Service::start(CONFIG, &["--redis", &redis.url()]);
    let mut client = service.client().await;
    let both = || {
        request(
            "shared",
            vec![descriptor(&[("one", "a")]), descriptor(&[("user", "a")])],
        )
    };
    assert_eq!(codes(&ask(&mut client, both()).await), vec![OK, OK]);
    for _ in 0..3 {
        let r = ask(&mut client, both()).await;
        assert_eq!((r.overall_code, codes(&r)), (OVER, vec![OVER, OK]));
    }
    let peek = request("shared", vec![with_hits(descriptor(&[("user", "a")]), 0)]);
    assert_eq!(ask(&mut client, peek).await.statuses[0].limit_remaining, 9);

    let shadowed = || request("shared", vec![descriptor(&[("shadow", "s")])]);
    ask(&mut client, shadowed()).await;
    let r = ask(&mut client, shadowed()).await;
    assert_eq!((r.overall_code, codes(&r)), (OK, vec![OVER]));

    let r = ask(
        &mut client,
        request("shared", vec![descriptor(&[("free", "f")])]),
    )
    .await;
    assert_eq!(r.statuses[0].limit_remaining, u32::MAX);
    let mut req = request("shared", vec![descriptor(&[("user", "h")])]);
    req.hits_addend = 4;
    assert_eq!(ask(&mut client, req).await.statuses[0].limit_remaining, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_one_limit_exactly() {
    let redis = RedisServer::start();
    let a = Service::start(CONFIG, &["--redis", &redis.url()]);
    let b = Service::start(CONFIG, &["--redis", &redis.url()]);
    let mut clients = [a.client().await, b.client().await];
    let mut allowed = 0;
    for i in 0..30 {
        let client = &mut clients[i % 2];
        let r = ask(
            client,
            request("shared", vec![descriptor(&[("user", "both")])]),
        )
        .await;
        allowed += u32::from(r.overall_code == OK);
    }
    assert_eq!(allowed, 10, "the two servers admitted 10 between them");
    // Concurrently too: 20 calls at once from both, on a fresh key, admit exactly 10.
    let mut calls = Vec::new();
    for i in 0..20 {
        let mut client = clients[i % 2].clone();
        calls.push(tokio::spawn(async move {
            ask(
                &mut client,
                request("shared", vec![descriptor(&[("user", "race")])]),
            )
            .await
            .overall_code
        }));
    }
    let mut admitted = 0;
    for call in calls {
        admitted += u32::from(call.await.unwrap() == OK);
    }
    assert_eq!(admitted, 10);
}

/// Waits until `/healthcheck` answers `code`.
fn health_becomes(service: &Service, code: u16, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if service.get("/healthcheck").0 == code {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_outage_answers_as_on_backend_error_says() {
    // Nothing listens on this port yet: the servers start anyway (Redis is connected lazily).
    let port = unused_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let error = Service::start(CONFIG, &["--redis", &url]);
    let allow = Service::start(CONFIG, &["--redis", &url, "--on-backend-error", "allow"]);
    let deny = Service::start(CONFIG, &["--redis", &url, "--on-backend-error", "deny"]);
    let req = || {
        request(
            "shared",
            vec![descriptor(&[("user", "o")]), descriptor(&[("nobody", "x")])],
        )
    };

    let e = error
        .client()
        .await
        .should_rate_limit(req())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    let (code, _, _) = error
        .json(r#"{"domain":"shared","descriptors":[{"entries":[{"key":"user","value":"o"}]}]}"#);
    assert_eq!(code, 503);
    assert!(
        health_becomes(&error, 503, Duration::from_secs(5)),
        "down and errors not let through"
    );
    assert_eq!(
        allow.get("/healthcheck").0,
        200,
        "errors let through: healthy"
    );

    let r = ask(&mut allow.client().await, req()).await;
    assert_eq!((r.overall_code, codes(&r)), (OK, vec![OK, OK]));
    let r = ask(&mut deny.client().await, req()).await;
    assert_eq!((r.overall_code, codes(&r)), (OVER, vec![OVER, OK]));
    // A rule that needs no backend still answers.
    let r = ask(
        &mut error.client().await,
        request("shared", vec![descriptor(&[("free", "f")])]),
    )
    .await;
    assert_eq!(r.overall_code, OK);
    let errors = error
        .metric("ratelimit_service_backend_errors_total")
        .unwrap_or(0.0);
    assert!(errors >= 1.0, "backend errors are counted");

    // Redis comes up: the server uses it as soon as it answers.
    let _redis = RedisServer::start_on_port(port);
    assert!(
        health_becomes(&error, 200, Duration::from_secs(10)),
        "{}",
        error.logs()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut client = error.client().await;
    loop {
        match client.should_rate_limit(req()).await {
            Ok(r) => {
                assert_eq!(r.get_ref().overall_code, OK);
                break;
            }
            Err(e) => assert!(Instant::now() < deadline, "still failing: {e:?}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_limits_on_a_redis_cluster() {
    let cluster = redis_server::RedisCluster::start(3);
    let a = Service::start(CONFIG, &["--redis-cluster", &cluster.urls()]);
    let b = Service::start(CONFIG, &["--redis-cluster", &cluster.urls()]);
    let mut clients = [a.client().await, b.client().await];
    // Many users: their keys spread over the nodes; each gets exactly its 10.
    for user in ["u1", "u2", "u3", "u4"] {
        let mut allowed = 0;
        for i in 0..14 {
            let r = ask(
                &mut clients[i % 2],
                request("shared", vec![descriptor(&[("user", user)])]),
            )
            .await;
            allowed += u32::from(r.overall_code == OK);
        }
        assert_eq!(allowed, 10, "{user}:\n{}", a.logs());
    }
    // All or nothing across keys on different nodes.
    let both = || {
        request(
            "shared",
            vec![descriptor(&[("one", "x")]), descriptor(&[("user", "x")])],
        )
    };
    assert_eq!(ask(&mut clients[0], both()).await.overall_code, OK);
    assert_eq!(ask(&mut clients[1], both()).await.overall_code, OVER);
    let peek = request("shared", vec![with_hits(descriptor(&[("user", "x")]), 0)]);
    assert_eq!(
        ask(&mut clients[0], peek).await.statuses[0].limit_remaining,
        9
    );
    let spread = cluster
        .nodes()
        .iter()
        .filter(|node| node.cli(&["DBSIZE"]) != "0")
        .count();
    assert!(spread >= 2, "the keys live on several nodes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_on_redis_applies_at_once_and_keeps_unchanged_counts() {
    let redis = RedisServer::start();
    let service = Service::start(CONFIG, &["--redis", &redis.url()]);
    let mut client = service.client().await;
    for _ in 0..3 {
        ask(
            &mut client,
            request("shared", vec![descriptor(&[("user", "r")])]),
        )
        .await;
    }
    let added =
        format!("{CONFIG}  - key: added\n    rate_limit: {{unit: hour, requests_per_unit: 2}}\n");
    service.write("config.yaml", &added);
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        // The new rule answers from its first call: no failure while it connects.
        let r = ask(
            &mut client,
            request("shared", vec![with_hits(descriptor(&[("added", "a")]), 0)]),
        )
        .await;
        if r.statuses[0].current_limit.is_some() {
            assert_eq!(r.statuses[0].limit_remaining, 2);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not applied within 2 s:\n{}",
            service.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = ask(
        &mut client,
        request("shared", vec![descriptor(&[("user", "r")])]),
    )
    .await;
    assert_eq!(
        r.statuses[0].limit_remaining, 6,
        "the unchanged rule kept its count"
    );
}

/// The `calls` of `INFO commandstats` for EVALSHA: the library's scripts.
fn evalsha_calls(redis: &RedisServer) -> u64 {
    let stats = redis.cli(&["INFO", "commandstats"]);
    stats
        .lines()
        .find_map(|line| line.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_quotas_are_one_script_call_per_request_on_redis() {
    let redis = RedisServer::start();
    let config = "domain: many\ndescriptors:\n  - key: user\n    rate_limit: {quota: \"5/hour; 3/minute; 100/day\", algorithm: sliding-log}\n";
    let service = Service::start(config, &["--redis", &redis.url()]);
    let mut client = service.client().await;
    let one = || request("many", vec![descriptor(&[("user", "u")])]);
    // The first call may load the script; count from the second.
    assert_eq!(ask(&mut client, one()).await.overall_code, OK);
    let before = evalsha_calls(&redis);
    for _ in 0..2 {
        assert_eq!(ask(&mut client, one()).await.overall_code, OK);
    }
    // Denied by the minute quota: still one call.
    let r = ask(&mut client, one()).await;
    assert_eq!(r.overall_code, OVER);
    let limit = r.statuses[0].current_limit.clone().expect("current_limit");
    assert_eq!(
        (limit.requests_per_unit, limit.unit),
        (3, 2),
        "3 per MINUTE"
    );
    assert_eq!(evalsha_calls(&redis) - before, 3, "one EVALSHA per request");
    // One key per quota, under the rule's prefix.
    let keys = redis.cli(&["--scan", "--pattern", "sluicegate-server:many:user:*"]);
    assert_eq!(keys.lines().count(), 3, "{keys}");
}
