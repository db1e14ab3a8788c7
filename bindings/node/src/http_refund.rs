//! A passed request's refund (the library's `sluicegate::http::Refund`), for `rateLimit`'s
//! `skipFailedRequests` and `skipSuccessfulRequests`: handed to JavaScript as an external
//! handle, given back at most once by `httpRefund`, and dropped with the handle when
//! JavaScript lets go of it (the request then stays counted). What a refund gives back, and
//! when it cannot, is the library's.

use crate::handle::{self, Tagged};
use crate::raw;
use napi::bindgen_prelude::Unknown;
use napi::{Env, Error, JsValue, Status};
use napi_derive::napi;
use sluicegate::http::Refund;
use std::cell::Cell;

/// A refund not given back yet; `None` once it was. Only JavaScript's thread reads it.
pub(crate) struct RefundState(Cell<Option<Refund>>);

impl Tagged for RefundState {
    const TAG: u64 = 0x5e_11_04;
}

/// `refund` as a handle for JavaScript.
pub(crate) fn create(env: &Env, refund: Refund) -> napi::Result<Unknown<'_>> {
    handle::create(env, RefundState(Cell::new(Some(refund))))
}

/// `httpRefund(refund)`: gives the request's cost back on every limit it consumed on, once.
/// When every limit is in process the answer is at once: `true` when every limit took it
/// back, `false` when one could not (something was recorded on its key since), or when the
/// refund was given already. On Redis, a Promise of it, rejected when Redis cannot answer
/// (that limit keeps the request counted).
#[napi(ts_return_type = "boolean | Promise<boolean>")]
pub fn http_refund<'env>(env: &'env Env, refund: Unknown<'env>) -> napi::Result<Unknown<'env>> {
    // SAFETY: `refund` and `env` are this call's.
    let Some(state) = (unsafe { handle::get::<RefundState>(env.raw(), refund.raw()) }) else {
        return Err(Error::new(Status::InvalidArg, "not a refund handle"));
    };
    let Some(refund) = state.0.take() else {
        return answer(env, false);
    };
    match refund.refund().now() {
        Ok(Ok(all)) => answer(env, all),
        Ok(Err(error)) => Err(Error::from_reason(error.to_string())),
        Err(later) => {
            let promise = env.spawn_future(async move {
                later.await.map_err(|e| Error::from_reason(e.to_string()))
            })?;
            // SAFETY: the promise was just made in `env`.
            Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), promise.raw()) })
        }
    }
}

fn answer(env: &Env, all: bool) -> napi::Result<Unknown<'_>> {
    // SAFETY: a boolean made in `env`.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), raw::boolean(env.raw(), all)) })
}
