//! The cap on one listener's open connections: a connection beyond it is closed as soon as
//! it is accepted (counted in `ratelimit_service_connections_refused_total`), so its file
//! descriptor comes back at once and the client learns at once, rather than waiting in the
//! accept queue.

use metrics::{gauge, Gauge};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// One listener's connection slots.
#[derive(Debug, Clone)]
pub struct Admission {
    slots: Arc<Semaphore>,
    max: usize,
    listener: &'static str,
    open: Gauge,
}

/// A held slot: the connection's, given back when it is dropped (when the connection ends).
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
    open: Gauge,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.open.decrement(1.0);
    }
}

impl Admission {
    /// At most `max` connections on `listener` (`grpc` or `http`, its label in metrics).
    pub fn new(listener: &'static str, max: usize) -> Admission {
        Admission {
            slots: Arc::new(Semaphore::new(max)),
            max,
            listener,
            open: gauge!("ratelimit_service_connections_open", "listener" => listener),
        }
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A slot for a new connection, or `None` (counted and logged) when all are taken.
    pub fn admit(&self) -> Option<Slot> {
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => {
                self.open.increment(1.0);
                Some(Slot {
                    _permit: permit,
                    open: self.open.clone(),
                })
            }
            Err(_) => {
                crate::telemetry::connection_refused(self.listener, self.max);
                None
            }
        }
    }
}
