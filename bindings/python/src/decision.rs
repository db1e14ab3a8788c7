//! `Decision`: the engine's decision with every number, times in seconds as floats.

use pyo3::prelude::*;
use sluicegate::Numbers;
use std::sync::OnceLock;

/// The answer to "may this request go ahead?", with every number a response needs.
///
/// `bool(decision)` is `decision.allowed`. Times are seconds (floats): `retry_after` is the
/// time until the same request would be allowed (`None` when allowed; 1.0 when a full keyed
/// table denied it, the library's one answer for every binding), `reset_after` until the
/// state is fully replenished, `wait` the leaky bucket's shaping delay for an admitted
/// request (0 otherwise).
///
/// The numbers are derived from the engine's raw decision on first use, as the engine does,
/// so a caller that only asks `allowed` pays for nothing else.
#[pyclass(frozen, module = "sluicegate", name = "Decision")]
pub(crate) struct Decision {
    decision: sluicegate::Decision,
    numbers: OnceLock<Numbers>,
}

impl From<sluicegate::Decision> for Decision {
    #[inline]
    fn from(decision: sluicegate::Decision) -> Self {
        Decision {
            decision,
            numbers: OnceLock::new(),
        }
    }
}

impl Decision {
    fn numbers(&self) -> &Numbers {
        self.numbers.get_or_init(|| self.decision.numbers())
    }
}

#[pymethods]
impl Decision {
    /// True when the request may go ahead (and, for a check, its cost was consumed).
    #[getter]
    fn allowed(&self) -> bool {
        self.decision.is_allowed()
    }

    /// The quota's limit (requests per period).
    #[getter]
    fn limit(&self) -> u32 {
        self.decision.limit()
    }

    /// How many more single requests would be allowed right now.
    #[getter]
    fn remaining(&self) -> u32 {
        self.numbers().remaining
    }

    /// Denied: seconds until the same request would be allowed (a full table's denial: the
    /// library's `TABLE_FULL_RETRY_AFTER`, 1.0); allowed: `None`.
    #[getter]
    fn retry_after(&self) -> Option<f64> {
        self.decision.retry_hint().map(|t| t.as_secs_f64())
    }

    /// Seconds until the state is fully replenished (0 when it already is).
    #[getter]
    fn reset_after(&self) -> f64 {
        self.numbers().reset_after.as_secs_f64()
    }

    /// The leaky bucket's shaping delay in seconds for an admitted request; 0 otherwise.
    #[getter]
    fn wait(&self) -> f64 {
        self.numbers().wait.as_secs_f64()
    }

    /// True when a keyed limiter denied a new key because its table was full (`max_keys`);
    /// such a denial's `retry_after` is 1.0 (the engine cannot know when a key will leave).
    #[getter]
    fn table_full(&self) -> bool {
        self.decision.is_table_full()
    }

    fn __bool__(&self) -> bool {
        self.decision.is_allowed()
    }

    fn __repr__(&self) -> String {
        let retry_after = self
            .retry_after()
            .map_or_else(|| "None".to_owned(), float_repr);
        let table_full = if self.table_full() {
            ", table_full=True"
        } else {
            ""
        };
        format!(
            "Decision(allowed={}, limit={}, remaining={}, retry_after={retry_after}, \
             reset_after={}, wait={}{table_full})",
            if self.allowed() { "True" } else { "False" },
            self.limit(),
            self.remaining(),
            float_repr(self.reset_after()),
            float_repr(self.wait()),
        )
    }
}

/// A float as Python writes it: `1.0`, not Rust's `1`.
pub(crate) fn float_repr(value: f64) -> String {
    let text = value.to_string();
    if text.contains(['.', 'e', 'i', 'N']) {
        text
    } else {
        text + ".0"
    }
}
