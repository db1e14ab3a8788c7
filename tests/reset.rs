//! `reset(key)` everywhere a key has a state: a keyed limiter of every algorithm, the dynamic
//! one, through the backend seam, an HTTP front end's every limit, and Redis (shared by two
//! limiters, deny cache included).
#![cfg(all(feature = "redis", feature = "http"))]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::Backend;
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::AnyKeyedLimiter;
use sluicegate::http::{HeaderKey, RateLimitLayer, RequestLimit};
use sluicegate::policy::AlgorithmKind;
use sluicegate::redis::{AnyRedisLimiter, RedisLimiter};
use sluicegate::{Algorithm, KeyedLimiter, Limiter, Quota};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Exhausts `key` (and pushes it into debt with a hit), resets it, and finds it fresh: the
/// same answers as a key never seen.
fn forgets<A: Algorithm>() {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<String, A, _>::with_clock(Quota::per_minute(3), clock).unwrap();
    for _ in 0..3 {
        assert!(limiter.check("alice").is_allowed());
    }
    assert!(limiter.check("alice").is_denied());
    limiter.hit("alice", 5);
    assert!(limiter.check("bob").is_allowed());
    assert_eq!(limiter.len(), 2);

    assert!(limiter.reset("alice"), "{}", A::KIND);
    assert_eq!(limiter.len(), 1);
    assert_eq!(limiter.peek("alice"), limiter.peek("carol"), "{}", A::KIND);
    assert_eq!(limiter.check("alice").remaining(), 2, "{}", A::KIND);
    assert!(!limiter.reset("dave"), "a key never seen");
    assert_eq!(
        limiter.check("bob").remaining(),
        1,
        "the other keys keep their state"
    );
}

#[test]
fn every_algorithm_forgets_a_key() {
    forgets::<Gcra>();
    forgets::<TokenBucket>();
    forgets::<LeakyBucket>();
    forgets::<FixedWindow>();
    forgets::<SlidingWindow>();
    forgets::<SlidingLog>();
}

#[test]
fn plain_and_long_keys_forget_too() {
    let numbers = KeyedLimiter::<u64>::new(Quota::per_hour(1)).unwrap();
    assert!(numbers.check(&7).is_allowed());
    assert!(numbers.reset(&7));
    assert!(numbers.check(&7).is_allowed());
    let long = "k".repeat(200);
    let names = KeyedLimiter::<String, SlidingLog>::new(Quota::per_hour(1)).unwrap();
    assert!(names.check(long.as_str()).is_allowed());
    assert!(names.reset(long.as_str()));
    assert!(names.check(long.as_str()).is_allowed());
    assert!(names.check(long.as_str()).is_denied());
}

/// Resets racing with checks of the same keys: nothing panics or leaks, and every answer
/// stays within the quota counted from the last reset (each check after the final reset
/// sees a fresh key).
#[test]
fn resets_racing_with_checks_stay_consistent() {
    let limiter = Arc::new(KeyedLimiter::<String, SlidingLog>::new(Quota::per_hour(5)).unwrap());
    let keys: Vec<String> = (0..64).map(|n| format!("client-{n}")).collect();
    let workers: Vec<_> = (0..2)
        .map(|t| {
            let (limiter, keys) = (limiter.clone(), keys.clone());
            thread::spawn(move || {
                for round in 0..200 {
                    for key in &keys {
                        if (round + t) % 7 == 0 {
                            limiter.reset(key.as_str());
                        } else {
                            limiter.check(key.as_str());
                        }
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    for key in &keys {
        limiter.reset(key.as_str());
        assert_eq!(limiter.check(key.as_str()).remaining(), 4, "{key}");
    }
    assert_eq!(limiter.sweep(), 0);
}

#[test]
fn the_dynamic_limiter_and_the_seam_forget_a_key() {
    let any =
        AnyKeyedLimiter::<String>::new(Quota::per_hour(1), AlgorithmKind::SlidingWindow).unwrap();
    assert!(any.check("alice").is_allowed());
    assert!(any.reset("alice"));
    assert!(any.check("alice").is_allowed());
    let seam: &dyn Backend<str> = &any;
    assert!(seam.reset("alice").now().unwrap().unwrap());
    assert!(any.check("alice").is_allowed());
    // A direct limiter has one state for every key: nothing to forget for one.
    let direct = Limiter::<Gcra>::new(Quota::per_hour(1)).unwrap();
    assert!(!Backend::<str>::reset(&direct, "alice")
        .now()
        .unwrap()
        .unwrap());
}

/// express-rate-limit's `resetKey`: a front end forgets a key in every limit it holds.
#[test]
fn a_front_end_forgets_a_key_in_every_limit() {
    let hourly = Arc::new(KeyedLimiter::<String, FixedWindow>::new(Quota::per_hour(1)).unwrap());
    let daily = Arc::new(KeyedLimiter::<String, Gcra>::new(Quota::per_day(1)).unwrap());
    let limiter = RateLimitLayer::builder()
        .limit(RequestLimit::shared("hour", hourly.clone()).key(HeaderKey::parse("x-key").unwrap()))
        .limit(RequestLimit::shared("day", daily.clone()).key(HeaderKey::parse("x-key").unwrap()))
        .limiter()
        .unwrap();
    assert!(hourly.check("k").is_allowed() && daily.check("k").is_allowed());
    assert!(limiter.reset("k").now().unwrap().unwrap());
    assert!(hourly.check("k").is_allowed() && daily.check("k").is_allowed());
    assert!(!limiter.reset("unknown").now().unwrap().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_forgets_a_key_for_every_process() -> Result<(), Box<dyn std::error::Error>> {
    let server = RedisServer::start();
    let url = server.url();
    let quota = Quota::per_hour(2);
    for kind in AlgorithmKind::ALL {
        let one = AnyRedisLimiter::connect(quota, kind, &url).await?;
        let other = AnyRedisLimiter::connect(quota, kind, &url).await?;
        // (No denial yet: `one`'s deny cache would answer one until its countdown ends.)
        assert!(one.check("alice").await?.is_allowed());
        assert_eq!(other.check("alice").await?.remaining(), 0, "{kind}");
        assert!(other.reset("alice").await?, "{kind}");
        assert_eq!(
            one.check("alice").await?.remaining(),
            1,
            "{kind}: forgotten for both"
        );
        assert!(!one.reset("never-seen").await?, "{kind}");
    }
    // The deny cache forgets too: a denial it holds is not answered after a reset.
    let cached = RedisLimiter::<Gcra>::builder(Quota::per_hour(1), &url)
        .prefix("cached:")
        .deny_cache(true)
        .connect()
        .await?;
    assert!(cached.check("bob").await?.is_allowed());
    assert!(cached.check("bob").await?.is_denied());
    assert!(cached.reset("bob").await?);
    assert!(cached.check("bob").await?.is_allowed());
    Ok(())
}

/// How long a test waits for a message to be heard.
const SECONDS_5: Duration = Duration::from_secs(5);

/// Subscribers of the reset channels under `prefix`, as Redis counts them.
fn reset_subscribers(server: &RedisServer, prefix: &str) -> usize {
    let channels = server.cli(&["PUBSUB", "CHANNELS", &format!("{prefix}resets:*")]);
    channels
        .lines()
        .map(|channel| {
            let counts = server.cli(&["PUBSUB", "NUMSUB", channel]);
            counts.lines().nth(1).unwrap().parse::<usize>().unwrap()
        })
        .sum()
}

/// Polls `done` every 10 ms until it holds, for at most `within`.
async fn eventually(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_forgets_its_cached_denial_when_it_hears_the_reset(
) -> Result<(), Box<dyn std::error::Error>> {
    let mut server = RedisServer::start();
    let url = server.url();
    let connect = || RedisLimiter::<Gcra>::builder(Quota::per_hour(1), &url).prefix("heard:");
    // Two processes' limiters of one limit; only `here` caches denials, so only it listens.
    let here = connect().connect().await?;
    let there = connect().deny_cache(false).connect().await?;
    assert!(eventually(SECONDS_5, || reset_subscribers(&server, "heard:") == 1).await);

    assert!(here.check("carol").await?.is_allowed());
    assert!(here.check("carol").await?.is_denied());
    assert_eq!(here.deny_cache_len(), 1, "an hour's countdown, cached here");
    assert!(there.reset("carol").await?);
    assert!(
        eventually(SECONDS_5, || here.deny_cache_len() == 0).await,
        "the reset was heard"
    );
    assert!(here.check("carol").await?.is_allowed());

    // Resets published while Redis was away are never missed: resubscribing forgets every
    // cached denial (here Redis restarted empty, so the key is new there too).
    assert!(here.check("carol").await?.is_denied());
    assert_eq!(here.deny_cache_len(), 1);
    server.kill();
    server.restart();
    assert!(eventually(SECONDS_5, || here.deny_cache_len() == 0).await);
    assert!(eventually(SECONDS_5, || reset_subscribers(&server, "heard:") == 1).await);

    // The subscription ends with the limiter.
    drop(here);
    assert!(eventually(SECONDS_5, || reset_subscribers(&server, "heard:") == 0).await);

    // Without the watch there is none: a limiter built without it keeps its cached denial
    // through a reset that a watching limiter, built after it, has heard (a watch would have
    // subscribed from the first built and heard the same message).
    let deaf = connect().reset_watch(false).connect().await?;
    let hearing = connect().connect().await?;
    assert!(eventually(SECONDS_5, || reset_subscribers(&server, "heard:") == 1).await);
    assert!(deaf.check("dave").await?.is_allowed());
    assert!(deaf.check("dave").await?.is_denied());
    assert!(hearing.check("dave").await?.is_denied());
    assert_eq!((deaf.deny_cache_len(), hearing.deny_cache_len()), (1, 1));
    // Reset by yet another process (`there`'s connection died with the restart above).
    let resetter = connect().deny_cache(false).connect().await?;
    assert!(resetter.reset("dave").await?);
    assert!(
        eventually(SECONDS_5, || hearing.deny_cache_len() == 0).await,
        "the watching limiter heard the reset"
    );
    assert_eq!(deaf.deny_cache_len(), 1, "the deaf limiter heard nothing");
    assert_eq!(
        reset_subscribers(&server, "heard:"),
        1,
        "only the watching limiter subscribed"
    );
    Ok(())
}

#[tokio::test]
async fn a_user_whose_acl_allows_no_channel_still_resets() -> Result<(), Box<dyn std::error::Error>>
{
    let server = RedisServer::start();
    let rule = [
        "ACL",
        "SETUSER",
        "keys-only",
        "on",
        ">pw",
        "~*",
        "+@all",
        "resetchannels",
    ];
    assert_eq!(server.cli(&rule), "OK");
    let url = format!("redis://keys-only:pw@127.0.0.1:{}/", server.port());
    let limiter = RedisLimiter::<Gcra>::connect(Quota::per_hour(1), &url).await?;
    assert!(limiter.check("dave").await?.is_allowed());
    assert!(limiter.check("dave").await?.is_denied());
    assert!(
        limiter.reset("dave").await?,
        "the DEL counts; the PUBLISH is refused"
    );
    assert!(limiter.check("dave").await?.is_allowed());
    Ok(())
}

#[tokio::test]
async fn the_watch_subscribes_with_a_password_that_holds_a_comma(
) -> Result<(), Box<dyn std::error::Error>> {
    let server = RedisServer::start();
    let rule = ["ACL", "SETUSER", "comma", "on", ">p,w", "~*", "&*", "+@all"];
    assert_eq!(server.cli(&rule), "OK");
    let url = format!("redis://comma:p,w@127.0.0.1:{}/", server.port());
    let _limiter = RedisLimiter::<Gcra>::builder(Quota::per_hour(1), &url)
        .prefix("comma:")
        .connect()
        .await?;
    assert!(eventually(SECONDS_5, || reset_subscribers(&server, "comma:") == 1).await);
    Ok(())
}
