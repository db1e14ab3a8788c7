//! `RedisLimiter`: one limit shared by every process on a Redis (or a Redis Cluster), the
//! engine's `AnyRedisLimiter`: blocking methods that release the GIL while they wait, and
//! asyncio ones (`acheck`, `apeek`, `ahit`) that run on the module's tokio runtime.

use crate::args::{self, Cost};
use crate::decision::Decision;
use crate::errors;
use crate::redis_target::{credential, pem, Access};
use crate::runtime;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use sluicegate::backend::Op;
use sluicegate::redis::{AnyRedisLimiter, AnyTime, RedisError};
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

/// The engine's Redis limiter on the time it decides by: Redis's own clock, or a
/// `ManualClock`'s readings sent with each call (tests). Cloning shares one connection.
#[derive(Clone)]
struct Inner(AnyRedisLimiter<AnyTime>);

impl Inner {
    /// One decision: one round trip (or the deny cache), bounded by the limiter's timeout.
    async fn decide(self, key: String, cost: u32, op: Op) -> Result<Decision, RedisError> {
        self.0.decide_op(&key, cost, op).await.map(Decision::from)
    }

    /// Forgets `key` (one `DEL`, bounded by the limiter's timeout).
    async fn reset(self, key: String) -> Result<bool, RedisError> {
        self.0.reset(&key).await
    }
}

/// One limit for every process on a Redis: `RedisLimiter("100/minute", url=...)`.
///
/// `check`, `peek` and `hit` block (the GIL released while they wait); `acheck`, `apeek` and
/// `ahit` are their asyncio forms. Each call is one atomic script on Redis, bounded by
/// `timeout` seconds; when Redis cannot answer it raises `sluicegate.RedisError`.
#[pyclass(frozen, subclass, module = "sluicegate", name = "RedisLimiter")]
pub(crate) struct RedisLimiter {
    /// `None` once closed.
    inner: Mutex<Option<Inner>>,
    algorithm: &'static str,
    quota: String,
    prefix: String,
    max_cost: u32,
}

#[pymethods]
impl RedisLimiter {
    #[new]
    #[pyo3(
        signature = (
            quota, url = "redis://127.0.0.1:6379/".to_owned(), algorithm = None,
            prefix = "sluicegate:".to_owned(), cluster = false, timeout = 0.1, clock = None,
            lazy = false, *, ca_cert = None, client_cert = None, client_key = None,
            sentinel_username = None, sentinel_password = None
        ),
        text_signature = "(quota, url='redis://127.0.0.1:6379/', algorithm='gcra', \
                          prefix='sluicegate:', cluster=False, timeout=0.1, clock=None, \
                          lazy=False, *, ca_cert=None, client_cert=None, client_key=None, \
                          sentinel_username=None, sentinel_password=None)"
    )]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of DESIGN.md §2
    fn new(
        py: Python<'_>,
        quota: &Bound<'_, PyAny>,
        url: String,
        algorithm: Option<&Bound<'_, PyAny>>,
        prefix: String,
        cluster: bool,
        timeout: f64,
        clock: Option<&Bound<'_, PyAny>>,
        lazy: bool,
        ca_cert: Option<&Bound<'_, PyAny>>,
        client_cert: Option<&Bound<'_, PyAny>>,
        client_key: Option<&Bound<'_, PyAny>>,
        sentinel_username: Option<&Bound<'_, PyAny>>,
        sentinel_password: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let quota = args::quota(quota)?;
        let spec = Access {
            ca_cert: pem(ca_cert, "ca_cert")?,
            client_cert: pem(client_cert, "client_cert")?,
            client_key: pem(client_key, "client_key")?,
            sentinel_username: credential(sentinel_username, "sentinel_username")?,
            sentinel_password: credential(sentinel_password, "sentinel_password")?,
        }
        .spec(url, cluster)?;
        let algorithm = algorithm.map_or(Ok(Default::default()), args::algorithm)?;
        let timeout = args::seconds(timeout, "RedisLimiter timeout")?;
        if timeout == Duration::ZERO {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "RedisLimiter timeout must be longer than zero seconds",
            ));
        }
        let clock = args::clock(clock)?;
        let runtime = runtime::get()?;
        let builder = AnyRedisLimiter::builder(quota, algorithm, spec.url.trim())
            .prefix(prefix)
            .cluster(cluster)
            .timeout(timeout)
            .lazy(lazy);
        let builder = spec
            .configure(builder.clock(AnyTime::from(clock)))
            .map_err(errors::redis)?;
        let limiter = py.detach(|| runtime.block_on(builder.connect()));
        let limiter = limiter.map_err(errors::redis)?;
        Ok(RedisLimiter {
            algorithm: limiter.algorithm().name(),
            quota: limiter.quota().to_string(),
            prefix: limiter.prefix().to_owned(),
            max_cost: limiter.max_cost(),
            inner: Mutex::new(Some(Inner(limiter))),
        })
    }

    /// Decides one request of `cost` for `key` on Redis, consuming it when allowed; blocks,
    /// with the GIL released.
    #[pyo3(signature = (key, cost = Cost(1)), text_signature = "($self, key, cost=1)")]
    fn check(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Decision> {
        self.blocking(py, key, cost, Op::Check)
    }

    /// The decision `check(key, cost)` would return now, consuming nothing; blocks.
    #[pyo3(signature = (key, cost = Cost(1)), text_signature = "($self, key, cost=1)")]
    fn peek(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Decision> {
        self.blocking(py, key, cost, Op::Peek)
    }

    /// Records `n` for `key` whatever the answer; blocks.
    #[pyo3(signature = (key, n = Cost(1)), text_signature = "($self, key, n=1)")]
    fn hit(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: Cost) -> PyResult<Decision> {
        self.blocking(py, key, n, Op::Hit)
    }

    /// `check` as an awaitable (asyncio).
    #[pyo3(signature = (key, cost = Cost(1)), text_signature = "($self, key, cost=1)")]
    fn acheck<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'_, PyAny>,
        cost: Cost,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.awaitable(py, key, cost, Op::Check)
    }

    /// `peek` as an awaitable (asyncio).
    #[pyo3(signature = (key, cost = Cost(1)), text_signature = "($self, key, cost=1)")]
    fn apeek<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'_, PyAny>,
        cost: Cost,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.awaitable(py, key, cost, Op::Peek)
    }

    /// `hit` as an awaitable (asyncio).
    #[pyo3(signature = (key, n = Cost(1)), text_signature = "($self, key, n=1)")]
    fn ahit<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'_, PyAny>,
        n: Cost,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.awaitable(py, key, n, Op::Hit)
    }

    /// Forgets `key` for every process sharing this limit (its next request is decided as a
    /// new key's), and this process's deny cache and local fallback forget it too; blocks,
    /// with the GIL released. Returns whether Redis held a state for it. Raises
    /// `sluicegate.RedisError` when Redis cannot answer.
    #[pyo3(text_signature = "($self, key)")]
    fn reset(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = args::key(key)?.to_owned();
        let inner = self.open()?;
        let runtime = runtime::get()?;
        let reset = py.detach(|| runtime.block_on(inner.reset(key)));
        reset.map_err(errors::redis)
    }

    /// `reset` as an awaitable (asyncio).
    #[pyo3(text_signature = "($self, key)")]
    fn areset<'py>(&self, py: Python<'py>, key: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let key = args::key(key)?.to_owned();
        let inner = self.open()?;
        runtime::get()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            inner.reset(key).await.map_err(errors::redis)
        })
    }

    /// Drops the connection; later calls raise `RuntimeError`. Calls in flight finish.
    fn close(&self) {
        let inner = self.lock().take();
        drop_on_runtime(inner);
    }

    /// True until `close()`.
    #[getter]
    fn closed(&self) -> bool {
        self.lock().is_none()
    }

    /// False while Redis is known to be unreachable (calls then fail at once).
    #[getter]
    fn available(&self) -> bool {
        self.lock()
            .as_ref()
            .is_some_and(|inner| inner.0.is_available())
    }

    /// The algorithm's name, e.g. `"gcra"`.
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.algorithm
    }

    /// The quota, written as a quota string.
    #[getter]
    fn quota(&self) -> &str {
        &self.quota
    }

    /// The prefix of every Redis key of this limiter.
    #[getter]
    fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The largest cost one check can ever be allowed.
    #[getter]
    fn max_cost(&self) -> u32 {
        self.max_cost
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exception))]
    fn __exit__(&self, _exception: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __aenter__<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        runtime::get()?;
        let this: Py<Self> = slf.unbind();
        pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(this) })
    }

    #[pyo3(signature = (*_exception))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exception: &Bound<'_, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.close();
        runtime::get()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async { Ok(false) })
    }

    fn __repr__(&self) -> String {
        format!(
            "RedisLimiter('{}', algorithm='{}', prefix='{}'{})",
            self.quota,
            self.algorithm,
            self.prefix,
            if self.closed() { ", closed" } else { "" }
        )
    }
}

impl RedisLimiter {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Inner>> {
        // A panic cannot leave the Option half-written: recover the guard.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The limiter for one call (a clone sharing the connection), or why there is none.
    fn open(&self) -> PyResult<Inner> {
        self.lock()
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("this RedisLimiter is closed"))
    }

    /// A call that waits for Redis on the module's runtime, the GIL released meanwhile.
    fn blocking(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        cost: Cost,
        op: Op,
    ) -> PyResult<Decision> {
        let key = args::key(key)?.to_owned();
        let inner = self.open()?;
        let runtime = runtime::get()?;
        let decision = py.detach(|| runtime.block_on(inner.decide(key, cost.0, op)));
        decision.map_err(errors::redis)
    }

    /// A call as an asyncio awaitable, run on the module's runtime.
    fn awaitable<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'_, PyAny>,
        cost: Cost,
        op: Op,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = args::key(key)?.to_owned();
        let inner = self.open()?;
        runtime::get()?;
        future_into_py(py, inner.decide(key, cost.0, op))
    }
}

/// `decide` as an asyncio future, its error raised as Python's.
fn future_into_py<'py>(
    py: Python<'py>,
    decide: impl Future<Output = Result<Decision, RedisError>> + Send + 'static,
) -> PyResult<Bound<'py, PyAny>> {
    pyo3_async_runtimes::tokio::future_into_py(
        py,
        async move { decide.await.map_err(errors::redis) },
    )
}

/// Drops a limiter inside the runtime it was built on (its connection's tasks live there).
fn drop_on_runtime(inner: Option<Inner>) {
    if let Some(runtime) = runtime::started() {
        let _entered = runtime.enter();
        drop(inner);
    }
}

impl Drop for RedisLimiter {
    fn drop(&mut self) {
        let inner = self
            .inner
            .get_mut()
            .map_or_else(|poisoned| poisoned.into_inner().take(), Option::take);
        drop_on_runtime(inner);
    }
}
