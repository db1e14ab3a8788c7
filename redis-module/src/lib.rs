//! sluicegate's Redis module: `SLUICEGATE.DECIDE key [key ...] calls`, the decision call of
//! the Redis limiter (entry.lua) as a native command, for the algorithms whose state is one
//! string (fixed, anchored and sliding windows, GCRA, leaky and token buckets). It reads and writes
//! exactly what the scripts do, so the two can decide the same keys side by side, and it
//! spends none of the Lua interpreter's time a decision (BENCHMARKS.md, "Issue 33").
//!
//! Load it with `redis-server --loadmodule /path/to/libsluicegate_redis.so` (or
//! `MODULE LOAD`), and build the limiter with `RedisBuilder::module(true)`; calls of the
//! sliding log (a sorted set), and calls to a node without the module, still go to the
//! scripts.
//!
//! The reply is `entry.lua`'s, packed in one string when no group failed (`reply.rs`).
//!
//! A call's writes reach replicas and the AOF as one `EVAL` that replays them (`REPLAY`),
//! so replicas need no module.

mod api;
pub mod entry;
pub mod reply;
pub mod rules;

use api::{Api, Ctx, Key, RString};
use entry::{Element, Value};
use std::ffi::{c_char, c_int, CString};
use std::time::{SystemTime, UNIX_EPOCH};

/// Called by Redis when it loads the module.
///
/// # Safety
/// Called by Redis only, with its load context.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut Ctx,
    _argv: *mut *mut RString,
    _argc: c_int,
) -> c_int {
    const ERR: c_int = 1;
    let Some(api) = api::load(ctx) else {
        return ERR;
    };
    (api.set_module_attribs)(ctx, c"sluicegate".as_ptr(), 1, api::APIVER_1);
    // Keys from the first argument to the one before last, as Redis Cluster must know.
    (api.create_command)(
        ctx,
        c"sluicegate.decide".as_ptr(),
        decide_command,
        c"write deny-oom".as_ptr(),
        1,
        -2,
        1,
    )
}

/// `SLUICEGATE.DECIDE key [key ...] calls`.
unsafe extern "C" fn decide_command(ctx: *mut Ctx, argv: *mut *mut RString, argc: c_int) -> c_int {
    let Some(api) = api::api() else {
        return 1;
    };
    let Ok(argc) = usize::try_from(argc) else {
        return (api.wrong_arity)(ctx);
    };
    if argc < 3 || argv.is_null() {
        return (api.wrong_arity)(ctx);
    }
    let argv = std::slice::from_raw_parts(argv, argc);
    let keys = &argv[1..argc - 1];
    let blob = bytes(api, argv[argc - 1]);
    // Two handles on one key could outlive each other's writes: the client sends each key
    // once, and a call that does not is refused.
    if has_duplicates(api, keys) {
        return error(api, ctx, entry::MALFORMED);
    }
    // Each key opened once, for reading and then writing.
    let handles: Vec<*mut Key> = keys
        .iter()
        .map(|&name| (api.open_key)(ctx, name, api::READ | api::WRITE))
        .collect();
    let values = handles.iter().map(|&key| read(api, key)).collect();
    // A panic must not cross into Redis (it would abort the server): it fails the call.
    let outcome = std::panic::catch_unwind(|| entry::run(blob, values, now_us));
    let outcome = match outcome {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(message)) => Err(message),
        Err(_) => Err("ERR sluicegate: the module failed deciding this call"),
    };
    if let Ok(outcome) = &outcome {
        let mut names = Vec::with_capacity(outcome.writes.len());
        let mut effects = Vec::with_capacity(outcome.writes.len() * 34);
        for write in &outcome.writes {
            if !handles[write.key].is_null() {
                apply(api, handles[write.key], write, &mut effects);
                notify(api, ctx, keys[write.key], write);
                names.push(keys[write.key]);
            }
        }
        replicate(api, ctx, &names, &effects);
    }
    for key in handles.into_iter().filter(|key| !key.is_null()) {
        (api.close_key)(key);
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(message) => return error(api, ctx, message),
    };
    if let Some(packed) = reply::pack(&outcome.elements) {
        buffer(api, ctx, &packed);
        return api::OK;
    }
    (api.reply_with_array)(ctx, outcome.elements.len() as _);
    for element in &outcome.elements {
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
    api::OK
}

/// Redis's clock (the one `TIME` reads), in whole us.
fn now_us() -> f64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (since.as_secs() * 1_000_000 + u64::from(since.subsec_micros())) as f64
}

unsafe fn bytes<'a>(api: &Api, s: *mut RString) -> &'a [u8] {
    let mut len = 0;
    let ptr = (api.string_ptr_len)(s, &mut len);
    if ptr.is_null() {
        return &[];
    }
    std::slice::from_raw_parts(ptr.cast(), len)
}

/// Whether a key name comes twice.
unsafe fn has_duplicates(api: &Api, keys: &[*mut RString]) -> bool {
    let mut names: Vec<&[u8]> = keys.iter().map(|&key| bytes(api, key)).collect();
    names.sort_unstable();
    names.windows(2).any(|pair| pair[0] == pair[1])
}

/// A key's value as `MGET` would see it, its type told apart.
unsafe fn read(api: &Api, key: *mut Key) -> Value {
    if key.is_null() {
        return Value::Missing;
    }
    match (api.key_type)(key) {
        api::KEYTYPE_EMPTY => Value::Missing,
        api::KEYTYPE_STRING => {
            let mut len = 0;
            let ptr = (api.string_dma)(key, &mut len, api::READ);
            if ptr.is_null() {
                Value::Str(Vec::new())
            } else {
                Value::Str(std::slice::from_raw_parts(ptr.cast::<u8>(), len).to_vec())
            }
        }
        _ => Value::Wrong,
    }
}

/// Writes one key (open for writing) in place, its TTL kept unless the write sets one, and
/// adds what replicas replay to `effects`.
unsafe fn apply(api: &Api, key: *mut Key, write: &entry::Write, effects: &mut Vec<u8>) {
    let value = &write.value;
    let mut len = 0;
    let mut ptr = std::ptr::null_mut::<c_char>();
    if (api.key_type)(key) == api::KEYTYPE_STRING {
        ptr = (api.string_dma)(key, &mut len, api::WRITE);
    }
    if ptr.is_null() || len != value.len() {
        // A new key (or, never from these rules, a string of another length): truncating
        // creates or resizes it in place, keeping any TTL.
        (api.string_truncate)(key, value.len());
        ptr = (api.string_dma)(key, &mut len, api::WRITE);
    }
    if !ptr.is_null() && len == value.len() {
        std::ptr::copy_nonoverlapping(value.as_ptr(), ptr.cast::<u8>(), len);
    }
    // What the replicas replay: the state's length and bytes, and the expiry (ms since the
    // epoch) or -1.
    effects.push(value.len() as u8);
    effects.extend_from_slice(value);
    let at = match write.ttl_ms {
        Some(ms) => {
            (api.set_expire)(key, ms);
            (api.get_abs_expire)(key) as f64
        }
        None => -1.0,
    };
    effects.extend_from_slice(&at.to_be_bytes());
}

/// The keyspace events the script's write would fire: `SET ... PX` fires `set` and
/// `expire`, `SET ... KEEPTTL` fires `set`.
unsafe fn notify(api: &Api, ctx: *mut Ctx, name: *mut RString, write: &entry::Write) {
    (api.notify_keyspace_event)(ctx, api::NOTIFY_STRING, c"set".as_ptr(), name);
    if write.ttl_ms.is_some() {
        (api.notify_keyspace_event)(ctx, api::NOTIFY_GENERIC, c"expire".as_ptr(), name);
    }
}

/// Replays a call's writes on replicas and in the AOF, which need no module: one `EVAL` of
/// `REPLAY` over the keys written, their states and expiries packed in one argument (a
/// `SET` per key cost Redis more than deciding it).
unsafe fn replicate(api: &Api, ctx: *mut Ctx, names: &[*mut RString], effects: &[u8]) {
    if names.is_empty() {
        return;
    }
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

/// The writes of a call, replayed: each key's state (its length in a byte, then its bytes)
/// and expiry (ms since the epoch, or -1 to keep the key's TTL).
const REPLAY: &std::ffi::CStr = c"local blob, pos = ARGV[1], 1
for i = 1, #KEYS do
  local len = string.byte(blob, pos)
  local v = string.sub(blob, pos + 1, pos + len)
  local at
  at, pos = struct.unpack('>d', blob, pos + 1 + len)
  if at < 0 then
    redis.call('SET', KEYS[i], v, 'KEEPTTL')
  else
    redis.call('SET', KEYS[i], v, 'PXAT', string.format('%d', at))
  end
end";

unsafe fn buffer(api: &Api, ctx: *mut Ctx, data: &[u8]) {
    (api.reply_with_string_buffer)(ctx, data.as_ptr().cast(), data.len());
}

unsafe fn error(api: &Api, ctx: *mut Ctx, message: &str) -> c_int {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    (api.reply_with_error)(ctx, message.as_ptr());
    api::OK
}
