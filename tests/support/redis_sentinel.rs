//! Redis Sentinels for tests: a primary with a replica, watched by three `redis-sentinel`s
//! (Debian's package) on free loopback ports, which fail the primary over one second after
//! it stops answering. Include it beside `redis_server.rs`:
//! `#[path = "support/redis_sentinel.rs"] mod redis_sentinel;`.
#![allow(dead_code)]

use super::redis_server::{cli, unused_port, RedisServer};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MISSING: &str = "redis-sentinel is needed by this test: install it with \
                       `apt-get install redis-sentinel` (Debian's package; scripts/test.sh does this)";

/// The master's name the Sentinels monitor.
pub const MASTER: &str = "mymaster";
/// How long the primary must not answer before the Sentinels call it down.
pub const DOWN_AFTER: Duration = Duration::from_millis(1000);

/// A primary, its replica, and three Sentinels watching them.
#[derive(Debug)]
pub struct SentinelSet {
    pub primary: RedisServer,
    pub replica: RedisServer,
    sentinels: Vec<(u16, Child)>,
    dir: PathBuf,
}

impl SentinelSet {
    /// Starts the set and waits until every Sentinel knows the replica and the others.
    pub fn start() -> SentinelSet {
        Self::start_with(&[])
    }

    /// The same, each Sentinel's config getting `extra` lines (e.g. `requirepass`).
    pub fn start_with(extra: &[&str]) -> SentinelSet {
        let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
        let replicaof = format!("127.0.0.1 {}", primary.port());
        let replica = RedisServer::start_with(&["--replicaof", &replicaof]);
        let dir = std::env::temp_dir().join(format!(
            "sluicegate-sentinels-{}-{}",
            std::process::id(),
            primary.port()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the Sentinels");
        let sentinels = (0..3)
            .map(|i| {
                let port = unused_port();
                let conf = dir.join(format!("sentinel-{i}.conf"));
                let mut text = format!(
                    "port {port}\nbind 127.0.0.1\nprotected-mode no\ndir {}\n\
                     sentinel monitor {MASTER} 127.0.0.1 {} 2\n\
                     sentinel down-after-milliseconds {MASTER} {}\n\
                     sentinel failover-timeout {MASTER} 10000\n\
                     sentinel parallel-syncs {MASTER} 1\n",
                    dir.display(),
                    primary.port(),
                    DOWN_AFTER.as_millis()
                );
                for line in extra {
                    text.push_str(line);
                    text.push('\n');
                }
                std::fs::write(&conf, text).expect("a Sentinel config");
                let child = match Command::new("redis-sentinel")
                    .arg(&conf)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                {
                    Ok(child) => child,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{MISSING}"),
                    Err(e) => panic!("cannot start redis-sentinel: {e}"),
                };
                (port, child)
            })
            .collect();
        let set = SentinelSet {
            primary,
            replica,
            sentinels,
            dir,
        };
        set.wait_until_ready(extra);
        set
    }

    /// Waits until each Sentinel sees the replica and the two other Sentinels.
    fn wait_until_ready(&self, extra: &[&str]) {
        let auth: Vec<String> = extra
            .iter()
            .filter_map(|line| line.strip_prefix("requirepass "))
            .flat_map(|password| {
                [
                    "-a".to_owned(),
                    password.to_owned(),
                    "--no-auth-warning".to_owned(),
                ]
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(30);
        for (port, _) in &self.sentinels {
            loop {
                let mut args: Vec<&str> = auth.iter().map(String::as_str).collect();
                args.extend(["SENTINEL", "MASTER", MASTER]);
                let master = cli_lenient(*port, &args);
                let count = |field: &str| {
                    let lines: Vec<&str> = master.lines().collect();
                    lines
                        .iter()
                        .position(|line| *line == field)
                        .and_then(|i| lines.get(i + 1))
                        .and_then(|n| n.parse::<u32>().ok())
                        .unwrap_or(0)
                };
                if count("num-slaves") >= 1 && count("num-other-sentinels") >= 2 {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "Sentinel {port} never saw the replica and the others: {master}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// The Sentinels' addresses, `127.0.0.1:port` comma-separated.
    pub fn addresses(&self) -> String {
        self.sentinels
            .iter()
            .map(|(port, _)| format!("127.0.0.1:{port}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `redis-sentinel://[credentials@]sentinels/#mymaster`.
    pub fn url(&self, credentials: &str) -> String {
        format!(
            "redis-sentinel://{credentials}{}/#{MASTER}",
            self.addresses()
        )
    }

    /// `SENTINEL FAILOVER`: the master demoted to a replica, the replica promoted, with no
    /// process killed.
    pub fn fail_over(&self) {
        let reply = cli(self.sentinels[0].0, &["SENTINEL", "FAILOVER", MASTER]);
        assert_eq!(reply, "OK", "SENTINEL FAILOVER");
    }

    /// The port the Sentinels name as the master now.
    pub fn master_port(&self) -> u16 {
        let answer = cli(
            self.sentinels[0].0,
            &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER],
        );
        answer
            .lines()
            .nth(1)
            .and_then(|port| port.trim().parse().ok())
            .unwrap_or_else(|| panic!("a master address: {answer:?}"))
    }
}

/// `redis-cli -p port args`, whatever its exit status (a Sentinel starting up).
fn cli_lenient(port: u16, args: &[&str]) -> String {
    Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .unwrap_or_default()
}

impl Drop for SentinelSet {
    fn drop(&mut self) {
        for (_, child) in &mut self.sentinels {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
