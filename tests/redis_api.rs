//! The Redis part of DESIGN.md §2, which code outside this repository compiles against:
//! the names, the default clock type, `Send + Sync + 'static` limiters with `Send` futures,
//! `RedisError: std::error::Error`, and every key starting with the prefix.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use sluicegate::algorithm::{Gcra, SlidingLog, SlidingWindow, TokenBucket};
use sluicegate::backend::{Backend, BackendErrorKind};
use sluicegate::clock::ManualClock;
use sluicegate::redis::{RedisError, RedisLimiter, RedisTime, DEFAULT_PREFIX};
use sluicegate::{Decision, Quota};
use std::time::Duration;

fn send_sync_static<T: Send + Sync + 'static>() {}
fn send<T: Send>(_: &T) {}
fn error<E: std::error::Error + Send + Sync + 'static>() {}

#[test]
fn the_types_have_the_promised_shape() {
    send_sync_static::<RedisLimiter<Gcra>>();
    send_sync_static::<RedisLimiter<SlidingWindow, ManualClock>>();
    // `RedisLimiter<A>` is `RedisLimiter<A, RedisTime>`: Redis's clock by default.
    let _same: fn(RedisLimiter<Gcra>) -> RedisLimiter<Gcra, RedisTime> = |limiter| limiter;
    error::<RedisError>();
    assert_eq!(DEFAULT_PREFIX, "sluicegate:");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_design_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    let server = RedisServer::start();
    let url = server.url();
    let q = Quota::per_second(100).with_burst(20);

    let shared = RedisLimiter::<SlidingWindow>::connect(q, &url).await?;
    let d: Decision = shared.check("user:42").await?;
    assert!(d.is_allowed());
    let d = shared.check_n("user:42", 3).await?;
    assert_eq!(d.remaining(), 100 - 4);
    let d = shared.peek("user:42").await?;
    assert_eq!(d.remaining(), 100 - 5);
    let d = shared.hit("user:42", 1).await?;
    assert!(d.is_allowed());
    let d = shared.peek_n("user:42", 2).await?;
    assert_eq!(d.remaining(), 100 - 7);

    let clock = ManualClock::new();
    let test = RedisLimiter::<Gcra, ManualClock>::builder(q, &url)
        .clock(clock.clone())
        .prefix("test:")
        .connect()
        .await?;
    assert!(test.check_n("user:42", 20).await?.is_allowed());
    let denied = test.check("user:42").await?;
    assert_eq!(denied.retry_after(), Some(Duration::from_millis(10)));
    clock.advance(Duration::from_millis(10));
    assert!(test.check("user:42").await?.is_allowed());

    // Usable from spawned tasks: the limiter is 'static and its futures are Send.
    let spawned = shared.clone();
    let future = async move { spawned.check("user:7").await };
    send(&future);
    assert!(tokio::spawn(future).await??.is_allowed());

    // Every key written starts with its limiter's prefix.
    let keys = server.cli(&["KEYS", "*"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
    assert!(
        keys.iter()
            .all(|key| key.starts_with("sluicegate:") || key.starts_with("test:")),
        "{keys:?}"
    );
    assert!(keys.contains(&shared.redis_key("user:42").as_str()));
    Ok(())
}

#[tokio::test]
async fn errors_say_what_happened_and_map_onto_the_seam() {
    let server = RedisServer::start();
    // A quota the token bucket's exact arithmetic cannot hold is refused at build time.
    let huge = Quota::per_hour(u32::MAX).with_burst(u32::MAX);
    let refused = RedisLimiter::<TokenBucket>::connect(huge, &server.url()).await;
    match refused {
        Err(RedisError::Quota(error)) => assert!(error.to_string().contains("2^51"), "{error}"),
        other => panic!("expected a quota error, got {other:?}"),
    }
    // A prefix that would break the hash tag, and a URL that does not parse.
    let braces = RedisLimiter::<Gcra>::builder(Quota::per_second(1), &server.url())
        .prefix("a{b}:")
        .connect()
        .await;
    assert!(matches!(braces, Err(RedisError::Config { .. })));
    let url = RedisLimiter::<Gcra>::connect(Quota::per_second(1), "not a url").await;
    assert!(matches!(url, Err(RedisError::Config { .. })));
    // Nothing listening: connecting (not lazily) says Redis is unavailable.
    let closed = format!("redis://127.0.0.1:{}/", redis_server::unused_port());
    let down = RedisLimiter::<Gcra>::builder(Quota::per_second(1), &closed)
        .connect()
        .await;
    assert!(
        matches!(down, Err(RedisError::Unavailable { .. })),
        "{down:?}"
    );
    // A Redis that accepts and never answers: unavailable once the connect timeout (2 s,
    // twice the default) is out, not before. The 30 s bound is a real timeout for a build
    // that ignored it; a loaded two-core machine adds far less.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = format!("redis://{}/", listener.local_addr().unwrap());
    let started = std::time::Instant::now();
    let down = tokio::time::timeout(
        Duration::from_secs(30),
        RedisLimiter::<Gcra>::builder(Quota::per_second(1), &silent)
            .connect_timeout(Duration::from_secs(2))
            .connect(),
    )
    .await
    .expect("the connect timeout ends the wait");
    assert!(
        matches!(down, Err(RedisError::Unavailable { .. })),
        "{down:?}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "gave up after {:?}, before the connect timeout",
        started.elapsed()
    );
    // The sliding log on Redis holds at most 65,536 entries per key.
    let log = RedisLimiter::<SlidingLog>::connect(Quota::per_second(70_000), &server.url()).await;
    assert!(matches!(log, Err(RedisError::Quota(_))));

    // Through the seam, a capacity error and an outage keep their kinds.
    let limiter = RedisLimiter::<Gcra>::connect(Quota::per_second(2), &server.url())
        .await
        .unwrap();
    let seam: &dyn Backend<str> = &limiter;
    let error = seam.check("k").await.map(|d| d.is_allowed());
    assert!(error.unwrap());
    let capacity = seam
        .decide("k", 3, sluicegate::backend::Op::Check)
        .await
        .unwrap_err();
    assert_eq!(capacity.kind(), BackendErrorKind::Capacity);
    assert!(capacity.inner().downcast_ref::<RedisError>().is_some());
    drop(server);
    let outage = seam.check("k").await.unwrap_err();
    assert!(
        matches!(
            outage.kind(),
            BackendErrorKind::Unavailable | BackendErrorKind::Timeout
        ),
        "{outage}"
    );
}

/// `AnyRedisLimiter` is the typed limiter of the algorithm it names: the same decisions, the
/// same keys (so the two share state), and the same errors, for every algorithm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_redis_limiter_is_the_typed_limiter_it_names() {
    use sluicegate::algorithm::{AlgorithmKind, FixedWindow, LeakyBucket};
    use sluicegate::redis::AnyRedisLimiter;

    async fn typed<A: sluicegate::Algorithm>(
        q: Quota,
        url: &str,
        clock: &ManualClock,
        prefix: &str,
    ) -> Box<dyn Backend<str>> {
        let limiter = RedisLimiter::<A, ManualClock>::builder(q, url)
            .clock(clock.clone())
            .prefix(prefix)
            .deny_cache(false)
            .connect()
            .await
            .unwrap();
        Box::new(limiter)
    }

    let server = RedisServer::start();
    let url = server.url();
    let q = Quota::per_second(4).with_burst(3);
    for kind in AlgorithmKind::ALL {
        let clock = ManualClock::new();
        let any = AnyRedisLimiter::builder(q, kind, &url)
            .clock(clock.clone())
            .prefix("any:")
            .deny_cache(false)
            .connect()
            .await
            .unwrap();
        assert_eq!(
            (any.algorithm(), any.quota(), any.prefix()),
            (kind, q, "any:")
        );
        let typed_on = |prefix: &'static str| {
            let (url, clock) = (url.clone(), clock.clone());
            async move {
                match kind {
                    AlgorithmKind::Gcra => typed::<Gcra>(q, &url, &clock, prefix).await,
                    AlgorithmKind::TokenBucket => {
                        typed::<TokenBucket>(q, &url, &clock, prefix).await
                    }
                    AlgorithmKind::LeakyBucket => {
                        typed::<LeakyBucket>(q, &url, &clock, prefix).await
                    }
                    AlgorithmKind::FixedWindow => {
                        typed::<FixedWindow>(q, &url, &clock, prefix).await
                    }
                    AlgorithmKind::SlidingWindow => {
                        typed::<SlidingWindow>(q, &url, &clock, prefix).await
                    }
                    AlgorithmKind::SlidingLog => typed::<SlidingLog>(q, &url, &clock, prefix).await,
                }
            }
        };
        let twin = typed_on("typed:").await;
        assert_eq!(any.max_cost(), twin.max_cost(), "{kind}");
        // One trace through both, on their own keys: the same answers, step by step.
        for step in 0..12u64 {
            clock.advance(Duration::from_millis(37 * (step % 3)));
            let cost = 1 + (step % 2) as u32;
            let a = any.check_n("k", cost).await.unwrap().numbers();
            let b = twin
                .decide("k", cost, sluicegate::backend::Op::Check)
                .await
                .unwrap();
            assert_eq!(a, b.numbers(), "{kind}, step {step}");
        }
        // The typed limiter on the same prefix reads the state the dynamic one wrote.
        let same = typed_on("any:").await;
        let (seen, own) = (same.peek("k").await.unwrap(), any.peek("k").await.unwrap());
        assert_eq!(seen.numbers(), own.numbers(), "{kind}");
        assert!(matches!(
            any.check_n("k", q.burst().max(q.limit()) + 1).await,
            Err(RedisError::Capacity(_))
        ));
        server.cli(&["FLUSHALL"]);
    }
}
