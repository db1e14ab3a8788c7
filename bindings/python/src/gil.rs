//! Whether an in-process check lets go of the GIL while the engine decides.
//!
//! A check takes tens of nanoseconds; releasing and retaking the GIL costs a few hundred, and
//! retaking it while other threads want it costs far more. Holding it is the default because
//! `bench/threads.py` measured both (see BENCHMARKS.md); the switch stays so that the
//! benchmark can measure both again on another machine.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

static RELEASE: AtomicBool = AtomicBool::new(false);

/// Runs `decide`, without the GIL when the switch is on.
#[inline(always)]
pub(crate) fn around<T: Send>(py: Python<'_>, decide: impl FnOnce() -> T + Send) -> T {
    if RELEASE.load(Ordering::Relaxed) {
        py.detach(decide)
    } else {
        decide()
    }
}

/// For benchmarks only: `True` makes every in-process check release the GIL while the engine
/// decides; returns the previous setting. Redis calls always release it.
#[pyfunction]
#[pyo3(signature = (release))]
pub(crate) fn _release_gil_during_checks(release: bool) -> bool {
    RELEASE.swap(release, Ordering::Relaxed)
}
