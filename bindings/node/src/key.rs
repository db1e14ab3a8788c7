//! Reading a JavaScript string key without allocating: into a stack buffer, or onto the heap
//! only when it is longer than [`INLINE`] bytes.

use napi::{sys, Env, Error, JsString, JsValue, Status};

/// Keys up to this many UTF-8 bytes are read without allocating.
pub(crate) const INLINE: usize = 256;

/// Runs `f` on `key` as a `&str`.
#[inline(always)]
pub(crate) fn with_key<R>(
    env: &Env,
    key: JsString<'_>,
    f: impl FnOnce(&str) -> R,
) -> napi::Result<R> {
    let mut buf = [0u8; INLINE + 1];
    let mut written = 0usize;
    // SAFETY: `buf` has `INLINE + 1` bytes; napi writes at most that many, NUL included.
    let status = unsafe {
        sys::napi_get_value_string_utf8(
            env.raw(),
            key.raw(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut written,
        )
    };
    check(status)?;
    if written < INLINE - 3 {
        // Node writes whole characters only, so fewer bytes than a character short of the
        // buffer's end means the whole string fit; it writes valid UTF-8.
        let text = std::str::from_utf8(&buf[..written])
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        return Ok(f(text));
    }
    long_key(env, key).map(|text| f(&text))
}

/// A key too long for the stack buffer, read onto the heap.
#[cold]
fn long_key(env: &Env, key: JsString<'_>) -> napi::Result<String> {
    let mut len = 0usize;
    // SAFETY: a null buffer asks for the length in bytes.
    check(unsafe {
        sys::napi_get_value_string_utf8(env.raw(), key.raw(), std::ptr::null_mut(), 0, &mut len)
    })?;
    let mut bytes = vec![0u8; len + 1];
    let mut written = 0usize;
    // SAFETY: `bytes` has `len + 1` bytes, room for the string and its NUL.
    check(unsafe {
        sys::napi_get_value_string_utf8(
            env.raw(),
            key.raw(),
            bytes.as_mut_ptr().cast(),
            bytes.len(),
            &mut written,
        )
    })?;
    bytes.truncate(written);
    String::from_utf8(bytes).map_err(|e| Error::new(Status::InvalidArg, e.to_string()))
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::StringExpected, "a key must be a string"))
    }
}
