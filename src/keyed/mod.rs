//! [`KeyedLimiter`]: one rate limit per key (user, IP, API token), for millions of keys.

mod builder;
mod observed;
mod options;

pub use builder::KeyedBuilder;
pub(crate) use options::{table_setters, ClockSource, TableOptions};

use crate::algorithm::clamp_time;
use crate::algorithm::Op;
use crate::algorithm::{AlgorithmKind, Gcra};
use crate::clock::{Clock, TscClock};
use crate::decision::Decision;
use crate::error::{CapacityError, QuotaError};
use crate::quota::Quota;
use crate::state::outcome::Swap;
use crate::state::shared_quota::SharedQuota;
use crate::state::table::{Layout, Table};
use crate::state::Algorithm;
use crate::sync::{lock, AtomicU32, Mutex, Ordering};
use crate::telemetry::LimiterLog;
use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash};

/// A rate limiter with a state per key: every key gets the same quota, independently.
///
/// The check of a key already present is lock-free and writes nothing shared but that key's
/// own state word (no reader lock, no shared counter). A key seen for the first time takes
/// its shard's insert lock, which readers never wait on. Keys are compared exactly, so two
/// keys never share a state; a `KeyedLimiter<String>` is checked with a `&str`, and a hit
/// allocates nothing.
///
/// Memory stays bounded: a key whose state is back to fresh (a full bucket, an expired
/// window) carries no information, and the table drops such keys by itself when a shard
/// fills up, or when you call [`sweep`](Self::sweep), without ever losing a concurrent
/// update. [`builder`](Self::builder) also sets a hard bound, [`max_keys`](KeyedBuilder::max_keys).
///
/// ```
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let per_user = KeyedLimiter::<u64>::new(Quota::per_second(2))?;
/// assert!(per_user.check(&7).is_allowed());
/// assert!(per_user.check(&7).is_allowed());
/// assert!(per_user.check(&7).is_denied());
/// assert!(per_user.check(&8).is_allowed()); // another key, its own quota
///
/// let by_name = KeyedLimiter::<String>::new(Quota::per_minute(100))?;
/// assert_eq!(by_name.check("alice").remaining(), 99);
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
pub struct KeyedLimiter<K, A: Algorithm = Gcra, C: Clock = TscClock, S = ahash::RandomState> {
    table: Table<K, A, S>,
    max_cost: AtomicU32,
    quota: SharedQuota,
    clock: C,
    /// Serializes reconfigurations; counts them (the generation of the current quota).
    reconfiguring: Mutex<u32>,
    name: Box<str>,
    /// Denials and full tables, logged (feature `tracing`; zero-sized without it).
    log: LimiterLog,
}

/// # Building a keyed limiter
impl<K, A, C, S> KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    /// A limiter for `quota` on the clock's and hasher's default instances ([`TscClock`] and
    /// a randomly seeded `ahash` unless `C` and `S` say otherwise).
    pub fn new(quota: Quota) -> Result<Self, QuotaError>
    where
        C: Default,
        S: Default,
    {
        Self::builder(quota).build()
    }

    /// A limiter for `quota` reading time from `clock`.
    pub fn with_clock(quota: Quota, clock: C) -> Result<Self, QuotaError>
    where
        S: Default,
    {
        KeyedBuilder::with_clock(quota, clock, S::default()).build()
    }

    /// A builder to choose the clock, hasher, shard count, initial capacity and `max_keys`.
    ///
    /// ```
    /// use sluicegate::{KeyedLimiter, Quota, algorithm::SlidingWindow, clock::ManualClock};
    ///
    /// let limiter = KeyedLimiter::<u64, SlidingWindow>::builder(Quota::per_minute(60))
    ///     .clock(ManualClock::new())
    ///     .shards(16)
    ///     .initial_capacity(10_000)
    ///     .max_keys(1_000_000)
    ///     .build()?;
    /// assert_eq!(limiter.shards(), 16);
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn builder(quota: Quota) -> KeyedBuilder<K, A, C, S>
    where
        C: Default,
        S: Default,
    {
        KeyedBuilder::new(quota, S::default())
    }

    pub(crate) fn from_parts(
        quota: Quota,
        clock: C,
        hasher: S,
        layout: Layout,
        name: Box<str>,
    ) -> Result<Self, QuotaError> {
        let params = A::params(&quota, clock.unix_offset())?;
        Ok(KeyedLimiter {
            max_cost: AtomicU32::new(A::max_cost(&params)),
            table: Table::new(params, hasher, layout),
            quota: SharedQuota::new(quota),
            clock,
            reconfiguring: Mutex::new(0),
            log: LimiterLog::new(&name),
            name,
        })
    }
}

/// # Checking requests
impl<K, A, C, S> KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    /// Decides one request for `key`, consuming one unit when it is allowed.
    ///
    /// A key seen for the first time starts fresh. If the limiter was built with
    /// [`max_keys`](KeyedBuilder::max_keys) and the key's shard is full of keys that still
    /// carry state, the request is denied with [`Decision::is_table_full`].
    #[inline(always)]
    pub fn check<Q>(&self, key: &Q) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.decide_mode(key, 1, Op::Check)
    }

    /// Decides a request of cost `n` for `key`; see [`Limiter::check_n`](crate::Limiter::check_n).
    #[inline(always)]
    pub fn check_n<Q>(&self, key: &Q, n: u32) -> Result<Decision, CapacityError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.fits(n)?;
        Ok(self.decide_mode(key, n, Op::Check))
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing (and not
    /// storing a key it has not seen).
    #[inline(always)]
    pub fn peek<Q>(&self, key: &Q) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.decide_mode(key, 1, Op::Peek)
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    #[inline(always)]
    pub fn peek_n<Q>(&self, key: &Q, n: u32) -> Result<Decision, CapacityError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.fits(n)?;
        Ok(self.decide_mode(key, n, Op::Peek))
    }

    /// Decides one request for each of `keys`, in order, exactly as calling
    /// [`check`](Self::check) on each in turn would (a key that appears twice is checked
    /// twice), with one clock reading for the whole batch.
    ///
    /// Faster than a loop of checks for a table larger than the caches: each key's slot is
    /// prefetched a few keys before its turn, so the memory accesses of the batch overlap.
    /// For callers that hold batches: message consumers limiting per tenant, log shippers, a
    /// proxy's accept loop.
    ///
    /// ```
    /// use sluicegate::{KeyedLimiter, Quota};
    ///
    /// let per_tenant = KeyedLimiter::<u64>::new(Quota::per_second(2))?;
    /// let decisions = per_tenant.check_many(&[7, 8, 7, 7]);
    /// let allowed: Vec<bool> = decisions.iter().map(|d| d.is_allowed()).collect();
    /// assert_eq!(allowed, [true, true, true, false]);
    ///
    /// let by_name = KeyedLimiter::<String>::new(Quota::per_second(1))?;
    /// assert!(by_name.check_many::<str, _>(&["a", "b", "a"])[2].is_denied());
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn check_many<Q, T>(&self, keys: &[T]) -> Vec<Decision>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        T: Borrow<Q>,
    {
        let mut decisions = Vec::new();
        self.table
            .check_many(keys, self.now(), Op::Check, &mut decisions);
        decisions
    }

    /// The decisions [`check_many`](Self::check_many) would return now, consuming nothing.
    pub fn peek_many<Q, T>(&self, keys: &[T]) -> Vec<Decision>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        T: Borrow<Q>,
    {
        let mut decisions = Vec::new();
        self.table
            .check_many(keys, self.now(), Op::Peek, &mut decisions);
        decisions
    }

    /// Records `n` units for `key` whatever the answer, and says whether they were within the
    /// limit; see [`Limiter::hit`](crate::Limiter::hit).
    #[inline(always)]
    pub fn hit<Q>(&self, key: &Q, n: u32) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.decide_mode(key, n, Op::Hit)
    }

    /// Refuses a cost that could never be admitted.
    #[inline(always)]
    fn fits(&self, n: u32) -> Result<(), CapacityError> {
        Op::Check.within_capacity(n, self.max_cost.load(Ordering::Relaxed))
    }

    /// The current time, clamped, for composite checks.
    #[inline]
    pub(crate) fn now(&self) -> u64 {
        clamp_time(self.clock.now())
    }

    #[inline(always)]
    pub(crate) fn decide_mode<Q>(&self, key: &Q, cost: u32, mode: Op) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let now = clamp_time(self.clock.now());
        let decision = self.table.check(key, now, cost, mode);
        if decision.is_denied() && mode != Op::Peek {
            self.log_denial(key, &decision, now);
        }
        decision
    }

    /// The log events of a denial; nothing without the `tracing` feature.
    #[inline(always)]
    fn log_denial<Q: Hash + ?Sized>(&self, key: &Q, decision: &Decision, now: u64) {
        if decision.is_table_full() {
            self.log.table_full(now, key);
        } else {
            self.log.denied(key, decision);
        }
    }

    /// A consuming check that also returns the swap to [`undo_key`](Self::undo_key) it with.
    pub(crate) fn reserve_key<Q>(&self, key: &Q, cost: u32) -> (Decision, Option<Swap>)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let guard = self.table.pin();
        let (decision, held) = self.table.reserve(key, self.now(), cost, Op::Check, &guard);
        (decision, held.map(|(_, swap)| swap))
    }

    /// Counts the outcome of a composite check this limiter took part in.
    pub(crate) fn count(&self, allowed: bool) {
        self.table.pin().count(allowed);
    }

    /// Reverts `swap` on `key`'s state if nothing has written it since.
    pub(crate) fn undo_key<Q>(&self, key: &Q, swap: Swap) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.table.undo_key(key, swap)
    }

    /// Drops every key whose state is back to fresh (it would decide exactly as a new key)
    /// and frees the memory that releases; returns how many keys were removed.
    ///
    /// Lossless: a check racing with the sweep either lands before the key is removed (which
    /// keeps it) or re-creates it, never losing an admission. The table also sweeps each shard
    /// by itself before growing it, so calling this is optional.
    pub fn sweep(&self) -> usize {
        self.table.sweep(clamp_time(self.clock.now()))
    }

    /// Forgets `key`: its next request is decided as a new key's (a full bucket, an empty
    /// window). Returns whether the key held a state. For a sign-in limit reset after a
    /// successful sign-in, or a client unblocked by hand.
    ///
    /// A check racing with the reset is decided either before it (and then forgotten with
    /// the rest) or after it, on the fresh state.
    ///
    /// ```
    /// use sluicegate::{KeyedLimiter, Quota};
    ///
    /// let sign_in = KeyedLimiter::<String>::new(Quota::per_hour(1))?;
    /// assert!(sign_in.check("alice").is_allowed());
    /// assert!(sign_in.check("alice").is_denied());
    /// assert!(sign_in.reset("alice"));
    /// assert!(sign_in.check("alice").is_allowed());
    /// assert!(!sign_in.reset("bob"), "never seen");
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn reset<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.table.reset(key)
    }
}

/// # Changing the quota
impl<K, A, C, S> KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    /// Gives every key `quota` from now on, keeping what each has consumed; see
    /// [`Limiter::set_quota`](crate::Limiter::set_quota) for how states carry over.
    ///
    /// Each shard is converted under its insert lock, key by key, by the same lock-free
    /// migration that grows the table: a check racing the change is decided entirely under
    /// the old quota or entirely under the new one, and none waits. Costs a pass over every
    /// key; checks stay as fast as before. Fails, changing nothing, if the algorithm cannot
    /// run `quota`.
    ///
    /// ```
    /// use sluicegate::{KeyedLimiter, Quota, algorithm::FixedWindow, clock::ManualClock};
    ///
    /// let limiter = KeyedLimiter::<u64, FixedWindow, _>::with_clock(
    ///     Quota::per_minute(100),
    ///     ManualClock::new(),
    /// )?;
    /// limiter.check_n(&7, 30)?;
    /// limiter.set_quota(Quota::per_minute(50))?; // a downgrade: 30 of 50 used
    /// assert_eq!(limiter.peek(&7).remaining(), 19);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_quota(&self, quota: Quota) -> Result<(), QuotaError> {
        let params = A::params(&quota, self.clock.unix_offset())?;
        let mut generation = lock(&self.reconfiguring);
        *generation += 1;
        let now = clamp_time(self.clock.now());
        // A lower capacity is published first, so that new costs above it are refused
        // before any key is converted; a higher one once every key is.
        let max_cost = A::max_cost(&params);
        if max_cost < self.max_cost.load(Ordering::Relaxed) {
            self.max_cost.store(max_cost, Ordering::Relaxed);
        }
        self.table.reconfigure(params, *generation, now);
        self.max_cost.store(max_cost, Ordering::Relaxed);
        self.quota.store(quota);
        Ok(())
    }
}

/// # Inspecting
impl<K, A, C, S> KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    /// Keys currently held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots currently allocated for keys (held keys, swept ones awaiting compaction, and
    /// room to grow).
    pub fn slots(&self) -> usize {
        self.table.slots()
    }

    /// Bytes the limiter holds: its arrays, the sliding logs' rings, memory awaiting
    /// reclamation, and per-thread records. Heap memory owned by the keys themselves (a
    /// `String`'s buffer) is not counted.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.table.memory_bytes()
    }

    /// Checks allowed so far (peeks not counted). Counted per thread, summed here.
    pub fn allowed(&self) -> u64 {
        self.table.counts().0
    }

    /// Checks denied so far (peeks not counted). Counted per thread, summed here.
    pub fn denied(&self) -> u64 {
        self.table.counts().1
    }

    /// Keys removed by sweeps so far (by [`sweep`](Self::sweep), and by the shards sweeping
    /// themselves before they grow).
    pub fn swept_keys(&self) -> u64 {
        self.table.totals().0
    }

    /// Requests for a new key denied because its shard was full ([`KeyedBuilder::max_keys`]).
    pub fn table_full_denials(&self) -> u64 {
        self.table.totals().1
    }

    /// The name the limiter's logs and metrics carry ([`KeyedBuilder::name`]; `"keyed"` by
    /// default).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The largest cost one check can be allowed.
    pub fn max_cost(&self) -> u32 {
        self.max_cost.load(Ordering::Relaxed)
    }

    /// Shards in the table.
    pub fn shards(&self) -> usize {
        self.table.shards()
    }

    /// The algorithm this limiter runs, as a value.
    pub fn algorithm(&self) -> AlgorithmKind {
        A::KIND
    }

    /// The quota every key gets.
    pub fn quota(&self) -> Quota {
        self.quota.load()
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        self.table.hasher()
    }
}

impl<K, A, C, S> fmt::Debug for KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedLimiter")
            .field("algorithm", &A::NAME)
            .field("quota", &self.quota())
            .field("clock", &self.clock)
            .field("keys", &self.len())
            .field("shards", &self.shards())
            .finish()
    }
}
