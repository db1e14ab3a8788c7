//! [`AnyKeyedLimiter`]: a keyed limiter whose algorithm is a value.

use super::builder::AnyKeyedBuilder;
use super::dispatch;
use crate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, Op, SlidingLog, SlidingWindow, TokenBucket,
};
use crate::backend::{self as composite, Limit};
use crate::clock::{Clock, TscClock};
use crate::decision::Decision;
use crate::error::{CapacityError, QuotaError};
use crate::keyed::KeyedLimiter;
use crate::policy::{AlgorithmKind, Policy};
use crate::quota::Quota;
use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash};

/// A [`KeyedLimiter`] whose algorithm is chosen at run time: one `match` away from the
/// generic keyed limiter it holds, and deciding exactly as it would.
///
/// Build it from a quota and an [`AlgorithmKind`], from a [`Policy`], through
/// [`builder`](Self::builder) (clock, hasher, shards, capacity, `max_keys`), or convert a
/// generic `KeyedLimiter` with `From`. It is a [`Backend`](crate::backend::Backend) like
/// `KeyedLimiter`.
///
/// ```
/// use sluicegate::dynamic::AnyKeyedLimiter;
/// use sluicegate::policy::AlgorithmKind;
/// use sluicegate::Quota;
///
/// let per_user = AnyKeyedLimiter::<u64>::builder(Quota::per_second(2), AlgorithmKind::Gcra)
///     .shards(8)
///     .max_keys(100_000)
///     .build()?;
/// assert!(per_user.check(&7).is_allowed());
/// assert!(per_user.check(&7).is_allowed());
/// assert!(per_user.check(&7).is_denied());
/// assert_eq!(per_user.len(), 1);
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
pub struct AnyKeyedLimiter<K, C: Clock = TscClock, S = ahash::RandomState>(
    pub(super) Keyed<K, C, S>,
);

/// One variant per algorithm.
pub(super) enum Keyed<K, C: Clock, S> {
    Gcra(KeyedLimiter<K, Gcra, C, S>),
    TokenBucket(KeyedLimiter<K, TokenBucket, C, S>),
    LeakyBucket(KeyedLimiter<K, LeakyBucket, C, S>),
    FixedWindow(KeyedLimiter<K, FixedWindow, C, S>),
    SlidingWindow(KeyedLimiter<K, SlidingWindow, C, S>),
    SlidingLog(KeyedLimiter<K, SlidingLog, C, S>),
}

/// # Building a keyed limiter
impl<K, C, S> AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher,
{
    /// A limiter running `algorithm` for `quota` on the clock's and hasher's default
    /// instances.
    pub fn new(quota: Quota, algorithm: AlgorithmKind) -> Result<Self, QuotaError>
    where
        C: Default,
        S: Default,
    {
        Self::builder(quota, algorithm).build()
    }

    /// A limiter running `algorithm` for `quota`, reading time from `clock`.
    pub fn with_clock(quota: Quota, algorithm: AlgorithmKind, clock: C) -> Result<Self, QuotaError>
    where
        S: Default,
    {
        AnyKeyedBuilder::from_source(
            quota,
            algorithm,
            crate::keyed::ClockSource::Given(clock),
            S::default(),
        )
        .build()
    }

    /// A limiter for `policy`'s quota and algorithm on the default clock and hasher. The
    /// policy's name and key say what the caller feeds it; the limiter takes any `K`.
    pub fn from_policy(policy: &Policy) -> Result<Self, QuotaError>
    where
        C: Default,
        S: Default,
    {
        Self::new(policy.quota, policy.algorithm)
    }

    /// A builder to choose the clock, hasher, shard count, initial capacity and `max_keys`,
    /// as [`KeyedLimiter::builder`] does.
    pub fn builder(quota: Quota, algorithm: AlgorithmKind) -> AnyKeyedBuilder<K, C, S>
    where
        C: Default,
        S: Default,
    {
        AnyKeyedBuilder::new(quota, algorithm, S::default())
    }
}

/// # Checking requests
///
/// Each method is the generic [`KeyedLimiter`]'s, behind one `match`.
impl<K, C, S> AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher,
{
    /// Decides one request for `key`, consuming one unit when it is allowed; see
    /// [`KeyedLimiter::check`].
    #[inline(always)]
    pub fn check<Q>(&self, key: &Q) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        dispatch!(Keyed, &self.0, limiter => limiter.check(key))
    }

    /// Decides a request of cost `n` for `key`; see [`KeyedLimiter::check_n`].
    #[inline(always)]
    pub fn check_n<Q>(&self, key: &Q, n: u32) -> Result<Decision, CapacityError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        dispatch!(Keyed, &self.0, limiter => limiter.check_n(key, n))
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    #[inline(always)]
    pub fn peek<Q>(&self, key: &Q) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        dispatch!(Keyed, &self.0, limiter => limiter.peek(key))
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    #[inline(always)]
    pub fn peek_n<Q>(&self, key: &Q, n: u32) -> Result<Decision, CapacityError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        dispatch!(Keyed, &self.0, limiter => limiter.peek_n(key, n))
    }

    /// Records `n` units for `key` whatever the answer; see [`KeyedLimiter::hit`].
    #[inline(always)]
    pub fn hit<Q>(&self, key: &Q, n: u32) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        dispatch!(Keyed, &self.0, limiter => limiter.hit(key, n))
    }

    /// [`check_n`](Self::check_n), [`peek_n`](Self::peek_n) or [`hit`](Self::hit), as `op`
    /// says: for a caller that receives the operation as a value (a language binding).
    #[inline(always)]
    pub fn decide_op<Q>(&self, key: &Q, cost: u32, op: Op) -> Result<Decision, CapacityError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        match op {
            Op::Check => self.check_n(key, cost),
            Op::Peek => self.peek_n(key, cost),
            Op::Hit => Ok(self.hit(key, cost)),
        }
    }

    /// Drops every key whose state is back to fresh; see [`KeyedLimiter::sweep`].
    pub fn sweep(&self) -> usize {
        dispatch!(Keyed, &self.0, limiter => limiter.sweep())
    }

    /// Forgets `key`; see [`KeyedLimiter::reset`].
    pub fn reset<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        dispatch!(Keyed, &self.0, limiter => limiter.reset(key))
    }

    /// This limiter's limit for `key`, to check within a [`Composite`](crate::Composite)
    /// through [`AnyKeyed::as_limit`].
    ///
    /// ```
    /// use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
    /// use sluicegate::policy::AlgorithmKind;
    /// use sluicegate::{Composite, Quota};
    ///
    /// let global: AnyLimiter = AnyLimiter::new(Quota::per_second(10), AlgorithmKind::Gcra)?;
    /// let per_user = AnyKeyedLimiter::<u64>::new(Quota::per_second(1), AlgorithmKind::FixedWindow)?;
    /// let user = per_user.key(&7);
    /// assert!(Composite::new(&[global.as_limit(), user.as_limit()]).check().is_allowed());
    /// assert!(Composite::new(&[global.as_limit(), user.as_limit()]).check().is_denied());
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn key<'a, Q>(&'a self, key: &'a Q) -> AnyKeyed<'a, K, Q, C, S>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        AnyKeyed(match &self.0 {
            Keyed::Gcra(limiter) => KeyView::Gcra(limiter.key(key)),
            Keyed::TokenBucket(limiter) => KeyView::TokenBucket(limiter.key(key)),
            Keyed::LeakyBucket(limiter) => KeyView::LeakyBucket(limiter.key(key)),
            Keyed::FixedWindow(limiter) => KeyView::FixedWindow(limiter.key(key)),
            Keyed::SlidingWindow(limiter) => KeyView::SlidingWindow(limiter.key(key)),
            Keyed::SlidingLog(limiter) => KeyView::SlidingLog(limiter.key(key)),
        })
    }
}

/// # Inspecting
impl<K, C, S> AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher,
{
    /// The algorithm this limiter runs.
    pub fn algorithm(&self) -> AlgorithmKind {
        dispatch!(Keyed, &self.0, limiter => limiter.algorithm())
    }

    /// Keys currently held.
    pub fn len(&self) -> usize {
        dispatch!(Keyed, &self.0, limiter => limiter.len())
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots currently allocated for keys; see [`KeyedLimiter::slots`].
    pub fn slots(&self) -> usize {
        dispatch!(Keyed, &self.0, limiter => limiter.slots())
    }

    /// Bytes the limiter holds; see [`KeyedLimiter::memory_bytes`].
    pub fn memory_bytes(&self) -> usize {
        dispatch!(Keyed, &self.0, limiter => limiter.memory_bytes())
    }

    /// Checks allowed so far (peeks not counted).
    pub fn allowed(&self) -> u64 {
        dispatch!(Keyed, &self.0, limiter => limiter.allowed())
    }

    /// See [`KeyedLimiter::set_quota`].
    pub fn set_quota(&self, quota: Quota) -> Result<(), QuotaError> {
        dispatch!(Keyed, &self.0, limiter => limiter.set_quota(quota))
    }

    /// See [`KeyedLimiter::swept_keys`].
    pub fn swept_keys(&self) -> u64 {
        dispatch!(Keyed, &self.0, limiter => limiter.swept_keys())
    }

    /// See [`KeyedLimiter::table_full_denials`].
    pub fn table_full_denials(&self) -> u64 {
        dispatch!(Keyed, &self.0, limiter => limiter.table_full_denials())
    }

    /// See [`KeyedLimiter::name`].
    pub fn name(&self) -> &str {
        dispatch!(Keyed, &self.0, limiter => limiter.name())
    }

    /// Checks denied so far (peeks not counted).
    pub fn denied(&self) -> u64 {
        dispatch!(Keyed, &self.0, limiter => limiter.denied())
    }

    /// The largest cost one check can be allowed.
    pub fn max_cost(&self) -> u32 {
        dispatch!(Keyed, &self.0, limiter => limiter.max_cost())
    }

    /// Shards in the table.
    pub fn shards(&self) -> usize {
        dispatch!(Keyed, &self.0, limiter => limiter.shards())
    }

    /// The quota every key gets.
    pub fn quota(&self) -> Quota {
        dispatch!(Keyed, &self.0, limiter => limiter.quota())
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        dispatch!(Keyed, &self.0, limiter => limiter.clock())
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        dispatch!(Keyed, &self.0, limiter => limiter.hasher())
    }
}

/// Wraps a generic keyed limiter, keeping its keys and states.
macro_rules! from_generic {
    ($($algorithm:ident),*) => {$(
        impl<K, C: Clock, S> From<KeyedLimiter<K, $algorithm, C, S>> for AnyKeyedLimiter<K, C, S> {
            fn from(limiter: KeyedLimiter<K, $algorithm, C, S>) -> Self {
                AnyKeyedLimiter(Keyed::$algorithm(limiter))
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

impl<K, C, S> fmt::Debug for AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch!(Keyed, &self.0, limiter => f.debug_tuple("AnyKeyedLimiter").field(limiter).finish())
    }
}

/// An [`AnyKeyedLimiter`] paired with a key, as one limit of a
/// [`Composite`](crate::Composite): made by [`AnyKeyedLimiter::key`], passed as
/// [`as_limit`](Self::as_limit).
pub struct AnyKeyed<'a, K, Q: ?Sized, C: Clock, S>(KeyView<'a, K, Q, C, S>);

enum KeyView<'a, K, Q: ?Sized, C: Clock, S> {
    Gcra(composite::Keyed<'a, K, Q, Gcra, C, S>),
    TokenBucket(composite::Keyed<'a, K, Q, TokenBucket, C, S>),
    LeakyBucket(composite::Keyed<'a, K, Q, LeakyBucket, C, S>),
    FixedWindow(composite::Keyed<'a, K, Q, FixedWindow, C, S>),
    SlidingWindow(composite::Keyed<'a, K, Q, SlidingWindow, C, S>),
    SlidingLog(composite::Keyed<'a, K, Q, SlidingLog, C, S>),
}

impl<K, Q, C, S> AnyKeyed<'_, K, Q, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + Borrow<Q>,
    Q: Hash + Eq + ToOwned<Owned = K> + Sync + ?Sized,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    /// The key's limit, for [`Composite::new`](crate::Composite::new).
    pub fn as_limit(&self) -> &dyn Limit {
        dispatch!(KeyView, &self.0, keyed => keyed)
    }
}

impl<K, Q: ?Sized, C: Clock, S> fmt::Debug for AnyKeyed<'_, K, Q, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch!(KeyView, &self.0, keyed => f.debug_tuple("AnyKeyed").field(keyed).finish())
    }
}
