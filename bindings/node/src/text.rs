//! Reading JavaScript strings into one byte buffer, for the HTTP decision's request: a
//! header's name and value as Latin-1 (Node decodes header bytes one byte to one character,
//! so this gives back the bytes received), the method and URL as UTF-8.

use napi::sys;
use std::ops::Range;

/// How a string becomes bytes.
#[derive(Clone, Copy)]
pub(crate) enum Encoding {
    Latin1,
    Utf8,
}

/// Appends `value`'s bytes to `buf` and returns where they are; `None` when `value` is not a
/// string.
pub(crate) unsafe fn push(
    env: sys::napi_env,
    value: sys::napi_value,
    encoding: Encoding,
    buf: &mut Vec<u8>,
) -> Option<Range<usize>> {
    let start = buf.len();
    if buf.capacity() - start < 64 {
        buf.reserve(256);
    }
    // A first read into the room there is: most strings fit, and then one call is enough.
    let room = buf.capacity() - start;
    let written = read(env, value, encoding, buf.as_mut_ptr().add(start), room)?;
    if written + 1 < room {
        buf.set_len(start + written);
        return Some(start..start + written);
    }
    // It may have been cut short: ask for its length and read it whole.
    let mut len = 0usize;
    let status = match encoding {
        Encoding::Latin1 => {
            sys::napi_get_value_string_latin1(env, value, std::ptr::null_mut(), 0, &mut len)
        }
        Encoding::Utf8 => {
            sys::napi_get_value_string_utf8(env, value, std::ptr::null_mut(), 0, &mut len)
        }
    };
    if status != sys::Status::napi_ok {
        return None;
    }
    buf.reserve(len + 1);
    let written = read(env, value, encoding, buf.as_mut_ptr().add(start), len + 1)?;
    buf.set_len(start + written);
    Some(start..start + written)
}

/// Writes up to `room - 1` bytes and a NUL at `at`; returns the bytes written.
unsafe fn read(
    env: sys::napi_env,
    value: sys::napi_value,
    encoding: Encoding,
    at: *mut u8,
    room: usize,
) -> Option<usize> {
    let mut written = 0usize;
    let status = match encoding {
        Encoding::Latin1 => {
            sys::napi_get_value_string_latin1(env, value, at.cast(), room, &mut written)
        }
        Encoding::Utf8 => {
            sys::napi_get_value_string_utf8(env, value, at.cast(), room, &mut written)
        }
    };
    (status == sys::Status::napi_ok).then_some(written)
}

/// `text` (UTF-8) as a JavaScript string; ASCII, the usual case, is made as Latin-1, which
/// V8 copies without decoding.
pub(crate) unsafe fn string(env: sys::napi_env, text: &[u8]) -> sys::napi_value {
    let mut value = std::ptr::null_mut();
    let (at, len) = (text.as_ptr().cast(), text.len() as isize);
    if text.is_ascii() {
        sys::napi_create_string_latin1(env, at, len, &mut value);
    } else {
        sys::napi_create_string_utf8(env, at, len, &mut value);
    }
    value
}
