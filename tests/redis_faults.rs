//! Faults: Redis killed under load and restarted on the same port, Redis hanging, a lazy
//! limiter built while Redis is down, `SCRIPT FLUSH` mid-run, keys holding something else,
//! and idle keys expiring by themselves.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::{unused_port, RedisServer};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::{Backend, Op};
use sluicegate::clock::ManualClock;
use sluicegate::redis::{Fallback, RedisError, RedisLimiter};
use sluicegate::Algorithm;
use sluicegate::Quota;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_millis(100);
/// What a loaded two-core test machine may add to a call beyond its timeout: a call that
/// waited out Redis instead (paused for 3 s below) would take ten times longer.
const SLACK: Duration = Duration::from_millis(400);

/// One call's outcome: when it started and ended, and what it answered.
#[derive(Debug, Clone)]
struct Outcome {
    started: Instant,
    ended: Instant,
    result: Result<bool, RedisError>,
}

async fn fallback_limiter(url: &str, fallback: Fallback, name: &str) -> RedisLimiter<Gcra> {
    RedisLimiter::<Gcra>::builder(Quota::per_second(1_000), url)
        .prefix(format!("{name}:"))
        .timeout(TIMEOUT)
        .connect_timeout(Duration::from_millis(200))
        .fallback(fallback)
        .connect()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_under_load_every_call_stays_bounded_the_fallback_answers_and_redis_comes_back() {
    let mut server = RedisServer::start();
    let url = server.url();
    let modes = [
        Fallback::Error,
        Fallback::Allow,
        Fallback::Deny,
        Fallback::Local { servers: 1 },
    ];
    let mut limiters = Vec::new();
    for (i, mode) in modes.into_iter().enumerate() {
        limiters.push(fallback_limiter(&url, mode, &format!("mode{i}")).await);
    }
    let outcomes: Arc<Mutex<Vec<Vec<Outcome>>>> = Arc::new(Mutex::new(vec![Vec::new(); 4]));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let limiter = limiters[task % 4].clone();
            let (outcomes, stop) = (Arc::clone(&outcomes), Arc::clone(&stop));
            tokio::spawn(async move {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("user{}", i % 50);
                    let started = Instant::now();
                    let result = limiter.check(&key).await.map(|d| d.is_allowed());
                    let ended = Instant::now();
                    outcomes.lock().unwrap()[task % 4].push(Outcome {
                        started,
                        ended,
                        result,
                    });
                    i += 1;
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = Instant::now();
    server.kill();
    tokio::time::sleep(Duration::from_millis(800)).await;
    let restarted = Instant::now();
    server.restart();
    // Recovery: every limiter answers from Redis again within a few seconds.
    let deadline = Instant::now() + Duration::from_secs(5);
    let probe_key = "after-restart";
    loop {
        let answered = limiters[0].check(probe_key).await;
        if answered.is_ok() && limiters.iter().all(RedisLimiter::is_available) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no recovery after the restart: {answered:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let recovered = Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.expect("no task panicked");
    }
    assert_eq!(
        server.cli(&["EXISTS", &limiters[0].redis_key(probe_key)]),
        "1",
        "the state is in the restarted Redis"
    );

    let outcomes = outcomes.lock().unwrap();
    for (mode, calls) in modes.iter().zip(outcomes.iter()) {
        assert!(calls.len() > 50, "{mode:?}: only {} calls", calls.len());
        let slowest = calls.iter().map(|o| o.ended - o.started).max().unwrap();
        assert!(
            slowest <= TIMEOUT + SLACK,
            "{mode:?}: a call took {slowest:?}"
        );
        // Before the kill, and once recovered, Redis decides: no errors.
        let healthy = |o: &&Outcome| o.ended < killed || o.started > recovered;
        assert!(
            calls.iter().filter(healthy).all(|o| o.result.is_ok()),
            "{mode:?}"
        );
        // Well inside the outage, the fallback answers (or the error says what happened).
        let down: Vec<&Outcome> = calls
            .iter()
            .filter(|o| o.started > killed + Duration::from_millis(300) && o.ended < restarted)
            .collect();
        assert!(
            down.len() > 10,
            "{mode:?}: {} calls during the outage",
            down.len()
        );
        for outcome in down {
            match (mode, &outcome.result) {
                (Fallback::Error, Err(error)) => assert!(error.is_outage(), "{error}"),
                (Fallback::Allow, Ok(allowed)) => assert!(allowed),
                (Fallback::Deny, Ok(allowed)) => assert!(!allowed),
                (Fallback::Local { .. }, Ok(_)) => {}
                (mode, result) => panic!("{mode:?} answered {result:?} during the outage"),
            }
        }
    }
    for limiter in &limiters[1..] {
        assert!(limiter.stats().fallbacks > 10, "{:?}", limiter.stats());
    }
    assert_eq!(limiters[0].stats().fallbacks, 0);
    assert!(limiters[0].stats().errors > 10);
}

#[tokio::test]
async fn a_hanging_redis_costs_each_call_its_timeout_at_most() {
    let server = RedisServer::start();
    let limiter = fallback_limiter(&server.url(), Fallback::Error, "hang").await;
    assert!(limiter.check("k").await.is_ok());
    // Every client is paused for 3 s: Redis accepts calls and does not answer. Long enough
    // for three timeouts on a loaded machine, and to tell a call that waits from one that
    // times out.
    server.cli(&["CLIENT", "PAUSE", "3000", "ALL"]);
    let mut kinds = Vec::new();
    for _ in 0..6 {
        let started = Instant::now();
        let result = limiter.check("k").await;
        let took = started.elapsed();
        assert!(took <= TIMEOUT + SLACK, "a call took {took:?}");
        kinds.push(result.expect_err("Redis is paused").label());
    }
    // Three timeouts in a row mark Redis down: the rest fail at once.
    assert_eq!(&kinds[..3], ["timeout"; 3]);
    assert!(
        kinds[3..].iter().all(|&kind| kind == "unavailable"),
        "{kinds:?}"
    );
    assert!(!limiter.is_available());
    // Once the pause ends, the probe finds Redis again.
    let deadline = Instant::now() + Duration::from_secs(15);
    while limiter.check("k").await.is_err() {
        assert!(Instant::now() < deadline, "no recovery after the pause");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How long a test lets a call run that must return without waiting on Redis: a real timeout,
/// far beyond anything a loaded two-core machine adds, and far below the hour such a call
/// would take if it did wait.
const WITHOUT_WAITING: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_lazy_limiter_starts_while_redis_is_down_and_uses_it_once_it_answers() {
    // Building does not wait for Redis: here one that accepts connections and never answers,
    // with an hour to connect.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("redis://{}/", silent.local_addr().unwrap());
    let built = tokio::time::timeout(
        WITHOUT_WAITING,
        RedisLimiter::<Gcra>::builder(Quota::per_second(5), &silent_url)
            .lazy(true)
            .connect_timeout(Duration::from_secs(3600))
            .connect(),
    )
    .await
    .expect("a lazy build does not wait for Redis");
    assert!(built.is_ok(), "{built:?}");

    let port = unused_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let lazy = RedisLimiter::<Gcra>::builder(Quota::per_second(5), &url)
        .lazy(true)
        .timeout(TIMEOUT)
        .connect()
        .await
        .expect("a lazy limiter builds without Redis");
    let closed = RedisLimiter::<Gcra>::builder(Quota::per_second(5), &url)
        .lazy(true)
        .fallback(Fallback::Deny)
        .connect()
        .await
        .unwrap();
    // The first calls wait for the probe's first answer (a refused connection), then fail.
    let error = lazy.check("k").await.expect_err("nothing listens yet");
    assert!(matches!(error, RedisError::Unavailable { .. }), "{error}");
    assert!(closed.check("k").await.unwrap().is_denied());
    // Known to be down: at once, without waiting for the probe (which asks every 100 ms).
    // Twenty calls in a row would wait about 2 s for it; doing nothing, they take
    // microseconds, and 1 s leaves a loaded two-core machine a thousandfold slack.
    let started = Instant::now();
    for _ in 0..20 {
        let error = lazy.check("k").await.expect_err("nothing listens yet");
        assert!(matches!(error, RedisError::Unavailable { .. }), "{error}");
        assert!(closed.check("k").await.unwrap().is_denied());
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "20 calls of a limiter known to be down took {:?}: they waited for the probe",
        started.elapsed()
    );

    let server = RedisServer::start_on_port(port);
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        match lazy.check("k").await {
            Ok(decision) => {
                assert!(decision.is_allowed());
                break;
            }
            Err(error) => assert!(Instant::now() < deadline, "still {error}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.cli(&["EXISTS", &lazy.redis_key("k")]), "1");
}

#[tokio::test]
async fn a_lazy_limiter_decides_its_first_calls_on_a_redis_that_is_up() {
    // The calls made before the background probe has answered wait for it: they are
    // decided on Redis, not let through by the fallback (a restarted service's first burst).
    let server = RedisServer::start();
    for round in 0..20 {
        let limiter = RedisLimiter::<Gcra>::builder(Quota::per_minute(1), &server.url())
            .lazy(true)
            .prefix(format!("lazy{round}:"))
            .fallback(Fallback::Allow)
            .deny_cache(false)
            .connect()
            .await
            .unwrap();
        let (first, second) = tokio::join!(limiter.check("k"), limiter.check("k"));
        let allowed = [first.unwrap(), second.unwrap()]
            .iter()
            .filter(|d| d.is_allowed())
            .count();
        assert_eq!(
            allowed, 1,
            "round {round}: one of two calls on a quota of one"
        );
        assert!(limiter.check("k").await.unwrap().is_denied());
        assert_eq!(limiter.stats().fallbacks, 0, "round {round}");
    }
}

#[tokio::test]
async fn script_flush_mid_run_reloads_the_scripts_and_loses_nothing() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    let limiter =
        RedisLimiter::<SlidingLog, ManualClock>::builder(Quota::per_minute(100), &server.url())
            .clock(clock)
            .deny_cache(false)
            .connect()
            .await
            .unwrap();
    let mut admitted = 0;
    for i in 0..150 {
        if i % 30 == 0 {
            assert_eq!(server.cli(&["SCRIPT", "FLUSH"]), "OK");
        }
        admitted += u32::from(limiter.check("k").await.unwrap().is_allowed());
    }
    assert_eq!(admitted, 100);
    assert_eq!(limiter.stats().errors, 0);
}

async fn foreign_values_are_refused_and_untouched<A: Algorithm>(server: &RedisServer) {
    let limiter = RedisLimiter::<A>::builder(Quota::per_second(5), &server.url())
        .deny_cache(false)
        .connect()
        .await
        .unwrap();
    let key = limiter.redis_key("victim");
    let log = std::any::type_name::<A>().ends_with("SlidingLog");
    // A value of another Redis type.
    let (wrong, list) = if log {
        (vec!["SET", &key, "plain"], "plain")
    } else {
        (vec!["RPUSH", &key, "a", "b"], "a\nb")
    };
    server.cli(&wrong);
    for result in [
        limiter.check("victim").await,
        limiter.peek("victim").await,
        limiter.hit("victim", 3).await,
    ] {
        match result {
            Err(RedisError::WrongType { key: named }) => assert_eq!(named, key),
            other => panic!("{key}: expected WrongType, got {other:?}"),
        }
    }
    // Through the seam, the error is labelled by the backend that failed, which the seam
    // itself does not know.
    let through_seam = Backend::<str>::decide(&limiter, "victim", 1, Op::Check)
        .await
        .expect_err("a wrong-type key");
    assert_eq!(through_seam.label(), "wrong_type");
    let read = if log {
        vec!["GET", &key]
    } else {
        vec!["LRANGE", &key, "0", "-1"]
    };
    assert_eq!(server.cli(&read), list);
    assert_eq!(server.cli(&["TTL", &key]), "-1");
    // The right type, but not sluicegate's state.
    server.cli(&["DEL", &key]);
    let foreign = if log {
        vec!["ZADD", &key, "7", "someone else's member"]
    } else {
        vec!["SET", &key, "hello"]
    };
    server.cli(&foreign);
    let error = limiter.hit("victim", 1).await.expect_err("a foreign value");
    assert!(
        matches!(error, RedisError::Foreign { .. }),
        "{key}: {error:?}"
    );
    assert_eq!(error.key(), Some(key.as_str()));
    assert!(
        !error.to_string().contains("victim"),
        "messages never show keys: {error}"
    );
    let read = if log {
        vec!["ZRANGE", &key, "0", "-1", "WITHSCORES"]
    } else {
        vec!["GET", &key]
    };
    let expected = if log {
        "someone else's member\n7"
    } else {
        "hello"
    };
    assert_eq!(server.cli(&read), expected);
    assert_eq!(server.cli(&["TTL", &key]), "-1");
}

#[tokio::test]
async fn keys_holding_something_else_are_errors_and_left_untouched() {
    let server = RedisServer::start();
    foreign_values_are_refused_and_untouched::<Gcra>(&server).await;
    foreign_values_are_refused_and_untouched::<TokenBucket>(&server).await;
    foreign_values_are_refused_and_untouched::<LeakyBucket>(&server).await;
    foreign_values_are_refused_and_untouched::<FixedWindow>(&server).await;
    foreign_values_are_refused_and_untouched::<SlidingWindow>(&server).await;
    foreign_values_are_refused_and_untouched::<SlidingLog>(&server).await;
}

async fn touch_keys<A: Algorithm>(url: &str, quota: Quota) -> RedisLimiter<A> {
    let limiter = RedisLimiter::<A>::connect(quota, url).await.unwrap();
    for i in 0..20 {
        assert!(limiter
            .check_n(&format!("idle{i}"), 3)
            .await
            .unwrap()
            .is_allowed());
    }
    // A hit far beyond the limit: its debt keeps the key a little longer.
    limiter.hit("idle0", 60).await.unwrap();
    limiter
}

#[tokio::test]
async fn idle_keys_expire_by_themselves() {
    let server = RedisServer::start();
    let url = server.url();
    // Five per 100 ms: every state is fresh again well within the one-second TTL floor,
    // except a rate algorithm's debt after the hit (60 more: 1.2 s), whose key lives until
    // its freshness time rounded up to a whole second (under 2.3 s).
    let quota = Quota::new(5, Duration::from_millis(100)).unwrap();
    let gcra = touch_keys::<Gcra>(&url, quota).await;
    touch_keys::<TokenBucket>(&url, quota).await;
    touch_keys::<LeakyBucket>(&url, quota).await;
    touch_keys::<FixedWindow>(&url, quota).await;
    touch_keys::<SlidingWindow>(&url, quota).await;
    touch_keys::<SlidingLog>(&url, quota).await;
    assert_eq!(server.cli(&["DBSIZE"]), "120");
    let ttl: i64 = server
        .cli(&["PTTL", &gcra.redis_key("idle5")])
        .parse()
        .unwrap();
    // The TTL rule: until the state is fresh (60 ms here) rounded up to a whole second of
    // Redis's clock, and at least one second.
    assert!(
        (1..=1_060).contains(&ttl),
        "the TTL floor is one second: {ttl}"
    );
    let ttl: i64 = server
        .cli(&["PTTL", &gcra.redis_key("idle0")])
        .parse()
        .unwrap();
    assert!(
        (1_001..=2_260).contains(&ttl),
        "the debt's freshness time (1.26 s), rounded up to a whole second: {ttl}"
    );
    let deadline = Instant::now() + Duration::from_secs(4);
    while server.cli(&["DBSIZE"]) != "0" {
        assert!(
            Instant::now() < deadline,
            "keys left: {}",
            server.cli(&["DBSIZE"])
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
