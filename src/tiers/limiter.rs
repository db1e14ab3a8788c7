//! [`TieredLimiter`]: a keyed table per tier behind one check.

use super::builder::TieredBuilder;
use super::error::{TierError, UnknownTier};
use crate::clock::{Clock, TscClock};
use crate::decision::Decision;
use crate::dynamic::AnyKeyedLimiter;
use crate::telemetry::{Counts, Observed};
use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash};

/// A rate limiter with a quota per tier and a state per key within each tier; the tier is
/// chosen per request. See the [module documentation](super) for what happens when a key
/// changes tier.
///
/// `T` is the tier (your enum of plans, or a `String` checked by `&str`), `K` the key, `C`
/// the clock and `S` the hasher, shared by every tier. Each tier is an
/// [`AnyKeyedLimiter`], so tiers may even run different algorithms; a check finds its tier
/// by comparing tiers in the order they were added (meant for a handful of plans, not one
/// tier per customer), then checks the key there exactly as a separate keyed limiter would.
///
/// ```
/// use sluicegate::tiers::{TieredLimiter, TierError};
/// use sluicegate::Quota;
///
/// let limits = TieredLimiter::<&str, String>::builder()
///     .tier("free", Quota::per_minute(2))
///     .tier("pro", Quota::per_minute(100))
///     .build()?;
/// assert!(limits.check(&"free", "alice")?.is_allowed());
/// assert!(limits.check(&"free", "alice")?.is_allowed());
/// assert!(limits.check(&"free", "alice")?.is_denied());
/// assert!(limits.check(&"pro", "bob")?.is_allowed());
/// match limits.check_n(&"free", "carol", 3) {
///     Err(TierError::Capacity(error)) => assert_eq!(error.capacity(), 2),
///     other => panic!("{other:?}"),
/// }
/// assert_eq!(limits.len(), 2); // alice in free, bob in pro
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TieredLimiter<T, K, C: Clock = TscClock, S = ahash::RandomState> {
    tiers: Box<[Tier<T, K, C, S>]>,
}

/// A tier and its table.
type Tier<T, K, C, S> = (T, AnyKeyedLimiter<K, C, S>);

/// # Building a tiered limiter
impl<T, K, C: Clock, S> TieredLimiter<T, K, C, S> {
    /// A builder: add tiers with [`tier`](TieredBuilder::tier), then
    /// [`build`](TieredBuilder::build).
    pub fn builder() -> TieredBuilder<T, K, C, S>
    where
        C: Default,
        S: Default,
    {
        TieredBuilder::new(S::default())
    }

    pub(super) fn from_tiers(tiers: Vec<Tier<T, K, C, S>>) -> Self {
        TieredLimiter {
            tiers: tiers.into_boxed_slice(),
        }
    }
}

/// # Checking requests
///
/// Each method finds the tier, then does what [`AnyKeyedLimiter`]'s method of the same name
/// does.
impl<T, K, C, S> TieredLimiter<T, K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher,
{
    /// The tier's limiter: to inspect it, or to pass it where a
    /// [`Backend`](crate::backend::Backend) is wanted.
    #[inline]
    pub fn tier<U>(&self, tier: &U) -> Option<&AnyKeyedLimiter<K, C, S>>
    where
        T: Borrow<U>,
        U: Eq + ?Sized,
    {
        self.tiers
            .iter()
            .find(|(candidate, _)| candidate.borrow() == tier)
            .map(|(_, limiter)| limiter)
    }

    #[inline]
    fn find<U>(&self, tier: &U) -> Result<&AnyKeyedLimiter<K, C, S>, UnknownTier>
    where
        T: Borrow<U>,
        U: Eq + ?Sized,
    {
        self.tier(tier).ok_or(UnknownTier)
    }

    /// Decides one request for `key` in `tier`, consuming one unit when allowed.
    #[inline]
    pub fn check<U, Q>(&self, tier: &U, key: &Q) -> Result<Decision, UnknownTier>
    where
        T: Borrow<U>,
        U: Eq + ?Sized,
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        Ok(self.find(tier)?.check(key))
    }

    /// Decides a request of cost `n` for `key` in `tier`.
    #[inline]
    pub fn check_n<U, Q>(&self, tier: &U, key: &Q, n: u32) -> Result<Decision, TierError>
    where
        T: Borrow<U>,
        U: Eq + ?Sized,
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        Ok(self.find(tier)?.check_n(key, n)?)
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    #[inline]
    pub fn peek<U, Q>(&self, tier: &U, key: &Q) -> Result<Decision, UnknownTier>
    where
        T: Borrow<U>,
        U: Eq + ?Sized,
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        Ok(self.find(tier)?.peek(key))
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    #[inline]
    pub fn peek_n<U, Q>(&self, tier: &U, key: &Q, n: u32) -> Result<Decision, TierError>
    where
        T: Borrow<U>,
        U: Eq + ?Sized,
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        Ok(self.find(tier)?.peek_n(key, n)?)
    }

    /// Records `n` units for `key` in `tier` whatever the answer.
    #[inline]
    pub fn hit<U, Q>(&self, tier: &U, key: &Q, n: u32) -> Result<Decision, UnknownTier>
    where
        T: Borrow<U>,
        U: Eq + ?Sized,
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        Ok(self.find(tier)?.hit(key, n))
    }

    /// Sweeps every tier; returns how many keys were removed in all.
    pub fn sweep(&self) -> usize {
        self.limiters().map(AnyKeyedLimiter::sweep).sum()
    }
}

/// # Inspecting
impl<T, K, C, S> TieredLimiter<T, K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher,
{
    /// Every tier with its limiter, in the order they were added.
    pub fn tiers(&self) -> impl Iterator<Item = (&T, &AnyKeyedLimiter<K, C, S>)> {
        self.tiers.iter().map(|(tier, limiter)| (tier, limiter))
    }

    fn limiters(&self) -> impl Iterator<Item = &AnyKeyedLimiter<K, C, S>> {
        self.tiers.iter().map(|(_, limiter)| limiter)
    }

    /// Keys held in all tiers (a key in two tiers counts twice).
    pub fn len(&self) -> usize {
        self.limiters().map(AnyKeyedLimiter::len).sum()
    }

    /// True when no tier holds a key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held by all tiers.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.tiers.len() * std::mem::size_of::<Tier<T, K, C, S>>()
            + self
                .limiters()
                .map(AnyKeyedLimiter::memory_bytes)
                .sum::<usize>()
    }

    /// Checks allowed in all tiers.
    pub fn allowed(&self) -> u64 {
        self.limiters().map(AnyKeyedLimiter::allowed).sum()
    }

    /// Checks denied in all tiers.
    pub fn denied(&self) -> u64 {
        self.limiters().map(AnyKeyedLimiter::denied).sum()
    }
}

/// The sums over every tier. For figures per tier, publish each tier's limiter (with
/// `Publisher::register_with`, feature `metrics`) or take a
/// [`Snapshot`](crate::telemetry::Snapshot) of it.
impl<T, K, C, S> Observed for TieredLimiter<T, K, C, S>
where
    T: Send + Sync,
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    fn counts(&self) -> Option<Counts> {
        Some(Counts {
            allowed: self.allowed(),
            denied: self.denied(),
        })
    }

    fn keys(&self) -> Option<usize> {
        Some(self.len())
    }

    fn memory_bytes(&self) -> Option<usize> {
        Some(TieredLimiter::memory_bytes(self))
    }
}

impl<T, K, C, S> fmt::Debug for TieredLimiter<T, K, C, S>
where
    T: fmt::Debug,
    K: Hash + Eq + Clone + Send + Sync,
    C: Clock,
    S: BuildHasher,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.tiers()).finish()
    }
}
