//! [`TieredBuilder`]: the tiers, their quotas, and the knobs every tier's table shares.

use super::error::TierError;
use super::limiter::TieredLimiter;
use crate::algorithm::AlgorithmKind;
use crate::clock::Clock;
use crate::dynamic::{AnyKeyedBuilder, AnyKeyedLimiter};
use crate::keyed::{table_setters, ClockSource, TableOptions};
use crate::quota::Quota;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

/// One tier as given.
struct TierSpec<T> {
    tier: T,
    quota: Quota,
    /// `None`: the builder's algorithm.
    algorithm: Option<AlgorithmKind>,
}

/// Builds a [`TieredLimiter`]: its tiers, each with a quota and optionally an algorithm, and
/// the clock, hasher and table knobs (shards, initial capacity, `max_keys`, name) every tier's
/// table shares. Start with
/// [`TieredLimiter::builder`].
///
/// ```
/// use std::collections::BTreeMap;
/// use sluicegate::tiers::TieredLimiter;
/// use sluicegate::policy::AlgorithmKind;
/// use sluicegate::Quota;
///
/// // Tiers from configuration: names and quota strings.
/// let plans: BTreeMap<String, Quota> = [("free", "10/minute"), ("pro", "100/minute burst 20")]
///     .into_iter()
///     .map(|(name, quota)| Ok((name.to_string(), quota.parse()?)))
///     .collect::<Result<_, sluicegate::QuotaError>>()?;
/// let limits = TieredLimiter::<String, String>::builder()
///     .algorithm(AlgorithmKind::SlidingWindow)
///     .tiers(plans)
///     .tier_with("internal".to_string(), Quota::per_second(1000), AlgorithmKind::Gcra)
///     .max_keys(1_000_000)
///     .build()?;
/// assert!(limits.check("pro", "token-1")?.is_allowed());
/// assert!(limits.check("gold", "token-1").is_err()); // not a tier
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TieredBuilder<T, K, C, S> {
    tiers: Vec<TierSpec<T>>,
    algorithm: AlgorithmKind,
    clock: ClockSource<C>,
    hasher: S,
    options: TableOptions,
    keys: PhantomData<fn() -> K>,
}

impl<T, K, C: Clock, S> TieredBuilder<T, K, C, S> {
    pub(super) fn new(hasher: S) -> Self
    where
        C: Default,
    {
        TieredBuilder {
            tiers: Vec::new(),
            algorithm: AlgorithmKind::default(),
            clock: ClockSource::Default(C::default),
            hasher,
            options: TableOptions::default(),
            keys: PhantomData,
        }
    }

    /// Adds `tier`, whose keys each get `quota`, run by the builder's algorithm.
    pub fn tier(mut self, tier: T, quota: Quota) -> Self {
        self.tiers.push(TierSpec {
            tier,
            quota,
            algorithm: None,
        });
        self
    }

    /// Adds `tier`, whose keys each get `quota`, run by `algorithm`.
    pub fn tier_with(mut self, tier: T, quota: Quota, algorithm: AlgorithmKind) -> Self {
        self.tiers.push(TierSpec {
            tier,
            quota,
            algorithm: Some(algorithm),
        });
        self
    }

    /// Adds every `(tier, quota)` of `tiers`, as [`tier`](Self::tier) does.
    pub fn tiers(self, tiers: impl IntoIterator<Item = (T, Quota)>) -> Self {
        tiers
            .into_iter()
            .fold(self, |builder, (tier, quota)| builder.tier(tier, quota))
    }

    /// The algorithm of the tiers added without one (default: GCRA).
    pub fn algorithm(mut self, algorithm: AlgorithmKind) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Reads time from `clock` (one clock for every tier).
    pub fn clock<C2: Clock>(self, clock: C2) -> TieredBuilder<T, K, C2, S> {
        TieredBuilder {
            tiers: self.tiers,
            algorithm: self.algorithm,
            clock: ClockSource::Given(clock),
            hasher: self.hasher,
            options: self.options,
            keys: PhantomData,
        }
    }

    /// Hashes keys with `hasher` (cloned for each tier).
    pub fn hasher<S2: BuildHasher + Clone>(self, hasher: S2) -> TieredBuilder<T, K, C, S2> {
        TieredBuilder {
            tiers: self.tiers,
            algorithm: self.algorithm,
            clock: self.clock,
            hasher,
            options: self.options,
            keys: PhantomData,
        }
    }

    table_setters!(options);

    /// Builds the limiter, or says which tier is wrong: none given, one given twice, or a
    /// quota its algorithm cannot run.
    pub fn build(self) -> Result<TieredLimiter<T, K, C, S>, TierError>
    where
        T: Eq + fmt::Debug,
        K: Hash + Eq + Clone + Send + Sync,
        S: BuildHasher + Clone,
    {
        if self.tiers.is_empty() {
            return Err(TierError::NoTiers);
        }
        for (i, spec) in self.tiers.iter().enumerate() {
            if self.tiers[..i]
                .iter()
                .any(|earlier| earlier.tier == spec.tier)
            {
                return Err(TierError::DuplicateTier(format!("{:?}", spec.tier)));
            }
        }
        let clock = self.clock.take();
        let mut tiers = Vec::with_capacity(self.tiers.len());
        for spec in self.tiers {
            let algorithm = spec.algorithm.unwrap_or(self.algorithm);
            let clock = ClockSource::Given(clock.clone());
            let builder =
                AnyKeyedBuilder::from_source(spec.quota, algorithm, clock, self.hasher.clone());
            let limiter: AnyKeyedLimiter<K, C, S> = builder
                .options(self.options.clone())
                .build()
                .map_err(|error| TierError::Quota {
                tier: format!("{:?}", spec.tier),
                error,
            })?;
            tiers.push((spec.tier, limiter));
        }
        Ok(TieredLimiter::from_tiers(tiers))
    }
}

impl<T: fmt::Debug, K, C: fmt::Debug, S> fmt::Debug for TieredBuilder<T, K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tiers: Vec<(&T, &Quota, AlgorithmKind)> = self
            .tiers
            .iter()
            .map(|spec| {
                (
                    &spec.tier,
                    &spec.quota,
                    spec.algorithm.unwrap_or(self.algorithm),
                )
            })
            .collect();
        f.debug_struct("TieredBuilder")
            .field("tiers", &tiers)
            .field("clock", &self.clock)
            .field("options", &self.options)
            .finish()
    }
}
