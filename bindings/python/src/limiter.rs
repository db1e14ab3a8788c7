//! `Limiter`: one limit for everything, the engine's `AnyLimiter`.

use crate::args::{self, Cost};
use crate::decision::Decision;
use crate::errors;
use crate::gil;
use pyo3::prelude::*;
use sluicegate::clock::AnyClock;
use sluicegate::dynamic::AnyLimiter;

/// One limit for everything (a global limit): `Limiter("1000/second")`.
#[pyclass(frozen, subclass, module = "sluicegate", name = "Limiter")]
/// The engine's limiter on the clock it reads: the TSC, or a `ManualClock` in tests.
pub(crate) struct Limiter(AnyLimiter<AnyClock>);

#[pymethods]
impl Limiter {
    #[new]
    #[pyo3(
        signature = (quota, algorithm = None, clock = None),
        text_signature = "(quota, algorithm='gcra', clock=None)"
    )]
    fn new(
        quota: &Bound<'_, PyAny>,
        algorithm: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let quota = args::quota(quota)?;
        let algorithm = algorithm.map_or(Ok(Default::default()), args::algorithm)?;
        let clock = AnyClock::from(args::clock(clock)?);
        AnyLimiter::with_clock(quota, algorithm, clock)
            .map(Limiter)
            .map_err(errors::quota)
    }

    /// Decides one request of `cost`, consuming it when allowed.
    #[pyo3(signature = (cost = Cost(1)), text_signature = "($self, cost=1)")]
    fn check(&self, py: Python<'_>, cost: Cost) -> PyResult<Decision> {
        let decision = gil::around(py, || match cost.0 {
            1 => Ok(self.0.check()),
            n => self.0.check_n(n),
        });
        decision.map(Decision::from).map_err(errors::capacity)
    }

    /// The decision `check(cost)` would return now, consuming nothing.
    #[pyo3(signature = (cost = Cost(1)), text_signature = "($self, cost=1)")]
    fn peek(&self, py: Python<'_>, cost: Cost) -> PyResult<Decision> {
        let decision = gil::around(py, || self.0.peek_n(cost.0));
        decision.map(Decision::from).map_err(errors::capacity)
    }

    /// Records `n` units whatever the answer; the decision says whether they were within the
    /// limit.
    #[pyo3(signature = (n = Cost(1)), text_signature = "($self, n=1)")]
    fn hit(&self, py: Python<'_>, n: Cost) -> Decision {
        gil::around(py, || self.0.hit(n.0)).into()
    }

    /// The algorithm's name, e.g. `"gcra"`.
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
            "Limiter('{}', algorithm='{}')",
            self.quota(),
            self.algorithm()
        )
    }
}
