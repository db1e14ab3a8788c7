//! A Redis Cluster whose nodes do not all load the sluicegate module (a rolling upgrade): a
//! limiter asked to use it decides natively where it can, falls back to the scripts on the
//! first node without it, and every key still admits exactly its quota, the scripts reading
//! the states the module wrote. Here rather than in the library's tests because the module's
//! library is built with these (a dev-dependency of sluicegate-server).

#[path = "../../tests/support/redis_server.rs"]
mod redis_server;

use redis_server::{RedisCluster, RedisServer};
use sluicegate::algorithm::FixedWindow;
use sluicegate::clock::ManualClock;
use sluicegate::redis::RedisLimiter;
use sluicegate::Quota;
use std::time::Duration;

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

/// Calls of `command` a node has run (`INFO commandstats`).
fn calls(server: &RedisServer, command: &str) -> u64 {
    let info = server.cli(&["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().expect("a count"))
}

fn scripts(server: &RedisServer) -> u64 {
    calls(server, "evalsha") + calls(server, "eval")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_module_on_one_node_of_three_every_key_admits_exactly_its_quota() {
    let module = redis_module();
    let with_module = ["--loadmodule", module.as_str()];
    let cluster = RedisCluster::start_nodes(vec![&with_module, &[], &[]], 0);
    let limiter =
        RedisLimiter::<FixedWindow, ManualClock>::builder(Quota::per_hour(3), &cluster.urls())
            .cluster(true)
            .module(true)
            .deny_cache(false)
            .batching(false)
            .clock(ManualClock::starting_at(Duration::from_secs(1_700_000_000)))
            .connect()
            .await
            .expect("a cluster limiter");
    // A key on the node with the module, and one on a node without it.
    let key_on = |node: usize| {
        (0..1000)
            .map(|i| format!("user:{i}"))
            .find(|key| cluster.owner(cluster.slot(key)) == node)
            .expect("a key on every node")
    };
    let (native, plain) = (key_on(0), key_on(1));
    let node = |i: usize| &cluster.nodes()[i];

    // The module decides the first two on its node.
    for _ in 0..2 {
        assert!(limiter.check(&native).await.unwrap().is_allowed());
    }
    assert_eq!(calls(node(0), "sluicegate.decide"), 2);
    assert_eq!(scripts(node(0)), 0);
    // The node without it: the scripts decide, from now on everywhere.
    assert!(limiter.check(&plain).await.unwrap().is_allowed());
    assert!(
        scripts(node(1)) > 0,
        "the node without the module ran the script"
    );
    // The script on the module's node reads the state the module wrote: one more, then no.
    assert!(limiter.check(&native).await.unwrap().is_allowed());
    let denied = limiter.check(&native).await.unwrap();
    assert!(denied.is_denied() && denied.remaining() == 0, "{denied:?}");
    assert!(
        scripts(node(0)) > 0,
        "the scripts took over on the module's node"
    );
    // Keys spread over every node: three each, whichever decided them.
    for i in 0..30 {
        let key = format!("spread:{i}");
        let admitted = {
            let mut admitted = 0;
            for _ in 0..5 {
                admitted += u32::from(limiter.check(&key).await.unwrap().is_allowed());
            }
            admitted
        };
        assert_eq!(admitted, 3, "{key}");
    }
    for _ in 0..2 {
        assert!(limiter.check(&plain).await.unwrap().is_allowed());
    }
    assert!(limiter.check(&plain).await.unwrap().is_denied());
}
