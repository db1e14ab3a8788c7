//! [`Limiter`]: one rate limit, one state.

mod generations;
mod observed;

use crate::algorithm::clamp_time;
use crate::algorithm::Op;
use crate::algorithm::{AlgorithmKind, Gcra};
use crate::clock::{Clock, TscClock};
use crate::decision::Decision;
use crate::error::{CapacityError, QuotaError};
use crate::quota::Quota;
use crate::state::outcome::{Stale, Swap};
use crate::state::shared_quota::SharedQuota;
use crate::state::Algorithm;
use crate::sync::{lock, AtomicPtr, AtomicU32, Mutex, Ordering, SpinWait};
use crate::telemetry::LimiterLog;
use crossbeam_utils::CachePadded;
use generations::{Generation, Generations};
use std::fmt;
use std::ptr;

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
    /// Generation 0: the state and parameters the limiter was built with, inline for the fast
    /// path. Padded so that its CAS traffic never invalidates the line holding the read-only
    /// fields. Frozen by the first [`set_quota`](Self::set_quota).
    cell: CachePadded<A::Cell>,
    params: A::Params,
    max_cost: AtomicU32,
    quota: SharedQuota,
    clock: C,
    /// The generations after a reconfiguration; null until the first one (published before
    /// generation 0 is frozen).
    later: AtomicPtr<Generations<A>>,
    /// Serializes reconfigurations.
    reconfiguring: Mutex<()>,
    name: Box<str>,
    /// Denials, logged (feature `tracing`; zero-sized without it).
    log: LimiterLog,
    /// Allowed and denied checks, counted in per-thread records (feature `metrics`).
    #[cfg(feature = "metrics")]
    counts: crate::state::reclaim::Domain,
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
            max_cost: AtomicU32::new(A::max_cost(&params)),
            params,
            quota: SharedQuota::new(quota),
            clock,
            later: AtomicPtr::new(ptr::null_mut()),
            reconfiguring: Mutex::new(()),
            name: "direct".into(),
            log: LimiterLog::new("direct"),
            #[cfg(feature = "metrics")]
            counts: crate::state::reclaim::Domain::new(),
        })
    }

    /// This limiter, named `name` for its log events (feature `tracing`) and wherever its
    /// metrics are published. Default: `"direct"`.
    ///
    /// ```
    /// use sluicegate::{Limiter, Quota};
    /// let logins = Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_minute(5))?.named("logins");
    /// assert_eq!(logins.name(), "logins");
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into().into_boxed_str();
        self.log = LimiterLog::new(&self.name);
        self
    }
}

/// # Checking requests
impl<A: Algorithm, C: Clock> Limiter<A, C> {
    /// Decides one request, consuming one unit when it is allowed. A denial changes nothing.
    #[inline(always)]
    pub fn check(&self) -> Decision {
        self.decide(1, Op::Check)
    }

    /// Decides a request of cost `n` (bytes, tokens, rows), consuming `n` when allowed.
    ///
    /// `n = 0` is always allowed and consumes nothing. Fails only when `n` exceeds the
    /// capacity (the burst, or the limit for window algorithms), since such a request could
    /// never be allowed however long it waited.
    #[inline(always)]
    pub fn check_n(&self, n: u32) -> Result<Decision, CapacityError> {
        self.fits(n)?;
        Ok(self.decide(n, Op::Check))
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    #[inline(always)]
    pub fn peek(&self) -> Decision {
        self.decide(1, Op::Peek)
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    #[inline(always)]
    pub fn peek_n(&self, n: u32) -> Result<Decision, CapacityError> {
        self.fits(n)?;
        Ok(self.decide(n, Op::Peek))
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
    #[inline(always)]
    pub fn hit(&self, n: u32) -> Decision {
        self.decide(n, Op::Hit)
    }

    /// Refuses a cost that could never be admitted.
    #[inline(always)]
    fn fits(&self, n: u32) -> Result<(), CapacityError> {
        Op::Check.within_capacity(n, self.max_cost.load(Ordering::Relaxed))
    }

    /// Decides in `mode`, counting and logging the decision.
    #[inline(always)]
    pub(crate) fn decide(&self, cost: u32, mode: Op) -> Decision {
        let decision = self.reserve(cost, mode).0;
        if mode != Op::Peek {
            self.count(decision.is_allowed());
            if decision.is_denied() {
                self.log.denied_direct(&decision);
            }
        }
        decision
    }

    /// Counts a decision (feature `metrics`; nothing without it).
    #[inline(always)]
    pub(crate) fn count(&self, allowed: bool) {
        #[cfg(feature = "metrics")]
        self.counts.count(allowed);
        let _ = allowed;
    }

    /// Decides and, when it consumed, returns the swap to undo it (for composite checks).
    /// Inlined into every caller, so that the parts of the decision a caller never reads are
    /// never computed.
    #[inline(always)]
    pub(crate) fn reserve(&self, cost: u32, mode: Op) -> (Decision, Option<Swap>) {
        let now = clamp_time(self.clock.now());
        match A::check(&self.cell, &self.params, now, cost, mode) {
            Ok(outcome) => outcome,
            Err(Stale) => self.reserve_later(now, cost, mode),
        }
    }

    /// [`reserve`](Self::reserve) once the quota has been changed: in the latest generation.
    #[cold]
    #[inline(never)]
    fn reserve_later(&self, now: u64, cost: u32, mode: Op) -> (Decision, Option<Swap>) {
        // SAFETY: generation 0 is frozen only after `later` is published, and `later` lives
        // until the limiter drops.
        let later = unsafe { &*self.later.load(Ordering::Acquire) };
        let guard = later.pin();
        let spin = SpinWait::new();
        loop {
            let generation = later
                .latest(&guard)
                .expect("published before generation 0 was frozen");
            if mode.within_capacity(cost, generation.max_cost).is_err() {
                // `check_n` measured the cost against the capacity before a reconfiguration
                // lowered it: such a request can never be admitted any more.
                let standing = A::check(&generation.cell, &generation.params, now, 0, Op::Peek);
                return match standing {
                    Ok((standing, _)) => (Decision::beyond_capacity(&standing), None),
                    Err(Stale) => {
                        spin.wait();
                        continue;
                    }
                };
            }
            match A::check(&generation.cell, &generation.params, now, cost, mode) {
                Ok((decision, swap)) => {
                    return (decision, swap.map(|s| s.in_generation(generation.number)));
                }
                // Frozen by a newer reconfiguration, or not filled yet: wait for it.
                Err(Stale) => spin.wait(),
            }
        }
    }

    /// Reverts a swap made by [`reserve`](Self::reserve) if nothing has written since (and
    /// the quota has not been changed since).
    pub(crate) fn undo(&self, swap: Swap) -> bool {
        if swap.generation == 0 {
            return A::undo(&self.cell, &self.params, swap);
        }
        let later = self.later.load(Ordering::Acquire);
        if later.is_null() {
            return false;
        }
        // SAFETY: as in `reserve_later`.
        let later = unsafe { &*later };
        let guard = later.pin();
        later
            .latest(&guard)
            .is_some_and(|g| g.number == swap.generation && A::undo(&g.cell, &g.params, swap))
    }
}

/// # Changing the quota
impl<A: Algorithm, C: Clock> Limiter<A, C> {
    /// Enforces `quota` from now on, keeping what the state has consumed: each algorithm's
    /// documentation says how its state carries over (rate algorithms keep the requests still
    /// owed, windows their counts, the log its newest entries), always rounding toward
    /// denial, so no request is admitted that the state had already paid for. Checks racing
    /// the change are each decided entirely under the old quota or entirely under the new one.
    ///
    /// Fails, changing nothing, if the algorithm cannot run `quota`. The first change moves the
    /// state off the limiter's inline fast path: later checks cost a few nanoseconds more
    /// (one more pointer and a reclamation pin).
    ///
    /// ```
    /// use std::time::Duration;
    /// use sluicegate::{Limiter, Quota, algorithm::Gcra, clock::ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// let limiter = Limiter::<Gcra, _>::with_clock(Quota::per_minute(10), clock.clone())?;
    /// limiter.check_n(10)?; // the whole burst is used
    /// limiter.set_quota(Quota::per_minute(100))?;
    /// // Ten requests are still owed: 90 of the new burst of 100 remain.
    /// assert_eq!(limiter.peek().remaining(), 89);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_quota(&self, quota: Quota) -> Result<(), QuotaError> {
        let to = A::params(&quota, self.clock.unix_offset())?;
        let _serialized = lock(&self.reconfiguring);
        let later = self.generations();
        {
            let guard = later.pin();
            let current = later.latest(&guard);
            let number = current.map_or(0, |g| g.number) + 1;
            let (old_cell, from) = match current {
                Some(generation) => (&*generation.cell, &generation.params),
                None => (&*self.cell, &self.params),
            };
            // Publish first, so that checks meeting the frozen cell find the new one (they
            // wait while it is pending); then freeze the old cell and carry its state over.
            let next = later.publish(Generation::pending(old_cell, to, number), &guard);
            let now = clamp_time(self.clock.now());
            A::reconfigure(old_cell, &next.cell, from, &next.params, now);
            self.max_cost.store(next.max_cost, Ordering::Relaxed);
            self.quota.store(quota);
        }
        later.collect();
        Ok(())
    }

    /// The generations, created on the first reconfiguration (under `reconfiguring`).
    fn generations(&self) -> &Generations<A> {
        let mut later = self.later.load(Ordering::Acquire);
        if later.is_null() {
            later = Box::into_raw(Box::new(Generations::new()));
            self.later.store(later, Ordering::Release);
        }
        // SAFETY: lives until the limiter drops.
        unsafe { &*later }
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
    /// The algorithm this limiter runs, as a value.
    pub fn algorithm(&self) -> AlgorithmKind {
        A::KIND
    }

    /// The quota this limiter enforces.
    pub fn quota(&self) -> Quota {
        self.quota.load()
    }

    /// The largest cost one check can be allowed: the burst for the rate algorithms, the limit
    /// for the window algorithms (the same number as [`KeyedLimiter::max_cost`](crate::KeyedLimiter::max_cost)).
    pub fn max_cost(&self) -> u32 {
        self.max_cost.load(Ordering::Relaxed)
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The name its logs and metrics carry ([`named`](Self::named); `"direct"` by default).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes the limiter holds: itself, its state (a sliding log's ring), and the states of
    /// later quotas if [`set_quota`](Self::set_quota) was called.
    pub fn memory_bytes(&self) -> usize {
        let later = self.later.load(Ordering::Acquire);
        let generations = if later.is_null() {
            0
        } else {
            std::mem::size_of::<Generations<A>>() + A::keyed_heap_bytes(&self.params)
        };
        std::mem::size_of::<Self>() + A::keyed_heap_bytes(&self.params) + generations
    }

    /// Checks allowed so far (peeks not counted); feature `metrics`, which counts them in
    /// per-thread records (a plain add on a line only the checking thread writes).
    #[cfg(feature = "metrics")]
    pub fn allowed(&self) -> u64 {
        self.counts.counts().0
    }

    /// Checks denied so far (peeks not counted); feature `metrics`.
    #[cfg(feature = "metrics")]
    pub fn denied(&self) -> u64 {
        self.counts.counts().1
    }
}

impl<A: Algorithm, C: Clock> fmt::Debug for Limiter<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limiter")
            .field("algorithm", &A::NAME)
            .field("quota", &self.quota())
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl<A: Algorithm, C: Clock> Drop for Limiter<A, C> {
    fn drop(&mut self) {
        let later = self.later.load(Ordering::Relaxed);
        if !later.is_null() {
            // SAFETY: `&mut self`: no check remains; it came from `Box::into_raw`.
            drop(unsafe { Box::from_raw(later) });
        }
    }
}
