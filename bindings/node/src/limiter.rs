//! One limit for everything (the engine's `AnyLimiter`), on the real clock or on a
//! [`NativeClock`]: `newLimiter` makes a handle, `limiterDecide` checks.

use crate::clock::NativeClock;
use crate::handle::{self, Tagged};
use crate::op::{from_code, CHECK};
use crate::options::{algorithm, quota, quota_error};
use crate::out::Out;
use crate::raw;
use napi::bindgen_prelude::{Float64Array, Unknown};
use napi::{sys, Env};
use napi_derive::napi;
use sluicegate::clock::AnyClock;
use sluicegate::dynamic::AnyLimiter;

/// What a limiter handle holds.
pub(crate) struct LimiterState {
    /// On the real clock or a [`NativeClock`].
    limiter: AnyLimiter<AnyClock>,
    out: Out,
}

impl Tagged for LimiterState {
    const TAG: u64 = 0x5e_11_01;
}

/// A limiter handle for `quota_text` running `algorithm_name`, on `clock` if given, writing
/// decisions into `out`.
#[napi]
pub fn new_limiter<'env>(
    env: &'env Env,
    quota_text: String,
    algorithm_name: String,
    clock: Option<&NativeClock>,
    out: Float64Array,
) -> napi::Result<Unknown<'env>> {
    let (quota, kind) = (quota(&quota_text)?, algorithm(&algorithm_name)?);
    let clock = AnyClock::from(clock.map(|c| c.clock.clone()));
    let limiter = AnyLimiter::with_clock(quota, kind, clock).map_err(quota_error)?;
    handle::create(
        env,
        LimiterState {
            limiter,
            out: Out::new(out)?,
        },
    )
}

/// `limiterDecide(handle, op, cost)`: decides `op` (0 check, 1 peek, 2 hit) for `cost`,
/// writes the numbers into the handle's output array, and returns whether it allowed;
/// throws a `RangeError` for a cost that can never fit.
pub(crate) unsafe extern "C" fn limiter_decide(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle, op, cost] = raw::args::<3>(env, info);
    let (op, cost) = (raw::u32_arg(env, op), raw::u32_arg(env, cost));
    limiter_op(env, handle, op, cost)
}

/// `limiterCheck(handle)`: `limiterDecide(handle, 0, 1)`, the common case.
pub(crate) unsafe extern "C" fn limiter_check(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle] = raw::args::<1>(env, info);
    limiter_op(env, handle, CHECK, 1)
}

#[inline(always)]
unsafe fn limiter_op(
    env: sys::napi_env,
    handle: sys::napi_value,
    op: u32,
    cost: u32,
) -> sys::napi_value {
    let Some(state) = handle::get::<LimiterState>(env, handle) else {
        return raw::throw_type_error(env, c"not a Limiter handle");
    };
    match state.limiter.decide_op(cost, from_code(op)) {
        Ok(d) => raw::boolean(env, state.out.write(&d)),
        Err(e) => raw::throw_range_error(env, crate::errors::CAPACITY, &e),
    }
}

/// `limiterMaxCost(handle)`: the largest cost one check can be allowed.
pub(crate) unsafe extern "C" fn limiter_max_cost(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let [handle] = raw::args::<1>(env, info);
    let Some(state) = handle::get::<LimiterState>(env, handle) else {
        return raw::throw_type_error(env, c"not a Limiter handle");
    };
    raw::number(env, f64::from(state.limiter.max_cost()))
}
