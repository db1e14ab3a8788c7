//! Real `redis-server`s for tests: each test starts its own on a free loopback port (no
//! persistence), and stops it by its PID when dropped. Include it with
//! `#[path = "support/redis_server.rs"] mod redis_server;`.
//!
//! Without `redis-server` (Debian's package) the helpers panic saying what to install:
//! tests never pass by skipping.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const MISSING: &str = "redis-server and redis-cli are needed by this test: install them with \
                       `apt-get install redis-server` (Debian's package; .ci/run does this)";

/// One `redis-server` process on `127.0.0.1:port`.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    extra: Vec<String>,
    child: Option<Child>,
}

impl RedisServer {
    /// A standalone server on a free port, answering `PING` when this returns.
    pub fn start() -> RedisServer {
        Self::start_with(&[])
    }

    /// A server with extra `redis-server` arguments (e.g. `--cluster-enabled yes`).
    pub fn start_with(extra: &[&str]) -> RedisServer {
        let port = free_port(!extra.is_empty());
        Self::start_on(port, extra)
    }

    /// A standalone server on `port` (e.g. one from [`unused_port`] that a lazily connected
    /// client already points at).
    pub fn start_on_port(port: u16) -> RedisServer {
        Self::start_on(port, &[])
    }

    fn start_on(port: u16, extra: &[&str]) -> RedisServer {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "sluicegate-redis-{}-{port}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory for redis-server");
        let mut server = RedisServer {
            port,
            dir,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let port = self.port.to_string();
        let mut command = Command::new("redis-server");
        command
            .args([
                "--port",
                &port,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(["--protected-mode", "no", "--dir"])
            .arg(&self.dir)
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{MISSING}"),
            Err(e) => panic!("cannot start redis-server: {e}"),
        };
        self.child = Some(child);
        self.wait_until_answering(Duration::from_secs(10));
    }

    /// Waits until the server answers `PING`.
    pub fn wait_until_answering(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            if ping(self.port) {
                return;
            }
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("redis-server on port {} exited: {status}", self.port);
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not answer within {within:?}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's PID while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (SIGKILL, by its PID) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port (after [`kill`](Self::kill)).
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "kill the server before restarting it");
        self.spawn();
    }

    /// Runs `redis-cli -p <port> <args>` and returns its output, trimmed.
    pub fn cli(&self, args: &[&str]) -> String {
        cli(self.port, args)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `redis-cli -p port args...`, output trimmed; panics if redis-cli fails to run.
pub fn cli(port: u16, args: &[&str]) -> String {
    let output = match Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
    {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{MISSING}"),
        Err(e) => panic!("cannot run redis-cli: {e}"),
    };
    assert!(
        output.status.success(),
        "redis-cli {args:?} failed: {output:?}"
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// True when something on `port` answers `PING` with `+PONG`.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut reply = [0u8; 7];
    stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}

/// A loopback port with nothing listening on it now.
pub fn unused_port() -> u16 {
    free_port(false)
}

/// A port that is free now (and, for a cluster node, whose bus port, +10000, is free too).
fn free_port(cluster: bool) -> u16 {
    for _ in 0..1_000 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding a loopback port");
        let port = listener.local_addr().unwrap().port();
        if !cluster {
            return port;
        }
        if port <= 55_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port found");
}

/// A local Redis Cluster, each node its own `redis-server`, ready (every slot served,
/// `cluster_state:ok` everywhere, every replica in sync) when it is returned.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts `masters` nodes and joins them with `redis-cli --cluster create`.
    pub fn start(masters: usize) -> RedisCluster {
        Self::start_with(masters, &[])
    }

    /// The same, each node started with `extra` arguments too (e.g. `--loadmodule`).
    pub fn start_with(masters: usize, extra: &[&str]) -> RedisCluster {
        Self::start_with_replicas(masters, 0, extra)
    }

    /// `masters` masters with `replicas` replicas each, every node started with `extra`.
    pub fn start_with_replicas(masters: usize, replicas: usize, extra: &[&str]) -> RedisCluster {
        Self::start_nodes(vec![extra; masters * (1 + replicas)], replicas)
    }

    /// One node per entry of `extras` (each started with its own extra arguments), joined
    /// with `replicas` replicas per master: `redis-cli --cluster create` makes the first
    /// `extras.len() / (1 + replicas)` nodes the masters.
    pub fn start_nodes(extras: Vec<&[&str]>, replicas: usize) -> RedisCluster {
        let nodes: Vec<RedisServer> = extras
            .iter()
            .map(|extra| {
                let mut args = vec![
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                ];
                args.extend_from_slice(extra);
                RedisServer::start_with(&args)
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.port()))
            .collect();
        let replicas = replicas.to_string();
        let mut args = vec!["--cluster", "create"];
        args.extend(addresses.iter().map(String::as_str));
        args.extend(["--cluster-replicas", &replicas, "--cluster-yes"]);
        let output = cli(nodes[0].port(), &args);
        assert!(
            output.contains("All 16384 slots covered"),
            "redis-cli --cluster create: {output}"
        );
        let cluster = RedisCluster { nodes };
        cluster.wait_until_settled(Duration::from_secs(30));
        cluster
    }

    /// Waits until every running node says `cluster_state:ok` and every running replica is
    /// in sync with its master.
    pub fn wait_until_settled(&self, within: Duration) {
        let deadline = Instant::now() + within;
        let settled = |node: &RedisServer| {
            if node.pid().is_none() {
                return true;
            }
            if !node.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok") {
                return false;
            }
            let replication = node.cli(&["INFO", "replication"]);
            !replication.contains("role:slave") || replication.contains("master_link_status:up")
        };
        while !self.nodes.iter().all(settled) {
            assert!(
                Instant::now() < deadline,
                "the cluster did not settle within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The nodes.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// The nodes, to kill or restart one.
    pub fn nodes_mut(&mut self) -> &mut [RedisServer] {
        &mut self.nodes
    }

    /// Every node's URL, comma-separated: the seed list of a cluster limiter.
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(RedisServer::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The slot a key (or hash tag) is in.
    pub fn slot(&self, key: &str) -> u16 {
        self.nodes[0]
            .cli(&["CLUSTER", "KEYSLOT", key])
            .parse()
            .unwrap()
    }

    /// The index (in [`nodes`](Self::nodes)) of the node a live node says serves `slot`.
    pub fn owner(&self, slot: u16) -> usize {
        let view = self.live_node().cli(&["CLUSTER", "NODES"]);
        let owner = view
            .lines()
            .find(|line| {
                let fields: Vec<&str> = line.split(' ').collect();
                fields[2].contains("master")
                    && !fields[2].contains("fail")
                    && fields[8..].iter().any(|range| serves(range, slot))
            })
            .unwrap_or_else(|| panic!("no master serves slot {slot}:\n{view}"));
        self.index_of(owner.split(' ').next().unwrap())
    }

    /// The index of `master`'s first replica.
    pub fn replica_of(&self, master: usize) -> usize {
        let id = self.id(master);
        let view = self.live_node().cli(&["CLUSTER", "NODES"]);
        let replica = view
            .lines()
            .find(|line| line.split(' ').nth(3) == Some(id.as_str()))
            .unwrap_or_else(|| panic!("node {master} has no replica:\n{view}"));
        self.index_of(replica.split(' ').next().unwrap())
    }

    /// A node's cluster id.
    pub fn id(&self, node: usize) -> String {
        self.nodes[node].cli(&["CLUSTER", "MYID"])
    }

    fn index_of(&self, id: &str) -> usize {
        (0..self.nodes.len())
            .find(|&i| self.nodes[i].pid().is_some() && self.id(i) == id)
            .unwrap_or_else(|| panic!("no running node has id {id}"))
    }

    fn live_node(&self) -> &RedisServer {
        self.nodes
            .iter()
            .find(|node| node.pid().is_some())
            .expect("a running node")
    }
}

/// True when `range` (`5461`, `0-5460`, or an importing/migrating mark) holds `slot`.
fn serves(range: &str, slot: u16) -> bool {
    if range.starts_with('[') {
        return false;
    }
    match range.split_once('-') {
        Some((from, to)) => (from.parse().unwrap()..=to.parse().unwrap()).contains(&slot),
        None => range.parse() == Ok(slot),
    }
}
