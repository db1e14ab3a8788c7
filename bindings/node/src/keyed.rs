//! [`NativeKeyed`]: a limit per string key (the engine's `AnyKeyedLimiter<String>`), on the
//! real clock or on a [`NativeClock`].

use crate::clock::NativeClock;
use crate::errors::throw_capacity;
use crate::key::with_key;
use crate::op::{CHECK, PEEK};
use crate::options::{algorithm, quota, quota_error};
use crate::out::Out;
use napi::bindgen_prelude::Float64Array;
use napi::{Env, JsString};
use napi_derive::napi;
use sluicegate::clock::{Clock, ManualClock, TscClock};
use sluicegate::dynamic::{AnyKeyedBuilder, AnyKeyedLimiter};
use sluicegate::{CapacityError, Decision};

/// The engine's keyed limiter on either clock.
pub(crate) enum Keyed {
    Real(AnyKeyedLimiter<String, TscClock>),
    Manual(AnyKeyedLimiter<String, ManualClock>),
}

impl Keyed {
    /// A keyed limiter for the options, holding at most `max_keys` keys when not 0.
    pub(crate) fn build(
        quota_text: &str,
        algorithm_name: &str,
        clock: Option<&NativeClock>,
        max_keys: u32,
    ) -> napi::Result<Keyed> {
        let (quota, kind) = (quota(quota_text)?, algorithm(algorithm_name)?);
        let builder = AnyKeyedLimiter::<String, TscClock>::builder(quota, kind);
        Ok(match clock {
            None => Keyed::Real(bounded(builder, max_keys).build().map_err(quota_error)?),
            Some(c) => Keyed::Manual(
                bounded(builder.clock(c.clock.clone()), max_keys)
                    .build()
                    .map_err(quota_error)?,
            ),
        })
    }
}

/// `builder` holding at most `max_keys` keys, or its default bound for 0.
fn bounded<C: Clock, S>(
    builder: AnyKeyedBuilder<String, C, S>,
    max_keys: u32,
) -> AnyKeyedBuilder<String, C, S> {
    if max_keys == 0 {
        builder
    } else {
        builder.max_keys(max_keys as usize)
    }
}

/// A limit per string key.
#[napi]
pub struct NativeKeyed {
    limiter: Keyed,
    out: Out,
}

#[napi]
impl NativeKeyed {
    /// A keyed limiter for `quota_text` running `algorithm_name`, on `clock` if given,
    /// holding at most `max_keys` keys (0: no bound), writing decisions into `out`.
    #[napi(constructor)]
    pub fn new(
        quota_text: String,
        algorithm_name: String,
        clock: Option<&NativeClock>,
        max_keys: u32,
        out: Float64Array,
    ) -> napi::Result<Self> {
        Ok(NativeKeyed {
            limiter: Keyed::build(&quota_text, &algorithm_name, clock, max_keys)?,
            out: Out::new(out)?,
        })
    }

    /// Decides `op` (0 check, 1 peek, 2 hit) for `cost` on `key`, writes the numbers, and
    /// returns whether it allowed; throws a `RangeError` for a cost that can never fit.
    #[napi]
    pub fn decide(&self, env: &Env, key: JsString<'_>, op: u32, cost: u32) -> napi::Result<bool> {
        let result = with_key(env, key, |key| match &self.limiter {
            Keyed::Real(l) => decide(l, key, op, cost),
            Keyed::Manual(l) => decide(l, key, op, cost),
        })?;
        Ok(match result {
            Ok(d) => self.out.write(&d),
            Err(e) => {
                throw_capacity(env, e);
                false
            }
        })
    }

    /// Keys currently held.
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        let len = match &self.limiter {
            Keyed::Real(l) => l.len(),
            Keyed::Manual(l) => l.len(),
        };
        u32::try_from(len).unwrap_or(u32::MAX)
    }

    /// The largest cost one check can be allowed.
    #[napi(getter)]
    pub fn max_cost(&self) -> u32 {
        match &self.limiter {
            Keyed::Real(l) => l.max_cost(),
            Keyed::Manual(l) => l.max_cost(),
        }
    }
}

#[inline(always)]
fn decide<C: Clock>(
    limiter: &AnyKeyedLimiter<String, C>,
    key: &str,
    op: u32,
    cost: u32,
) -> Result<Decision, CapacityError> {
    match op {
        CHECK => limiter.check_n(key, cost),
        PEEK => limiter.peek_n(key, cost),
        _ => Ok(limiter.hit(key, cost)),
    }
}
