//! Serving the gRPC listener, on the caller's runtime or on threads of its own.
//!
//! With several threads, each runs a single-threaded runtime and serves whole connections,
//! handed to it in turn by one accepting task: a request is read, decided and answered on
//! the thread that owns its connection, with no work stealing and no wake-up across threads
//! (an in-process decision never leaves it). On a multi-threaded runtime the same load cost
//! 1.5-1.7x the CPU per request (BENCHMARKS.md, "Issue 33"). One HTTP/2 connection is
//! then served by one thread, as by Limitador's server and Envoy's own workers; a proxy
//! opens one per worker thread, so its load spreads.

use super::Rls;
use crate::engine::Engine;
use crate::net::{self, Admission, Idle, Slot};
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_stream::{Stream, StreamExt};

/// The gRPC listener's settings (the flags of the same names).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Each call's deadline.
    pub request_timeout: Duration,
    /// Concurrent streams per connection.
    pub max_streams: u32,
    /// How often to ping a connection.
    pub keepalive_interval: Duration,
    /// How long a ping's answer may take.
    pub keepalive_timeout: Duration,
    /// The largest header list.
    pub max_header_bytes: u32,
    /// The largest message.
    pub max_message_bytes: usize,
    /// Whether answers carry the rate-limit headers.
    pub response_headers: bool,
    /// A connection that sends nothing this long is closed.
    pub idle_timeout: Duration,
}

/// Serves `listener` until `stopped` turns true and the calls in flight are answered: on the
/// calling task when `threads` is 0 or 1, else on `threads` threads of its own.
pub async fn serve(
    listener: tokio::net::TcpListener,
    admission: Admission,
    settings: Settings,
    engine: Arc<Engine>,
    stopped: watch::Receiver<bool>,
    threads: usize,
) -> Result<(), String> {
    if threads <= 1 {
        let incoming = accept_here(listener, admission, settings.idle_timeout);
        return serve_connections(&settings, engine, incoming, stopped).await;
    }
    let mut handoffs = Vec::with_capacity(threads);
    let (done, mut finished) = mpsc::unbounded_channel();
    for index in 0..threads {
        let (handoff, connections) = mpsc::channel::<(std::net::TcpStream, Slot)>(16);
        let (settings, engine, stopped, done) = (
            settings.clone(),
            engine.clone(),
            stopped.clone(),
            done.clone(),
        );
        std::thread::Builder::new()
            .name(format!("grpc-{index}"))
            .spawn(move || {
                let served = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    serve_thread(settings, engine, connections, stopped)
                }));
                let _ = done.send(served.unwrap_or_else(|_| Err(format!("grpc-{index} panicked"))));
            })
            .map_err(|e| format!("cannot start a gRPC thread: {e}"))?;
        handoffs.push(handoff);
    }
    tokio::spawn(hand_out(listener, admission, handoffs, stopped));
    // Each thread ends at shutdown; one that ends with an error ends the server (rather
    // than serving on with a thread short).
    for _ in 0..threads {
        if let Some(Err(why)) = finished.recv().await {
            return Err(why);
        }
    }
    Ok(())
}

/// One serving thread: its own single-threaded runtime, serving the connections it is handed
/// until they stop coming (shutdown) and the last one is done.
fn serve_thread(
    settings: Settings,
    engine: Arc<Engine>,
    connections: mpsc::Receiver<(std::net::TcpStream, Slot)>,
    stopped: watch::Receiver<bool>,
) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a gRPC thread's runtime: {e}"))?;
    let idle = settings.idle_timeout;
    // Registered with this thread's runtime as tonic takes them (polled on this thread); a
    // connection that cannot be is closed (an error here would end tonic's server).
    let incoming = tokio_stream::wrappers::ReceiverStream::new(connections).filter_map(
        move |(stream, slot)| match tokio::net::TcpStream::from_std(stream) {
            Ok(io) => Some(Ok(Idle::new(io, idle, slot))),
            Err(e) => {
                tracing::warn!("cannot serve a gRPC connection: {e}");
                None
            }
        },
    );
    runtime.block_on(serve_connections(&settings, engine, incoming, stopped))
}

/// Accepts on `listener` and hands each admitted connection to the next thread in turn,
/// until shutdown (which closes the listener) or until every thread is gone.
async fn hand_out(
    listener: tokio::net::TcpListener,
    admission: Admission,
    handoffs: Vec<mpsc::Sender<(std::net::TcpStream, Slot)>>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut next = 0;
    loop {
        let (stream, slot) = tokio::select! {
            _ = stopped.wait_for(|stop| *stop) => return,
            admitted = next_admitted(&listener, &admission) => admitted,
        };
        // Non-blocking still, as the thread's runtime takes it.
        let Ok(stream) = stream.into_std() else {
            continue;
        };
        let handoff = &handoffs[next % handoffs.len()];
        next = next.wrapping_add(1);
        if handoff.send((stream, slot)).await.is_err() {
            return;
        }
    }
}

/// The listener's connections, as tonic takes them on the calling runtime, each closed after
/// `idle` without a byte from the peer. The accepting task ends when tonic drops the stream
/// (at shutdown), closing the listener.
fn accept_here(
    listener: tokio::net::TcpListener,
    admission: Admission,
    idle: Duration,
) -> tokio_stream::wrappers::ReceiverStream<io::Result<Idle>> {
    let (send, receive) = mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let (stream, slot) = tokio::select! {
                () = send.closed() => return,
                admitted = next_admitted(&listener, &admission) => admitted,
            };
            if send.send(Ok(Idle::new(stream, idle, slot))).await.is_err() {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(receive)
}

/// The next connection `admission` lets in (one over the cap is closed at once), with
/// `TCP_NODELAY`. Cancel-safe: nothing accepted is lost when a `select!` drops it.
async fn next_admitted(
    listener: &tokio::net::TcpListener,
    admission: &Admission,
) -> (tokio::net::TcpStream, Slot) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                if let Some(slot) = admission.admit() {
                    let _ = stream.set_nodelay(true);
                    return (stream, slot);
                }
            }
            Err(e) => net::accept_failed("grpc", e).await,
        }
    }
}

/// tonic, with the listener's settings, over `incoming`, until `stopped` turns true.
async fn serve_connections(
    settings: &Settings,
    engine: Arc<Engine>,
    incoming: impl Stream<Item = io::Result<Idle>>,
    mut stopped: watch::Receiver<bool>,
) -> Result<(), String> {
    tonic::transport::Server::builder()
        .timeout(settings.request_timeout)
        .max_concurrent_streams(Some(settings.max_streams))
        .http2_keepalive_interval(Some(settings.keepalive_interval))
        .http2_keepalive_timeout(Some(settings.keepalive_timeout))
        .http2_max_header_list_size(Some(settings.max_header_bytes))
        .layer(super::oversize_layer())
        .add_service(Rls::server_with_limit(
            engine,
            settings.response_headers,
            settings.max_message_bytes,
        ))
        .serve_with_incoming_shutdown(incoming, async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        })
        .await
        .map_err(|e| format!("the gRPC server failed: {e}"))
}
