//! The fixed window anchored at each key's first request (`Quota::anchored`), as a migrating
//! express-rate-limit user sees it: every key's window is its own, in process and on Redis,
//! through the dynamic and configured limiters too; quotas it cannot run are refused with a
//! reason. Its exact rule is compared with a reference model in properties_exact.rs,
//! keyed_properties.rs, reconfigure.rs and redis_differential.rs.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use sluicegate::algorithm::{FixedWindow, Gcra};
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::AnyKeyedLimiter;
use sluicegate::policy::AlgorithmKind;
use sluicegate::redis::{AnyRedisLimiter, RedisLimiter};
use sluicegate::{KeyedLimiter, Limiter, Quota, QuotaError};
use std::time::Duration;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Whatever the time of day, a key refused after its first request waits out its own
/// minute; the aligned window sends it back at the clock's edge.
#[test]
fn a_refused_key_waits_one_window_from_its_first_request() {
    let clock = ManualClock::new();
    let quota = Quota::per_minute(2);
    let anchored =
        KeyedLimiter::<String, FixedWindow, _>::with_clock(quota.anchored(), clock.clone())
            .unwrap();
    let aligned = KeyedLimiter::<String, FixedWindow, _>::with_clock(quota, clock.clone()).unwrap();
    clock.set(secs(3_600 + 49)); // 49 s past a whole minute
    for limiter in [&anchored, &aligned] {
        assert!(limiter.check_n("a", 2).unwrap().is_allowed());
    }
    let refused = anchored.check("a");
    assert!(refused.is_denied());
    assert_eq!(refused.retry_after(), Some(secs(60)));
    assert_eq!(refused.reset_after(), secs(60));
    assert_eq!(aligned.check("a").retry_after(), Some(secs(11)));

    // Another key starts its own window later; the first one's ends on time.
    clock.set(secs(3_600 + 80));
    assert!(anchored.check("b").is_allowed());
    assert_eq!(anchored.check("a").retry_after(), Some(secs(29)));
    clock.set(secs(3_600 + 109));
    assert!(anchored.check("a").is_allowed(), "a's window ended");
    assert_eq!(anchored.peek("b").reset_after(), secs(31), "b's has not");
}

/// A check of cost 0 (a peek's way of asking) starts no window.
#[test]
fn a_request_of_nothing_starts_no_window() {
    let clock = ManualClock::new();
    let limiter =
        Limiter::<FixedWindow, _>::with_clock(Quota::per_second(1).anchored(), clock.clone())
            .unwrap();
    assert!(limiter.check_n(0).unwrap().is_allowed());
    clock.set(Duration::from_millis(900));
    assert!(
        limiter.check().is_allowed(),
        "the window starts here, at 0.9 s"
    );
    clock.set(Duration::from_millis(1_500));
    assert_eq!(
        limiter.check().retry_after(),
        Some(Duration::from_millis(400))
    );
}

/// The dynamic limiter runs it, chosen at run time as configuration does.
#[test]
fn the_dynamic_limiter_anchors_too() {
    let clock = ManualClock::new();
    let quota: Quota = "1/10s anchored".parse().unwrap();
    let limiter =
        AnyKeyedLimiter::<String, _>::with_clock(quota, AlgorithmKind::FixedWindow, clock.clone())
            .unwrap();
    clock.set(secs(7));
    assert!(limiter.check("k").is_allowed());
    assert_eq!(limiter.check("k").retry_after(), Some(secs(10)));
}

/// Only the fixed window has windows to anchor; a window too short for the anchor's
/// resolution is refused, not silently stretched.
#[test]
fn quotas_it_cannot_run_are_refused_with_a_reason() {
    let anchored = Quota::per_minute(5).anchored();
    for kind in AlgorithmKind::ALL {
        let built = AnyKeyedLimiter::<String>::new(anchored, kind);
        match (kind, built) {
            (AlgorithmKind::FixedWindow, Ok(_)) => {}
            (_, Err(QuotaError::Unsupported { reason, .. })) => {
                assert!(reason.contains("anchored"), "{kind}: {reason}")
            }
            (kind, other) => panic!("{kind}: {:?}", other.map(|_| ())),
        }
    }
    assert!(Limiter::<Gcra>::new(anchored).is_err());
    // A million per 10 ms keeps starts in units of 0.5 ms: more than 1/64 of the window.
    let coarse = Quota::new(1_000_000, Duration::from_millis(10))
        .unwrap()
        .anchored();
    match Limiter::<FixedWindow>::new(coarse) {
        Err(QuotaError::Unsupported { reason, .. }) => assert!(reason.contains("1/64"), "{reason}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(Limiter::<FixedWindow>::new(Quota::per_second(1_000_000).anchored()).is_ok());
}

/// On Redis: each key's own window (on the limiter's clock), shared by two limiters, and kept
/// apart from an aligned limit of the same quota and prefix (different key names, so neither
/// reads the other's state).
#[test]
fn on_redis_each_key_has_its_own_window() {
    let server = RedisServer::start();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let clock = ManualClock::new();
        let quota = Quota::per_minute(2);
        let build = |quota: Quota| {
            RedisLimiter::<FixedWindow, ManualClock>::builder(quota, &url)
                .clock(clock.clone())
                .prefix("anchored-test:")
                .connect()
        };
        let (one, two) = (
            build(quota.anchored()).await.unwrap(),
            build(quota.anchored()).await.unwrap(),
        );
        let aligned = build(quota).await.unwrap();
        clock.set(secs(1_000_000 * 60 + 49));
        assert!(one.check_n("a", 2).await.unwrap().is_allowed());
        let refused = two.check("a").await.unwrap();
        assert!(
            refused.is_denied(),
            "the two limiters share the key's window"
        );
        assert_eq!(refused.retry_after(), Some(secs(60)));
        let fresh = aligned.check("a").await.unwrap();
        assert_eq!(fresh.remaining(), 1, "the aligned limit has its own state");
        assert_eq!(fresh.reset_after(), secs(11));
        clock.set(secs(1_000_000 * 60 + 109));
        assert!(one.check("a").await.unwrap().is_allowed());

        let any = AnyRedisLimiter::connect(quota.anchored(), AlgorithmKind::FixedWindow, &url)
            .await
            .unwrap();
        assert_eq!(any.check("b").await.unwrap().reset_after(), secs(60));
        assert!(
            AnyRedisLimiter::connect(quota.anchored(), AlgorithmKind::SlidingWindow, &url)
                .await
                .is_err(),
            "only the fixed window anchors, on Redis too"
        );
    });
}

/// Configuration: the quota string and the map form both say it.
#[cfg(feature = "serde")]
#[test]
fn configuration_reads_it_in_both_forms() {
    let from_text: Quota = serde_json::from_str(r#""100/minute anchored""#).unwrap();
    let from_map: Quota =
        serde_json::from_str(r#"{"limit": 100, "period": "1m", "anchored": true}"#).unwrap();
    assert_eq!(from_text, Quota::per_minute(100).anchored());
    assert_eq!(from_map, from_text);
    assert_eq!(
        serde_json::to_string(&from_map).unwrap(),
        r#""100/minute anchored""#
    );
    let wrong = serde_json::from_str::<Quota>(r#"{"limit": 1, "period": 1, "anchored": "yes"}"#);
    assert!(wrong.unwrap_err().to_string().contains("anchored"));
}

/// Changing a quota between aligned and anchored keeps what each key consumed: the count
/// moves into the new kind's window holding now (anchored: one starting now).
#[test]
fn switching_between_aligned_and_anchored_keeps_the_count() {
    let clock = ManualClock::new();
    let limiter =
        KeyedLimiter::<String, FixedWindow, _>::with_clock(Quota::per_minute(3), clock.clone())
            .unwrap();
    clock.set(secs(50));
    assert!(limiter.check_n("k", 2).unwrap().is_allowed());
    limiter.set_quota(Quota::per_minute(3).anchored()).unwrap();
    clock.set(secs(70)); // past the aligned window's edge: the anchored one began at 50 s
    let d = limiter.check("k");
    assert!(d.is_allowed());
    assert_eq!(d.remaining(), 0, "the 2 consumed stay consumed");
    assert_eq!(
        d.reset_after(),
        secs(40),
        "the window began when the quota changed"
    );
    limiter.set_quota(Quota::per_minute(3)).unwrap();
    assert!(
        limiter.check("k").is_denied(),
        "back in the aligned window holding now"
    );
    clock.set(secs(120));
    assert!(limiter.check("k").is_allowed());
}
