//! A small dense index for each live thread, reused after the thread exits.
//!
//! Reclamation domains keep one record per thread in arrays indexed by it, so a thread finds
//! its record with a thread-local read and an array index, and no two live threads ever share
//! a record (which is what lets the hot path use plain stores instead of atomic RMWs).

use crate::sync::thread_local;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Indices released by exited threads, handed out again before new ones.
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Owns one index for the lifetime of its thread.
struct Index(usize);

impl Index {
    fn acquire() -> Index {
        let reused = FREE.lock().unwrap_or_else(|p| p.into_inner()).pop();
        Index(reused.unwrap_or_else(|| NEXT.fetch_add(1, Ordering::Relaxed)))
    }
}

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
