//! Running the service: both listeners, the config watcher, and a graceful shutdown on
//! `SIGTERM`/`SIGINT` (stop accepting, finish in-flight calls, exit 0).

use crate::cli::Args;
use crate::config;
use crate::engine::Engine;
use crate::grpc::Rls;
use crate::http::{self, Shared};
use crate::limits::Backing;
use crate::reload::{self, Reloader};
use crate::telemetry;
use metrics_exporter_prometheus::PrometheusBuilder;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The latency histogram's buckets, in seconds: 50 µs to 1 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// Where the state lives, from the flags.
pub fn backing(args: &Args) -> Backing {
    if let Some(url) = &args.redis {
        Backing::Redis {
            url: url.clone(),
            cluster: false,
        }
    } else if !args.redis_cluster.is_empty() {
        Backing::Redis {
            url: args.redis_cluster.join(","),
            cluster: true,
        }
    } else {
        Backing::InProcess {
            max_keys: args.max_keys,
        }
    }
}

/// Serves until `SIGTERM` or `SIGINT`; the error says why it could not start.
pub async fn run(args: Args) -> Result<(), String> {
    let recorder = PrometheusBuilder::new()
        .set_buckets(LATENCY_BUCKETS)
        .map_err(|e| format!("cannot set up the metrics: {e}"))?
        .build_recorder();
    let metrics = recorder.handle();
    metrics::set_global_recorder(recorder)
        .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;

    let shutdown = shutdown_signal()?;
    let hangups = reload::hangups();
    let backing = backing(&args);
    let seen = config::fingerprint(&args.config);
    let first = reload::snapshot(&args.config, &backing, None).await;
    telemetry::config_load(first.is_ok());
    let first = first.map_err(|why| format!("the config cannot be used:\n{why}"))?;
    tracing::info!(
        rules = first.config.rules.len(),
        domains = first.config.domains.len(),
        "config loaded"
    );
    let engine = Arc::new(Engine::new(first, backing, args.on_backend_error));

    let grpc_listener = tokio::net::TcpListener::bind(args.grpc)
        .await
        .map_err(|e| format!("cannot listen on {} (--grpc): {e}", args.grpc))?;
    let http_listener = tokio::net::TcpListener::bind(args.http)
        .await
        .map_err(|e| format!("cannot listen on {} (--http): {e}", args.http))?;
    tracing::info!(grpc = %args.grpc, http = %args.http, "listening");

    tokio::spawn(Reloader::new(args.config.clone(), engine.clone()).watch(seen, hangups));
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
    };
    let http_server = {
        let mut stopped = stopped.clone();
        axum::serve(http_listener, http::router(shared)).with_graceful_shutdown(async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        })
    };
    let grpc_server = {
        let mut stopped = stopped.clone();
        let incoming =
            tonic::transport::server::TcpIncoming::from(grpc_listener).with_nodelay(Some(true));
        tonic::transport::Server::builder()
            .add_service(Rls::server(engine, args.response_headers))
            .serve_with_incoming_shutdown(incoming, async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            })
    };
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
        (http_done, grpc_done) = servers => {
            http_done.map_err(|e| format!("the HTTP server failed: {e}"))?;
            grpc_done.map_err(|e| format!("the gRPC server failed: {e}"))?;
        }
        () = signals => tracing::warn!("connections still open after {grace:?}: exiting anyway"),
    }
    Ok(())
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
