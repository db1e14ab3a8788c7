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
use sluicegate::redis::AnyRedisLimiter;
use std::sync::{Arc, OnceLock};
pub(crate) use verdict::HttpVerdict;

/// Decides HTTP requests against named limits: what `sluicegate.asgi.RateLimitMiddleware`
/// and `sluicegate.wsgi.RateLimitMiddleware` call, once per request.
///
/// In-process limits decide at once. Limits on Redis are built at the first request in each
/// process (so a server that forks workers after importing the app, such as
/// `gunicorn --preload`, works), connected when Redis answers; then `decide_wsgi` and
/// `decide_asgi` block with the GIL released, and `adecide_asgi` is awaited.
#[pyclass(frozen, module = "sluicegate", name = "HttpLimiter")]
pub(crate) struct HttpLimiter {
    limits: Arc<Limits>,
    key_functions: Vec<KeyFunction>,
    /// The limits' names, in order, for the verdicts' reports.
    names: Arc<[String]>,
}

/// The options and, once built, the limiter they describe.
struct Limits {
    options: Options,
    limiter: OnceLock<RequestLimiter>,
    /// The limiters on Redis, once built: their counters say how Redis fares.
    remotes: OnceLock<Vec<AnyRedisLimiter>>,
    /// Held while the limits on Redis are built, so that they are built once.
    building: tokio::sync::Mutex<()>,
}

#[pymethods]
impl HttpLimiter {
    #[new]
    #[pyo3(
        signature = (
            limits, *, trusted_proxies = None, ipv6_prefix = 64,
            forwarded_headers = "x-forwarded-for", redis = None, redis_cluster = false,
            on_backend_error = "allow", headers = None, body = "text"
        ),
        text_signature = "(limits, *, trusted_proxies=None, ipv6_prefix=64, \
                          forwarded_headers='x-forwarded-for', redis=None, redis_cluster=False, \
                          on_backend_error='allow', headers='standard', body='text')"
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
        headers: Option<&Bound<'_, PyAny>>,
        body: &str,
    ) -> PyResult<Self> {
        let standard = pyo3::types::PyString::new(limits.py(), "standard");
        let (options, key_functions) = Options::read(
            limits,
            trusted_proxies,
            ipv6_prefix,
            forwarded_headers,
            redis,
            redis_cluster,
            on_backend_error,
            headers.unwrap_or(standard.as_any()),
            body,
        )?;
        let names = options.names().into();
        let limiter = OnceLock::new();
        if !options.on_redis() {
            let _ = limiter.set(options.in_process().map_err(crate::errors::value)?);
        }
        Ok(HttpLimiter {
            limits: Arc::new(Limits {
                options,
                limiter,
                remotes: OnceLock::new(),
                building: tokio::sync::Mutex::new(()),
            }),
            key_functions,
            names,
        })
    }

    /// Decides the request of an ASGI `http` scope; with limits on Redis, blocks with the
    /// GIL released (an ASGI app awaits `adecide_asgi` instead).
    ///
    /// `request`, when given, is what the key functions get instead of the scope (the route
    /// helpers give the framework's request).
    #[pyo3(signature = (scope, request = None))]
    fn decide_asgi(
        &self,
        py: Python<'_>,
        scope: &Bound<'_, PyAny>,
        request: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<HttpVerdict> {
        let parts = self.with_keys(request::asgi(scope)?, request.unwrap_or(scope))?;
        self.blocking(py, parts)
    }

    /// `decide_asgi` as an awaitable (asyncio), for limits on Redis: it never blocks the
    /// event loop, not even while the limits are built at the first request.
    #[pyo3(signature = (scope, request = None))]
    fn adecide_asgi<'py>(
        &self,
        py: Python<'py>,
        scope: &Bound<'py, PyAny>,
        request: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let parts = self.with_keys(request::asgi(scope)?, request.unwrap_or(scope))?;
        let limits = Arc::clone(&self.limits);
        let names = Arc::clone(&self.names);
        runtime::get()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let limiter = limits.limiter().await?;
            Ok(HttpVerdict::new(
                limiter.decide(&parts).verdict().await,
                &names,
            ))
        })
    }

    /// Decides the request of a WSGI environ; with limits on Redis, blocks with the GIL
    /// released.
    #[pyo3(signature = (environ, request = None))]
    fn decide_wsgi(
        &self,
        py: Python<'_>,
        environ: &Bound<'_, PyAny>,
        request: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<HttpVerdict> {
        let parts = self.with_keys(request::wsgi(environ)?, request.unwrap_or(environ))?;
        self.blocking(py, parts)
    }

    /// True when the limits live on Redis (decisions then wait on it).
    #[getter]
    fn remote(&self) -> bool {
        self.limits.options.on_redis()
    }

    /// The limits' names, in the order they are decided.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.to_vec()
    }

    /// Requests Redis could not decide since the limits were built (0 in process): the
    /// library's count, summed over the limits.
    #[getter]
    fn backend_errors(&self) -> u64 {
        self.remotes().iter().map(|r| r.stats().errors).sum()
    }

    /// Requests decided in this process because Redis could not (`on_backend_error="local"`).
    #[getter]
    fn backend_fallbacks(&self) -> u64 {
        self.remotes().iter().map(|r| r.stats().fallbacks).sum()
    }

    /// False while Redis is known to be unreachable (always True in process).
    #[getter]
    fn backend_available(&self) -> bool {
        self.remotes().iter().all(AnyRedisLimiter::is_available)
    }
}

impl HttpLimiter {
    /// `parts` with the keys the user's functions compute from `request` (the scope or the
    /// environ).
    fn with_keys(
        &self,
        mut parts: http::request::Parts,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<http::request::Parts> {
        if !self.key_functions.is_empty() {
            let options = &self.limits.options;
            let keys = request::given_keys(&self.key_functions, request, || {
                options.client_address(&parts)
            })?;
            parts.extensions.insert(keys);
        }
        Ok(parts)
    }

    /// The limiters on Redis, once built.
    fn remotes(&self) -> &[AnyRedisLimiter] {
        self.limits.remotes.get().map_or(&[], Vec::as_slice)
    }

    /// The verdict on `parts`: at once in process; on Redis, waiting on the module's runtime
    /// with the GIL released.
    fn blocking(&self, py: Python<'_>, parts: http::request::Parts) -> PyResult<HttpVerdict> {
        let deciding = match self.limits.limiter.get() {
            Some(limiter) => limiter.decide(&parts),
            None => {
                let runtime = runtime::get()?;
                py.detach(|| runtime.block_on(self.limits.limiter()))?
                    .decide(&parts)
            }
        };
        match deciding {
            Deciding::Now(verdict) => Ok(HttpVerdict::new(verdict, &self.names)),
            Deciding::Later(pending) => {
                let runtime = runtime::get()?;
                let verdict = py.detach(|| runtime.block_on(pending));
                Ok(HttpVerdict::new(verdict, &self.names))
            }
        }
    }
}

impl Limits {
    /// The limiter; limits on Redis are built on first use in this process.
    async fn limiter(&self) -> PyResult<&RequestLimiter> {
        if let Some(limiter) = self.limiter.get() {
            return Ok(limiter);
        }
        let _building = self.building.lock().await;
        if self.limiter.get().is_none() {
            let (built, remotes) = self.options.limiter().await.map_err(|e| {
                PyRuntimeError::new_err(format!("cannot build the limits on Redis: {e}"))
            })?;
            let _ = self.remotes.set(remotes);
            let _ = self.limiter.set(built);
        }
        Ok(self.limiter.get().expect("built above"))
    }
}

impl Drop for Limits {
    fn drop(&mut self) {
        // Limits on Redis drop their connections inside the runtime they were built on.
        if let (Some(limiter), Some(runtime)) = (self.limiter.take(), runtime::started()) {
            let _entered = runtime.enter();
            drop(limiter);
            drop(self.remotes.take());
        }
    }
}
