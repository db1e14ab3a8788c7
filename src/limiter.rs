//! [`Limiter`]: one rate limit, one state.

use crate::algorithm::engine::{Mode, Swap};
use crate::algorithm::{clamp_time, Algorithm, Gcra};
use crate::clock::{Clock, TscClock};
use crate::decision::Decision;
use crate::error::{CapacityError, QuotaError};
use crate::quota::Quota;
use crossbeam_utils::CachePadded;
use std::fmt;

/// A direct rate limiter: one state for everything that passes through it (a global limit,
/// one upstream, one connection).
///
/// `A` is the [algorithm](crate::algorithm) and `C` the [clock](crate::clock); both are type
/// parameters so the hot path is monomorphic. `Limiter` is `Send + Sync`: share it behind an
/// `Arc` or a `static`. Every check is lock-free (the sliding log's admissions excepted: they
/// hold a writer bit for as many stores as their cost).
///
/// ```
/// use sluicegate::{Limiter, Quota};
///
/// let limiter = Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_second(100).with_burst(20))?;
/// let decision = limiter.check();
/// assert!(decision.is_allowed());
/// assert_eq!(decision.remaining(), 19);
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
pub struct Limiter<A: Algorithm = Gcra, C: Clock = TscClock> {
    /// Padded so that its CAS traffic never invalidates the line holding the read-only fields.
    cell: CachePadded<A::Cell>,
    params: A::Params,
    capacity: u32,
    quota: Quota,
    clock: C,
}

/// # Building a limiter
impl<A: Algorithm, C: Clock + Default> Limiter<A, C> {
    /// A limiter for `quota` on the clock's default instance ([`TscClock`] unless `C` says
    /// otherwise), or the reason `A` cannot run `quota`.
    pub fn new(quota: Quota) -> Result<Self, QuotaError> {
        Self::with_clock(quota, C::default())
    }
}

impl<A: Algorithm, C: Clock> Limiter<A, C> {
    /// A limiter for `quota` reading time from `clock`, or the reason `A` cannot run `quota`.
    pub fn with_clock(quota: Quota, clock: C) -> Result<Self, QuotaError> {
        let params = A::params(&quota, clock.unix_offset())?;
        Ok(Limiter {
            cell: CachePadded::new(A::new_cell(&params)),
            capacity: A::capacity(&params),
            params,
            quota,
            clock,
        })
    }
}

/// # Checking requests
impl<A: Algorithm, C: Clock> Limiter<A, C> {
    /// Decides one request, consuming one unit when it is allowed. A denial changes nothing.
    #[inline]
    pub fn check(&self) -> Decision {
        self.decide(1, Mode::Consume)
    }

    /// Decides a request of cost `n` (bytes, tokens, rows), consuming `n` when allowed.
    ///
    /// `n = 0` is always allowed and consumes nothing. Fails only when `n` exceeds the
    /// capacity (the burst, or the limit for window algorithms), since such a request could
    /// never be allowed however long it waited.
    #[inline]
    pub fn check_n(&self, n: u32) -> Result<Decision, CapacityError> {
        self.fits(n)?;
        Ok(self.decide(n, Mode::Consume))
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    #[inline]
    pub fn peek(&self) -> Decision {
        self.decide(1, Mode::Peek)
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    #[inline]
    pub fn peek_n(&self, n: u32) -> Result<Decision, CapacityError> {
        self.fits(n)?;
        Ok(self.decide(n, Mode::Peek))
    }

    /// Records `n` units whatever the answer (a *hit*: a failed login counted after the fact,
    /// bytes already sent), and says whether they were within the limit.
    ///
    /// Beyond the limit the state goes into debt, repaid at the quota's rate; each algorithm's
    /// documentation says how far (rate algorithms owe the excess; window counts saturate at
    /// the limit; the log records every unit). A hit beyond the limit is reported as the
    /// denial one more single request would get: its `retry_after` is when the next request
    /// is admitted, and `remaining` is 0. Unlike [`check_n`](Self::check_n), any `n` is
    /// accepted.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sluicegate::{Limiter, Quota, algorithm::Gcra, clock::ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// let logins = Limiter::<Gcra, _>::with_clock(Quota::per_minute(3), clock.clone())?;
    /// assert!(logins.hit(2).is_allowed());
    /// let over = logins.hit(3); // five failed logins: two beyond the quota
    /// assert!(over.is_denied());
    /// // The next attempt waits for the two owed plus its own: three intervals of 20 s.
    /// assert_eq!(over.retry_after(), Some(Duration::from_secs(60)));
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    #[inline]
    pub fn hit(&self, n: u32) -> Decision {
        self.decide(n, Mode::Hit)
    }

    /// Refuses a cost that could never be admitted.
    #[inline]
    fn fits(&self, n: u32) -> Result<(), CapacityError> {
        if n > self.capacity {
            return Err(CapacityError::new(n, self.capacity));
        }
        Ok(())
    }

    #[inline]
    fn decide(&self, cost: u32, mode: Mode) -> Decision {
        self.reserve(cost, mode).0
    }

    /// Decides and, when it consumed, returns the swap to undo it (for composite checks).
    #[inline]
    pub(crate) fn reserve(&self, cost: u32, mode: Mode) -> (Decision, Option<Swap>) {
        let now = clamp_time(self.clock.now());
        A::check(&self.cell, &self.params, now, cost, mode)
    }

    /// Reverts a swap made by [`reserve`](Self::reserve) if nothing has written since.
    pub(crate) fn undo(&self, swap: Swap) -> bool {
        A::undo(&self.cell, swap)
    }
}

#[cfg(loom)]
impl<C: Clock> Limiter<crate::algorithm::Gcra, C> {
    /// The loom suite's negative control: a check with a load-then-store race, which the
    /// models must catch over-admitting. Exists only under `--cfg loom`.
    #[doc(hidden)]
    pub fn racy_check_for_loom(&self) -> Decision {
        let now = clamp_time(self.clock.now());
        self.cell
            .apply_racy::<crate::algorithm::Gcra>(&self.params, now, 1)
    }
}

/// # Inspecting
impl<A: Algorithm, C: Clock> Limiter<A, C> {
    /// The quota this limiter enforces.
    pub fn quota(&self) -> Quota {
        self.quota
    }

    /// The largest cost one check can be allowed: the burst for the rate algorithms, the limit
    /// for the window algorithms.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

impl<A: Algorithm, C: Clock> fmt::Debug for Limiter<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limiter")
            .field("algorithm", &A::NAME)
            .field("quota", &self.quota)
            .field("clock", &self.clock)
            .field("state", &*self.cell)
            .finish()
    }
}
