//! `KeyedLimiter`: a limit per `str` key, the engine's `AnyKeyedLimiter<String>`.

use crate::args::{self, Cost};
use crate::decision::Decision;
use crate::errors;
use crate::gil;
use pyo3::prelude::*;
use sluicegate::clock::AnyClock;
use sluicegate::dynamic::AnyKeyedLimiter;

/// A limit per key (user, IP, API token): `KeyedLimiter("100/minute burst 20")`.
///
/// Keys are `str`. Lookups are lock-free; idle keys are dropped by themselves, and
/// `max_keys` bounds the table (a new key beyond it is denied with `table_full`).
#[pyclass(frozen, subclass, module = "sluicegate", name = "KeyedLimiter")]
/// The engine's keyed limiter on the clock it reads: the TSC, or a `ManualClock` in tests.
pub(crate) struct KeyedLimiter(AnyKeyedLimiter<String, AnyClock>);

#[pymethods]
impl KeyedLimiter {
    #[new]
    #[pyo3(
        signature = (quota, algorithm = None, clock = None, max_keys = None),
        text_signature = "(quota, algorithm='gcra', clock=None, max_keys=None)"
    )]
    fn new(
        quota: &Bound<'_, PyAny>,
        algorithm: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        max_keys: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let quota = args::quota(quota)?;
        let algorithm = algorithm.map_or(Ok(Default::default()), args::algorithm)?;
        let max_keys = args::max_keys(max_keys)?;
        let clock = args::clock(clock)?;
        let builder =
            AnyKeyedLimiter::<String>::builder(quota, algorithm).clock(AnyClock::from(clock));
        let builder = match max_keys {
            Some(keys) => builder.max_keys(keys),
            None => builder,
        };
        builder.build().map(KeyedLimiter).map_err(errors::quota)
    }

    /// Decides one request of `cost` for `key`, consuming it when allowed.
    #[pyo3(signature = (key, cost = Cost(1)), text_signature = "($self, key, cost=1)")]
    fn check(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Decision> {
        let key = args::key(key)?;
        let decision = gil::around(py, || match cost.0 {
            1 => Ok(self.0.check(key)),
            n => self.0.check_n(key, n),
        });
        decision.map(Decision::from).map_err(errors::capacity)
    }

    /// The decision `check(key, cost)` would return now, consuming nothing.
    #[pyo3(signature = (key, cost = Cost(1)), text_signature = "($self, key, cost=1)")]
    fn peek(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Decision> {
        let key = args::key(key)?;
        let decision = gil::around(py, || self.0.peek_n(key, cost.0));
        decision.map(Decision::from).map_err(errors::capacity)
    }

    /// Records `n` units for `key` whatever the answer; the decision says whether they were
    /// within the limit.
    #[pyo3(signature = (key, n = Cost(1)), text_signature = "($self, key, n=1)")]
    fn hit(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: Cost) -> PyResult<Decision> {
        let key = args::key(key)?;
        Ok(gil::around(py, || self.0.hit(key, n.0)).into())
    }

    /// Forgets `key`: its next request is decided as a new key's (a sign-in limit reset
    /// after a successful sign-in, a client unblocked by hand). Returns whether it held a
    /// state.
    #[pyo3(text_signature = "($self, key)")]
    fn reset(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = args::key(key)?;
        Ok(self.0.reset(key))
    }

    /// The keys currently held (idle keys are dropped by themselves).
    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// The algorithm's name, e.g. `"sliding-window"`.
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.0.algorithm().name()
    }

    /// The quota, written as a quota string.
    #[getter]
    fn quota(&self) -> String {
        self.0.quota().to_string()
    }

    /// The largest cost one check can ever be allowed.
    #[getter]
    fn max_cost(&self) -> u32 {
        self.0.max_cost()
    }

    fn __repr__(&self) -> String {
        format!(
            "KeyedLimiter('{}', algorithm='{}', keys={})",
            self.quota(),
            self.algorithm(),
            self.__len__()
        )
    }
}
