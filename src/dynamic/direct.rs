//! [`AnyLimiter`]: a direct limiter whose algorithm is a value.

use super::{dispatch, for_kind};
use crate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, Op, SlidingLog, SlidingWindow, TokenBucket,
};
use crate::backend::Limit;
use crate::clock::{Clock, TscClock};
use crate::decision::Decision;
use crate::error::{CapacityError, QuotaError};
use crate::limiter::Limiter;
use crate::policy::{AlgorithmKind, Policy};
use crate::quota::Quota;
use std::fmt;

/// A direct [`Limiter`] whose algorithm is chosen at run time: one `match` away from the
/// generic limiter it holds, and deciding exactly as it would.
///
/// Build it from a quota and an [`AlgorithmKind`], from a [`Policy`], or convert a generic
/// `Limiter` with `From`. It is a [`Backend`](crate::backend::Backend) like `Limiter` (the
/// key is ignored), and [`as_limit`](Self::as_limit) puts it in a
/// [`Composite`](crate::Composite).
///
/// ```
/// use sluicegate::dynamic::AnyLimiter;
/// use sluicegate::clock::ManualClock;
/// use sluicegate::policy::AlgorithmKind;
/// use sluicegate::Quota;
///
/// let clock = ManualClock::new();
/// let limiter = AnyLimiter::with_clock(Quota::per_second(2), AlgorithmKind::FixedWindow, clock)?;
/// assert!(limiter.check().is_allowed());
/// assert_eq!(limiter.check_n(1)?.remaining(), 0);
/// assert!(limiter.peek().is_denied());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AnyLimiter<C: Clock = TscClock>(Direct<C>);

/// One variant per algorithm.
pub(super) enum Direct<C: Clock> {
    Gcra(Limiter<Gcra, C>),
    TokenBucket(Limiter<TokenBucket, C>),
    LeakyBucket(Limiter<LeakyBucket, C>),
    FixedWindow(Limiter<FixedWindow, C>),
    SlidingWindow(Limiter<SlidingWindow, C>),
    SlidingLog(Limiter<SlidingLog, C>),
}

/// # Building a limiter
impl<C: Clock> AnyLimiter<C> {
    /// A limiter running `algorithm` for `quota` on the clock's default instance, or the
    /// reason the algorithm cannot run the quota.
    pub fn new(quota: Quota, algorithm: AlgorithmKind) -> Result<Self, QuotaError>
    where
        C: Default,
    {
        Self::with_clock(quota, algorithm, C::default())
    }

    /// A limiter running `algorithm` for `quota`, reading time from `clock`.
    pub fn with_clock(
        quota: Quota,
        algorithm: AlgorithmKind,
        clock: C,
    ) -> Result<Self, QuotaError> {
        for_kind!(Direct, algorithm, A => Limiter::<A, C>::with_clock(quota, clock)).map(AnyLimiter)
    }

    /// A limiter for `policy`'s quota and algorithm on the clock's default instance. The
    /// policy's name and key are the caller's business: a direct limiter is one state for
    /// everything.
    pub fn from_policy(policy: &Policy) -> Result<Self, QuotaError>
    where
        C: Default,
    {
        Self::new(policy.quota, policy.algorithm)
    }

    /// A limiter for `policy`'s quota and algorithm, reading time from `clock`.
    pub fn from_policy_with_clock(policy: &Policy, clock: C) -> Result<Self, QuotaError> {
        Self::with_clock(policy.quota, policy.algorithm, clock)
    }
}

/// # Checking requests
///
/// Each method is the generic [`Limiter`]'s, behind one `match`.
impl<C: Clock> AnyLimiter<C> {
    /// Decides one request, consuming one unit when it is allowed; see [`Limiter::check`].
    #[inline(always)]
    pub fn check(&self) -> Decision {
        dispatch!(Direct, &self.0, limiter => limiter.check())
    }

    /// Decides a request of cost `n`; see [`Limiter::check_n`].
    #[inline(always)]
    pub fn check_n(&self, n: u32) -> Result<Decision, CapacityError> {
        dispatch!(Direct, &self.0, limiter => limiter.check_n(n))
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    #[inline(always)]
    pub fn peek(&self) -> Decision {
        dispatch!(Direct, &self.0, limiter => limiter.peek())
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    #[inline(always)]
    pub fn peek_n(&self, n: u32) -> Result<Decision, CapacityError> {
        dispatch!(Direct, &self.0, limiter => limiter.peek_n(n))
    }

    /// Records `n` units whatever the answer; see [`Limiter::hit`].
    #[inline(always)]
    pub fn hit(&self, n: u32) -> Decision {
        dispatch!(Direct, &self.0, limiter => limiter.hit(n))
    }

    /// [`check_n`](Self::check_n), [`peek_n`](Self::peek_n) or [`hit`](Self::hit), as `op`
    /// says: for a caller that receives the operation as a value (a language binding).
    #[inline(always)]
    pub fn decide_op(&self, cost: u32, op: Op) -> Result<Decision, CapacityError> {
        match op {
            Op::Check => self.check_n(cost),
            Op::Peek => self.peek_n(cost),
            Op::Hit => Ok(self.hit(cost)),
        }
    }
}

/// # Inspecting
impl<C: Clock> AnyLimiter<C> {
    /// The algorithm this limiter runs.
    pub fn algorithm(&self) -> AlgorithmKind {
        dispatch!(Direct, &self.0, limiter => limiter.algorithm())
    }

    /// The quota this limiter enforces.
    pub fn quota(&self) -> Quota {
        dispatch!(Direct, &self.0, limiter => limiter.quota())
    }

    /// The largest cost one check can be allowed; see [`Limiter::max_cost`].
    pub fn max_cost(&self) -> u32 {
        dispatch!(Direct, &self.0, limiter => limiter.max_cost())
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        dispatch!(Direct, &self.0, limiter => limiter.clock())
    }

    /// See [`Limiter::set_quota`].
    pub fn set_quota(&self, quota: Quota) -> Result<(), QuotaError> {
        dispatch!(Direct, &self.0, limiter => limiter.set_quota(quota))
    }

    /// See [`Limiter::name`].
    pub fn name(&self) -> &str {
        dispatch!(Direct, &self.0, limiter => limiter.name())
    }

    /// See [`Limiter::memory_bytes`].
    pub fn memory_bytes(&self) -> usize {
        dispatch!(Direct, &self.0, limiter => limiter.memory_bytes())
    }

    /// See [`Limiter::allowed`] (feature `metrics`).
    #[cfg(feature = "metrics")]
    pub fn allowed(&self) -> u64 {
        dispatch!(Direct, &self.0, limiter => limiter.allowed())
    }

    /// See [`Limiter::denied`] (feature `metrics`).
    #[cfg(feature = "metrics")]
    pub fn denied(&self) -> u64 {
        dispatch!(Direct, &self.0, limiter => limiter.denied())
    }

    /// The generic limiter inside, as one limit of a [`Composite`](crate::Composite).
    ///
    /// ```
    /// use sluicegate::dynamic::AnyLimiter;
    /// use sluicegate::policy::AlgorithmKind;
    /// use sluicegate::{Composite, KeyedLimiter, Quota};
    ///
    /// let global = AnyLimiter::<sluicegate::clock::TscClock>::new(Quota::per_second(1), AlgorithmKind::SlidingLog)?;
    /// let per_user = KeyedLimiter::<u64>::new(Quota::per_second(5))?;
    /// assert!(Composite::new(&[global.as_limit(), &per_user.key(&1)]).check().is_allowed());
    /// assert!(Composite::new(&[global.as_limit(), &per_user.key(&2)]).check().is_denied());
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn as_limit(&self) -> &dyn Limit {
        dispatch!(Direct, &self.0, limiter => limiter)
    }

    /// The variant, for the seam's and telemetry's delegation.
    pub(super) fn inner(&self) -> &Direct<C> {
        &self.0
    }
}

/// Wraps a generic limiter, keeping its state.
macro_rules! from_generic {
    ($($algorithm:ident),*) => {$(
        impl<C: Clock> From<Limiter<$algorithm, C>> for AnyLimiter<C> {
            fn from(limiter: Limiter<$algorithm, C>) -> Self {
                AnyLimiter(Direct::$algorithm(limiter))
            }
        }
    )*};
}
from_generic!(
    Gcra,
    TokenBucket,
    LeakyBucket,
    FixedWindow,
    SlidingWindow,
    SlidingLog
);

impl<C: Clock> fmt::Debug for AnyLimiter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch!(Direct, &self.0, limiter => f.debug_tuple("AnyLimiter").field(limiter).finish())
    }
}
