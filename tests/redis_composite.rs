//! Composites on one Redis (one script, all-or-nothing), the seam (`Backend`: reserve and
//! undo), and capacity errors before any round trip.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::{unused_port, RedisServer};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::backend::{
    self, all_of, Backend, BackendErrorKind, Call, Member, Op, Receipt, Reservation,
};
use sluicegate::clock::ManualClock;
use sluicegate::redis::{RedisError, RedisLimiter};
use sluicegate::Algorithm;
use sluicegate::{Decision, Quota};
use std::time::Duration;

/// A backend with the batch hook hidden: the protocol decides it member by member (peek,
/// reserve, undo), as it does limits on different nodes.
struct Separately<'a>(&'a dyn Backend<str>);

impl Backend<str> for Separately<'_> {
    fn quota(&self) -> Quota {
        self.0.quota()
    }
    fn max_cost(&self) -> u32 {
        self.0.max_cost()
    }
    fn decide<'a>(&'a self, key: &'a str, cost: u32, op: Op) -> Call<'a> {
        self.0.decide(key, cost, op)
    }
    fn reserve<'a>(&'a self, key: &'a str, cost: u32) -> Call<'a, Reservation> {
        self.0.reserve(key, cost)
    }
    fn undo<'a>(&'a self, key: &'a str, receipt: Receipt) -> Call<'a, bool> {
        self.0.undo(key, receipt)
    }
}

fn summary(d: &Decision) -> (bool, u32, Option<Duration>, Duration, Duration) {
    (
        d.is_allowed(),
        d.remaining(),
        d.retry_after(),
        d.reset_after(),
        d.wait(),
    )
}

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

#[tokio::test]
async fn capacity_errors_come_before_any_round_trip() {
    // Nothing listens on this port: any round trip would fail as unavailable.
    let url = format!("redis://127.0.0.1:{}/", unused_port());
    let limiter = RedisLimiter::<Gcra>::builder(Quota::per_second(10).with_burst(4), &url)
        .lazy(true)
        .connect()
        .await
        .unwrap();
    for result in [limiter.check_n("k", 5).await, limiter.peek_n("k", 5).await] {
        match result {
            Err(RedisError::Capacity(error)) => {
                assert_eq!((error.requested(), error.capacity()), (5, 4));
            }
            other => panic!("expected a capacity error, got {other:?}"),
        }
    }
    let members = [Member::new(&limiter, "k"), Member::new(&limiter, "other")];
    assert!(matches!(
        all_of(&members, 5, Op::Check).await,
        Err(error) if error.kind() == BackendErrorKind::Capacity
    ));
    // A hit accepts any cost: it goes to Redis, which is not there.
    assert!(limiter.hit("k", 5).await.unwrap_err().is_outage());
    assert_eq!(limiter.stats().calls, 0, "no call was sent");
}

#[tokio::test]
async fn one_script_composite_denies_without_consuming_anywhere() {
    let server = RedisServer::start();
    let url = server.url();
    let clock = ManualClock::new();
    let per_user = on_clock::<Gcra>(&url, Quota::per_second(5), "user:", &clock).await;
    let global = on_clock::<FixedWindow>(&url, Quota::per_second(3), "global:", &clock).await;
    let members = [Member::new(&per_user, "u1"), Member::new(&global, "all")];
    for _ in 0..3 {
        assert!(all_of(&members, 1, Op::Check).await.unwrap().is_allowed());
    }
    let before = per_user.peek("u1").await.unwrap();
    let calls = per_user.stats().calls;
    let denied = all_of(&members, 1, Op::Check).await.unwrap();
    assert!(denied.is_denied());
    assert_eq!(
        denied.retry_after(),
        Some(Duration::from_secs(1)),
        "the window's end"
    );
    assert_eq!(per_user.stats().calls, calls + 1, "one script decided both");
    assert_eq!(
        summary(&per_user.peek("u1").await.unwrap()),
        summary(&before),
        "the per-user limit consumed nothing"
    );
    // Per-user and global consumed exactly three each.
    assert_eq!(per_user.check_n("u1", 2).await.unwrap().remaining(), 0);
    assert!(global.check("all").await.unwrap().is_denied());
}

/// The same random trace through the one-script composite and through the generic seam
/// composite (peek, reserve, undo) on twin limiters: identical decisions.
#[tokio::test]
async fn the_one_script_composite_equals_the_seam_composite() {
    let server = RedisServer::start();
    let url = server.url();
    let clock = ManualClock::starting_at(Duration::from_secs(1_000));
    let quotas = [
        Quota::per_second(5).with_burst(3),
        Quota::per_second(10),
        Quota::per_second(4),
    ];
    let gcra = |p: &'static str| on_clock::<Gcra>(&url, quotas[0], p, &clock);
    let (g1, g2) = (gcra("a-gcra:").await, gcra("b-gcra:").await);
    let window = |p: &'static str| on_clock::<SlidingWindow>(&url, quotas[1], p, &clock);
    let (w1, w2) = (window("a-window:").await, window("b-window:").await);
    let log = |p: &'static str| on_clock::<SlidingLog>(&url, quotas[2], p, &clock);
    let (l1, l2) = (log("a-log:").await, log("b-log:").await);
    let script = [
        Member::new(&g1, "user"),
        Member::new(&w1, "user"),
        Member::new(&l1, "global"),
    ];
    let (g2, w2, l2) = (Separately(&g2), Separately(&w2), Separately(&l2));
    let seam = [
        Member::new(&g2, "user"),
        Member::new(&w2, "user"),
        Member::new(&l2, "global"),
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut allowed, mut denied) = (0, 0);
    for step in 0..400 {
        clock.advance(Duration::from_micros(next() % 150_000));
        let op = match next() % 10 {
            0 => Op::Peek,
            1 => Op::Hit,
            _ => Op::Check,
        };
        let cost = if op == Op::Hit {
            (next() % 6) as u32
        } else {
            (next() % 4) as u32
        };
        let a = all_of(&script, cost, op).await.unwrap();
        let b = backend::all_of(&seam, cost, op).await.unwrap();
        assert_eq!(summary(&a), summary(&b), "step {step}: {op:?} of {cost}");
        allowed += u32::from(a.is_allowed());
        denied += u32::from(a.is_denied());
    }
    assert!(
        allowed > 50 && denied > 50,
        "{allowed} allowed, {denied} denied"
    );
}

/// Returns the Redis key it used.
async fn undo_restores<A: Algorithm>(server: &RedisServer, clock: &ManualClock) -> String {
    let limiter = on_clock::<A>(&server.url(), Quota::per_second(10), "undo:", clock).await;
    let seam: &dyn Backend<str> = &limiter;
    limiter.check_n("k", 3).await.unwrap();
    let before = limiter.peek("k").await.unwrap();
    let reservation = seam.reserve("k", 2).await.unwrap();
    assert!(reservation.decision.is_allowed());
    assert_ne!(summary(&limiter.peek("k").await.unwrap()), summary(&before));
    assert!(seam.undo("k", reservation.receipt).await.unwrap());
    assert_eq!(summary(&limiter.peek("k").await.unwrap()), summary(&before));

    // Something recorded since: a string state keeps both, the log removes only its own.
    let reservation = seam.reserve("k", 2).await.unwrap();
    limiter.check("k").await.unwrap();
    let undone = seam.undo("k", reservation.receipt).await.unwrap();
    let log = std::any::type_name::<A>().ends_with("SlidingLog");
    assert_eq!(undone, log);
    let left = limiter.peek("k").await.unwrap().remaining();
    assert_eq!(
        left,
        if log {
            10 - 3 - 1 - 1
        } else {
            10 - 3 - 2 - 1 - 1
        }
    );
    limiter.redis_key("k")
}

#[tokio::test]
async fn reservations_undo_exactly_what_they_wrote() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    undo_restores::<Gcra>(&server, &clock).await;
    undo_restores::<TokenBucket>(&server, &clock).await;
    undo_restores::<LeakyBucket>(&server, &clock).await;
    undo_restores::<FixedWindow>(&server, &clock).await;
    undo_restores::<SlidingWindow>(&server, &clock).await;
    let log = undo_restores::<SlidingLog>(&server, &clock).await;
    assert_eq!(
        server.cli(&["ZCARD", &log]),
        "4",
        "the log holds the 3 + 1 admitted units only"
    );
}

#[tokio::test]
async fn a_hit_on_a_composite_records_everywhere() {
    let server = RedisServer::start();
    let clock = ManualClock::new();
    let a = on_clock::<TokenBucket>(&server.url(), Quota::per_second(4), "ha:", &clock).await;
    let b = on_clock::<SlidingLog>(&server.url(), Quota::per_second(6), "hb:", &clock).await;
    let members = [Member::new(&a, "k"), Member::new(&b, "k")];
    let hit = all_of(&members, 5, Op::Hit).await.unwrap();
    assert!(hit.is_denied(), "5 is beyond the bucket of 4");
    // Both recorded it: the bucket owes one token, the log holds 5 of 6.
    assert_eq!(
        a.peek("k").await.unwrap().retry_after(),
        Some(Duration::from_millis(500))
    );
    assert_eq!(b.check("k").await.unwrap().remaining(), 0);
}
