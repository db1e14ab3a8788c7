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

/// A local Redis Cluster of masters with no replicas, each node its own `redis-server`,
/// ready (every slot served, `cluster_state:ok` everywhere) when this returns.
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
        let nodes: Vec<RedisServer> = (0..masters)
            .map(|_| {
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
        let mut args = vec!["--cluster", "create"];
        args.extend(addresses.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        let output = cli(nodes[0].port(), &args);
        assert!(
            output.contains("All 16384 slots covered"),
            "redis-cli --cluster create: {output}"
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while !nodes
            .iter()
            .all(|node| node.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        {
            assert!(
                Instant::now() < deadline,
                "the cluster did not become ready"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        RedisCluster { nodes }
    }

    /// The nodes.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// Every node's URL, comma-separated: the seed list of a cluster limiter.
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(RedisServer::url)
            .collect::<Vec<_>>()
            .join(",")
    }
}
