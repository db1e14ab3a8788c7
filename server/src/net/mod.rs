//! What keeps a client from holding the listeners: a cap on open connections per listener
//! (`admission.rs`) that fits the open-file limit (`open_files.rs`), a gRPC connection that
//! sends nothing for too long closed (`idle.rs`), and the HTTP listener served with header,
//! body and keep-alive timeouts (`http1.rs`). The gRPC listener's own settings (streams per
//! connection, keep-alive pings, request timeout) are tonic's, set in `server.rs`.

mod admission;
mod http1;
mod idle;
mod open_files;

pub use admission::{Admission, Slot};
pub use http1::{serve as serve_http1, Http1Settings};
pub use idle::Idle;
pub use open_files::{connection_cap, raise_open_files};

use std::time::Duration;

/// After a failed `accept` (out of file descriptors, most often), how long to wait before
/// the next: retrying at once would spin on the same error.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Logs a failed accept at most once a second, and backs off.
pub(crate) async fn accept_failed(listener: &'static str, error: std::io::Error) {
    use sluicegate::telemetry::Throttle;
    use std::sync::LazyLock;
    static THROTTLES: LazyLock<[Throttle; 2]> =
        LazyLock::new(|| [Throttle::new(), Throttle::new()]);
    let throttle = &THROTTLES[usize::from(listener == "http")];
    if let Some(suppressed) = crate::telemetry::admit(throttle) {
        tracing::warn!(listener, suppressed, "cannot accept a connection: {error}");
    }
    tokio::time::sleep(ACCEPT_BACKOFF).await;
}
