//! A limit per string key (the engine's `AnyKeyedLimiter`), on the
//! real clock or on a [`NativeClock`]: `newKeyed` makes a handle, `keyedDecide` checks.

use crate::clock::NativeClock;
use crate::handle::{self, Tagged};
use crate::key::{with_key, with_wtf8, Key};
use crate::op::{from_code, CHECK};
use crate::options::{algorithm, quota, quota_error};
use crate::out::{millis, retry_millis, Out};
use crate::raw;
use napi::bindgen_prelude::{Float64Array, Unknown};
use napi::{sys, Env};
use napi_derive::napi;
use sluicegate::clock::{AnyClock, Clock};
use sluicegate::dynamic::{AnyKeyedBuilder, AnyKeyedLimiter};
use sluicegate::Decision;

/// The engine's keyed limiter on the real clock or a [`NativeClock`], keyed by `K`: a
/// JavaScript string's UTF-16 code units as WTF-8 bytes for `KeyedLimiter` ([`Key`]), a
/// `String` for `throttle`'s groups.
pub(crate) type Keyed<K = Key> = AnyKeyedLimiter<K, AnyClock>;

/// A keyed limiter for the options, holding at most `max_keys` keys when not 0.
pub(crate) fn build_keyed<K: std::hash::Hash + Eq + Clone + Send + Sync>(
    quota_text: &str,
    algorithm_name: &str,
    clock: Option<&NativeClock>,
    max_keys: u32,
) -> napi::Result<Keyed<K>> {
    let (quota, kind) = (quota(quota_text)?, algorithm(algorithm_name)?);
    let clock = AnyClock::from(clock.map(|c| c.clock.clone()));
    let builder = AnyKeyedLimiter::<K>::builder(quota, kind).clock(clock);
    bounded(builder, max_keys).build().map_err(quota_error)
}

/// `builder` holding at most `max_keys` keys, or its default bound for 0.
fn bounded<K, C: Clock, S>(
    builder: AnyKeyedBuilder<K, C, S>,
    max_keys: u32,
) -> AnyKeyedBuilder<K, C, S> {
    if max_keys == 0 {
        builder
    } else {
        builder.max_keys(max_keys as usize)
    }
}

/// What a keyed limiter handle holds.
pub(crate) struct KeyedState {
    limiter: Keyed,
    out: Out,
}

impl Tagged for KeyedState {
    const TAG: u64 = 0x5e_11_02;
}

/// A keyed limiter handle for `quota_text` running `algorithm_name`, on `clock` if given,
/// holding at most `max_keys` keys (0: the engine's default), writing decisions into `out`.
#[napi]
pub fn new_keyed<'env>(
    env: &'env Env,
    quota_text: String,
    algorithm_name: String,
    clock: Option<&NativeClock>,
    max_keys: u32,
    out: Float64Array,
) -> napi::Result<Unknown<'env>> {
    let state = KeyedState {
        limiter: build_keyed(&quota_text, &algorithm_name, clock, max_keys)?,
        out: Out::new(out)?,
    };
    handle::create(env, state)
}

/// The decision for `(handle, key, op, cost)`, or the exception to return.
#[inline(always)]
unsafe fn keyed_call(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<(&'static KeyedState, Decision), sys::napi_value> {
    let [handle, key, op, cost] = raw::args::<4>(env, info);
    let (op, cost) = (raw::u32_arg(env, op), raw::u32_arg(env, cost));
    keyed_op(env, handle, key, op, cost)
}

/// The decision for `op` of `cost` on `key`, or the exception to return.
#[inline(always)]
unsafe fn keyed_op(
    env: sys::napi_env,
    handle: sys::napi_value,
    key: sys::napi_value,
    op: u32,
    cost: u32,
) -> Result<(&'static KeyedState, Decision), sys::napi_value> {
    let Some(state) = handle::get::<KeyedState>(env, handle) else {
        return Err(raw::throw_type_error(env, c"not a KeyedLimiter handle"));
    };
    let result = with_key(env, key, |key| {
        with_wtf8(key, |key| state.limiter.decide_op(key, cost, from_code(op)))
    });
    match result {
        Some(Ok(d)) => Ok((state, d)),
        Some(Err(e)) => Err(raw::throw_range_error(env, crate::errors::CAPACITY, &e)),
        None => Err(raw::throw_type_error(env, c"a key must be a string")),
    }
}

/// `keyedDecide(handle, key, op, cost)`: decides `op` (0 check, 1 peek, 2 hit) for `cost` on
/// `key`, writes the numbers into the handle's output array, and returns whether it
/// allowed; throws a `RangeError` for a cost that can never fit.
pub(crate) unsafe extern "C" fn keyed_decide(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    match keyed_call(env, info) {
        Ok((state, d)) => raw::boolean(env, state.out.write(&d)),
        Err(thrown) => thrown,
    }
}

/// `keyedCheck(handle, key)`: `keyedDecide(handle, key, 0, 1)`, the common case, with two
/// arguments fewer to convert.
pub(crate) unsafe extern "C" fn keyed_check(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle, key] = raw::args::<2>(env, info);
    match keyed_op(env, handle, key, CHECK, 1) {
        Ok((state, d)) => raw::boolean(env, state.out.write(&d)),
        Err(thrown) => thrown,
    }
}

/// `benchFloor(key)`: a bench floor, not part of the package's API. Reads `key`'s code units
/// as [`keyed_check`] does and decides nothing: `bench/keyed.js` measures it (with a `Map.get`)
/// beside `KeyedLimiter.check`, as the least a native keyed check can cost from JavaScript.
pub(crate) unsafe extern "C" fn bench_floor(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [key] = raw::args::<1>(env, info);
    match with_key(env, key, |units| !units.is_empty()) {
        Some(read) => raw::boolean(env, read),
        None => raw::throw_type_error(env, c"a key must be a string"),
    }
}

/// `keyedReset(handle, key)`: forgets `key` (the engine's `reset`); returns whether the
/// limiter held a state for it.
pub(crate) unsafe extern "C" fn keyed_reset(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle, key] = raw::args::<2>(env, info);
    let Some(state) = handle::get::<KeyedState>(env, handle) else {
        return raw::throw_type_error(env, c"not a KeyedLimiter handle");
    };
    let held = with_key(env, key, |units| {
        with_wtf8(units, |key| state.limiter.reset(key))
    });
    match held {
        Some(held) => raw::boolean(env, held),
        None => raw::throw_type_error(env, c"a key must be a string"),
    }
}

/// `keyedDecideObject(handle, key, op, cost)`: [`keyed_decide`], returning the decision as
/// a JavaScript object built here instead. Not used by the package; kept so that
/// `bench/return_paths.js` can measure the two ways against each other.
pub(crate) unsafe extern "C" fn keyed_decide_object(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    match keyed_call(env, info) {
        Ok((_, d)) => decision_object(env, &d),
        Err(thrown) => thrown,
    }
}

/// `d` as `{ allowed, limit, remaining, retryAfter, resetAfter, wait }`, built with one
/// Node-API call per value and per property.
unsafe fn decision_object(env: sys::napi_env, d: &Decision) -> sys::napi_value {
    let n = d.numbers();
    let mut object = std::ptr::null_mut();
    sys::napi_create_object(env, &mut object);
    let mut null = std::ptr::null_mut();
    sys::napi_get_null(env, &mut null);
    let fields = [
        (c"allowed", raw::boolean(env, d.is_allowed())),
        (c"limit", raw::number(env, f64::from(d.limit()))),
        (c"remaining", raw::number(env, f64::from(n.remaining))),
        (
            c"retryAfter",
            retry_millis(d).map_or(null, |t| raw::number(env, t)),
        ),
        (c"resetAfter", raw::number(env, millis(n.reset_after))),
        (c"wait", raw::number(env, millis(n.wait))),
    ];
    for (name, value) in fields {
        sys::napi_set_named_property(env, object, name.as_ptr(), value);
    }
    object
}

/// `keyedSize(handle)`: keys held.
pub(crate) unsafe extern "C" fn keyed_size(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle] = raw::args::<1>(env, info);
    let Some(state) = handle::get::<KeyedState>(env, handle) else {
        return raw::throw_type_error(env, c"not a KeyedLimiter handle");
    };
    raw::number(env, state.limiter.len() as f64)
}

/// `keyedMaxCost(handle)`: the largest cost one check can be allowed.
pub(crate) unsafe extern "C" fn keyed_max_cost(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle] = raw::args::<1>(env, info);
    let Some(state) = handle::get::<KeyedState>(env, handle) else {
        return raw::throw_type_error(env, c"not a KeyedLimiter handle");
    };
    raw::number(env, f64::from(state.limiter.max_cost()))
}
