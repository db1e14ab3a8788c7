//! [`NativeLimiter`]: one limit for everything (the engine's `AnyLimiter`), on the real clock
//! or on a [`NativeClock`].

use crate::clock::NativeClock;
use crate::errors::throw_capacity;
use crate::op::{CHECK, PEEK};
use crate::options::{algorithm, quota, quota_error};
use crate::out::Out;
use napi::bindgen_prelude::Float64Array;
use napi::Env;
use napi_derive::napi;
use sluicegate::clock::{ManualClock, TscClock};
use sluicegate::dynamic::AnyLimiter;
use sluicegate::{CapacityError, Decision};

/// The engine's limiter on either clock: a second `match`, always predicted.
enum Either {
    Real(AnyLimiter<TscClock>),
    Manual(AnyLimiter<ManualClock>),
}

/// One limit for everything.
#[napi]
pub struct NativeLimiter {
    limiter: Either,
    out: Out,
}

#[napi]
impl NativeLimiter {
    /// A limiter for `quota_text` running `algorithm_name`, on `clock` if given, writing
    /// decisions into `out`.
    #[napi(constructor)]
    pub fn new(
        quota_text: String,
        algorithm_name: String,
        clock: Option<&NativeClock>,
        out: Float64Array,
    ) -> napi::Result<Self> {
        let (quota, kind) = (quota(&quota_text)?, algorithm(&algorithm_name)?);
        let limiter = match clock {
            None => Either::Real(AnyLimiter::new(quota, kind).map_err(quota_error)?),
            Some(c) => Either::Manual(
                AnyLimiter::with_clock(quota, kind, c.clock.clone()).map_err(quota_error)?,
            ),
        };
        Ok(NativeLimiter {
            limiter,
            out: Out::new(out)?,
        })
    }

    /// Decides `op` (0 check, 1 peek, 2 hit) for `cost`, writes the numbers, and returns
    /// whether it allowed; throws a `RangeError` for a cost that can never fit.
    #[napi]
    pub fn decide(&self, env: &Env, op: u32, cost: u32) -> bool {
        let result = match &self.limiter {
            Either::Real(l) => decide(l, op, cost),
            Either::Manual(l) => decide(l, op, cost),
        };
        match result {
            Ok(d) => self.out.write(&d),
            Err(e) => {
                throw_capacity(env, e);
                false
            }
        }
    }

    /// The largest cost one check can be allowed.
    #[napi(getter)]
    pub fn max_cost(&self) -> u32 {
        match &self.limiter {
            Either::Real(l) => l.max_cost(),
            Either::Manual(l) => l.max_cost(),
        }
    }
}

#[inline(always)]
fn decide<C: sluicegate::clock::Clock>(
    limiter: &AnyLimiter<C>,
    op: u32,
    cost: u32,
) -> Result<Decision, CapacityError> {
    match op {
        CHECK => limiter.check_n(cost),
        PEEK => limiter.peek_n(cost),
        _ => Ok(limiter.hit(cost)),
    }
}
