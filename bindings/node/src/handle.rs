//! Limiters handed to JavaScript as external values: a boxed state that the external's
//! finalizer drops when JavaScript lets go of it. Each state type has a tag checked on every
//! call, so a handle of the wrong kind is a `TypeError`, never a wrong cast.

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env};
use std::ffi::c_void;
use std::ptr;

/// A state type with its own tag.
pub(crate) trait Tagged: Sized + 'static {
    /// Distinct per type.
    const TAG: u64;
}

/// The boxed state, its tag first.
#[repr(C)]
struct Boxed<T> {
    tag: u64,
    state: T,
}

/// `state` as a new external value.
pub(crate) fn create<T: Tagged>(env: &Env, state: T) -> napi::Result<Unknown<'_>> {
    let boxed = Box::into_raw(Box::new(Boxed { tag: T::TAG, state }));
    let mut value = ptr::null_mut();
    // SAFETY: `boxed` is a valid pointer that the finalizer below frees exactly once.
    let status = unsafe {
        sys::napi_create_external(
            env.raw(),
            boxed.cast(),
            Some(finalize::<T>),
            ptr::null_mut(),
            &mut value,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: the external was not created, so nothing else owns `boxed`.
        drop(unsafe { Box::from_raw(boxed) });
        return Err(napi::Error::from_reason("cannot create a limiter handle"));
    }
    // SAFETY: `value` was just created in `env`.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}

unsafe extern "C" fn finalize<T: Tagged>(
    _env: sys::napi_env,
    data: *mut c_void,
    _hint: *mut c_void,
) {
    drop(Box::from_raw(data.cast::<Boxed<T>>()));
}

/// The state behind `value`, if it is a handle of `T`.
#[inline(always)]
pub(crate) unsafe fn get<'a, T: Tagged>(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Option<&'a T> {
    let mut data = ptr::null_mut();
    if sys::napi_get_value_external(env, value, &mut data) != sys::Status::napi_ok || data.is_null()
    {
        return None;
    }
    // Only this module makes externals with these tags; every one starts with its tag (the
    // `Boxed` is `repr(C)`, its tag first). The tag is read on its own, as a `u64`, before
    // any `&Boxed<T>` is made: a handle of another type is then never seen as a `T`.
    if data.cast::<u64>().read() != T::TAG {
        return None;
    }
    Some(&(*data.cast::<Boxed<T>>()).state)
}
