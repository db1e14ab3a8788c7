//! The module as a deployment meets it: on Redis's clock (a TTL kept across writes as the
//! script keeps it), with a replica that has no module, and under `RedisLimiter` with
//! `module(true)`, on a Redis with the module and on one without.

mod support;

use redis::ConnectionLike;
use sluicegate::algorithm::{FixedWindow, Gcra, SlidingWindow};
use sluicegate::redis::RedisLimiter;
use sluicegate::Quota;
use sluicegate_redis::entry::MAX_TTL_MS;
use std::time::Duration;
use support::redis_server::RedisCluster;
use support::{connect, expand, server_with_module, server_with_module_and, RedisServer, SCRIPT};

/// One fixed-window hit per call on `key` (limit 5 an hour), on Redis's clock.
fn hit(native: bool, key: &str) -> redis::Cmd {
    let mut blob = vec![b'h', 0, 1, 0, 1, b'f'];
    for x in [-1.0, 1.0, 5.0, 1.0, 3_600_000_000.0, 0.0] {
        blob.extend_from_slice(&f64::to_be_bytes(x));
    }
    if native {
        let mut cmd = redis::cmd("SLUICEGATE.DECIDE");
        cmd.arg(key).arg(blob);
        cmd
    } else {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(SCRIPT).arg(1).arg(key).arg(1).arg(blob);
        cmd
    }
}

fn allowed(reply: redis::Value) -> bool {
    let reply = expand(reply);
    let redis::Value::Array(items) = reply else {
        panic!("an array: {reply:?}")
    };
    let redis::Value::BulkString(numbers) = &items[0] else {
        panic!("numbers: {items:?}")
    };
    numbers[..8] == f64::to_be_bytes(1.0)
}

#[test]
fn on_redis_clock_counts_exactly_and_keeps_the_ttl_as_the_script_does() {
    let server = server_with_module();
    let mut con = connect(&server);
    for (native, key) in [(true, "m"), (false, "s")] {
        let answers: Vec<bool> = (0..7)
            .map(|_| {
                allowed(
                    con.req_packed_command(&hit(native, key).get_packed_command())
                        .unwrap(),
                )
            })
            .collect();
        // An hour's window: all seven calls fall in one, but at the turn of an hour.
        let admitted = answers.iter().filter(|a| **a).count();
        assert!(admitted == 5 || admitted == 7, "{key}: {answers:?}");
        // A TTL shortened by hand is kept by the next write: its deadline did not move.
        let _: () = redis::cmd("PEXPIRE")
            .arg(key)
            .arg(500_000)
            .query(&mut con)
            .unwrap();
        let _: () = redis::cmd("SET")
            .arg(format!("{key}-probe"))
            .arg(1)
            .query(&mut con)
            .unwrap();
        con.req_packed_command(&hit(native, key).get_packed_command())
            .unwrap();
        let ttl: i64 = redis::cmd("PTTL").arg(key).query(&mut con).unwrap();
        assert!(
            (490_000..=500_000).contains(&ttl),
            "{key}: TTL {ttl} ms after a write"
        );
    }
    let module: Vec<u8> = redis::cmd("GET").arg("m").query(&mut con).unwrap();
    let script: Vec<u8> = redis::cmd("GET").arg("s").query(&mut con).unwrap();
    assert_eq!(module, script, "the same window and count");
}

/// Keyspace notifications: each write fires the events the script's `SET` fires (`set`,
/// and `expire` when the TTL moves), in the same order.
#[test]
fn a_write_fires_the_keyspace_events_the_scripts_write_fires() {
    let server = server_with_module();
    let mut con = connect(&server);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("KEA")
        .query(&mut con)
        .unwrap();
    let mut listener = connect(&server);
    let mut pubsub = listener.as_pubsub();
    pubsub.psubscribe("__keyspace@0__:*").unwrap();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    for (native, key) in [(true, "m"), (false, "s")] {
        // A new key (its TTL set), writes that keep the TTL, and denials (nothing written).
        for _ in 0..7 {
            con.req_packed_command(&hit(native, key).get_packed_command())
                .unwrap();
        }
    }
    let _: () = redis::cmd("SET")
        .arg("done")
        .arg(1)
        .query(&mut con)
        .unwrap();
    let mut events: [Vec<String>; 2] = Default::default();
    loop {
        let message = pubsub.get_message().expect("an event within 5 s");
        let channel = message.get_channel_name().to_owned();
        let event: String = message.get_payload().unwrap();
        match channel.strip_prefix("__keyspace@0__:") {
            Some("m") => events[0].push(event),
            Some("s") => events[1].push(event),
            Some("done") => break,
            other => panic!("an event on {other:?}"),
        }
    }
    assert_eq!(
        events[0], events[1],
        "the module's events, then the script's"
    );
    assert_eq!(&events[0][..2], ["set", "expire"], "{:?}", events[0]);
    assert!(events[0].len() >= 5, "{:?}", events[0]);
}

#[test]
fn a_replica_without_the_module_gets_every_write() {
    // Full syncs at once rather than after Redis's default 5 s wait for more replicas.
    let primary = server_with_module_and(&["--repl-diskless-sync-delay", "0"]);
    let replicaof = format!("127.0.0.1 {}", primary.port());
    let replica = RedisServer::start_with(&["--replicaof", &replicaof]);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !replica
        .cli(&["INFO", "replication"])
        .contains("master_link_status:up")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the replica never synced"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut con = connect(&primary);
    let mut blob = Vec::new();
    for k in 1..=3u16 {
        blob.extend_from_slice(&[b'c', 0, 1]);
        blob.extend_from_slice(&k.to_be_bytes());
        blob.push(b'g');
        // GCRA, 10 an hour, burst 10: D = 1, T = 360 s in us, cap = 10 T, need = T (the
        // keys live for minutes, however slow the replica).
        for x in [-1.0, 1.0, 1.0, 360e6, 3600e6, 360e6] {
            blob.extend_from_slice(&f64::to_be_bytes(x));
        }
    }
    // And a hit whose debt outlasts the TTL cap: its key's expiry is the cap's.
    blob.extend(capped_hit(4));
    for _ in 0..4 {
        let mut cmd = redis::cmd("SLUICEGATE.DECIDE");
        cmd.arg(&["a", "b", "c", "d"]).arg(&blob);
        con.req_packed_command(&cmd.get_packed_command()).unwrap();
    }
    let mut rcon = connect(&replica);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    for key in ["a", "b", "c", "d"] {
        let value: Vec<u8> = redis::cmd("GET").arg(key).query(&mut con).unwrap();
        assert_eq!(value.len(), 17, "a GCRA state");
        loop {
            let copy: Option<Vec<u8>> = redis::cmd("GET").arg(key).query(&mut rcon).unwrap();
            if copy.as_deref() == Some(&value[..]) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{key} never reached the replica: {copy:?}; {}; {}",
                replica.cli(&["INFO", "replication"]),
                replica.cli(&["INFO", "keyspace"])
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // The replica expires the key at the master's very millisecond.
        let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(&mut con).unwrap();
        let copy: i64 = redis::cmd("PEXPIRETIME").arg(key).query(&mut rcon).unwrap();
        assert!(at > 0, "{key} has a TTL: {at}");
        assert_eq!(
            at, copy,
            "{key}'s expiry on the master, then on the replica"
        );
    }
    let ttl: i64 = redis::cmd("PTTL").arg("d").query(&mut rcon).unwrap();
    assert!(
        (MAX_TTL_MS - 60_000..=MAX_TTL_MS).contains(&ttl),
        "the capped key's TTL on the replica: {ttl} ms"
    );
}

/// A GCRA hit on key `index` (from 1) recording a debt of 10^15 us, 31.7 years, beyond
/// the TTL cap of 20.
fn capped_hit(index: u16) -> Vec<u8> {
    let mut blob = vec![b'h', 0, 1];
    blob.extend_from_slice(&index.to_be_bytes());
    blob.push(b'g');
    // now (Redis's), cost 1, then D = 1, T = 1 us, cap = 10 T, need = 10^15.
    for x in [-1.0, 1.0, 1.0, 1.0, 10.0, 1e15] {
        blob.extend_from_slice(&f64::to_be_bytes(x));
    }
    blob
}

#[test]
fn a_ttl_is_capped_at_twenty_years_as_the_script_caps_it() {
    let server = server_with_module();
    let mut con = connect(&server);
    let mut native = redis::cmd("SLUICEGATE.DECIDE");
    native.arg("m").arg(capped_hit(1));
    con.req_packed_command(&native.get_packed_command())
        .unwrap();
    let mut script = redis::cmd("EVAL");
    script.arg(SCRIPT).arg(1).arg("s").arg(1).arg(capped_hit(1));
    con.req_packed_command(&script.get_packed_command())
        .unwrap();
    assert_eq!(MAX_TTL_MS, 20 * 36_525 * 86_400_000 / 100);
    for key in ["m", "s"] {
        let ttl: i64 = redis::cmd("PTTL").arg(key).query(&mut con).unwrap();
        assert!(
            (MAX_TTL_MS - 60_000..=MAX_TTL_MS).contains(&ttl),
            "{key}: TTL {ttl} ms"
        );
    }
}

#[test]
fn the_aof_replays_every_write() {
    let server = server_with_module_and(&[
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--enable-debug-command",
        "yes",
    ]);
    let mut con = connect(&server);
    let mut blob = Vec::new();
    for k in 1..=2u16 {
        blob.extend_from_slice(&[b'h', 0, 1]);
        blob.extend_from_slice(&k.to_be_bytes());
        blob.push(b't');
        // Token bucket, 10 an hour, burst 10 (E = 360e6 units a token, R = 1 a us), hits of 3.
        for x in [-1.0, 3.0, 360e6, 1.0, 3600e6, 1080e6] {
            blob.extend_from_slice(&f64::to_be_bytes(x));
        }
    }
    for _ in 0..3 {
        let mut cmd = redis::cmd("SLUICEGATE.DECIDE");
        cmd.arg(&["x", "y"]).arg(&blob);
        con.req_packed_command(&cmd.get_packed_command()).unwrap();
    }
    let before: Vec<Vec<u8>> = redis::cmd("MGET").arg(&["x", "y"]).query(&mut con).unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg("x").query(&mut con).unwrap();
    // Empties the dataset and loads the AOF back.
    let _: () = redis::cmd("DEBUG").arg("LOADAOF").query(&mut con).unwrap();
    let after: Vec<Vec<u8>> = redis::cmd("MGET").arg(&["x", "y"]).query(&mut con).unwrap();
    assert_eq!(before, after, "the states the AOF rebuilt");
    assert_eq!(before[0].len(), 17);
    let reloaded: i64 = redis::cmd("PTTL").arg("x").query(&mut con).unwrap();
    assert!(
        (reloaded - ttl).abs() < 2_000 && reloaded > 0,
        "TTL {ttl} ms, then {reloaded} ms"
    );
}

/// `INFO commandstats` calls of `command` (lower case).
fn calls(server: &RedisServer, command: &str) -> u64 {
    let info = server.cli(&["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().expect("a count"))
}

async fn limiter(server: &RedisServer) -> RedisLimiter<FixedWindow> {
    let quota = Quota::per_hour(50);
    RedisLimiter::<FixedWindow>::builder(quota, &server.url())
        .module(true)
        .deny_cache(false)
        .connect()
        .await
        .expect("a limiter")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limiter_decides_by_the_module_when_redis_has_it() {
    let server = server_with_module();
    let limiter = limiter(&server).await;
    // Concurrent calls, so that batches form too.
    let tasks: Vec<_> = (0..80)
        .map(|i| {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.check(&format!("k{}", i % 2)).await })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        admitted += usize::from(task.await.unwrap().unwrap().is_allowed());
    }
    // Two keys of 40 calls, 50 an hour each (unless an hour turned between).
    assert!(admitted == 80, "{admitted} admitted");
    let more: usize = futures_count(&limiter, "k0", 20).await;
    assert!(
        more == 10 || more == 20,
        "{more} of 20 more admitted on a key at 40 of 50"
    );
    assert!(calls(&server, "sluicegate.decide") > 0);
    assert_eq!(
        calls(&server, "evalsha") + calls(&server, "eval"),
        0,
        "no script ran"
    );
    // A GCRA limiter too (the other state family) and a sliding window (the wider state),
    // still with no script.
    let gcra = RedisLimiter::<Gcra>::builder(Quota::per_second(5), &server.url())
        .module(true)
        .prefix("g:")
        .connect()
        .await
        .unwrap();
    let answers: Vec<bool> = futures_answers(&gcra, 7).await;
    assert_eq!(answers.iter().filter(|a| **a).count(), 5, "{answers:?}");
    let sliding = RedisLimiter::<SlidingWindow>::builder(Quota::per_hour(5), &server.url())
        .module(true)
        .prefix("w:")
        .connect()
        .await
        .unwrap();
    let answers: Vec<bool> = futures_answers(&sliding, 7).await;
    assert_eq!(answers.iter().filter(|a| **a).count(), 5, "{answers:?}");
    assert_eq!(
        calls(&server, "evalsha") + calls(&server, "eval"),
        0,
        "no script ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_every_node_decides_its_own_keys() {
    let module = support::module_path();
    let cluster = RedisCluster::start_with(3, &["--loadmodule", module.to_str().unwrap()]);
    let limiter = RedisLimiter::<FixedWindow>::builder(Quota::per_hour(3), &cluster.urls())
        .cluster(true)
        .module(true)
        .deny_cache(false)
        .connect()
        .await
        .expect("a cluster limiter");
    // 30 keys over the slots, 5 concurrent requests each: 3 admitted per key.
    let tasks: Vec<_> = (0..150)
        .map(|i| {
            let limiter = limiter.clone();
            tokio::spawn(async move { (i % 30, limiter.check(&format!("u{}", i % 30)).await) })
        })
        .collect();
    let mut admitted = [0; 30];
    for task in tasks {
        let (key, decision) = task.await.unwrap();
        admitted[key] += usize::from(decision.expect("a decision").is_allowed());
    }
    // Three an hour per key (more only for keys whose requests straddled the hour).
    assert!(admitted.iter().all(|n| (3..=5).contains(n)), "{admitted:?}");
    assert!(
        admitted.iter().filter(|&&n| n == 3).count() >= 25,
        "{admitted:?}"
    );
    for node in cluster.nodes() {
        assert!(
            calls(node, "sluicegate.decide") > 0,
            "every node decided some keys"
        );
        assert_eq!(
            calls(node, "evalsha") + calls(node, "eval"),
            0,
            "no script ran"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_module_the_limiter_goes_on_with_the_scripts() {
    let server = RedisServer::start();
    let limiter = limiter(&server).await;
    let admitted = futures_count(&limiter, "k", 60).await;
    assert_eq!(admitted, 50);
    // One call learnt that the command is missing; every call then ran the script.
    assert!(calls(&server, "evalsha") + calls(&server, "eval") >= 60);
}

async fn futures_count(limiter: &RedisLimiter<FixedWindow>, key: &str, n: usize) -> usize {
    let mut admitted = 0;
    for _ in 0..n {
        admitted += usize::from(limiter.check(key).await.unwrap().is_allowed());
    }
    admitted
}

async fn futures_answers<A: sluicegate::Algorithm>(
    limiter: &RedisLimiter<A>,
    n: usize,
) -> Vec<bool> {
    let mut answers = Vec::new();
    for _ in 0..n {
        answers.push(limiter.check("g").await.unwrap().is_allowed());
    }
    answers
}

/// A composite wider than the module's cap on members goes to the scripts, whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_composite_beyond_the_modules_caps_is_decided_by_the_scripts() {
    use sluicegate::backend::{all_of, Member, Op};
    use sluicegate_redis::limits::MAX_MEMBERS;
    let server = server_with_module();
    let limiter = limiter(&server).await;
    let keys: Vec<String> = (0..=MAX_MEMBERS).map(|i| format!("wide{i}")).collect();
    let members: Vec<_> = keys.iter().map(|key| Member::new(&limiter, key)).collect();
    let decision = all_of(&members, 1, Op::Check).await.expect("a decision");
    assert!(decision.is_allowed());
    assert_eq!(calls(&server, "sluicegate.decide"), 0);
    assert!(calls(&server, "evalsha") + calls(&server, "eval") > 0);
    // At the cap, the module decides it.
    let members = &members[..MAX_MEMBERS];
    assert!(all_of(members, 1, Op::Check).await.unwrap().is_allowed());
    assert_eq!(calls(&server, "sluicegate.decide"), 1);
}
