//! CPython's `PyUnicode_AsUTF8AndSize`, which lends a `str`'s UTF-8 without copying it.
//!
//! CPython exports it in every version 3.x, but the limited API lists it only from 3.10, so
//! PyO3 built for abi3-py39 reads a `str` by encoding it into a new `bytes` object and copying
//! that into a `String`: two allocations on every check. A key is read on every check, so it
//! is read here directly (for an ASCII `str`, CPython hands back the `str`'s own bytes).
//!
//! On Linux and macOS the interpreter that loads the module provides the symbol. On Windows
//! an abi3 module links against `python3.dll`, which exports it only from 3.10 (the link fails
//! for 3.9), so there it is looked up once in the interpreter's own DLL (`sys.dllhandle`,
//! `python3X.dll`, which exports it in every version).

use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::c_char;

/// The UTF-8 of the `str` at `unicode` and its length in `size`, or NULL with an exception set.
///
/// # Safety
/// `unicode` is a live `str`; the UTF-8 lives, unchanged, as long as it does.
#[cfg(not(windows))]
#[inline(always)]
pub(crate) unsafe fn as_utf8_and_size(
    _py: Python<'_>,
    unicode: *mut ffi::PyObject,
    size: *mut ffi::Py_ssize_t,
) -> PyResult<*const c_char> {
    extern "C" {
        fn PyUnicode_AsUTF8AndSize(
            unicode: *mut ffi::PyObject,
            size: *mut ffi::Py_ssize_t,
        ) -> *const c_char;
    }
    // SAFETY: the caller's contract is CPython's.
    Ok(unsafe { PyUnicode_AsUTF8AndSize(unicode, size) })
}

/// The UTF-8 of the `str` at `unicode` and its length in `size`, or NULL with an exception set.
///
/// # Safety
/// `unicode` is a live `str`; the UTF-8 lives, unchanged, as long as it does.
#[cfg(windows)]
#[inline(always)]
pub(crate) unsafe fn as_utf8_and_size(
    py: Python<'_>,
    unicode: *mut ffi::PyObject,
    size: *mut ffi::Py_ssize_t,
) -> PyResult<*const c_char> {
    let function = windows::as_utf8_and_size(py)?;
    // SAFETY: the caller's contract is CPython's; `function` is CPython's own.
    Ok(unsafe { function(unicode, size) })
}

#[cfg(windows)]
mod windows {
    use pyo3::exceptions::PyRuntimeError;
    use pyo3::ffi;
    use pyo3::prelude::*;
    use std::os::raw::{c_char, c_void};
    use std::sync::OnceLock;

    type AsUtf8AndSize =
        unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::Py_ssize_t) -> *const c_char;

    #[link(name = "kernel32")]
    extern "system" {
        fn GetProcAddress(module: *mut c_void, name: *const c_char) -> *const c_void;
    }

    static FUNCTION: OnceLock<AsUtf8AndSize> = OnceLock::new();

    /// `PyUnicode_AsUTF8AndSize` of the interpreter this module is loaded into.
    #[inline(always)]
    pub(super) fn as_utf8_and_size(py: Python<'_>) -> PyResult<AsUtf8AndSize> {
        match FUNCTION.get() {
            Some(function) => Ok(*function),
            None => find(py).map(|function| *FUNCTION.get_or_init(|| function)),
        }
    }

    #[cold]
    fn find(py: Python<'_>) -> PyResult<AsUtf8AndSize> {
        let dll: usize = py.import("sys")?.getattr("dllhandle")?.extract()?;
        // SAFETY: `dll` is the handle of the loaded interpreter DLL; the name is a C string.
        let address =
            unsafe { GetProcAddress(dll as *mut c_void, c"PyUnicode_AsUTF8AndSize".as_ptr()) };
        if address.is_null() {
            return Err(PyRuntimeError::new_err(
                "sluicegate: this Python's DLL does not export PyUnicode_AsUTF8AndSize",
            ));
        }
        // SAFETY: CPython's function of that name has this signature in every version 3.x.
        Ok(unsafe { std::mem::transmute::<*const c_void, AsUtf8AndSize>(address) })
    }
}
