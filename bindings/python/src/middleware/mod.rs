//! `HttpLimiter`: the native half of the ASGI and WSGI middlewares (`sluicegate.asgi`,
//! `sluicegate.wsgi`). It builds the library's one HTTP decision,
//! `sluicegate::http::RequestLimiter`, from the middleware's options, and decides a request
//! from its ASGI scope or WSGI environ and the keys the user's functions return.
//! Client-IP resolution, header keys, the all-or-nothing protocol, the headers and the
//! refusals' bodies are all the library's; this module carries the request in and the
//! verdict out.

mod options;
mod request;
mod verdict;

use crate::runtime;
use options::{KeyFunction, Options};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use sluicegate::http::{Deciding, RequestLimiter};
use std::sync::{Mutex, OnceLock};
pub(crate) use verdict::HttpVerdict;

/// Decides HTTP requests against named limits: what `sluicegate.asgi.RateLimitMiddleware`
/// and `sluicegate.wsgi.RateLimitMiddleware` call, once per request.
///
/// In-process limits decide at once. Limits on Redis are built at the first request in each
/// process (so a server that forks workers after importing the app, such as
/// `gunicorn --preload`, works) without waiting for Redis; then `decide_wsgi` and
/// `decide_asgi` block with the GIL released, and `adecide_asgi` is awaited.
#[pyclass(frozen, module = "sluicegate", name = "HttpLimiter")]
pub(crate) struct HttpLimiter {
    options: Options,
    key_functions: Vec<KeyFunction>,
    limiter: OnceLock<RequestLimiter>,
    /// Held while the limits on Redis are built, so that they are built once.
    building: Mutex<()>,
}

#[pymethods]
impl HttpLimiter {
    #[new]
    #[pyo3(
        signature = (
            limits, *, trusted_proxies = None, ipv6_prefix = 64,
            forwarded_headers = "x-forwarded-for", redis = None, redis_cluster = false,
            on_backend_error = "allow"
        ),
        text_signature = "(limits, *, trusted_proxies=None, ipv6_prefix=64, \
                          forwarded_headers='x-forwarded-for', redis=None, redis_cluster=False, \
                          on_backend_error='allow')"
    )]
    #[allow(clippy::too_many_arguments)] // the middlewares' keyword arguments
    fn new(
        limits: &Bound<'_, PyAny>,
        trusted_proxies: Option<&Bound<'_, PyAny>>,
        ipv6_prefix: u32,
        forwarded_headers: &str,
        redis: Option<String>,
        redis_cluster: bool,
        on_backend_error: &str,
    ) -> PyResult<Self> {
        let (options, key_functions) = Options::read(
            limits,
            trusted_proxies,
            ipv6_prefix,
            forwarded_headers,
            redis,
            redis_cluster,
            on_backend_error,
        )?;
        let limiter = OnceLock::new();
        if !options.on_redis() {
            let _ = limiter.set(options.in_process().map_err(crate::errors::value)?);
        }
        Ok(HttpLimiter {
            options,
            key_functions,
            limiter,
            building: Mutex::new(()),
        })
    }

    /// Decides the request of an ASGI `http` scope; with limits on Redis, blocks with the
    /// GIL released (an ASGI app awaits `adecide_asgi` instead).
    fn decide_asgi(&self, py: Python<'_>, scope: &Bound<'_, PyAny>) -> PyResult<HttpVerdict> {
        let parts = request::asgi(scope)?;
        self.blocking(py, self.deciding(py, parts, scope)?)
    }

    /// `decide_asgi` as an awaitable (asyncio), for limits on Redis: it never blocks the
    /// event loop.
    fn adecide_asgi<'py>(
        &self,
        py: Python<'py>,
        scope: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let parts = request::asgi(scope)?;
        let deciding = self.deciding(py, parts, scope)?;
        runtime::get()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            Ok(HttpVerdict::from(deciding.verdict().await))
        })
    }

    /// Decides the request of a WSGI environ; with limits on Redis, blocks with the GIL
    /// released.
    fn decide_wsgi(&self, py: Python<'_>, environ: &Bound<'_, PyAny>) -> PyResult<HttpVerdict> {
        let parts = request::wsgi(environ)?;
        self.blocking(py, self.deciding(py, parts, environ)?)
    }

    /// True when the limits live on Redis (decisions then wait on it).
    #[getter]
    fn remote(&self) -> bool {
        self.options.on_redis()
    }
}

impl HttpLimiter {
    /// The library's decision on `parts`, with the keys the user's functions compute from
    /// `request` (the scope or the environ).
    fn deciding(
        &self,
        py: Python<'_>,
        mut parts: http::request::Parts,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<Deciding> {
        if !self.key_functions.is_empty() {
            parts
                .extensions
                .insert(request::given_keys(&self.key_functions, request)?);
        }
        Ok(self.limiter(py)?.decide(&parts))
    }

    /// The verdict, waiting for Redis on the module's runtime with the GIL released.
    fn blocking(&self, py: Python<'_>, deciding: Deciding) -> PyResult<HttpVerdict> {
        match deciding {
            Deciding::Now(verdict) => Ok(verdict.into()),
            Deciding::Later(pending) => {
                let runtime = runtime::get()?;
                Ok(py.detach(|| runtime.block_on(pending)).into())
            }
        }
    }

    /// The limiter; limits on Redis are built on first use in this process.
    fn limiter(&self, py: Python<'_>) -> PyResult<&RequestLimiter> {
        if let Some(limiter) = self.limiter.get() {
            return Ok(limiter);
        }
        let runtime = runtime::get()?;
        // Without the GIL: another thread holding it may be waiting for `building`.
        let built = py.detach(|| {
            let _building = self
                .building
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if self.limiter.get().is_none() {
                let limiter = runtime.block_on(self.options.limiter())?;
                let _ = self.limiter.set(limiter);
            }
            Ok::<(), String>(())
        });
        built.map_err(|e| {
            PyRuntimeError::new_err(format!("cannot build the limits on Redis: {e}"))
        })?;
        Ok(self.limiter.get().expect("built above"))
    }
}

impl Drop for HttpLimiter {
    fn drop(&mut self) {
        // Limits on Redis drop their connections inside the runtime they were built on.
        if let (Some(limiter), Some(runtime)) = (self.limiter.take(), runtime::started()) {
            let _entered = runtime.enter();
            drop(limiter);
        }
    }
}
