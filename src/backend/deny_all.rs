//! [`DenyAll`]: a limit of zero, which refuses every request and keeps no state.

use super::{Backend, Call, Op};
use crate::decision::Decision;
use crate::quota::Quota;
use std::time::Duration;

/// A limit of 0 requests per window: refuses every request of a cost above 0, keeping no
/// state (a blocklist entry; express-rate-limit's `limit: 0`; the service's
/// `requests_per_unit: 0`). Each decision says limit 0, remaining 0, and a retry and reset of
/// one window. Quotas start at 1, so `quota` gives the window and is what headers report as
/// the policy (`q=1` with that window); a hit is recorded as allowed, as it changes nothing.
/// Every cost reaches the decision (no capacity error): waiting is what a client is told.
///
/// ```
/// use sluicegate::backend::{Backend, DenyAll, Op};
/// use sluicegate::Quota;
/// use std::time::Duration;
///
/// let closed = DenyAll::new(Quota::per_minute(1));
/// let d = Backend::<str>::decide(&closed, "anyone", 1, Op::Check).now().unwrap()?;
/// assert!(d.is_denied());
/// assert_eq!((d.limit(), d.remaining()), (0, 0));
/// assert_eq!(d.retry_after(), Some(Duration::from_secs(60)));
/// assert!(Backend::<str>::decide(&closed, "anyone", 0, Op::Check).now().unwrap()?.is_allowed());
/// # Ok::<(), sluicegate::backend::BackendError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DenyAll {
    quota: Quota,
}

impl DenyAll {
    /// Refuses everything, reporting `quota`'s window.
    pub fn new(quota: Quota) -> DenyAll {
        DenyAll { quota }
    }
}

impl<Q: ?Sized + Sync> Backend<Q> for DenyAll {
    fn quota(&self) -> Quota {
        self.quota
    }

    fn max_cost(&self) -> u32 {
        u32::MAX
    }

    fn immediate(&self) -> bool {
        true
    }

    fn decide<'a>(&'a self, _key: &'a Q, cost: u32, op: Op) -> Call<'a> {
        let window = self.quota.period();
        // A cost of 0 (and a peek of it) asks for nothing, and is allowed, as on every limit.
        let allowed = cost == 0 || op == Op::Hit;
        Call::ready(Ok(Decision::new(
            allowed,
            0,
            0,
            (!allowed).then_some(window),
            window,
            Duration::ZERO,
        )))
    }
}
