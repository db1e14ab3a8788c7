//! A small dense index for each live thread, reused after the thread exits.
//!
//! Reclamation domains keep one record per thread in arrays indexed by it, so a thread finds
//! its record with a thread-local read and an array index, and no two live threads ever share
//! a record (which is what lets the hot path use plain stores instead of atomic RMWs).

use crate::sync::thread_local;
use std::sync::atomic::{AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::Mutex;

/// Indices released by exited threads, handed out again before new ones.
#[cfg(not(loom))]
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
#[cfg(not(loom))]
static NEXT: AtomicUsize = AtomicUsize::new(0);

// Under loom, indices must not depend on anything outside the execution being explored (the
// order in which an earlier execution's threads exited, or another model running beside it),
// or replaying a schedule would touch other records and loom would find the model
// nondeterministic. So each execution numbers its threads afresh, in the order they first
// pin, and never reuses an index (an execution has only a handful of threads).
#[cfg(loom)]
loom::lazy_static! {
    static ref NEXT: AtomicUsize = AtomicUsize::new(0);
}

/// Owns one index for the lifetime of its thread.
struct Index(usize);

impl Index {
    #[cfg(not(loom))]
    fn acquire() -> Index {
        let reused = FREE.lock().unwrap_or_else(|p| p.into_inner()).pop();
        Index(reused.unwrap_or_else(|| NEXT.fetch_add(1, Ordering::Relaxed)))
    }

    #[cfg(loom)]
    fn acquire() -> Index {
        Index(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

#[cfg(not(loom))]
impl Drop for Index {
    fn drop(&mut self) {
        FREE.lock().unwrap_or_else(|p| p.into_inner()).push(self.0);
    }
}

thread_local! {
    static INDEX: Index = Index::acquire();
}

/// This thread's index, or `None` while the thread is being torn down.
#[inline]
pub(crate) fn current() -> Option<usize> {
    INDEX.try_with(|index| index.0).ok()
}
