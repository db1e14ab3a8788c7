//! Reading a JavaScript string key without allocating: into a stack buffer, or onto the heap
//! only when it is longer than [`INLINE`] bytes.

use napi::sys;

/// Keys up to this many UTF-8 bytes are read without allocating.
pub(crate) const INLINE: usize = 256;

/// Runs `f` on `key` as a `&str`; `None` when `key` is not a string.
#[inline(always)]
pub(crate) unsafe fn with_key<R>(
    env: sys::napi_env,
    key: sys::napi_value,
    f: impl FnOnce(&str) -> R,
) -> Option<R> {
    // Not zeroed: Node writes the bytes that are then read.
    let mut buf = std::mem::MaybeUninit::<[u8; INLINE + 1]>::uninit();
    let mut written = 0usize;
    // `buf` has `INLINE + 1` bytes; Node writes at most that many, NUL included.
    let status = sys::napi_get_value_string_utf8(
        env,
        key,
        buf.as_mut_ptr().cast(),
        INLINE + 1,
        &mut written,
    );
    if status != sys::Status::napi_ok {
        return None;
    }
    if written < INLINE - 3 {
        // Node writes whole characters only, so ending more than a character short of the
        // buffer's end means the whole string fit; what it writes is valid UTF-8 (lone
        // surrogates become U+FFFD), so the check below never fails.
        let bytes = std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), written);
        return std::str::from_utf8(bytes).ok().map(f);
    }
    long_key(env, key).map(|text| f(&text))
}

/// A key too long for the stack buffer, read onto the heap.
#[cold]
unsafe fn long_key(env: sys::napi_env, key: sys::napi_value) -> Option<String> {
    let mut len = 0usize;
    // A null buffer asks for the length in bytes.
    if sys::napi_get_value_string_utf8(env, key, std::ptr::null_mut(), 0, &mut len)
        != sys::Status::napi_ok
    {
        return None;
    }
    let mut bytes = vec![0u8; len + 1];
    let mut written = 0usize;
    sys::napi_get_value_string_utf8(
        env,
        key,
        bytes.as_mut_ptr().cast(),
        bytes.len(),
        &mut written,
    );
    bytes.truncate(written);
    String::from_utf8(bytes).ok()
}
