//! The command line; every flag can also come from an environment variable.

use crate::engine::OnBackendError;
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

/// sluicegate-server: Envoy's rate limit service (gRPC, RLS v3) and its JSON form over
/// HTTP, deciding with sluicegate's six algorithms, in process or on Redis.
#[derive(Debug, Clone, Parser)]
#[command(name = "sluicegate-server", version, about, long_about = None)]
pub struct Args {
    /// A YAML config file, or a directory of *.yaml/*.yml files (one domain each).
    #[arg(long, env = "SLUICEGATE_CONFIG")]
    pub config: PathBuf,

    /// Where Envoy's RLS v3 gRPC service listens (h2c).
    #[arg(long, env = "SLUICEGATE_GRPC", default_value = "0.0.0.0:8081")]
    pub grpc: SocketAddr,

    /// Where POST /json, GET /healthcheck, /metrics and /rlconfig listen.
    #[arg(long, env = "SLUICEGATE_HTTP", default_value = "0.0.0.0:8080")]
    pub http: SocketAddr,

    /// Share limits between replicas through this Redis: redis://host:port/ (with
    /// user:password@ before the host for an ACL user), rediss:// for TLS, or a master named
    /// by Sentinels: redis-sentinel://host1:26379,host2:26379/#master (rediss-sentinel:// for
    /// TLS).
    #[arg(long, env = "SLUICEGATE_REDIS", conflicts_with = "redis_cluster")]
    pub redis: Option<String>,

    /// Share limits through a Redis Cluster: seed node URLs, separated by commas.
    #[arg(long, env = "SLUICEGATE_REDIS_CLUSTER", value_delimiter = ',')]
    pub redis_cluster: Vec<String>,

    /// A PEM file of the CA certificates a rediss:// server's certificate must chain to
    /// (instead of the system's roots).
    #[arg(long, env = "SLUICEGATE_REDIS_CA_CERT", value_name = "PATH")]
    pub redis_ca_cert: Option<PathBuf>,

    /// A PEM certificate to show a rediss:// server that asks for one (mutual TLS), with
    /// --redis-client-key.
    #[arg(
        long,
        env = "SLUICEGATE_REDIS_CLIENT_CERT",
        value_name = "PATH",
        requires = "redis_client_key"
    )]
    pub redis_client_cert: Option<PathBuf>,

    /// The PEM private key of --redis-client-cert.
    #[arg(
        long,
        env = "SLUICEGATE_REDIS_CLIENT_KEY",
        value_name = "PATH",
        requires = "redis_client_cert"
    )]
    pub redis_client_key: Option<PathBuf>,

    /// The Sentinels' own password (their requirepass) for a redis-sentinel:// URL, whose
    /// user:password is the master's.
    #[arg(
        long,
        env = "SLUICEGATE_REDIS_SENTINEL_PASSWORD",
        hide_env_values = true
    )]
    pub redis_sentinel_password: Option<String>,

    /// The Sentinels' ACL user, with --redis-sentinel-password.
    #[arg(
        long,
        env = "SLUICEGATE_REDIS_SENTINEL_USERNAME",
        requires = "redis_sentinel_password"
    )]
    pub redis_sentinel_username: Option<String>,

    /// Decide with the sluicegate Redis module's SLUICEGATE.DECIDE where Redis has it
    /// loaded (redis-module/; a fraction of the scripts' Redis CPU), else with the scripts.
    #[arg(long, env = "SLUICEGATE_REDIS_MODULE")]
    pub redis_module: bool,

    /// What to answer when the backend cannot decide: error (gRPC UNAVAILABLE, so the
    /// proxy's failure_mode_deny decides), allow (OK) or deny (OVER_LIMIT).
    #[arg(
        long,
        env = "SLUICEGATE_ON_BACKEND_ERROR",
        value_enum,
        default_value = "error"
    )]
    pub on_backend_error: OnBackendError,

    /// Put RateLimit-Policy, RateLimit (and Retry-After when over) in
    /// response_headers_to_add.
    #[arg(long, env = "SLUICEGATE_RESPONSE_HEADERS")]
    pub response_headers: bool,

    /// In process, the most keys (distinct descriptor values) one rule holds; a new key
    /// beyond it is over the limit until idle keys are dropped.
    #[arg(long, env = "SLUICEGATE_MAX_KEYS", default_value_t = 1_000_000,
          value_parser = clap::value_parser!(usize))]
    pub max_keys: usize,

    /// The most metric series one `detailed_metric` rule keeps (one per distinct request
    /// value); hits of values beyond it are counted under the rule's own key.
    #[arg(long, env = "SLUICEGATE_MAX_METRIC_SERIES", default_value_t = 100)]
    pub max_metric_series: usize,

    /// The most limiters kept for descriptors' `limit` overrides (one per rule and distinct
    /// override); idle ones are dropped as needed, and a new override arriving while every
    /// one still carries state is over the limit.
    #[arg(long, env = "SLUICEGATE_MAX_OVERRIDE_LIMITERS", default_value_t = 1000)]
    pub max_override_limiters: usize,

    /// The most open connections on each listener (lowered to fit the open-file limit); a
    /// connection beyond it is closed as soon as it is accepted.
    #[arg(long, env = "SLUICEGATE_MAX_CONNECTIONS", default_value_t = 10_000)]
    pub max_connections: usize,

    /// The largest gRPC request message or /json body, in bytes (gRPC RESOURCE_EXHAUSTED,
    /// HTTP 413 beyond it).
    #[arg(long, env = "SLUICEGATE_MAX_MESSAGE_BYTES", default_value_t = 64 * 1024)]
    pub max_message_bytes: usize,

    /// The largest request header block, in bytes, on either listener.
    #[arg(long, env = "SLUICEGATE_MAX_HEADER_BYTES", default_value_t = 16 * 1024)]
    pub max_header_bytes: u32,

    /// HTTP/2 streams one gRPC connection may have open at once (MAX_CONCURRENT_STREAMS).
    #[arg(long, env = "SLUICEGATE_GRPC_MAX_STREAMS", default_value_t = 200)]
    pub grpc_max_streams: u32,

    /// Seconds one gRPC call may take, reading its request included.
    #[arg(long, env = "SLUICEGATE_GRPC_REQUEST_TIMEOUT", default_value_t = 10)]
    pub grpc_request_timeout: u64,

    /// Seconds between HTTP/2 keep-alive pings on an idle gRPC connection.
    #[arg(long, env = "SLUICEGATE_GRPC_KEEPALIVE_INTERVAL", default_value_t = 60)]
    pub grpc_keepalive_interval: u64,

    /// Seconds a keep-alive ping may wait for its answer before the connection is closed.
    #[arg(long, env = "SLUICEGATE_GRPC_KEEPALIVE_TIMEOUT", default_value_t = 20)]
    pub grpc_keepalive_timeout: u64,

    /// Seconds a gRPC connection may send nothing at all (not even a ping's answer) before
    /// it is closed.
    #[arg(long, env = "SLUICEGATE_GRPC_IDLE_TIMEOUT", default_value_t = 300)]
    pub grpc_idle_timeout: u64,

    /// Seconds an HTTP connection has to send a request's headers, counted from when it
    /// connects or its previous response was sent (so also how long an idle keep-alive
    /// connection stays open).
    #[arg(long, env = "SLUICEGATE_HTTP_HEADER_TIMEOUT", default_value_t = 30)]
    pub http_header_timeout: u64,

    /// Seconds an HTTP request has to send its body, once its headers are in.
    #[arg(long, env = "SLUICEGATE_HTTP_BODY_TIMEOUT", default_value_t = 30)]
    pub http_body_timeout: u64,

    /// Milliseconds a changed config must stay unchanged before it is applied (a file
    /// replaced by a rename, and SIGHUP, apply at once).
    #[arg(long, env = "SLUICEGATE_RELOAD_DEBOUNCE_MS", default_value_t = 1000)]
    pub reload_debounce_ms: u64,

    /// On SIGTERM/SIGINT, how many seconds to wait for in-flight calls and open
    /// connections before exiting anyway.
    #[arg(long, env = "SLUICEGATE_SHUTDOWN_GRACE", default_value_t = 10)]
    pub shutdown_grace: u64,

    /// Threads that serve gRPC: 0 (the default) runs one per CPU this process may use; 1
    /// runs everything on one thread (one core's throughput at most, as Limitador's server
    /// runs); N, N threads, each serving whole connections on a runtime of its own (no work
    /// stealing, no wake-ups across threads), beside N threads for HTTP, Redis's
    /// connections and the background tasks.
    #[arg(long, env = "SLUICEGATE_WORKERS", default_value_t = 0)]
    pub workers: usize,

    /// Load and check the config, print what is wrong, and exit 0 (valid) or 1.
    #[arg(long, env = "SLUICEGATE_VALIDATE")]
    pub validate: bool,

    /// Log filter (tracing's EnvFilter syntax).
    #[arg(long, env = "SLUICEGATE_LOG", default_value = "info")]
    pub log: String,
}
