//! [`RedisLimiter`] behind the [`Backend`] seam, so that the HTTP layer, composites across
//! backends and async waiting take it like an in-process limiter.

use super::limiter::RedisLimiter;
use super::time::TimeSource;
use crate::backend::{Backend, BackendError, Call, Joint, Op, Receipt, Reservation};
use crate::quota::Quota;
use crate::state::Algorithm;

/// Each call is one round trip (none for a capacity error or a deny-cache answer); a
/// reservation's [`Receipt`] undoes exactly what it wrote, if nothing was recorded on the key
/// since (for the sliding log: removes the entries it logged).
impl<A: Algorithm, C: TimeSource> Backend<str> for RedisLimiter<A, C> {
    fn quota(&self) -> Quota {
        RedisLimiter::quota(self)
    }

    fn max_cost(&self) -> u32 {
        RedisLimiter::max_cost(self)
    }

    fn decide<'a>(&'a self, key: &'a str, cost: u32, op: Op) -> Call<'a> {
        Call::new(async move {
            RedisLimiter::decide(self, key, cost, op)
                .await
                .map_err(BackendError::from)
        })
    }

    fn reserve<'a>(&'a self, key: &'a str, cost: u32) -> Call<'a, Reservation> {
        Call::new(async move {
            RedisLimiter::reserve(self, key, cost)
                .await
                .map_err(BackendError::from)
        })
    }

    /// Limits on one node decide a group in one script.
    fn joint<'a>(&'a self, key: &'a str) -> Option<Joint<'a>> {
        Some(Joint {
            store: &self.inner.sender,
            limit: &self.handle,
            key,
        })
    }

    fn undo<'a>(&'a self, key: &'a str, receipt: Receipt) -> Call<'a, bool> {
        Call::new(async move {
            RedisLimiter::undo(self, key, receipt)
                .await
                .map_err(BackendError::from)
        })
    }

    fn reset<'a>(&'a self, key: &'a str) -> Call<'a, bool> {
        Call::new(async move {
            RedisLimiter::reset(self, key)
                .await
                .map_err(BackendError::from)
        })
    }
}
