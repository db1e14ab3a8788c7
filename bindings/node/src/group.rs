//! [`NativeGroup`]: several keyed limits decided as one request, all-or-nothing, by the
//! engine's one protocol (`sluicegate::backend::all_of`): what `throttle` asks before it
//! lets a request go.

use crate::clock::NativeClock;
use crate::keyed::{build_keyed, Keyed};
use crate::op::from_code;
use crate::options::{quota, quota_error};
use crate::out::Out;
use napi::bindgen_prelude::Float64Array;
use napi::{Env, Error, Status};
use napi_derive::napi;
use sluicegate::backend::{all_of, Backend, BackendError, BackendErrorKind, Member};
use sluicegate::Decision;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Keyed limits decided together.
#[napi]
pub struct NativeGroup {
    limits: Vec<Keyed<String>>,
    out: Out,
}

#[napi]
impl NativeGroup {
    /// One keyed limit per `(quotas[i], algorithms[i])`, on `clock` if given, writing
    /// decisions into `out`.
    #[napi(constructor)]
    pub fn new(
        quotas: Vec<String>,
        algorithms: Vec<String>,
        clock: Option<&NativeClock>,
        out: Float64Array,
    ) -> napi::Result<Self> {
        if quotas.is_empty() || quotas.len() != algorithms.len() {
            return Err(Error::new(
                Status::InvalidArg,
                "a group needs one algorithm per quota, and at least one quota",
            ));
        }
        let limits = quotas
            .iter()
            .zip(&algorithms)
            .map(|(q, a)| build_keyed(q, a, clock, 0))
            .collect::<napi::Result<_>>()?;
        Ok(NativeGroup {
            limits,
            out: Out::new(out)?,
        })
    }

    /// Replaces every limit's quota at run time (the engine's `set_quota`: each key's state
    /// carries over), `quotas[i]` for limit `i`; every quota is parsed before any changes.
    #[napi]
    pub fn set_quotas(&self, quotas: Vec<String>) -> napi::Result<()> {
        if quotas.len() != self.limits.len() {
            return Err(Error::new(
                Status::InvalidArg,
                format!("expected {} quotas, one per limit", self.limits.len()),
            ));
        }
        let parsed = quotas
            .iter()
            .map(|q| quota(q))
            .collect::<napi::Result<Vec<_>>>()?;
        for (limit, quota) in self.limits.iter().zip(parsed) {
            limit.set_quota(quota).map_err(quota_error)?;
        }
        Ok(())
    }

    /// Each limit's quota as requests per second (its limit over its period), for
    /// `getMaxRPS`.
    #[napi]
    pub fn rates(&self) -> Vec<f64> {
        self.limits
            .iter()
            .map(|limit| {
                let quota = limit.quota();
                f64::from(quota.limit()) / quota.period().as_secs_f64()
            })
            .collect()
    }

    /// Decides `op` (0 check, 1 peek, 2 hit) for a request of `cost` against every limit,
    /// `keys[i]` being its key on limit `i`: allowed only if every limit allows, and then
    /// every one consumes. Writes the summary's numbers (the tightest remaining, the
    /// longest times) and returns whether it allowed; throws a `RangeError` for a cost that
    /// can never fit one of the limits.
    #[napi]
    pub fn decide(&self, env: &Env, keys: Vec<String>, op: u32, cost: u32) -> napi::Result<bool> {
        if keys.len() != self.limits.len() {
            return Err(Error::new(
                Status::InvalidArg,
                format!(
                    "expected {} keys, one per limit, got {}",
                    self.limits.len(),
                    keys.len()
                ),
            ));
        }
        let members: Vec<Member<'_, str>> = self
            .limits
            .iter()
            .zip(&keys)
            .map(|(limit, key)| Member::new(limit as &dyn Backend<str>, key.as_str()))
            .collect();
        match now(all_of(&members, cost, from_code(op)))? {
            Ok(d) => Ok(self.out.write(&d)),
            Err(e) if e.kind() == BackendErrorKind::Capacity => {
                let _ = env.throw_range_error(&e.to_string(), Some("ERR_SLUICEGATE_CAPACITY"));
                Ok(false)
            }
            Err(e) => Err(Error::new(Status::GenericFailure, e.to_string())),
        }
    }
}

/// The answer of a decision over in-process limits only, which is complete when first
/// polled (the seam's in-process calls are ready at once).
fn now(
    decision: impl Future<Output = Result<Decision, BackendError>>,
) -> napi::Result<Result<Decision, BackendError>> {
    match pin!(decision).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => Ok(result),
        Poll::Pending => Err(Error::new(
            Status::GenericFailure,
            "an in-process decision did not complete at once",
        )),
    }
}
