//! `sluicegate-floor`: the floor for `scripts/bench.sh`. A bare tonic server of Envoy's
//! `RateLimitService` that answers every `ShouldRateLimit` with a constant `OK` response,
//! one status per request descriptor, shaped like the real server's (a `current_limit`,
//! `limit_remaining` and `duration_until_reset` in each), so the load generator measures
//! the gRPC stack alone: what any server built on it can at best reach.
//!
//! With `--config PATH` it serves the server's own gRPC service (`grpc::Rls` over an
//! in-process `Engine`) instead, with none of the rest of `sluicegate-server` (no metrics
//! recorder, log subscriber, HTTP listener or config watcher): a decomposition experiment,
//! floor → floor + engine → the whole server.
//!
//! Built with `--features bench`; serves until `SIGTERM`/`SIGINT`.
//!
//! ```sh
//! cargo run --release -p sluicegate-server --features bench --bin sluicegate-floor -- \
//!     --grpc 127.0.0.1:18081
//! ```

use clap::Parser;
use sluicegate_server::engine::{Engine, OnBackendError};
use sluicegate_server::grpc::Rls;
use sluicegate_server::limits::Backing;
use sluicegate_server::proto::rate_limit_response::{Code, DescriptorStatus, RateLimit};
use sluicegate_server::proto::rate_limit_service_server::{
    RateLimitService, RateLimitServiceServer,
};
use sluicegate_server::proto::{RateLimitRequest, RateLimitResponse, RateLimitUnit};
use sluicegate_server::reload;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The most descriptors a request may carry for a precomputed answer; longer requests
/// get one built on the spot.
const PRECOMPUTED: usize = 8;

/// A constant-answer RLS v3 server (the benchmark floor).
#[derive(Debug, Parser)]
#[command(name = "sluicegate-floor", version, about, long_about = None)]
struct Args {
    /// Where to listen (h2c).
    #[arg(long, default_value = "127.0.0.1:18081")]
    grpc: SocketAddr,
    /// Serve the server's gRPC service on this config (in process) instead of the constant.
    #[arg(long)]
    config: Option<PathBuf>,
}

#[derive(Debug)]
struct Floor {
    /// The answer for a request of `i` descriptors, at index `i`.
    answers: Vec<RateLimitResponse>,
}

fn answer(descriptors: usize) -> RateLimitResponse {
    let status = DescriptorStatus {
        code: Code::Ok as i32,
        current_limit: Some(RateLimit {
            name: String::new(),
            requests_per_unit: 1000,
            unit: RateLimitUnit::Second as i32,
        }),
        limit_remaining: 999,
        duration_until_reset: Some(prost_types::Duration {
            seconds: 0,
            nanos: 500_000_000,
        }),
    };
    RateLimitResponse {
        overall_code: Code::Ok as i32,
        statuses: vec![status; descriptors],
        ..RateLimitResponse::default()
    }
}

#[tonic::async_trait]
impl RateLimitService for Floor {
    async fn should_rate_limit(
        &self,
        request: Request<RateLimitRequest>,
    ) -> Result<Response<RateLimitResponse>, Status> {
        let n = request.get_ref().descriptors.len();
        let response = match self.answers.get(n) {
            Some(found) => found.clone(),
            None => answer(n),
        };
        Ok(Response::new(response))
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sluicegate-floor: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.grpc)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.grpc))?;
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let mut builder = tonic::transport::Server::builder();
        let router = match &args.config {
            None => {
                let floor = Floor {
                    answers: (0..=PRECOMPUTED).map(answer).collect(),
                };
                builder.add_service(RateLimitServiceServer::new(floor))
            }
            Some(path) => {
                let backing = Backing::InProcess {
                    max_keys: 1_000_000,
                };
                let snapshot = reload::snapshot(path, &backing, None).await?;
                let engine = Engine::new(snapshot, backing, OnBackendError::Error);
                builder.add_service(Rls::server(Arc::new(engine), false))
            }
        };
        router
            .serve_with_incoming_shutdown(incoming, stop())
            .await
            .map_err(|e| format!("the gRPC server failed: {e}"))
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("sluicegate-floor: {why}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on the first `SIGTERM` or `SIGINT`.
async fn stop() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut interrupt)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = interrupt.recv() => {}
                }
            }
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
