//! [`PublishThread`]: one background thread publishing every interval.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// The thread [`Publisher::spawn`](super::Publisher::spawn) started. Dropping it (or calling [`stop`](Self::stop))
/// wakes the thread at once and waits for it to end.
#[derive(Debug)]
pub struct PublishThread {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl PublishThread {
    /// Calls `publish` every `interval` on a thread of its own.
    pub(super) fn start(
        mut publish: impl FnMut() + Send + 'static,
        interval: Duration,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sluicegate-metrics".into())
            .spawn(move || {
                // Wakes every interval to publish, and at once when the sender is dropped.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    publish();
                }
            })?;
        Ok(PublishThread {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops the thread and waits for it to end.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // A panic in a recorder ended the thread already; nothing is left to stop.
            let _ = thread.join();
        }
    }
}

impl Drop for PublishThread {
    fn drop(&mut self) {
        self.shut_down();
    }
}
