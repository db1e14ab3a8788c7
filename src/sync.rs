//! The one door to atomics, locks, cells and thread-locals on concurrent paths.
//!
//! Code that loom model-checks reaches them only through this module: std's types in a normal
//! build, loom's under `RUSTFLAGS="--cfg loom"`, so the exact code that ships is the code the
//! models explore (the crossbeam-utils `primitive` pattern). Time itself is an input to the
//! models, not part of the interleavings they explore; only `CoarseClock`'s published reading,
//! an atomic threads share, comes through here.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;
#[cfg(not(loom))]
pub(crate) use std::thread_local;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(loom)]
pub(crate) use loom::thread_local;

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

/// An `UnsafeCell` with loom's closure-based API in both builds, so that under loom every
/// access to the data is checked for races.
#[derive(Debug)]
pub(crate) struct UnsafeCell<T> {
    #[cfg(not(loom))]
    inner: std::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        UnsafeCell {
            #[cfg(not(loom))]
            inner: std::cell::UnsafeCell::new(value),
            #[cfg(loom)]
            inner: loom::cell::UnsafeCell::new(value),
        }
    }

    /// Runs `f` with a shared pointer to the data.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with(f);
    }

    /// Runs `f` with an exclusive pointer to the data.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with_mut(f);
    }
}

/// Locks a mutex, ignoring poisoning: every critical section in this crate leaves its data
/// consistent before any point that could panic.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> impl std::ops::DerefMut<Target = T> + '_ {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
