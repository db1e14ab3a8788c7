//! A hello-world HTTP server behind sluicegate's rate-limit layer: the command line of
//! DESIGN.md §2, which black-box tests start and talk to over HTTP.
//!
//! ```sh
//! cargo run --release --all-features --example http_server -- \
//!     --listen 127.0.0.1:8080 \
//!     --limit "name=ip; key=peer-ip; quota=5/second; algorithm=gcra" \
//!     --limit "name=token; key=header:x-api-key; quota=100/minute burst 20; algorithm=sliding-window"
//! ```
//!
//! `GET /` answers `200 ok` when every limit allows and `429` otherwise; every response
//! carries `RateLimit-Policy` and `RateLimit`. `--help` lists every flag.

#[path = "http_server/cli.rs"]
mod cli;
#[path = "http_server/redis.rs"]
mod redis;

use axum::extract::ConnectInfo;
use axum::routing::get;
use axum::Router;
use sluicegate::http::{ClientIp, PlainText, ProblemJson, RateLimitLayer, RequestLimit};
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let options = match cli::parse(std::env::args().skip(1)) {
        Ok(cli::Command::Serve(options)) => options,
        Ok(cli::Command::Help) => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    match serve(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(options: cli::Options) -> Result<(), String> {
    let app = Router::new().route("/", get(|| async { "ok\n" }));
    let app = match layer(&options).await? {
        Some(layer) => app.layer(layer),
        None => app,
    };
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.listen))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on http://{address}");
    let _ = std::io::stdout().flush();
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown())
    .await
    .map_err(|e| format!("server failed: {e}"))
}

/// The layer the `--limit`s describe, or none without any.
async fn layer(options: &cli::Options) -> Result<Option<RateLimitLayer>, String> {
    if options.limits.is_empty() {
        return Ok(None);
    }
    let client_ip = ClientIp::new()
        .peer_from(|info: &ConnectInfo<SocketAddr>| info.0)
        .trust(options.trusted.clone())
        .forwarded_headers(options.forwarded_headers)
        .ipv6_prefix(options.ipv6_prefix)
        .map_err(|e| format!("--ipv6-prefix: {e}"))?;
    let mut builder = RateLimitLayer::builder()
        .on_backend_error(options.on_backend_error)
        .legacy_headers(options.legacy_headers);
    builder = if options.problem_json {
        builder.responder(ProblemJson)
    } else {
        builder.responder(PlainText)
    };
    for policy in &options.limits {
        let limit = match &options.redis {
            None => RequestLimit::from_policy(policy, &client_ip).map_err(|e| e.to_string())?,
            Some(url) => redis::limit(url, policy, &client_ip).await?,
        };
        builder = builder.limit(limit);
    }
    builder.build().map(Some).map_err(|e| e.to_string())
}

/// Resolves on Ctrl-C or SIGTERM, letting requests in flight finish.
async fn shutdown() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
