//! `ManualClock`: the engine's manual clock, in seconds.

use crate::args;
use crate::decision::float_repr;
use pyo3::prelude::*;
use std::time::Duration;

/// A clock that moves only when told to, for tests. Starts at 0, which the window algorithms
/// take as the UNIX epoch; every limiter given the same clock reads the same time.
#[pyclass(frozen, module = "sluicegate", name = "ManualClock")]
pub(crate) struct ManualClock(pub(crate) sluicegate::clock::ManualClock);

#[pymethods]
impl ManualClock {
    #[new]
    fn new() -> Self {
        ManualClock(sluicegate::clock::ManualClock::new())
    }

    /// Moves time forward by `seconds` (a float, rounded to the nanosecond).
    fn advance(&self, seconds: f64) -> PyResult<()> {
        self.0
            .advance(args::seconds(seconds, "ManualClock.advance")?);
        Ok(())
    }

    /// Sets the time to `seconds` since 0 (rounded to the nanosecond); may go backwards.
    fn set(&self, seconds: f64) -> PyResult<()> {
        self.0.set(args::seconds(seconds, "ManualClock.set")?);
        Ok(())
    }

    /// The time in seconds since 0.
    #[getter]
    fn now(&self) -> f64 {
        Duration::from_nanos(sluicegate::clock::Clock::now(&self.0)).as_secs_f64()
    }

    fn __repr__(&self) -> String {
        format!("ManualClock(now={})", float_repr(self.now()))
    }
}
