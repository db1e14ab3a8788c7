//! `SLUICEGATE.DECIDE key [key ...] calls`: the keys read, the call decided (`entry.rs`), the
//! keys written, the writes replicated, the reply sent.
//!
//! Keys are opened for reading to be read, and only the keys a call writes are opened
//! again for writing: a peek or a denial touches no key, so it aborts no other client's
//! `WATCH` (as the script's `MGET` does not). A string of no state's length is not read.

use crate::api::{self, Api, Ctx, Key, RString};
use crate::entry::{self, Element, Value, Write, STATE_LENGTHS};
use crate::{limits, reply};
use std::ffi::{c_char, c_int, CString};
use std::time::{SystemTime, UNIX_EPOCH};

/// The command, as Redis calls it.
///
/// # Safety
/// Called by Redis only, with a command context and `argc` arguments at `argv`.
pub(crate) unsafe extern "C" fn decide(
    ctx: *mut Ctx,
    argv: *mut *mut RString,
    argc: c_int,
) -> c_int {
    let Some(api) = api::api() else {
        return api::ERR;
    };
    let Ok(argc) = usize::try_from(argc) else {
        // SAFETY: `ctx` is the command's context.
        return unsafe { (api.wrong_arity)(ctx) };
    };
    if argc < 3 || argv.is_null() {
        // SAFETY: as above.
        return unsafe { (api.wrong_arity)(ctx) };
    }
    // SAFETY: Redis passes `argc` valid string pointers at `argv`, alive for the call.
    let argv = unsafe { std::slice::from_raw_parts(argv, argc) };
    let keys = &argv[1..argc - 1];
    // SAFETY: each argument is a live Redis string.
    let blob = unsafe { bytes(api, argv[argc - 1]) };
    if let Err(message) = limits::check(keys.len(), blob) {
        // SAFETY: `ctx` is the command's context.
        return unsafe { error(api, ctx, &message) };
    }
    // Two handles on one key could outlive each other's writes: the client sends each key
    // once, and a call that does not is refused.
    // SAFETY: `keys` are live Redis strings.
    if unsafe { has_duplicates(api, keys) } {
        // SAFETY: as above.
        return unsafe { error(api, ctx, entry::MALFORMED) };
    }
    // SAFETY: `ctx` is the command's context and `keys` its live arguments.
    let values = keys.iter().map(|&name| unsafe { read(api, ctx, name) });
    let values = values.collect();
    // A panic must not cross into Redis (it would abort the server): it fails the call.
    let outcome = match std::panic::catch_unwind(|| entry::run(blob, values, now_us)) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(message)) => {
            // SAFETY: as above.
            return unsafe { error(api, ctx, message) };
        }
        Err(_) => {
            // SAFETY: as above.
            return unsafe { error(api, ctx, "ERR sluicegate: the module failed deciding") };
        }
    };
    let mut names = Vec::with_capacity(outcome.writes.len());
    let mut effects = Vec::with_capacity(outcome.writes.len() * 48);
    for write in &outcome.writes {
        let name = keys[write.key];
        // SAFETY: as above; `name` is one of the call's keys.
        if unsafe { store(api, ctx, name, write, &mut effects) } {
            names.push(name);
        }
    }
    // SAFETY: as above; `names` are live arguments of the call.
    unsafe { replicate(api, ctx, &names, &effects) };
    // SAFETY: as above.
    unsafe { send(api, ctx, &outcome.elements) };
    api::OK
}

/// The reply: packed in one string, or the array of elements when a group failed.
///
/// # Safety
/// `ctx` must be a command's context.
unsafe fn send(api: &Api, ctx: *mut Ctx, elements: &[Element]) {
    if let Some(packed) = reply::pack(elements) {
        // SAFETY: the caller's contract.
        unsafe { buffer(api, ctx, &packed) };
        return;
    }
    // SAFETY: the caller's contract; every element below is one of the array's.
    unsafe {
        (api.reply_with_array)(ctx, elements.len() as _);
        for element in elements {
            match element {
                Element::Numbers(numbers) => buffer(api, ctx, numbers),
                Element::Undo(numbers, before, written) => {
                    (api.reply_with_array)(ctx, 3);
                    buffer(api, ctx, numbers);
                    buffer(api, ctx, before);
                    buffer(api, ctx, written);
                }
                Element::Error(message) => {
                    error(api, ctx, message);
                }
            }
        }
    }
}

/// Redis's clock (the one `TIME` reads), in whole us.
fn now_us() -> f64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (since.as_secs() * 1_000_000 + u64::from(since.subsec_micros())) as f64
}

/// The bytes of a Redis string, borrowed for as long as Redis keeps the argument.
///
/// # Safety
/// `s` must be a live Redis string, unchanged while the slice is used.
unsafe fn bytes<'a>(api: &Api, s: *mut RString) -> &'a [u8] {
    let mut len = 0;
    // SAFETY: `s` is a live Redis string (the caller's contract).
    let ptr = unsafe { (api.string_ptr_len)(s, &mut len) };
    if ptr.is_null() {
        return &[];
    }
    // SAFETY: Redis returns its string's buffer and length; it lives as long as `s`.
    unsafe { std::slice::from_raw_parts(ptr.cast(), len) }
}

/// Whether a key name comes twice.
///
/// # Safety
/// `keys` must be live Redis strings.
unsafe fn has_duplicates(api: &Api, keys: &[*mut RString]) -> bool {
    // SAFETY: the caller's contract.
    let mut names: Vec<&[u8]> = keys.iter().map(|&key| unsafe { bytes(api, key) }).collect();
    names.sort_unstable();
    names.windows(2).any(|pair| pair[0] == pair[1])
}

/// A key's value as `MGET` would see it, its type told apart; a string is read only when
/// it has a state's length. The key is opened for reading only.
///
/// # Safety
/// `ctx` must be a command's context and `name` a live Redis string.
unsafe fn read(api: &Api, ctx: *mut Ctx, name: *mut RString) -> Value {
    // SAFETY: the caller's contract.
    let key = unsafe { (api.open_key)(ctx, name, api::READ) };
    if key.is_null() {
        return Value::Missing;
    }
    // SAFETY: `key` is the open handle, closed below and nowhere else.
    let value = unsafe {
        match (api.key_type)(key) {
            api::KEYTYPE_EMPTY => Value::Missing,
            api::KEYTYPE_STRING => {
                if STATE_LENGTHS.contains(&(api.value_length)(key)) {
                    string(api, key)
                } else {
                    Value::Foreign
                }
            }
            _ => Value::Wrong,
        }
    };
    // SAFETY: opened above, closed once.
    unsafe { (api.close_key)(key) };
    value
}

/// A string key's bytes, copied.
///
/// # Safety
/// `key` must be an open string key.
unsafe fn string(api: &Api, key: *mut Key) -> Value {
    let mut len = 0;
    // SAFETY: `key` is an open string key (the caller's contract).
    let ptr = unsafe { (api.string_dma)(key, &mut len, api::READ) };
    if ptr.is_null() {
        return Value::Foreign;
    }
    // SAFETY: Redis returns the value's buffer and length, valid until the key is closed.
    Value::Str(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }.to_vec())
}

/// Writes one key (opened for writing here) in place, its TTL kept unless the write sets
/// one, fires the script's keyspace events, and adds what replicas replay to `effects`.
/// False when Redis gave no handle (nothing written).
///
/// # Safety
/// `ctx` must be a command's context and `name` a live Redis string.
unsafe fn store(
    api: &Api,
    ctx: *mut Ctx,
    name: *mut RString,
    write: &Write,
    effects: &mut Vec<u8>,
) -> bool {
    // SAFETY: the caller's contract.
    let key = unsafe { (api.open_key)(ctx, name, api::READ | api::WRITE) };
    if key.is_null() {
        return false;
    }
    let value = &write.value;
    // SAFETY: `key` is the open handle, closed at the end; the DMA pointer is used only
    // while it is, for the length Redis reported.
    let at = unsafe {
        let mut len = 0;
        let mut ptr = std::ptr::null_mut::<c_char>();
        if (api.key_type)(key) == api::KEYTYPE_STRING {
            ptr = (api.string_dma)(key, &mut len, api::WRITE);
        }
        if ptr.is_null() || len != value.len() {
            // A new key (or, never from these rules, a string of another length):
            // truncating creates or resizes it in place, keeping any TTL.
            (api.string_truncate)(key, value.len());
            ptr = (api.string_dma)(key, &mut len, api::WRITE);
        }
        if !ptr.is_null() && len == value.len() {
            std::ptr::copy_nonoverlapping(value.as_ptr(), ptr.cast::<u8>(), len);
        }
        match write.ttl_ms {
            Some(ms) => {
                (api.set_expire)(key, ms);
                Some((api.get_abs_expire)(key))
            }
            None => None,
        }
    };
    // SAFETY: `ctx` and `name` as the caller guarantees.
    unsafe { notify(api, ctx, name, write) };
    // SAFETY: opened above, closed once.
    unsafe { (api.close_key)(key) };
    // What the replicas replay: the state's length and bytes, then the expiry (ms since the
    // epoch, in decimal, exactly as the master holds it) after its length, or 0 to keep the
    // key's TTL.
    effects.push(value.len() as u8);
    effects.extend_from_slice(value);
    match at.filter(|&at| at > 0) {
        Some(at) => {
            let digits = at.to_string();
            effects.push(digits.len() as u8);
            effects.extend_from_slice(digits.as_bytes());
        }
        None => effects.push(0),
    }
    true
}

/// The keyspace events the script's write would fire: `SET ... PX` fires `set` and
/// `expire`, `SET ... KEEPTTL` fires `set`.
///
/// # Safety
/// `ctx` must be a command's context and `name` a live Redis string.
unsafe fn notify(api: &Api, ctx: *mut Ctx, name: *mut RString, write: &Write) {
    // SAFETY: the caller's contract; the event names are C string literals.
    unsafe {
        (api.notify_keyspace_event)(ctx, api::NOTIFY_STRING, c"set".as_ptr(), name);
        if write.ttl_ms.is_some() {
            (api.notify_keyspace_event)(ctx, api::NOTIFY_GENERIC, c"expire".as_ptr(), name);
        }
    }
}

/// Replays a call's writes on replicas and in the AOF, which need no module: one `EVAL` of
/// `REPLAY` over the keys written, their states and expiries packed in one argument (a
/// `SET` per key cost Redis more than deciding it).
///
/// # Safety
/// `ctx` must be a command's context and `names` live Redis strings.
unsafe fn replicate(api: &Api, ctx: *mut Ctx, names: &[*mut RString], effects: &[u8]) {
    if names.is_empty() {
        return;
    }
    // SAFETY: the format `clvb` takes a C string, a long long, an array of Redis strings
    // with its length, and a buffer with its length, exactly the arguments given.
    unsafe {
        (api.replicate)(
            ctx,
            c"EVAL".as_ptr(),
            c"clvb".as_ptr(),
            REPLAY.as_ptr(),
            names.len() as std::ffi::c_longlong,
            names.as_ptr(),
            names.len(),
            effects.as_ptr().cast::<c_char>(),
            effects.len(),
        );
    }
}

/// The writes of a call, replayed: each key's state (its length in a byte, then its bytes)
/// and expiry (its length in a byte, then ms since the epoch in decimal digits, which reach
/// `SET ... PXAT` as the same string: no float on the way; length 0 keeps the key's TTL).
const REPLAY: &std::ffi::CStr = c"local blob, pos = ARGV[1], 1
for i = 1, #KEYS do
  local len = string.byte(blob, pos)
  local v = string.sub(blob, pos + 1, pos + len)
  pos = pos + 1 + len
  local digits = string.byte(blob, pos)
  if digits == 0 then
    redis.call('SET', KEYS[i], v, 'KEEPTTL')
  else
    redis.call('SET', KEYS[i], v, 'PXAT', string.sub(blob, pos + 1, pos + digits))
  end
  pos = pos + 1 + digits
end";

/// Replies with `data` as a bulk string.
///
/// # Safety
/// `ctx` must be a command's context.
unsafe fn buffer(api: &Api, ctx: *mut Ctx, data: &[u8]) {
    // SAFETY: the caller's contract; Redis copies the buffer.
    unsafe { (api.reply_with_string_buffer)(ctx, data.as_ptr().cast(), data.len()) };
}

/// Replies with the error `message`.
///
/// # Safety
/// `ctx` must be a command's context.
unsafe fn error(api: &Api, ctx: *mut Ctx, message: &str) -> c_int {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the caller's contract; Redis copies the message.
    unsafe { (api.reply_with_error)(ctx, message.as_ptr()) };
    api::OK
}
