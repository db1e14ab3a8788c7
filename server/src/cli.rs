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

    /// Share limits between replicas through this Redis (redis://host:port/).
    #[arg(long, env = "SLUICEGATE_REDIS", conflicts_with = "redis_cluster")]
    pub redis: Option<String>,

    /// Share limits through a Redis Cluster: seed node URLs, separated by commas.
    #[arg(long, env = "SLUICEGATE_REDIS_CLUSTER", value_delimiter = ',')]
    pub redis_cluster: Vec<String>,

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

    /// On SIGTERM/SIGINT, how many seconds to wait for in-flight calls and open
    /// connections before exiting anyway.
    #[arg(long, env = "SLUICEGATE_SHUTDOWN_GRACE", default_value_t = 10)]
    pub shutdown_grace: u64,

    /// Load and check the config, print what is wrong, and exit 0 (valid) or 1.
    #[arg(long, env = "SLUICEGATE_VALIDATE")]
    pub validate: bool,

    /// Log filter (tracing's EnvFilter syntax).
    #[arg(long, env = "SLUICEGATE_LOG", default_value = "info")]
    pub log: String,
}
