//! The one tokio runtime the module owns, for Redis: blocking calls wait on it with the GIL
//! released, and asyncio awaitables (pyo3-async-runtimes) run on it.
//!
//! It starts with the first `RedisLimiter`, never at import, so a server that forks its
//! workers after importing sluicegate (gunicorn, uvicorn --workers) forks no threads. A
//! process forked after it started has a runtime whose threads did not survive the fork:
//! there, every Redis call refuses with a `RuntimeError` that says so, rather than hang.

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyResult;
use std::sync::OnceLock;
use tokio::runtime::Runtime;

/// The runtime, and the process that started it.
static RUNTIME: OnceLock<(Runtime, u32)> = OnceLock::new();

/// The runtime, started on first use and handed to pyo3-async-runtimes for the awaitables;
/// an error in a process forked after it started.
pub(crate) fn get() -> PyResult<&'static Runtime> {
    let (runtime, pid) = RUNTIME.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("sluicegate-redis")
            .enable_all()
            .build()
            .expect("sluicegate: cannot start the tokio runtime for Redis");
        (runtime, std::process::id())
    });
    if *pid != std::process::id() {
        return Err(PyRuntimeError::new_err(
            "sluicegate: this process was forked after a RedisLimiter was created in its \
             parent; a RedisLimiter's connection and threads do not survive a fork: create \
             RedisLimiter objects in each worker, after it forks (e.g. not with gunicorn \
             --preload at import time)",
        ));
    }
    // Only the first call sets it; the awaitables then run here too.
    let _ = pyo3_async_runtimes::tokio::init_with_runtime(runtime);
    Ok(runtime)
}

/// The runtime if it was started (for dropping what lives on it), in any process.
pub(crate) fn started() -> Option<&'static Runtime> {
    RUNTIME.get().map(|(runtime, _)| runtime)
}
