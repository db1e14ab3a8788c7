//! The HTTP listener: hyper's HTTP/1.1 server with its header timeout (from a connection's
//! start, and from the end of each response: so also the keep-alive idle time) and a header
//! size limit, each connection holding a slot of the listener's [`Admission`], and a
//! graceful shutdown that lets in-flight requests finish.

use super::Admission;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// hyper's smallest read buffer: a header limit below it is raised to it.
const MIN_HEADER_BYTES: usize = 8192;

/// How the HTTP listener treats its connections.
#[derive(Debug, Clone, Copy)]
pub struct Http1Settings {
    /// The time a connection has to send a request's headers, from its start or the end of
    /// its previous response.
    pub header_timeout: Duration,
    /// The largest header block (hyper's read buffer; at least 8,192 bytes).
    pub max_header_bytes: usize,
}

/// Serves `router` on `listener` until `stopped` turns true, then waits for the open
/// connections to finish their requests.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    settings: Http1Settings,
    admission: Admission,
    mut stopped: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_timeout)
        .max_buf_size(settings.max_header_bytes.max(MIN_HEADER_BYTES));
    loop {
        let accepted = tokio::select! {
            _ = stopped.wait_for(|stop| *stop) => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                super::accept_failed("http", e).await;
                continue;
            }
        };
        let Some(slot) = admission.admit() else {
            continue; // dropped: closed at once
        };
        let _ = stream.set_nodelay(true);
        let connection = builder.serve_connection(
            TokioIo::new(stream),
            TowerToHyperService::new(router.clone()),
        );
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A connection's end (timed out, reset, closed) is the client's business.
            let _ = connection.await;
            drop(slot);
        });
    }
    // Stop accepting now: new clients are refused rather than left waiting.
    drop(listener);
    graceful.shutdown().await;
}
