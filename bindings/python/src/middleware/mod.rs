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

use crate::{args, errors, runtime};
use options::{Built, KeyFunction, Options, QuotaFunction};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use sluicegate::http::{Deciding, Peer, RequestLimiter};
use sluicegate::redis::AnyRedisLimiter;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};
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
    quota_functions: Vec<QuotaFunction>,
    /// The limits' names, in order, as given.
    names: Vec<String>,
    /// Set once the warning that every request shares one key (a Unix socket) was given.
    warned: AtomicBool,
}

/// The options and, once built, the limiters they describe.
struct Limits {
    options: Options,
    built: OnceLock<Built>,
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
            on_backend_error = "allow", headers = None, body = "text", max_keys = None
        ),
        text_signature = "(limits, *, trusted_proxies=None, ipv6_prefix=64, \
                          forwarded_headers='x-forwarded-for', redis=None, redis_cluster=False, \
                          on_backend_error='allow', headers='standard', body='text', \
                          max_keys=None)"
    )]
    #[allow(clippy::too_many_arguments)] // the middlewares' keyword arguments
    fn new(
        limits: &Bound<'_, PyAny>,
        trusted_proxies: Option<&Bound<'_, PyAny>>,
        ipv6_prefix: u32,
        forwarded_headers: &str,
        redis: Option<&Bound<'_, PyAny>>,
        redis_cluster: bool,
        on_backend_error: &str,
        headers: Option<&Bound<'_, PyAny>>,
        body: &str,
        max_keys: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let standard = pyo3::types::PyString::new(limits.py(), "standard");
        let (options, key_functions, quota_functions) = Options::read(
            limits,
            trusted_proxies,
            ipv6_prefix,
            forwarded_headers,
            redis,
            redis_cluster,
            on_backend_error,
            headers.unwrap_or(standard.as_any()),
            body,
            max_keys,
        )?;
        let names = options.names();
        let built = OnceLock::new();
        if !options.on_redis() {
            let _ = built.set(options.in_process().map_err(errors::value)?);
        }
        Ok(HttpLimiter {
            limits: Arc::new(Limits {
                options,
                built,
                building: tokio::sync::Mutex::new(()),
            }),
            key_functions,
            quota_functions,
            names,
            warned: AtomicBool::new(false),
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
        let (parts, chosen) = self.with_keys(request::asgi(scope)?, request.unwrap_or(scope))?;
        self.blocking(py, parts, chosen)
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
        let (parts, chosen) = self.with_keys(request::asgi(scope)?, request.unwrap_or(scope))?;
        let limits = Arc::clone(&self.limits);
        runtime::get()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let (limiter, names) = &limits.built().await?.limiters[chosen];
            Ok(HttpVerdict::new(
                limiter.decide(&parts).verdict().await,
                names,
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
        let (parts, chosen) =
            self.with_keys(request::wsgi(environ)?, request.unwrap_or(environ))?;
        self.blocking(py, parts, chosen)
    }

    /// Forgets `key` (as the limits' keys are written: a client address as the trusted-proxy
    /// rules resolved and grouped it, a header's value, what a key function returned) in
    /// every limit, every quota and every tier of it: the library's `RequestLimiter::reset`.
    /// Returns whether any limit held a state for it. With limits on Redis, blocks with the
    /// GIL released, and raises `sluicegate.RedisError` when Redis cannot answer.
    #[pyo3(text_signature = "($self, key)")]
    fn reset(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = args::key(key)?.to_owned();
        let mut held_so_far = false;
        if let Some(built) = self.limits.built.get().filter(|_| !self.remote()) {
            // In-process tables answer on the first poll: no runtime needed.
            let mut held = false;
            let mut pending = false;
            for (limiter, _) in &built.limiters {
                let mut call = limiter.reset(&key);
                let mut context = Context::from_waker(Waker::noop());
                match Pin::new(&mut call).poll(&mut context) {
                    Poll::Ready(reset) => held |= reset.map_err(errors::backend)?,
                    Poll::Pending => {
                        pending = true;
                        break;
                    }
                }
            }
            if !pending {
                return Ok(held);
            }
            held_so_far = held;
        }
        let runtime = runtime::get()?;
        let limits = &self.limits;
        // On Redis (or, never seen, a table that did not answer at once: the tables asked
        // already are asked again, and say they hold nothing).
        Ok(py.detach(|| runtime.block_on(limits.reset(key)))? || held_so_far)
    }

    /// `reset` as an awaitable (asyncio): it never blocks the event loop.
    #[pyo3(text_signature = "($self, key)")]
    fn areset<'py>(&self, py: Python<'py>, key: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let key = args::key(key)?.to_owned();
        let limits = Arc::clone(&self.limits);
        runtime::get()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move { limits.reset(key).await })
    }

    /// What requests get while Redis cannot decide: `"allow"`, `"deny"` or `"local"`, as the
    /// library read the option.
    #[getter]
    fn on_backend_error(&self) -> &'static str {
        self.limits.options.on_backend_error()
    }

    /// True when the limits live on Redis (decisions then wait on it).
    #[getter]
    fn remote(&self) -> bool {
        self.limits.options.on_redis()
    }

    /// The limits' names, in the order they are decided (a limit of several quotas is
    /// decided as `NAME-1`, `NAME-2`...).
    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.clone()
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
    /// environ), and the combination of tiers the quota functions choose for it.
    fn with_keys(
        &self,
        mut parts: http::request::Parts,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<(http::request::Parts, usize)> {
        if let Some(peer) = parts.extensions.get::<Peer>() {
            self.warn_once(request.py(), peer)?;
        }
        if !self.key_functions.is_empty() {
            let options = &self.limits.options;
            let keys = request::given_keys(&self.key_functions, request, || {
                options.client_address(&parts)
            })?;
            parts.extensions.insert(keys);
        }
        let mut chosen = 0;
        for quota in &self.quota_functions {
            let answer = quota.function.bind(request.py()).call1((request,))?;
            let tier = args::text(&answer, "what a quota function returns")
                .ok()
                .and_then(|text| quota.quotas.iter().position(|q| q == text));
            let Some(tier) = tier else {
                return Err(PyValueError::new_err(format!(
                    "the quota function of limit {:?} returned {}, which is not one of its \
                     quotas {:?}",
                    quota.name,
                    answer.repr()?,
                    quota.quotas
                )));
            };
            chosen += tier * quota.stride;
        }
        Ok((parts, chosen))
    }

    /// Warns once (a `RuntimeWarning`) when every request from `peer`, a peer without an IP
    /// address, shares one key for the limits keyed by the client's address: the library
    /// says when (a Unix socket nobody trusts) and in what words.
    #[cold]
    fn warn_once(&self, py: Python<'_>, peer: &Peer) -> PyResult<()> {
        if self.warned.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(warning) = self.limits.options.shared_key_warning(peer) else {
            return Ok(());
        };
        if self.warned.swap(true, Ordering::Relaxed) {
            return Ok(());
        }
        let warning =
            std::ffi::CString::new(warning).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        PyErr::warn(py, &category, &warning, 1)
    }

    /// The limiters on Redis, once built.
    fn remotes(&self) -> &[AnyRedisLimiter] {
        self.limits
            .built
            .get()
            .map_or(&[], |b| b.remotes.as_slice())
    }

    /// The verdict on `parts` by the limiter of combination `chosen`: at once in process; on
    /// Redis, waiting on the module's runtime with the GIL released.
    fn blocking(
        &self,
        py: Python<'_>,
        parts: http::request::Parts,
        chosen: usize,
    ) -> PyResult<HttpVerdict> {
        let built = match self.limits.built.get() {
            Some(built) => built,
            None => {
                let runtime = runtime::get()?;
                py.detach(|| runtime.block_on(self.limits.built()))?
            }
        };
        let (limiter, names) = &built.limiters[chosen];
        match limiter.decide(&parts) {
            Deciding::Now(verdict) => Ok(HttpVerdict::new(verdict, names)),
            Deciding::Later(pending) => {
                let runtime = runtime::get()?;
                let verdict = py.detach(|| runtime.block_on(pending));
                Ok(HttpVerdict::new(verdict, names))
            }
        }
    }
}

impl Limits {
    /// The limiters; limits on Redis are built on first use in this process.
    async fn built(&self) -> PyResult<&Built> {
        if let Some(built) = self.built.get() {
            return Ok(built);
        }
        let _building = self.building.lock().await;
        if self.built.get().is_none() {
            let built = self.options.limiter().await.map_err(|e| {
                PyRuntimeError::new_err(format!("cannot build the limits on Redis: {e}"))
            })?;
            let _ = self.built.set(built);
        }
        Ok(self.built.get().expect("built above"))
    }

    /// Forgets `key` in every limiter (each combination of tiers shares its limits' tables
    /// with the others, so every table is reached).
    async fn reset(&self, key: String) -> PyResult<bool> {
        let mut held = false;
        for (limiter, _) in &self.built().await?.limiters {
            held |= RequestLimiter::reset(limiter, &key)
                .await
                .map_err(errors::backend)?;
        }
        Ok(held)
    }
}

impl Drop for Limits {
    fn drop(&mut self) {
        // Limits on Redis drop their connections inside the runtime they were built on.
        if let (Some(built), Some(runtime)) = (self.built.take(), runtime::started()) {
            let _entered = runtime.enter();
            drop(built);
        }
    }
}
