//! Python arguments to engine values, with a `ValueError` or `TypeError` that names what is
//! wrong: quotas, algorithm names, keys, costs, seconds and table sizes.

use crate::errors;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyString};
use sluicegate::policy::AlgorithmKind;
use sluicegate::Quota;
use std::time::Duration;

/// The name of `value`'s type, for messages.
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |name| name.to_string())
}

/// A quota string such as `"100/minute burst 20"`, parsed by the engine.
pub(crate) fn quota(value: &Bound<'_, PyAny>) -> PyResult<Quota> {
    let text = text(value, "quota")?;
    text.parse().map_err(errors::quota)
}

/// One of the six algorithm names, as the engine reads them.
pub(crate) fn algorithm(value: &Bound<'_, PyAny>) -> PyResult<AlgorithmKind> {
    let text = text(value, "algorithm")?;
    text.parse().map_err(errors::value)
}

/// A rate-limit key: a `str`, nothing else (an `int` key is a `TypeError`, never silently
/// turned into a string that could collide with another key).
#[inline(always)]
pub(crate) fn key<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    text(value, "key")
}

/// A `str`'s text, borrowed, or a `TypeError` naming `what` and the type that came instead.
#[inline(always)]
pub(crate) fn text<'a>(value: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a str> {
    let Ok(text) = value.cast::<PyString>() else {
        return Err(not_a_str(value, what));
    };
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a live `str` (held by `value` for 'a); CPython keeps the UTF-8 it
    // returns, valid and unchanged, as long as the string lives. NULL means an exception is set.
    let data = unsafe { crate::utf8::as_utf8_and_size(value.py(), text.as_ptr(), &mut size)? };
    if data.is_null() {
        return Err(PyErr::fetch(value.py()));
    }
    // SAFETY: CPython returns valid UTF-8 of `size` bytes (unpaired surrogates fail above).
    Ok(unsafe {
        std::str::from_utf8_unchecked(std::slice::from_raw_parts(data.cast(), size as usize))
    })
}

#[cold]
fn not_a_str(value: &Bound<'_, PyAny>, what: &str) -> PyErr {
    PyTypeError::new_err(format!("{what} must be a str, got {}", type_name(value)))
}

/// A request's cost: a whole number of requests, 0 to 2^32 - 1.
#[derive(Clone, Copy)]
pub(crate) struct Cost(pub(crate) u32);

impl<'a, 'py> FromPyObject<'a, 'py> for Cost {
    type Error = PyErr;

    #[inline]
    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(cost) = value.extract::<u32>() {
            return Ok(Cost(cost));
        }
        Err(bad_cost(&value))
    }
}

/// Why `value` is not a cost.
#[cold]
fn bad_cost(value: &Bound<'_, PyAny>) -> PyErr {
    if value.is_instance_of::<PyFloat>() {
        return PyValueError::new_err(format!(
            "cost must be a whole number of requests (an int), got {}",
            repr(value)
        ));
    }
    match value.extract::<i128>() {
        Ok(cost) if cost < 0 => {
            PyValueError::new_err(format!("cost must not be negative, got {cost}"))
        }
        Ok(cost) => PyValueError::new_err(format!(
            "cost {cost} is too large: a cost is at most {}",
            u32::MAX
        )),
        // An int beyond even i128.
        Err(_) if value.hasattr("__index__").unwrap_or(false) => {
            PyValueError::new_err(format!("cost {} is out of range", repr(value)))
        }
        Err(_) => PyTypeError::new_err(format!("cost must be an int, got {}", type_name(value))),
    }
}

fn repr(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map_or_else(|_| "?".to_owned(), |text| text.to_string())
}

/// Seconds (an int or a float) as a `Duration` rounded to the nanosecond; `what` names the
/// method in the `ValueError` for a negative, infinite or NaN value.
pub(crate) fn seconds(value: f64, what: &str) -> PyResult<Duration> {
    let nanos = (value * 1e9).round();
    if !(0.0..=u64::MAX as f64).contains(&nanos) {
        return Err(PyValueError::new_err(format!(
            "{what} takes a finite number of seconds, 0 or more, got {value}"
        )));
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// `max_keys`: `None`, or how many keys a keyed table may hold (at least 1).
pub(crate) fn max_keys(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(value) = value.filter(|value| !value.is_none()) else {
        return Ok(None);
    };
    if value.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(
            "max_keys must be an int or None, got float",
        ));
    }
    match value.extract::<i128>() {
        Ok(keys) if keys >= 1 => Ok(Some(usize::try_from(keys).unwrap_or(usize::MAX))),
        Ok(keys) => Err(PyValueError::new_err(format!(
            "max_keys must be at least 1, got {keys}"
        ))),
        Err(_) => Err(PyTypeError::new_err(format!(
            "max_keys must be an int or None, got {}",
            type_name(value)
        ))),
    }
}

/// `clock`: `None` for the real clock, or a `ManualClock` (shared, not copied).
pub(crate) fn clock(
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<sluicegate::clock::ManualClock>> {
    let Some(value) = value.filter(|value| !value.is_none()) else {
        return Ok(None);
    };
    match value.cast::<crate::clock::ManualClock>() {
        Ok(clock) => Ok(Some(clock.get().0.clone())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "clock must be a sluicegate.ManualClock or None, got {}",
            type_name(value)
        ))),
    }
}
