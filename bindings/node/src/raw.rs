//! The hot path's calls as plain Node-API callbacks. napi-rs's class methods track every
//! borrow of `self` in a hash map (a malloc and a free per call) and look `this` up through
//! a private property: about 1 µs a call on this machine, for a check that costs the engine
//! tens of nanoseconds. These callbacks take the limiter as an external handle instead
//! ([`crate::handle`]), read their arguments with single Node-API calls, and return a
//! boolean or a number.

use napi::sys;
use std::ffi::CStr;
use std::ptr;

/// The first `N` arguments of the call (`undefined` for missing ones).
#[inline(always)]
pub(crate) unsafe fn args<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> [sys::napi_value; N] {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    sys::napi_get_cb_info(
        env,
        info,
        &mut argc,
        argv.as_mut_ptr(),
        ptr::null_mut(),
        ptr::null_mut(),
    );
    argv
}

/// `value` as a u32; the JavaScript side has checked it is a whole number in range.
#[inline(always)]
pub(crate) unsafe fn u32_arg(env: sys::napi_env, value: sys::napi_value) -> u32 {
    let mut n = 0u32;
    sys::napi_get_value_uint32(env, value, &mut n);
    n
}

/// `value` as a bool: `false` for anything but `true`.
#[inline(always)]
pub(crate) unsafe fn bool_arg(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut b = false;
    sys::napi_get_value_bool(env, value, &mut b);
    b
}

#[inline(always)]
pub(crate) unsafe fn boolean(env: sys::napi_env, b: bool) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_get_boolean(env, b, &mut value);
    value
}

#[inline(always)]
pub(crate) unsafe fn number(env: sys::napi_env, n: f64) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_create_double(env, n, &mut value);
    value
}

/// Throws a `TypeError` with `message` and returns the value JavaScript never sees.
#[cold]
pub(crate) unsafe fn throw_type_error(env: sys::napi_env, message: &CStr) -> sys::napi_value {
    sys::napi_throw_type_error(env, c"ERR_INVALID_ARG_TYPE".as_ptr(), message.as_ptr());
    ptr::null_mut()
}

/// Throws `error`'s text as a `RangeError` with `code`.
#[cold]
pub(crate) unsafe fn throw_range_error(
    env: sys::napi_env,
    code: &CStr,
    error: &dyn std::fmt::Display,
) -> sys::napi_value {
    let message = std::ffi::CString::new(error.to_string()).unwrap_or_default();
    sys::napi_throw_range_error(env, code.as_ptr(), message.as_ptr());
    ptr::null_mut()
}

/// A callback as Node-API takes it.
pub(crate) type Callback =
    unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Sets `exports[name]` to a function calling `callback`.
pub(crate) unsafe fn export(
    env: sys::napi_env,
    exports: sys::napi_value,
    name: &CStr,
    callback: Callback,
) -> napi::Result<()> {
    let mut function = ptr::null_mut();
    let status = sys::napi_create_function(
        env,
        name.as_ptr(),
        name.to_bytes().len() as isize,
        Some(callback),
        ptr::null_mut(),
        &mut function,
    );
    if status != sys::Status::napi_ok {
        return Err(napi::Error::from_reason(format!("cannot create {name:?}")));
    }
    if sys::napi_set_named_property(env, exports, name.as_ptr(), function) != sys::Status::napi_ok {
        return Err(napi::Error::from_reason(format!("cannot export {name:?}")));
    }
    Ok(())
}
