//! `sluicegate._native`: the Python module over the sluicegate engine (re-exported by the
//! package `sluicegate`, see `python/sluicegate/__init__.py`).
//!
//! A thin skin: every decision is the Rust crate's (`AnyLimiter`, `AnyKeyedLimiter`,
//! `AnyRedisLimiter`, and for the ASGI and WSGI middlewares the one HTTP decision,
//! `sluicegate::http::RequestLimiter`); this crate converts arguments, requests, decisions
//! and errors, and nothing else.

mod args;
mod clock;
mod decision;
mod errors;
mod gil;
mod keyed;
mod limiter;
mod middleware;
mod redis;
mod redis_target;
mod runtime;
mod utf8;

use pyo3::prelude::*;

/// The native module; `sluicegate/__init__.py` re-exports its public names.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<decision::Decision>()?;
    m.add_class::<clock::ManualClock>()?;
    m.add_class::<limiter::Limiter>()?;
    m.add_class::<keyed::KeyedLimiter>()?;
    m.add_class::<redis::RedisLimiter>()?;
    m.add_class::<middleware::HttpLimiter>()?;
    m.add_class::<middleware::HttpVerdict>()?;
    m.add("RedisError", m.py().get_type::<errors::RedisError>())?;
    m.add_function(wrap_pyfunction!(gil::_release_gil_during_checks, m)?)?;
    Ok(())
}
