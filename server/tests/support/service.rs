//! The real `sluicegate-server` binary for tests: started on free loopback ports with a
//! config written to a temporary directory, stopped by its PID (SIGTERM, then SIGKILL) when
//! dropped. Include it with `#[path = "support/service.rs"] mod service;`.
#![allow(dead_code)]

use sluicegate_server::proto::envoy::extensions::common::ratelimit::v3::rate_limit_descriptor::{
    Entry, RateLimitOverride,
};
use sluicegate_server::proto::rate_limit_service_client::RateLimitServiceClient;
use sluicegate_server::proto::{RateLimitDescriptor, RateLimitRequest, RateLimitResponse};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// Polls `check` every 50 ms for up to `within`; true once it holds.
pub async fn eventually<F, Fut>(within: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A running server.
#[derive(Debug)]
pub struct Service {
    child: Option<Child>,
    /// The gRPC port.
    pub grpc: u16,
    /// The HTTP port.
    pub http: u16,
    /// The config directory (or file's directory).
    pub dir: tempfile::TempDir,
    /// The path given to `--config`.
    pub config: PathBuf,
    log: PathBuf,
}

/// How to start one.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Extra flags.
    pub flags: Vec<String>,
    /// Config files `(name, text)` in a directory; one file passed directly when `file`.
    pub files: Vec<(String, String)>,
    /// Pass the single file rather than the directory.
    pub file: bool,
    /// Start it with this open-file limit (soft and hard).
    pub open_files: Option<u64>,
}

/// The binary under test: `SLUICEGATE_SERVER_BIN` when set (to run these tests against
/// another build, e.g. an earlier commit's, and see which fail), else this package's.
pub fn server_bin() -> PathBuf {
    std::env::var_os("SLUICEGATE_SERVER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sluicegate-server")))
}

impl Service {
    /// A server on `config` (one file), with `flags`.
    pub fn start(config: &str, flags: &[&str]) -> Service {
        Service::start_with(Options {
            flags: flags.iter().map(|s| s.to_string()).collect(),
            files: vec![("config.yaml".into(), config.into())],
            file: true,
            open_files: None,
        })
    }

    /// A server as `options` say; waits until `/healthcheck` answers.
    pub fn start_with(options: Options) -> Service {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (name, text) in &options.files {
            std::fs::write(dir.path().join(name), text).expect("writing the config");
        }
        let config = if options.file {
            dir.path().join(&options.files[0].0)
        } else {
            dir.path().to_path_buf()
        };
        let mut service = Service {
            child: None,
            grpc: 0,
            http: 0,
            dir,
            config,
            log: PathBuf::new(),
        };
        service.spawn(&options.flags, options.open_files);
        service
    }

    /// A server on the config at `config` (a file or a directory) that the caller laid out
    /// in `dir`, with `flags`; waits until `/healthcheck` answers.
    pub fn start_in(dir: tempfile::TempDir, config: PathBuf, flags: &[&str]) -> Service {
        let mut service = Service {
            child: None,
            grpc: 0,
            http: 0,
            dir,
            config,
            log: PathBuf::new(),
        };
        let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        service.spawn(&flags, None);
        service
    }

    fn spawn(&mut self, flags: &[String], open_files: Option<u64>) {
        self.grpc = free_port();
        self.http = free_port();
        self.log = self.dir.path().join(format!("server-{}.log", self.grpc));
        let log = std::fs::File::create(&self.log).expect("a log file");
        let mut command = Command::new(server_bin());
        if let Some(limit) = open_files {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe, and the closure touches nothing else.
            unsafe {
                command.pre_exec(move || {
                    let limit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = command
            .arg("--config")
            .arg(&self.config)
            .args(["--grpc", &format!("127.0.0.1:{}", self.grpc)])
            .args(["--http", &format!("127.0.0.1:{}", self.http)])
            .args(flags)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting sluicegate-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.try_wait() {
                panic!(
                    "sluicegate-server exited at start ({status}):\n{}",
                    self.logs()
                );
            }
            if let Ok((code, _, _)) = http(self.http, "GET", "/healthcheck", "") {
                let grpc_up = TcpStream::connect(("127.0.0.1", self.grpc)).is_ok();
                if (code == 200 || code == 503) && grpc_up {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "sluicegate-server did not start within 20 s:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's resident memory (`VmRSS` in `/proc/PID/status`), in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("reading /proc/PID/status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/PID/status")
    }

    /// The sum of every Prometheus sample whose line starts with `line_start`, and how many
    /// there are.
    pub fn metric_sum(&self, line_start: &str) -> (f64, usize) {
        let (_, body) = self.get("/metrics");
        body.lines()
            .filter(|line| line.starts_with(line_start))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .fold((0.0, 0), |(sum, n), v| (sum + v, n + 1))
    }

    /// What the server has logged.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The PID.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// The exit status, if it has exited.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Sends `signal` (e.g. "TERM", "HUP") to the server by its PID.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([format!("-{signal}"), self.pid().to_string()])
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Sends SIGTERM and waits for the exit status (see [`Service::wait_exit`]).
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal("TERM");
        self.wait_exit()
    }

    /// Waits for the exit status, up to 30 s: a real timeout, far beyond the default
    /// 10 s grace period a loaded two-core machine may need all of.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.try_wait() {
                self.child = None;
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "no exit within 30 s:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Rewrites config file `name` (in the config directory).
    pub fn write(&self, name: &str, text: &str) {
        let path = self.dir.path().join(name);
        // Write then rename, as config managers do, so no half-written file is read.
        let temporary = self.dir.path().join(format!(".{name}.tmp"));
        std::fs::write(&temporary, text).expect("writing the config");
        std::fs::rename(&temporary, &path).expect("replacing the config");
    }

    /// The config directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A gRPC client.
    pub async fn client(&self) -> RateLimitServiceClient<Channel> {
        RateLimitServiceClient::connect(format!("http://127.0.0.1:{}", self.grpc))
            .await
            .expect("connecting to the gRPC port")
    }

    /// `POST /json` with `body`: (status, headers, body).
    pub fn json(&self, body: &str) -> (u16, String, String) {
        http(self.http, "POST", "/json", body).expect("POST /json")
    }

    /// `GET path`: (status, body).
    pub fn get(&self, path: &str) -> (u16, String) {
        let (code, _, body) = http(self.http, "GET", path, "").expect("GET");
        (code, body)
    }

    /// The value of the Prometheus sample named `line_start` (the name and labels).
    pub fn metric(&self, line_start: &str) -> Option<f64> {
        let (_, body) = self.get("/metrics");
        body.lines()
            .find(|line| line.starts_with(line_start))
            .and_then(|line| line.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One HTTP/1.1 request on a fresh connection, as JSON: (status, raw headers, body).
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<(u16, String, String)> {
    http_typed(port, method, path, Some("application/json"), body)
}

/// One HTTP/1.1 request on a fresh connection with this `Content-Type` (none for `None`):
/// (status, raw headers, body).
pub fn http_typed(
    port: u16,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> std::io::Result<(u16, String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let content_type = content_type
        .map(|t| format!("Content-Type: {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{content_type}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line in {head:?}")))?;
    // Bodies here are small; a chunked body is de-chunked naively.
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok((code, head.to_owned(), body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// A descriptor of `(key, value)` entries.
pub fn descriptor(entries: &[(&str, &str)]) -> RateLimitDescriptor {
    RateLimitDescriptor {
        entries: entries
            .iter()
            .map(|(key, value)| Entry {
                key: key.to_string(),
                value: value.to_string(),
            })
            .collect(),
        limit: None,
        hits_addend: None,
        is_negative_hits: false,
    }
}

/// `descriptor` with its own hits_addend.
pub fn with_hits(mut d: RateLimitDescriptor, hits: u64) -> RateLimitDescriptor {
    d.hits_addend = Some(hits);
    d
}

/// `descriptor` with a limit override (unit: 1 second ... 6 year, 7 week).
pub fn with_override(mut d: RateLimitDescriptor, requests: u32, unit: i32) -> RateLimitDescriptor {
    d.limit = Some(RateLimitOverride {
        requests_per_unit: requests,
        unit,
    });
    d
}

/// A request in `domain`.
pub fn request(domain: &str, descriptors: Vec<RateLimitDescriptor>) -> RateLimitRequest {
    RateLimitRequest {
        domain: domain.into(),
        descriptors,
        hits_addend: 0,
    }
}

/// Calls ShouldRateLimit, panicking on a gRPC error.
pub async fn ask(
    client: &mut RateLimitServiceClient<Channel>,
    request: RateLimitRequest,
) -> RateLimitResponse {
    client
        .should_rate_limit(request)
        .await
        .expect("ShouldRateLimit")
        .into_inner()
}

/// OK = 1, OVER_LIMIT = 2.
pub const OK: i32 = 1;
/// OVER_LIMIT.
pub const OVER: i32 = 2;

/// The codes of a response's statuses.
pub fn codes(response: &RateLimitResponse) -> Vec<i32> {
    response.statuses.iter().map(|s| s.code).collect()
}
