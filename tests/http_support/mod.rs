//! Shared by the `http_*` integration tests.

#![allow(dead_code)]

pub mod net;
pub mod sf;

use sluicegate::clock::Clock;
use std::time::Duration;

/// A clock reading tokio's time, so that a paused tokio runtime drives a limiter and the
/// time `until_ready` sleeps can be measured exactly.
#[derive(Debug, Clone)]
pub struct TokioClock {
    start: tokio::time::Instant,
}

impl TokioClock {
    /// Starts at zero now. Call inside a runtime.
    pub fn new() -> Self {
        TokioClock {
            start: tokio::time::Instant::now(),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn unix_offset(&self) -> u64 {
        0
    }
}
