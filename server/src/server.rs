//! Running the service: both listeners, the config watcher, and a graceful shutdown on
//! `SIGTERM`/`SIGINT` (stop accepting, finish in-flight calls, exit 0).

use crate::cli::Args;
use crate::config;
use crate::engine::Engine;
use crate::http::{self, Shared};
use crate::limits::Backing;
use crate::net::{self, Admission, Http1Settings};
use crate::reload::{self, Reloader};
use crate::{grpc, telemetry};
use metrics_exporter_prometheus::PrometheusBuilder;
use sluicegate::http::spec::RedisSpec;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often idle keys (and idle override limiters) are dropped from the in-process
/// limiters, so that the memory a flood of distinct values took comes back once their
/// windows have passed.
const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// The latency histogram's buckets, in seconds: 50 µs to 1 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// Where the state lives, from the flags; the error names a TLS file that cannot be read.
pub fn backing(args: &Args) -> Result<Backing, String> {
    let (url, cluster) = match (&args.redis, args.redis_cluster.is_empty()) {
        (Some(url), _) => (url.clone(), false),
        (None, false) => (args.redis_cluster.join(","), true),
        (None, true) => {
            return Ok(Backing::InProcess {
                max_keys: args.max_keys,
            })
        }
    };
    // Read here, so that an unreadable file stops the service naming its flag.
    let read = |flag: &str, path: &Option<std::path::PathBuf>| match path {
        Some(path) => std::fs::read_to_string(path)
            .map(Some)
            .map_err(|e| format!("{flag} {}: {e}", path.display())),
        None => Ok(None),
    };
    let mut redis = RedisSpec::new(url);
    redis.cluster = cluster;
    redis.module = args.redis_module;
    redis.ca_cert = read("--redis-ca-cert", &args.redis_ca_cert)?;
    redis.client_cert = read("--redis-client-cert", &args.redis_client_cert)?;
    redis.client_key = read("--redis-client-key", &args.redis_client_key)?;
    redis.sentinel_username = args.redis_sentinel_username.clone();
    redis.sentinel_password = args.redis_sentinel_password.clone();
    Ok(Backing::Redis(redis))
}

/// Serves until `SIGTERM` or `SIGINT`, gRPC on `grpc_threads` threads of its own (0 or 1:
/// on this runtime); the error says why it could not start.
pub async fn run(args: Args, grpc_threads: usize) -> Result<(), String> {
    let recorder = PrometheusBuilder::new()
        .set_buckets(LATENCY_BUCKETS)
        .map_err(|e| format!("cannot set up the metrics: {e}"))?
        .build_recorder();
    let metrics = recorder.handle();
    metrics::set_global_recorder(recorder)
        .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;

    let shutdown = shutdown_signal()?;
    let hangups = reload::hangups();
    let backing = backing(&args)?;
    let seen = config::fingerprint(&args.config);
    let first = reload::snapshot(&args.config, &backing, None).await;
    telemetry::config_load(first.is_ok());
    let mut first = first.map_err(|why| format!("the config cannot be used:\n{why}"))?;
    first.limits = first.limits.with_max_overrides(args.max_override_limiters);
    tracing::info!(
        rules = first.config.rules.len(),
        domains = first.config.domains.len(),
        "config loaded"
    );
    let engine = Arc::new(
        Engine::new(first, backing, args.on_backend_error)
            .with_max_metric_series(args.max_metric_series),
    );

    let grpc_listener = tokio::net::TcpListener::bind(args.grpc)
        .await
        .map_err(|e| format!("cannot listen on {} (--grpc): {e}", args.grpc))?;
    let http_listener = tokio::net::TcpListener::bind(args.http)
        .await
        .map_err(|e| format!("cannot listen on {} (--http): {e}", args.http))?;
    let open_files = net::raise_open_files();
    let max_connections = net::connection_cap(args.max_connections, open_files);
    if max_connections < args.max_connections {
        tracing::warn!(
            open_files,
            "--max-connections {} lowered to {max_connections} per listener to fit the open-file limit",
            args.max_connections
        );
    }
    tracing::info!(grpc = %args.grpc, http = %args.http, max_connections, "listening");

    let debounce = Duration::from_millis(args.reload_debounce_ms);
    tokio::spawn(Reloader::new(args.config.clone(), engine.clone()).watch(seen, hangups, debounce));
    spawn_sweeper(engine.clone());
    // The recorder keeps each histogram sample until a scrape or an upkeep folds it into the
    // buckets: without a scraper, upkeep keeps memory bounded.
    let upkeep = metrics.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });

    let draining = Arc::new(AtomicBool::new(false));
    let (stop, stopped) = watch::channel(false);
    let shared = Shared {
        engine: engine.clone(),
        draining: draining.clone(),
        metrics,
        response_headers: args.response_headers,
        max_body_bytes: args.max_message_bytes,
        body_timeout: Duration::from_secs(args.http_body_timeout),
    };
    let http_server = net::serve_http1(
        http_listener,
        http::router(shared),
        Http1Settings {
            header_timeout: Duration::from_secs(args.http_header_timeout),
            max_header_bytes: args.max_header_bytes as usize,
        },
        Admission::new("http", max_connections),
        stopped.clone(),
    );
    let grpc_server = grpc::serve(
        grpc_listener,
        Admission::new("grpc", max_connections),
        grpc::Settings {
            request_timeout: Duration::from_secs(args.grpc_request_timeout),
            max_streams: args.grpc_max_streams,
            keepalive_interval: Duration::from_secs(args.grpc_keepalive_interval),
            keepalive_timeout: Duration::from_secs(args.grpc_keepalive_timeout),
            max_header_bytes: args.max_header_bytes,
            max_message_bytes: args.max_message_bytes,
            response_headers: args.response_headers,
            idle_timeout: Duration::from_secs(args.grpc_idle_timeout),
        },
        engine,
        stopped.clone(),
        grpc_threads,
    );
    let grace = Duration::from_secs(args.shutdown_grace);
    let signals = async move {
        shutdown.await;
        tracing::info!("shutting down: finishing in-flight calls");
        draining.store(true, Ordering::Relaxed);
        let _ = stop.send(true);
        // Connections that stay open past the grace period (a client that ignores HTTP/2's
        // GOAWAY) do not hold the exit up for ever.
        tokio::time::sleep(grace).await;
    };
    let servers = async { tokio::join!(http_server, grpc_server) };
    tokio::select! {
        ((), grpc_done) = servers => {
            grpc_done?;
        }
        () = signals => tracing::warn!("connections still open after {grace:?}: exiting anyway"),
    }
    Ok(())
}

/// Every `SWEEP_EVERY`, drops the keys that are back to fresh from every in-process
/// limiter, and the override limiters left with none (off the runtime's threads: a table of
/// a million keys takes a while).
fn spawn_sweeper(engine: Arc<Engine>) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        every.tick().await;
        loop {
            every.tick().await;
            let snapshot = engine.snapshot();
            let _ = tokio::task::spawn_blocking(move || {
                if snapshot.limits.sweep() > 0 {
                    give_back_freed_memory();
                }
            })
            .await;
        }
    });
}

/// Returns the heap's free pages to the system: glibc keeps what a flood's keys freed in its
/// arenas otherwise, and the process would look as large as at the flood's peak.
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A future resolving on the first `SIGTERM` or `SIGINT`. The handlers are installed when
/// this returns (not when the future is first polled), so no signal in between ends the
/// process unannounced.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, String> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let install = |kind| signal(kind).map_err(|e| format!("cannot handle signals: {e}"));
        let mut term = install(SignalKind::terminate())?;
        let mut interrupt = install(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
