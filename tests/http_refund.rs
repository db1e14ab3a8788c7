//! `RequestLimiter::decide_reserving` and `Refund`: the HTTP decision keeping what giving a
//! passed request back takes, for express-rate-limit's `skipFailedRequests` and
//! `skipSuccessfulRequests`. In process for every algorithm, and on a real redis-server.
#![cfg(feature = "http")]

#[cfg(feature = "redis")]
#[path = "support/redis_server.rs"]
mod redis_server;

use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::{Backend, Call, Op};
use sluicegate::clock::ManualClock;
use sluicegate::http::front_end::request_parts;
use sluicegate::http::{
    ClientIp, Refund, RequestLimit, RequestLimiter, Reserved, Reserving, Verdict,
};
use sluicegate::{Algorithm, Decision, KeyedLimiter, Limiter, Numbers, Quota};
use std::time::Duration;

const CLIENT: &str = "192.0.2.7";

fn request(ip: &str) -> http::request::Parts {
    request_parts("GET", "/", [], Some(format!("{ip}:4000").parse().unwrap()))
}

fn one_limit(backend: impl Backend<str> + 'static) -> RequestLimiter {
    RequestLimiter::builder()
        .limit(RequestLimit::new("ip", backend).key(ClientIp::new()))
        .limiter()
        .unwrap()
}

fn now(reserving: Reserving) -> Reserved {
    match reserving {
        Reserving::Now(reserved) => reserved,
        Reserving::Later(_) => panic!("in-process limits decide at once"),
    }
}

/// Gives `refund` back at once (in-process limits): whether every limit took it.
fn give_back(refund: Refund) -> bool {
    refund.refund().now().expect("complete at once").unwrap()
}

/// Limit `limit`'s numbers for `key`, consuming nothing.
async fn peek(limiter: &RequestLimiter, limit: usize, key: &str) -> Numbers {
    let backend = limiter.limits()[limit].backend();
    backend.decide(key, 1, Op::Peek).await.unwrap().numbers()
}

fn status(verdict: &Verdict) -> u16 {
    match verdict {
        Verdict::Pass { .. } => 200,
        Verdict::Refuse(response) => response.status().as_u16(),
    }
}

/// The headers a verdict sets, in order, as text.
fn headers(verdict: &Verdict) -> Vec<(String, String)> {
    let text = |(n, v): (&http::HeaderName, &http::HeaderValue)| {
        (n.to_string(), v.to_str().unwrap().to_owned())
    };
    match verdict {
        Verdict::Pass { headers, .. } => headers.iter().map(|(n, v)| text((&n, &v))).collect(),
        Verdict::Refuse(response) => response.headers().iter().map(text).collect(),
    }
}

fn in_process<A: Algorithm>(quota: Quota, clock: &ManualClock) -> RequestLimiter {
    one_limit(KeyedLimiter::<String, A, ManualClock>::with_clock(quota, clock.clone()).unwrap())
}

/// Every algorithm in process: a refund right after the request puts the key's state back
/// exactly, and one after another request was recorded on the key gives nothing back.
async fn refunds_exactly<A: Algorithm>(name: &str, quota: &str) {
    let clock = ManualClock::new();
    clock.advance(Duration::from_secs(1_000));
    let limiter = in_process::<A>(quota.parse().unwrap(), &clock);
    let first = now(limiter.decide_reserving(&request(CLIENT)));
    assert!(first.verdict.passes());
    clock.advance(Duration::from_millis(10));
    let before = peek(&limiter, 0, CLIENT).await;
    let second = now(limiter.decide_reserving(&request(CLIENT)));
    assert!(second.verdict.passes());
    assert_eq!(
        second.refund.as_ref().unwrap().limits().collect::<Vec<_>>(),
        ["ip"]
    );
    assert!(give_back(second.refund.unwrap()), "{name}");
    assert_eq!(peek(&limiter, 0, CLIENT).await, before, "{name}");
    // Given back each time, the key is never refused.
    for _ in 0..10 {
        let reserved = now(limiter.decide_reserving(&request(CLIENT)));
        assert!(reserved.verdict.passes(), "{name}");
        assert!(give_back(reserved.refund.unwrap()), "{name}");
    }
    assert_eq!(peek(&limiter, 0, CLIENT).await, before, "{name}");
    // A later request, kept: the first one can no longer be given back exactly, so it is not.
    assert!(now(limiter.decide_reserving(&request(CLIENT)))
        .verdict
        .passes());
    let kept = peek(&limiter, 0, CLIENT).await;
    assert!(!give_back(first.refund.unwrap()), "{name}");
    assert_eq!(peek(&limiter, 0, CLIENT).await, kept, "{name}");
}

#[tokio::test]
async fn every_algorithm_refunds_exactly_in_process() {
    refunds_exactly::<Gcra>("gcra", "3/minute").await;
    refunds_exactly::<TokenBucket>("token-bucket", "3/minute").await;
    refunds_exactly::<LeakyBucket>("leaky-bucket", "3/minute").await;
    refunds_exactly::<FixedWindow>("fixed-window", "3/minute").await;
    refunds_exactly::<FixedWindow>("anchored", "3/minute anchored").await;
    refunds_exactly::<SlidingWindow>("sliding-window", "3/minute").await;
    refunds_exactly::<SlidingLog>("sliding-log", "3/minute").await;
}

#[test]
fn a_refused_request_in_between_does_not_stop_a_refund() {
    let clock = ManualClock::new();
    let limiter = in_process::<Gcra>(Quota::per_minute(1), &clock);
    let first = now(limiter.decide_reserving(&request(CLIENT)));
    let refused = now(limiter.decide_reserving(&request(CLIENT)));
    assert_eq!(status(&refused.verdict), 429);
    assert!(refused.refund.is_none(), "a refusal consumed nothing");
    assert!(give_back(first.refund.unwrap()));
    assert!(now(limiter.decide_reserving(&request(CLIENT)))
        .verdict
        .passes());
    // Another client's requests are another key's: they do not stop a refund either.
    let mine = now(limiter.decide_reserving(&request("192.0.2.8")));
    now(limiter.decide_reserving(&request("192.0.2.9")));
    assert!(give_back(mine.refund.unwrap()));
}

#[test]
fn the_verdicts_are_those_of_decide() {
    let (a, b) = (ManualClock::new(), ManualClock::new());
    let plain = in_process::<SlidingWindow>(Quota::per_minute(2), &a);
    let reserving = in_process::<SlidingWindow>(Quota::per_minute(2), &b);
    for step in 0..4 {
        let expected = decided(plain.decide(&request(CLIENT)));
        let got = now(reserving.decide_reserving(&request(CLIENT)));
        assert_eq!(status(&got.verdict), status(&expected), "step {step}");
        assert_eq!(headers(&got.verdict), headers(&expected), "step {step}");
        assert_eq!(got.refund.is_some(), expected.passes());
        a.advance(Duration::from_secs(7));
        b.advance(Duration::from_secs(7));
    }
}

/// A verdict decided at once.
fn decided(deciding: sluicegate::http::Deciding) -> Verdict {
    match deciding {
        sluicegate::http::Deciding::Now(verdict) => verdict,
        sluicegate::http::Deciding::Later(_) => panic!("in-process limits decide at once"),
    }
}

#[tokio::test]
async fn several_limits_are_all_given_back() {
    let clock = ManualClock::new();
    let per_ip =
        KeyedLimiter::<String, FixedWindow, _>::with_clock(Quota::per_minute(2), clock.clone())
            .unwrap();
    let everyone = Limiter::<Gcra, _>::with_clock(Quota::per_minute(5), clock.clone()).unwrap();
    let limiter = RequestLimiter::builder()
        .limit(RequestLimit::new("ip", per_ip).key(ClientIp::new()))
        .limit(RequestLimit::new("all", everyone))
        .limiter()
        .unwrap();
    let (ip, all) = (peek(&limiter, 0, CLIENT).await, peek(&limiter, 1, "").await);
    let reserved = now(limiter.decide_reserving(&request(CLIENT)));
    let refund = reserved.refund.unwrap();
    assert_eq!(refund.limits().collect::<Vec<_>>(), ["ip", "all"]);
    assert!(give_back(refund));
    assert_eq!(peek(&limiter, 0, CLIENT).await, ip);
    assert_eq!(peek(&limiter, 1, "").await, all);
}

#[test]
fn exempt_free_and_refused_requests_hold_nothing() {
    let clock = ManualClock::new();
    let quota = Quota::per_minute(1);
    let keyed = || KeyedLimiter::<String, Gcra, _>::with_clock(quota, clock.clone()).unwrap();
    let skipping = RequestLimiter::builder()
        .limit(RequestLimit::new("ip", keyed()).key(ClientIp::new()))
        .skip_if(|request| request.uri.path() == "/health")
        .limiter()
        .unwrap();
    let health = request_parts("GET", "/health", [], Some("192.0.2.7:1".parse().unwrap()));
    let exempt = now(skipping.decide_reserving(&health));
    assert!(exempt.verdict.passes() && exempt.refund.is_none());
    let free = RequestLimiter::builder()
        .limit(
            RequestLimit::new("ip", keyed())
                .key(ClientIp::new())
                .cost(0),
        )
        .limiter()
        .unwrap();
    let reserved = now(free.decide_reserving(&request(CLIENT)));
    assert!(reserved.verdict.passes() && reserved.refund.is_none());
    // A key the request lacks: a 400, nothing consumed.
    let missing = RequestLimiter::builder()
        .limit(RequestLimit::new("ip", keyed()).key(ClientIp::new()))
        .limiter()
        .unwrap();
    let no_peer = request_parts("GET", "/", [], None);
    let refused = now(missing.decide_reserving(&no_peer));
    assert!(!refused.verdict.passes() && refused.refund.is_none());
}

/// A backend that cannot undo (the seam's default `reserve` and `undo`).
struct Forgetful(KeyedLimiter<String>);

impl Backend<str> for Forgetful {
    fn quota(&self) -> Quota {
        Backend::<str>::quota(&self.0)
    }
    fn max_cost(&self) -> u32 {
        Backend::<str>::max_cost(&self.0)
    }
    fn immediate(&self) -> bool {
        true
    }
    fn decide<'a>(&'a self, key: &'a str, cost: u32, op: Op) -> Call<'a, Decision> {
        Backend::<str>::decide(&self.0, key, cost, op)
    }
}

#[test]
fn a_backend_that_cannot_undo_holds_no_refund() {
    let limiter = one_limit(Forgetful(KeyedLimiter::new(Quota::per_minute(5)).unwrap()));
    let reserved = now(limiter.decide_reserving(&request(CLIENT)));
    assert!(reserved.verdict.passes());
    assert!(reserved.refund.is_none());
}

#[cfg(feature = "redis")]
mod on_redis {
    use super::*;

    use crate::redis_server::{unused_port, RedisServer};
    use sluicegate::policy::Policy;
    use sluicegate::redis::RedisLimiter;

    async fn on_clock<A: Algorithm>(
        url: &str,
        quota: Quota,
        prefix: &str,
        clock: &ManualClock,
    ) -> RedisLimiter<A, ManualClock> {
        RedisLimiter::<A, ManualClock>::builder(quota, url)
            .clock(clock.clone())
            .prefix(prefix)
            .timeout(Duration::from_secs(1))
            .connect()
            .await
            .unwrap()
    }

    async fn reserved(limiter: &RequestLimiter) -> Reserved {
        limiter.decide_reserving(&request(CLIENT)).reserved().await
    }

    async fn give_back(refund: Refund) -> bool {
        let call = refund.refund();
        call.await.unwrap()
    }

    /// Every algorithm on Redis: a refund right after the request puts the key's state back
    /// exactly; once another request was recorded on the key, a state kept in one value gives
    /// nothing back, and the sliding log removes the request's own entry.
    async fn refunds_on_redis<A: Algorithm>(url: &str, name: &str, quota: &str) {
        let clock = ManualClock::new();
        clock.advance(Duration::from_secs(1_000));
        let prefix = format!("refund:{name}:");
        let backend = on_clock::<A>(url, quota.parse().unwrap(), &prefix, &clock).await;
        let limiter = one_limit(backend);
        let first = reserved(&limiter).await;
        assert!(first.verdict.passes(), "{name}");
        clock.advance(Duration::from_millis(10));
        let before = peek(&limiter, 0, CLIENT).await;
        let second = reserved(&limiter).await;
        assert!(give_back(second.refund.unwrap()).await, "{name}");
        assert_eq!(peek(&limiter, 0, CLIENT).await, before, "{name}");
        for _ in 0..10 {
            let again = reserved(&limiter).await;
            assert!(again.verdict.passes(), "{name}");
            assert!(give_back(again.refund.unwrap()).await, "{name}");
        }
        assert_eq!(peek(&limiter, 0, CLIENT).await, before, "{name}");
        clock.advance(Duration::from_millis(10));
        assert!(reserved(&limiter).await.verdict.passes(), "{name}");
        let log = name == "sliding-log";
        assert_eq!(give_back(first.refund.unwrap()).await, log, "{name}");
        // Of 3: the later request and, unless the log gave it back, the first one.
        let mut passes = 0;
        while reserved(&limiter).await.verdict.passes() {
            passes += 1;
        }
        assert_eq!(passes, if log { 2 } else { 1 }, "{name}");
    }

    #[tokio::test]
    async fn every_algorithm_refunds_exactly_on_redis() {
        let redis = RedisServer::start();
        let url = redis.url();
        refunds_on_redis::<Gcra>(&url, "gcra", "3/minute").await;
        refunds_on_redis::<TokenBucket>(&url, "token-bucket", "3/minute").await;
        refunds_on_redis::<LeakyBucket>(&url, "leaky-bucket", "3/minute").await;
        refunds_on_redis::<FixedWindow>(&url, "fixed-window", "3/minute").await;
        refunds_on_redis::<FixedWindow>(&url, "anchored", "3/minute anchored").await;
        refunds_on_redis::<SlidingWindow>(&url, "sliding-window", "3/minute").await;
        refunds_on_redis::<SlidingLog>(&url, "sliding-log", "3/minute").await;
    }

    #[tokio::test]
    async fn a_refund_clears_this_process_cached_denial() {
        let redis = RedisServer::start();
        let clock = ManualClock::new();
        let backend = on_clock::<Gcra>(&redis.url(), Quota::per_minute(1), "deny:", &clock).await;
        let limiter = one_limit(backend);
        let first = reserved(&limiter).await;
        // Refused, and the denial cached here until Redis would admit.
        assert_eq!(status(&reserved(&limiter).await.verdict), 429);
        assert!(give_back(first.refund.unwrap()).await);
        assert!(reserved(&limiter).await.verdict.passes());
    }

    #[tokio::test]
    async fn several_limits_on_one_redis_are_all_given_back() {
        let redis = RedisServer::start();
        let clock = ManualClock::new();
        let url = redis.url();
        let per_ip = on_clock::<FixedWindow>(&url, Quota::per_minute(2), "ip:", &clock).await;
        let all = on_clock::<SlidingLog>(&url, Quota::per_minute(5), "all:", &clock).await;
        let limiter = RequestLimiter::builder()
            .limit(RequestLimit::new("ip", per_ip).key(ClientIp::new()))
            .limit(RequestLimit::new("all", all))
            .limiter()
            .unwrap();
        let (ip, everyone) = (peek(&limiter, 0, CLIENT).await, peek(&limiter, 1, "").await);
        let first = reserved(&limiter).await;
        let refund = first.refund.unwrap();
        assert_eq!(refund.limits().collect::<Vec<_>>(), ["ip", "all"]);
        assert!(give_back(refund).await);
        assert_eq!(peek(&limiter, 0, CLIENT).await, ip);
        assert_eq!(peek(&limiter, 1, "").await, everyone);
        // Both limits still decide all-or-nothing: two pass, the third is refused by "ip"
        // and consumes nothing on "all".
        reserved(&limiter).await;
        reserved(&limiter).await;
        assert_eq!(status(&reserved(&limiter).await.verdict), 429);
        assert_eq!(peek(&limiter, 1, "").await.remaining, 2);
    }

    #[tokio::test]
    async fn with_redis_down_and_errors_allowed_only_the_in_process_limit_is_held() {
        let url = format!("redis://127.0.0.1:{}/", unused_port());
        let policy: Policy = "name=shared; key=peer-ip; quota=5/minute; algorithm=gcra"
            .parse()
            .unwrap();
        let shared = RequestLimit::from_policy_on_redis(&policy, &ClientIp::new(), &url, false)
            .await
            .unwrap();
        let local = KeyedLimiter::<String>::new(Quota::per_minute(5)).unwrap();
        let limiter = RequestLimiter::builder()
            .limit(shared)
            .limit(RequestLimit::new("local", local).key(ClientIp::new()))
            .limiter()
            .unwrap();
        let got = reserved(&limiter).await;
        assert!(got.verdict.passes());
        let refund = got.refund.unwrap();
        assert_eq!(refund.limits().collect::<Vec<_>>(), ["local"]);
        let before = peek(&limiter, 1, CLIENT).await.remaining;
        assert!(give_back(refund).await);
        assert_eq!(peek(&limiter, 1, CLIENT).await.remaining, before + 1);
    }
}
