//! The one door to atomics on concurrent paths.
//!
//! Code that loom model-checks reaches `AtomicU64`, orderings and spin-waiting only through this
//! module: std's types in a normal build, loom's under `RUSTFLAGS="--cfg loom"`, so the exact
//! code that ships is the code the models explore (the crossbeam-utils `primitive` pattern).
//! Clocks are deliberately *not* routed through here: time is an input to the models, not part
//! of the interleavings they explore.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};

/// Waits politely for another thread to finish a short critical section.
///
/// Spins with exponential backoff in a normal build; under loom it yields, which tells the model
/// checker that this thread cannot progress until another one runs.
#[derive(Debug, Default)]
pub(crate) struct SpinWait {
    #[cfg(not(loom))]
    backoff: crossbeam_utils::Backoff,
}

impl SpinWait {
    /// Creates a fresh waiter.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Spins (or yields) once, backing off a little more each time.
    pub(crate) fn wait(&self) {
        #[cfg(not(loom))]
        self.backoff.snooze();
        #[cfg(loom)]
        loom::thread::yield_now();
    }
}
