//! [`UntilReady`]: waiting on any backend behind the seam.

use super::until::until;
use super::Jitter;
use crate::backend::{Backend, BackendError, Op};
use crate::decision::Decision;
use std::future::Future;

/// `until_ready` for every [`Backend`]: in-process limiters, Redis, `dyn Backend<str>`.
///
/// The same loop as [`Limiter::until_ready`](crate::Limiter::until_ready): decide, and when
/// denied sleep exactly until `retry_after` and decide again. Cancel-safe while sleeping; a
/// remote backend's final round trip, if dropped midway, may have consumed a unit the caller
/// never uses (erring toward under-use, never over-admission).
///
/// ```
/// use sluicegate::backend::Backend;
/// use sluicegate::wait::UntilReady;
/// use sluicegate::{KeyedLimiter, Quota};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let per_tenant: Box<dyn Backend<str>> = Box::new(KeyedLimiter::<String>::new(Quota::per_second(2))?);
/// for _ in 0..3 {
///     let decision = per_tenant.until_ready("acme").await?; // the third waits half a second
///     assert!(decision.is_allowed());
/// }
/// # Ok(())
/// # }
/// ```
pub trait UntilReady<Q: ?Sized + Sync>: Backend<Q> {
    /// Waits until one request for `key` is admitted.
    fn until_ready<'a>(
        &'a self,
        key: &'a Q,
    ) -> impl Future<Output = Result<Decision, BackendError>> + Send + 'a {
        self.until_n_ready_with_jitter(key, 1, Jitter::NONE)
    }

    /// Waits until a request of cost `n` for `key` is admitted; fails at once, with
    /// [`BackendErrorKind::Capacity`](crate::backend::BackendErrorKind::Capacity), when `n`
    /// exceeds [`max_cost`](Backend::max_cost).
    fn until_n_ready<'a>(
        &'a self,
        key: &'a Q,
        n: u32,
    ) -> impl Future<Output = Result<Decision, BackendError>> + Send + 'a {
        self.until_n_ready_with_jitter(key, n, Jitter::NONE)
    }

    /// [`until_n_ready`](Self::until_n_ready), adding `jitter` to each wait for a retry.
    fn until_n_ready_with_jitter<'a>(
        &'a self,
        key: &'a Q,
        n: u32,
        jitter: Jitter,
    ) -> impl Future<Output = Result<Decision, BackendError>> + Send + 'a {
        async move {
            Op::Check.within_capacity(n, self.max_cost())?;
            until(|| self.decide(key, n, Op::Check), jitter).await
        }
    }
}

impl<Q: ?Sized + Sync, B: Backend<Q> + ?Sized> UntilReady<Q> for B {}
