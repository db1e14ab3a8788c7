//! The `rateLimit` middleware's native half: the library's one HTTP decision
//! (`sluicegate::http::RequestLimiter`) built from the middleware's options, deciding a
//! request from what Node knows of it (method, URL, raw headers, the socket's peer address)
//! and the keys the user's functions returned. Client-IP resolution, header keys, the
//! all-or-nothing protocol, the headers and the refusals' bodies are all the library's; this
//! file only carries the request in and the verdict out.
//!
//! A verdict goes back as text, `name:value` lines, then for a refusal an empty line and the
//! body (one string instead of an object built through Node-API, which costs more than the
//! rest of the call), with its numbers (status, wait, what the headers report) written into
//! a `Float64Array`; or, when a limit is on Redis, as a Promise of the same in an object.

use crate::handle;
use crate::http_build::{invalid, HttpState, VERDICT_LEN};
use crate::http_refund;
use crate::out::millis;
use crate::raw;
use crate::redis::RedisAnswer;
use crate::text::{self, Encoding};
use napi::bindgen_prelude::{PromiseRaw, ToNapiValue, Unknown};
use napi::{sys, Env, Error, JsValue, Status};
use napi_derive::napi;
use sluicegate::backend::Op;
use sluicegate::clock::{AnyClock, Clock};
use sluicegate::http::front_end::{request_parts_from, GivenKeys};
use sluicegate::http::{
    Deciding, KeyBuf, KeyExtractor, Peer, Refund, Report, Reserved, Reserving, Verdict,
};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// A verdict decided later (a limit on Redis): what the `Float64Array` and the text carry
/// for one decided at once.
#[napi(object)]
pub struct HttpVerdict {
    /// 0 to pass, else the refusal's status.
    pub status: u32,
    /// Ms to hold a passed request (a leaky bucket's shaping delay).
    pub wait: f64,
    pub text: String,
    /// The index of the limit reported, -1 for none; then its `q`, `r` and `t` (seconds).
    pub limit: f64,
    pub quota: f64,
    pub remaining: f64,
    pub reset: f64,
    /// When the reported limit's `t` ends: ms since the UNIX epoch.
    pub reset_at: f64,
    /// Requests Redis could not decide since the limits were built, all limits together.
    pub backend_errors: f64,
}

/// Slots of the verdict array, in order.
const STATUS: usize = 0;
const WAIT: usize = 1;
const LIMIT: usize = 2;
const QUOTA: usize = 3;
const REMAINING: usize = 4;
const RESET: usize = 5;
/// When the reported limit's `t` ends, in ms since the UNIX epoch (unrounded: the same
/// instant for every request of a fixed window, as express-rate-limit's `resetTime`).
const RESET_AT: usize = 6;
const LEN: usize = VERDICT_LEN;

/// What [`http_peek`] finds of a key on one limit.
#[napi(object)]
pub struct HttpPeek {
    /// The units of the limit's capacity in use: its capacity (`max_cost`: the burst, or the
    /// limit for windows) less the engine's `remaining`; 0 for a limit of 0.
    pub used: f64,
    /// Ms until the key's state is back to full (the engine's `reset_after`).
    pub reset_after: f64,
    /// That instant, in ms since the UNIX epoch, on the limiter's clock.
    pub reset_at: f64,
    /// The backend error's kind and sentence when the peek failed (as `RedisAnswer`'s).
    pub error: Option<String>,
    pub message: Option<String>,
}

/// `httpPeek(handle, index, key)`: limit `index`'s numbers for `key` (as its key extractor
/// writes it), consuming nothing: the engine's peek of a request of cost 0, express-rate-
/// limit's `getKey`. A Promise of an [`HttpPeek`].
#[napi]
pub fn http_peek<'env>(
    env: &'env Env,
    handle: Unknown<'env>,
    index: u32,
    key: String,
) -> napi::Result<PromiseRaw<'env, HttpPeek>> {
    // SAFETY: `handle` and `env` are this call's.
    let Some(state) = (unsafe { handle::get::<HttpState>(env.raw(), handle.raw()) }) else {
        return Err(Error::new(Status::InvalidArg, "not a rateLimit handle"));
    };
    let Some(limit) = state.limiter.limits().get(index as usize) else {
        return Err(invalid(format!("no limit {index}")));
    };
    let backend = Arc::clone(limit.backend());
    let clock = state.clock.clone();
    env.spawn_future(async move {
        let capacity = backend.max_cost();
        let answer = RedisAnswer::from_backend(backend.decide(&key, 0, Op::Peek).await);
        let used = if answer.limit == 0 {
            0
        } else {
            capacity.saturating_sub(answer.remaining)
        };
        let reset_at = instant_ms(&clock, Duration::from_secs_f64(answer.reset_after / 1e3));
        Ok(HttpPeek {
            used: f64::from(used),
            reset_after: answer.reset_after,
            reset_at,
            error: answer.error,
            message: answer.message,
        })
    })
}

/// `httpReset(handle, key)`: forgets `key` (as the limits' key extractors write it: a client
/// address, a header's value, what a key function returned) in every limit of the
/// middleware, express-rate-limit's `resetKey`; a Promise of whether any limit held it.
#[napi]
pub fn http_reset<'env>(
    env: &'env Env,
    handle: Unknown<'env>,
    key: String,
) -> napi::Result<PromiseRaw<'env, bool>> {
    // SAFETY: `handle` and `env` are this call's.
    let Some(state) = (unsafe { handle::get::<HttpState>(env.raw(), handle.raw()) }) else {
        return Err(Error::new(Status::InvalidArg, "not a rateLimit handle"));
    };
    let limiter = state.limiter.clone();
    env.spawn_future(async move {
        limiter
            .reset(&key)
            .await
            .map_err(|e| Error::from_reason(e.to_string()))
    })
}

/// `httpPeerWarning(handle)`: the warning to give once when requests arrive on a Unix
/// socket (no peer address) and every client would share one key: the library's sentence,
/// or null when no limit is keyed by client address or the socket is trusted.
#[napi]
pub fn http_peer_warning(env: &Env, handle: Unknown<'_>) -> napi::Result<Option<String>> {
    // SAFETY: `handle` and `env` are this call's.
    let Some(state) = (unsafe { handle::get::<HttpState>(env.raw(), handle.raw()) }) else {
        return Err(Error::new(Status::InvalidArg, "not a rateLimit handle"));
    };
    if !state.keyed_by_ip {
        return Ok(None);
    }
    Ok(state
        .client_ip
        .shared_key_warning(&Peer::unix(), "trustedProxies"))
}

/// `httpKeyedByIp(handle)`: whether some limit is keyed by the client's address.
#[napi]
pub fn http_keyed_by_ip(env: &Env, handle: Unknown<'_>) -> napi::Result<bool> {
    // SAFETY: `handle` and `env` are this call's.
    let Some(state) = (unsafe { handle::get::<HttpState>(env.raw(), handle.raw()) }) else {
        return Err(Error::new(Status::InvalidArg, "not a rateLimit handle"));
    };
    Ok(state.keyed_by_ip)
}

/// The limits' Redis backends, as [`http_backend`] reports them.
#[napi(object)]
pub struct HttpBackend {
    /// Requests Redis could not decide since the limits were built (all limits together).
    pub errors: f64,
    /// Of those, the ones decided in this process (`onBackendError: 'local'`).
    pub fallbacks: f64,
    /// False while Redis is known to be unreachable (true in process).
    pub available: bool,
}

/// `httpBackend(handle)`: the counters of the limits on Redis (zeros in process).
#[napi]
pub fn http_backend(env: &Env, handle: Unknown<'_>) -> napi::Result<HttpBackend> {
    // SAFETY: `handle` and `env` are this call's.
    let Some(state) = (unsafe { handle::get::<HttpState>(env.raw(), handle.raw()) }) else {
        return Err(Error::new(Status::InvalidArg, "not a rateLimit handle"));
    };
    let (mut errors, mut fallbacks) = (0u64, 0u64);
    for remote in &state.remotes {
        let stats = remote.stats();
        errors += stats.errors;
        fallbacks += stats.fallbacks;
    }
    Ok(HttpBackend {
        errors: errors as f64,
        fallbacks: fallbacks as f64,
        available: state.remotes.iter().all(|r| r.is_available()),
    })
}

/// The instant `after` from now on `clock`, in ms since the UNIX epoch.
fn instant_ms(clock: &AnyClock, after: Duration) -> f64 {
    let after = u64::try_from(after.as_nanos()).unwrap_or(u64::MAX);
    let nanos = clock
        .now()
        .saturating_add(clock.unix_offset())
        .saturating_add(after);
    (nanos / 1_000_000) as f64
}

thread_local! {
    /// The bytes of the request being read: reused, so a decision allocates no buffer.
    static REQUEST: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The text of a verdict decided at once, likewise.
    static TEXT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `httpDecide(handle, method, url, rawHeaders, remoteAddress, remotePort, keys, reserving)`:
/// decides the request. Decided at once, it writes the numbers into the verdict array and
/// returns the text; with a limit on Redis, it returns a Promise of an [`HttpVerdict`].
/// `keys[i]` is limit `i`'s key when a function computes it (a string, or null for none).
/// With `reserving` true, a passed request that consumed keeps its refund (the library's
/// `decide_reserving`): decided at once, the answer is then `[text, refund]`; later, the
/// verdict has a `refund` (a handle for `httpRefund`, in `http_refund.rs`).
pub(crate) unsafe extern "C" fn http_decide(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle, method, url, raw_headers, address, port, keys, reserving] =
        raw::args::<8>(env, info);
    let Some(state) = handle::get::<HttpState>(env, handle) else {
        return raw::throw_type_error(env, c"not an HttpLimiter handle");
    };
    let Some(mut parts) = request(env, method, url, raw_headers, peer(env, address, port)) else {
        return raw::throw_type_error(
            env,
            c"a request needs a method, a URL and its raw headers as strings",
        );
    };
    if !state.given.is_empty() {
        parts.extensions.insert(given_keys(env, state, keys));
    }
    if raw::bool_arg(env, reserving) {
        return match state.limiter.decide_reserving(&parts) {
            Reserving::Now(Reserved { verdict, refund }) => {
                let text = now(env, state, &parts, verdict);
                match refund {
                    Some(refund) => with_refund(env, text, refund),
                    None => text,
                }
            }
            Reserving::Later(pending) => later(env, state, &parts, async move {
                let Reserved { verdict, refund } = pending.await;
                (verdict, refund)
            }),
        };
    }
    match state.limiter.decide(&parts) {
        Deciding::Now(verdict) => now(env, state, &parts, verdict),
        Deciding::Later(pending) => later(env, state, &parts, async move { (pending.await, None) }),
    }
}

/// `httpKey(handle, index, method, url, rawHeaders, remoteAddress, remotePort)`: the key
/// limit `index` would count the request under, found by the library's own extractor (the
/// client address by the trusted-proxy rule, a header's value, '' for `global`), deciding
/// nothing; null for a limit a JavaScript function keys, or a request with no such key.
/// The framework adapters' allow lists and `max(request, key)` read it.
pub(crate) unsafe extern "C" fn http_key(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle, index, method, url, raw_headers, address, port] = raw::args::<7>(env, info);
    let Some(state) = handle::get::<HttpState>(env, handle) else {
        return raw::throw_type_error(env, c"not an HttpLimiter handle");
    };
    let Some(parts) = request(env, method, url, raw_headers, peer(env, address, port)) else {
        return raw::throw_type_error(
            env,
            c"a request needs a method, a URL and its raw headers as strings",
        );
    };
    let index = raw::u32_arg(env, index) as usize;
    match counted_key(state.extractors.get(index), &parts) {
        Some(key) => text::string(env, key.as_str().as_bytes()),
        None => {
            let mut null = std::ptr::null_mut();
            sys::napi_get_null(env, &mut null);
            null
        }
    }
}

/// A verdict decided at once: its numbers into the verdict array, its text returned.
unsafe fn now(
    env: sys::napi_env,
    state: &HttpState,
    parts: &http::request::Parts,
    verdict: Verdict,
) -> sys::napi_value {
    TEXT.with_borrow_mut(|text| {
        text.clear();
        let numbers = encode(verdict, text, &state.clock, |limit| {
            counted_key(state.extractors.get(limit), parts)
        });
        // SAFETY: `out` points at `LEN` f64s that `_array` keeps alive; only this
        // thread, which owns the array, calls here.
        std::ptr::copy_nonoverlapping(numbers.as_ptr(), state.out, LEN);
        text::string(env, text)
    })
}

/// `[text, refund]`: a verdict decided at once, and its refund's handle.
unsafe fn with_refund(
    env: sys::napi_env,
    text: sys::napi_value,
    refund: Refund,
) -> sys::napi_value {
    let env = Env::from_raw(env);
    let handle = match http_refund::create(&env, refund) {
        Ok(handle) => handle.raw(),
        Err(e) => return throw(&env, e),
    };
    let mut pair = std::ptr::null_mut();
    sys::napi_create_array_with_length(env.raw(), 2, &mut pair);
    sys::napi_set_element(env.raw(), pair, 0, text);
    sys::napi_set_element(env.raw(), pair, 1, handle);
    pair
}

/// A Promise of the [`HttpVerdict`] `deciding` (a limit on Redis) gives, with its refund's
/// handle as `refund` when it keeps one.
unsafe fn later(
    env: sys::napi_env,
    state: &HttpState,
    parts: &http::request::Parts,
    deciding: impl Future<Output = (Verdict, Option<Refund>)> + Send + 'static,
) -> sys::napi_value {
    // The parts do not outlive this call: every limit's key, found now.
    let keys: Vec<Option<KeyBuf>> = state
        .extractors
        .iter()
        .map(|extractor| counted_key(Some(extractor), parts))
        .collect();
    let clock = state.clock.clone();
    let remotes = state.remotes.clone();
    let env = Env::from_raw(env);
    let decided = async move {
        let (verdict, refund) = deciding.await;
        let mut text = Vec::new();
        let [status, wait, limit, quota, remaining, reset, reset_at] =
            encode(verdict, &mut text, &clock, |limit| {
                keys.get(limit).cloned().flatten()
            });
        let backend_errors: u64 = remotes.iter().map(|r| r.stats().errors).sum();
        let verdict = HttpVerdict {
            status: status as u32,
            wait,
            text: String::from_utf8_lossy(&text).into_owned(),
            limit,
            quota,
            remaining,
            reset,
            reset_at,
            backend_errors: backend_errors as f64,
        };
        Ok((verdict, refund))
    };
    let promise = env.spawn_future_with_callback(decided, |env, (verdict, refund)| {
        // SAFETY: called on JavaScript's thread with its `env`.
        let object = unsafe { HttpVerdict::to_napi_value(env.raw(), verdict)? };
        if let Some(refund) = refund {
            let handle = http_refund::create(env, refund)?;
            // SAFETY: `object` was just made in `env`.
            unsafe {
                sys::napi_set_named_property(env.raw(), object, c"refund".as_ptr(), handle.raw())
            };
        }
        // SAFETY: as above.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
    });
    match promise {
        Ok(promise) => promise.raw(),
        Err(e) => throw(&env, e),
    }
}

/// Throws `error`'s reason and returns the value JavaScript never sees.
unsafe fn throw(env: &Env, error: Error) -> sys::napi_value {
    let message = std::ffi::CString::new(error.reason).unwrap_or_default();
    sys::napi_throw_error(env.raw(), std::ptr::null(), message.as_ptr());
    std::ptr::null_mut()
}

/// The request as the library reads it; `None` when an argument is not what it should be.
unsafe fn request(
    env: sys::napi_env,
    method: sys::napi_value,
    url: sys::napi_value,
    raw_headers: sys::napi_value,
    peer: Peer,
) -> Option<http::request::Parts> {
    REQUEST.with_borrow_mut(|buf| {
        buf.clear();
        let method = text::push(env, method, Encoding::Utf8, buf)?;
        let url = text::push(env, url, Encoding::Utf8, buf)?;
        let mut count = 0u32;
        if sys::napi_get_array_length(env, raw_headers, &mut count) != sys::Status::napi_ok {
            return None;
        }
        // Each field read on its own (not joined into one string and split): a value may
        // hold any byte a lenient parser lets through, and must never become a name.
        let mut fields = SmallVec::<[std::ops::Range<usize>; 32]>::new();
        for i in 0..count {
            let mut value = std::ptr::null_mut();
            sys::napi_get_element(env, raw_headers, i, &mut value);
            fields.push(text::push(env, value, Encoding::Latin1, buf)?);
        }
        let buf = &buf[..];
        let method = std::str::from_utf8(&buf[method]).unwrap_or("GET");
        let url = std::str::from_utf8(&buf[url]).unwrap_or("/");
        // `rawHeaders` alternates names and values.
        let headers = fields
            .chunks_exact(2)
            .map(|pair| (&buf[pair[0].clone()], &buf[pair[1].clone()]));
        Some(request_parts_from(method, url, headers, peer))
    })
}

/// The peer, from the socket's `remoteAddress` and `remotePort`, read by the library's one
/// rule: no address (a Unix socket's, or a closed socket's) is a Unix socket's peer, keyed
/// `unix` (or walked as a proxy when trusted), never a 500.
unsafe fn peer(env: sys::napi_env, address: sys::napi_value, port: sys::napi_value) -> Peer {
    let mut text = [0u8; 128];
    let mut len = 0usize;
    let read =
        sys::napi_get_value_string_utf8(env, address, text.as_mut_ptr().cast(), 128, &mut len);
    let host = (read == sys::Status::napi_ok)
        .then(|| std::str::from_utf8(&text[..len]).ok())
        .flatten();
    Peer::from_host(host, raw::u32_arg(env, port) as u16)
}

/// The keys the JavaScript functions computed, by limit name.
unsafe fn given_keys(env: sys::napi_env, state: &HttpState, keys: sys::napi_value) -> GivenKeys {
    let mut given = GivenKeys::new();
    for (index, name) in &state.given {
        let mut value = std::ptr::null_mut();
        let key = if sys::napi_get_element(env, keys, *index, &mut value) == sys::Status::napi_ok {
            let mut buf = Vec::new();
            text::push(env, value, Encoding::Utf8, &mut buf)
                .map(|_| String::from_utf8_lossy(&buf).into_owned())
        } else {
            None
        };
        given.insert(name.as_str(), key);
    }
    given
}

/// The key `extractor` (a limit's, the library's own) finds in `request`: the key the
/// library counted it under. `None` for a limit keyed by a JavaScript function, or none found.
fn counted_key(
    extractor: Option<&Option<Arc<dyn KeyExtractor>>>,
    request: &http::request::Parts,
) -> Option<KeyBuf> {
    let extractor = extractor?.as_ref()?;
    let mut key = KeyBuf::new();
    extractor.extract(request, &mut key).ok()?;
    Some(key)
}

/// Writes into `text` the key of the limit reported (what `key_of` finds for its index; an
/// empty line when none) on the first line, then `verdict`'s headers as `name:value` lines,
/// and for a refusal an empty line and the body; returns its numbers, in the verdict array's
/// order (instants on `clock`).
fn encode(
    verdict: Verdict,
    text: &mut Vec<u8>,
    clock: &AnyClock,
    key_of: impl FnOnce(usize) -> Option<KeyBuf>,
) -> [f64; LEN] {
    let mut numbers = [0.0; LEN];
    let report = match &verdict {
        Verdict::Pass { headers, .. } => headers.report(),
        Verdict::Refuse(response) => response.extensions().get::<Report>().copied(),
    };
    // A key from a request's headers holds no line break (HTTP forbids it in a value).
    if let Some(key) = report.and_then(|report| key_of(report.limit)) {
        text.extend(key.as_str().bytes().filter(|&b| b != b'\n'));
    }
    text.push(b'\n');
    let report = match verdict {
        Verdict::Pass { headers, wait } => {
            for (name, value) in headers.iter() {
                line(text, name.as_str(), value.as_bytes());
            }
            numbers[WAIT] = millis(wait);
            headers.report()
        }
        Verdict::Refuse(response) => {
            for (name, value) in response.headers() {
                line(text, name.as_str(), value.as_bytes());
            }
            text.push(b'\n');
            text.extend_from_slice(response.body());
            numbers[STATUS] = f64::from(response.status().as_u16());
            response.extensions().get::<Report>().copied()
        }
    };
    numbers[LIMIT] = -1.0;
    if let Some(report) = report {
        numbers[LIMIT] = report.limit as f64;
        numbers[QUOTA] = f64::from(report.quota);
        numbers[REMAINING] = f64::from(report.remaining);
        numbers[RESET] = report.reset as f64;
        numbers[RESET_AT] = instant_ms(clock, report.exact_reset);
    }
    numbers
}

fn line(text: &mut Vec<u8>, name: &str, value: &[u8]) {
    text.extend_from_slice(name.as_bytes());
    text.push(b':');
    text.extend_from_slice(value);
    text.push(b'\n');
}
