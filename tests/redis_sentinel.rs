//! Redis behind Sentinels (`redis-sentinel://`): a limiter finds the master the Sentinels
//! name, and when that primary is killed mid-run it follows the failover: every call in the
//! outage is an outage error (what `Fallback` answers), none hangs past its timeout, and
//! decisions resume within a probe interval of the Sentinels naming the new master.
#![cfg(feature = "redis")]

#[path = "support/redis_sentinel.rs"]
mod redis_sentinel;
#[path = "support/redis_server.rs"]
mod redis_server;

use redis_sentinel::{SentinelSet, DOWN_AFTER};
use sluicegate::algorithm::FixedWindow;
use sluicegate::clock::ManualClock;
use sluicegate::redis::{RedisError, RedisLimiter};
use sluicegate::Quota;
use std::time::{Duration, Instant};

/// A limit no run comes near, on a clock that never moves: one window, so `remaining`
/// counts every admitted call.
async fn limiter(url: &str) -> RedisLimiter<FixedWindow, ManualClock> {
    RedisLimiter::<FixedWindow, ManualClock>::builder(Quota::per_hour(1_000_000), url)
        .clock(ManualClock::new())
        .deny_cache(false)
        .timeout(Duration::from_millis(200))
        .connect()
        .await
        .expect("a limiter through the Sentinels")
}

/// One call's outcome, seen from the kill.
struct Outcome {
    at: Duration,
    took: Duration,
    result: Result<u32, RedisError>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_primary_fails_over_and_decisions_resume() {
    let mut set = SentinelSet::start();
    let first_master = set.primary.port();
    assert_eq!(set.master_port(), first_master);
    let limiter = limiter(&set.url("")).await;
    for _ in 0..20 {
        assert!(limiter.check("k").await.unwrap().is_allowed());
    }
    // Calls every 5 ms, from before the kill until decisions have come back for 2 s.
    let run = tokio::spawn({
        let limiter = limiter.clone();
        async move {
            let mut outcomes = Vec::new();
            let start = Instant::now();
            let kill_at = Duration::from_millis(500);
            let mut recovered: Option<Duration> = None;
            while start.elapsed() < Duration::from_secs(40) {
                let sent = Instant::now();
                let result = limiter.check("k").await.map(|d| d.remaining());
                let at = sent.duration_since(start).saturating_sub(kill_at);
                let after_kill = sent.duration_since(start) >= kill_at;
                if after_kill && result.is_ok() && recovered.is_none() {
                    recovered = Some(at);
                }
                outcomes.push(Outcome {
                    at: if after_kill { at } else { Duration::ZERO },
                    took: sent.elapsed(),
                    result,
                });
                if recovered.is_some_and(|r| at > r + Duration::from_secs(2)) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            (outcomes, recovered)
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed = Instant::now();
    set.primary.kill();
    let (outcomes, recovered) = run.await.unwrap();
    let recovery = recovered.expect("decisions resumed after the failover");
    let new_master = set.master_port();
    assert_eq!(new_master, set.replica.port(), "the replica was promoted");

    // Every call answered within its timeout (and the scheduling of a loaded machine).
    let slowest = outcomes.iter().map(|o| o.took).max().unwrap();
    assert!(
        slowest < Duration::from_millis(1500),
        "a call took {slowest:?}"
    );
    // Every failure was an outage, which the limiter's fallback answers.
    let failures: Vec<&RedisError> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .collect();
    for error in &failures {
        assert!(error.is_outage(), "not an outage: {error}");
    }
    // Once back, decisions stay back.
    let late: Vec<String> = outcomes
        .iter()
        .filter(|o| o.at > recovery + Duration::from_millis(200))
        .filter_map(|o| o.result.as_ref().err().map(|e| format!("{:?}: {e}", o.at)))
        .collect();
    assert!(
        late.is_empty(),
        "errors after recovering at {recovery:?}: {late:?}"
    );
    // The count went on from where the old primary left it, less the writes it had not yet
    // sent to its replica (asynchronous replication).
    let before: Vec<u32> = outcomes
        .iter()
        .filter(|o| o.at.is_zero())
        .filter_map(|o| o.result.as_ref().ok().copied())
        .collect();
    let after = outcomes
        .iter()
        .filter(|o| !o.at.is_zero())
        .find_map(|o| o.result.as_ref().ok().copied())
        .unwrap();
    let last_before = *before.last().expect("decisions before the kill");
    let lost = i64::from(after) - (i64::from(last_before) - 1);
    assert!(
        (0..=10).contains(&lost),
        "{lost} writes lost: {last_before} then {after}"
    );
    // Recovery: the Sentinels' down-after time, their vote, and at most a probe interval.
    assert!(
        recovery < DOWN_AFTER + Duration::from_secs(10),
        "decisions resumed {recovery:?} after the kill"
    );
    eprintln!(
        "failover: {} calls, {} failed (outages), recovered {recovery:?} after the kill \
         (down-after {DOWN_AFTER:?}), slowest call {slowest:?}, {lost} writes lost; \
         {:?} since the kill",
        outcomes.len(),
        failures.len(),
        killed.elapsed()
    );
}

/// A failover with no process killed: the old master, demoted, answers writes with
/// `READONLY`, which sends the limiter to the Sentinels for the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demoted_master_sends_the_limiter_to_the_new_one() {
    let set = SentinelSet::start();
    let limiter = limiter(&set.url("")).await;
    let before = limiter.check("k").await.unwrap().remaining();
    set.fail_over();
    let started = Instant::now();
    // Until the old master is a replica (it refuses writes from then on).
    while !(set.replica.cli(&["ROLE"]).starts_with("master")
        && set.primary.cli(&["ROLE"]).starts_with("slave"))
    {
        assert!(started.elapsed() < Duration::from_secs(20), "no failover");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // An admitted check now can only have been written on the new master.
    let demoted = Instant::now();
    let mut outages = 0;
    let after = loop {
        match limiter.check("k").await {
            Ok(decision) => break decision.remaining(),
            Err(error) => {
                assert!(error.is_outage(), "not an outage: {error}");
                outages += 1;
            }
        }
        assert!(
            demoted.elapsed() < Duration::from_secs(5),
            "still on the demoted master after {outages} outages"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(after < before, "the count went on: {before} then {after}");
    eprintln!(
        "manual failover: {outages} outages, decided on the new master {:?} after the old \
         one was demoted",
        demoted.elapsed()
    );
}

#[tokio::test]
async fn a_bad_sentinel_url_is_refused_naming_the_problem() {
    for (url, why) in [
        ("redis-sentinel://127.0.0.1:26379/", "no master name"),
        ("redis-sentinel://:pw@/#mymaster", "no Sentinel address"),
    ] {
        let error = RedisLimiter::<FixedWindow>::builder(Quota::per_second(1), url)
            .lazy(true)
            .connect()
            .await
            .unwrap_err();
        assert!(matches!(error, RedisError::Config { .. }), "{error:?}");
        assert!(error.to_string().contains(why), "{error}");
    }
    let error = RedisLimiter::<FixedWindow>::builder(Quota::per_second(1), "redis-sentinel://h#m")
        .cluster(true)
        .connect()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("cannot be a cluster"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinels_with_a_password_and_a_master_with_an_acl_user() {
    let set = SentinelSet::start_with(&["requirepass sentinel-secret"]);
    // An ACL user on the master (and on the replica, for after a failover).
    for server in [&set.primary, &set.replica] {
        server.cli(&[
            "ACL",
            "SETUSER",
            "app",
            "on",
            ">app-secret",
            "~*",
            "&*",
            "+@all",
        ]);
    }
    let url = set.url("app:app-secret@");
    let limiter = RedisLimiter::<FixedWindow, ManualClock>::builder(Quota::per_hour(2), &url)
        .clock(ManualClock::new())
        .sentinel_auth(None, "sentinel-secret")
        .deny_cache(false)
        .connect()
        .await
        .expect("through Sentinels that need a password");
    let mut allowed = Vec::new();
    for _ in 0..3 {
        allowed.push(limiter.check("k").await.unwrap().is_allowed());
    }
    assert_eq!(allowed, [true, true, false]);
    // Without the Sentinels' password, no master is found: said so.
    let error = RedisLimiter::<FixedWindow>::builder(Quota::per_hour(2), &url)
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap_err();
    assert!(error.is_outage(), "{error:?}");
    assert!(error.to_string().contains("NOAUTH"), "{error}");
}
