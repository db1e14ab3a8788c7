//! [`Composite`]: one request checked against several limits at once (a per-user limit and a
//! global one, or `10/s` and `1000/h` for the same key).
//!
//! The request is allowed only if every limit allows it, and then every limit consumes; if
//! any denies, none keeps anything. First every limit is peeked: if one denies, the composite
//! denies having written nothing anywhere, like a single limiter's denial. Otherwise the
//! limits are consumed in order, each by its usual CAS, remembering the word it replaced. Only
//! if a limit changed between its peek and its turn (a true race) can a later one now deny;
//! the earlier ones are then undone by a CAS from what they wrote back to what they replaced.
//! That undo is exact whenever nothing else wrote to that limit in the few nanoseconds
//! between. If another request was admitted there meanwhile, the undo cannot be exact (that
//! request was judged with these units consumed, and arithmetic refunds are not exact for GCRA
//! or a token bucket), so those units stay consumed; and a request racing on an earlier limit
//! during those nanoseconds may have been judged with them consumed. Under that double race a
//! composite errs toward denying, never toward admitting. Model-checked in `loom-tests/`.

use crate::algorithm::Algorithm;
use crate::clock::Clock;
use crate::decision::{Decision, Details};
use crate::error::CapacityError;
use crate::keyed::KeyedLimiter;
use crate::limiter::Limiter;
use crate::rules::Op;
use crate::state::engine::Swap;
use crate::state::reclaim::Guard;
use crate::state::sync::AtomicU64;
use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash};

/// A limit that can take part in a [`Composite`]: a [`Limiter`], or a [`KeyedLimiter`] with
/// a key ([`KeyedLimiter::key`]). Sealed.
pub trait Limit: member::Member {}

impl<T: member::Member> Limit for T {}

mod member {
    use super::*;

    /// What a composite needs from each of its limits.
    pub trait Member {
        /// The largest cost this limit can admit.
        fn max_cost(&self) -> u32;
        /// Decides (consuming unless peeking), keeping what it needs to undo.
        fn reserve(&self, cost: u32, mode: Op) -> Reservation<'_>;
        /// Undoes a reservation's consumption if nothing wrote since; false otherwise.
        fn undo(&self, reservation: &Reservation<'_>) -> bool;
        /// Counts the composite's final outcome, for limiters that count.
        fn count(&self, allowed: bool);
    }

    /// One limit's decision within a composite, with what undoing it takes.
    #[derive(Debug)]
    pub struct Reservation<'a> {
        pub(crate) decision: Decision,
        pub(crate) swap: Option<Swap>,
        /// A keyed limit's word; valid while `_pin` pins.
        pub(crate) word: Option<&'a AtomicU64>,
        /// Never read: held so that `word` stays valid until the reservation drops.
        pub(crate) _pin: Option<Guard<'a>>,
    }
}

use member::{Member, Reservation};

impl<A: Algorithm, C: Clock> Member for Limiter<A, C> {
    fn max_cost(&self) -> u32 {
        self.capacity()
    }

    fn reserve(&self, cost: u32, mode: Op) -> Reservation<'_> {
        let (decision, swap) = Limiter::reserve(self, cost, mode);
        Reservation {
            decision,
            swap,
            word: None,
            _pin: None,
        }
    }

    fn undo(&self, reservation: &Reservation<'_>) -> bool {
        reservation
            .swap
            .is_none_or(|swap| Limiter::undo(self, swap))
    }

    fn count(&self, allowed: bool) {
        Limiter::count(self, allowed);
    }
}

/// A [`KeyedLimiter`] paired with a key, as one limit of a [`Composite`].
pub struct Keyed<'a, K, Q: ?Sized, A: Algorithm, C: Clock, S> {
    limiter: &'a KeyedLimiter<K, A, C, S>,
    key: &'a Q,
}

impl<K, A, C, S> KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    /// This limiter's limit for `key`, to check within a [`Composite`].
    pub fn key<'a, Q>(&'a self, key: &'a Q) -> Keyed<'a, K, Q, A, C, S>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        Keyed { limiter: self, key }
    }
}

impl<K, Q, A, C, S> Member for Keyed<'_, K, Q, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + Borrow<Q>,
    Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    fn max_cost(&self) -> u32 {
        self.limiter.max_cost()
    }

    fn reserve(&self, cost: u32, mode: Op) -> Reservation<'_> {
        let (table, now) = (self.limiter.table(), self.limiter.now());
        let guard = table.pin();
        let (decision, held) = table.reserve(self.key, now, cost, mode, &guard);
        // SAFETY of the lifetime: the word stays valid while `guard` pins, and the guard is
        // kept in the same reservation.
        let (word, swap) = match held {
            Some((word, swap)) => (Some(unsafe { &*(word as *const AtomicU64) }), Some(swap)),
            None => (None, None),
        };
        Reservation {
            decision,
            swap,
            word,
            _pin: Some(guard),
        }
    }

    fn undo(&self, reservation: &Reservation<'_>) -> bool {
        match (reservation.word, reservation.swap) {
            (Some(word), Some(swap)) => self.limiter.table().undo(word, swap),
            _ => true,
        }
    }

    fn count(&self, allowed: bool) {
        self.limiter.table().pin().count(allowed);
    }
}

/// Checks one request against several limits: allowed only if all allow, and then all
/// consume; if any denies, none consumes.
///
/// Every limit is peeked first, so a denial writes nothing anywhere. Then the limits are
/// consumed in order, and if one changed since its peek and now denies, the earlier ones are
/// undone exactly by a CAS back, unless another request was admitted on one of them in the
/// few nanoseconds between: then those units stay consumed. That race can only err toward
/// denying, never toward admitting.
///
/// The decision reports the tightest `remaining` (and that limit's `limit`), the longest
/// `retry_after` (when every limit admits the request again) and `reset_after`, and the
/// longest `wait`.
///
/// ```
/// use sluicegate::{Composite, KeyedLimiter, Limiter, Quota};
///
/// let global = Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_second(3))?;
/// let per_user = KeyedLimiter::<u64>::new(Quota::per_second(2))?;
///
/// let check = |user: u64| Composite::new(&[&global, &per_user.key(&user)]).check();
/// assert!(check(1).is_allowed());
/// assert!(check(1).is_allowed());
/// assert!(check(1).is_denied()); // user 1's limit
/// assert_eq!(check(2).remaining(), 0); // allowed: the global limit has 0 left
/// let denied = check(3); // the global limit denies, so user 3 keeps its quota
/// assert!(denied.is_denied());
/// assert_eq!(per_user.peek(&3).remaining(), 1);
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
pub struct Composite<'a> {
    limits: &'a [&'a dyn Limit],
}

impl<'a> Composite<'a> {
    /// The conjunction of `limits`, checked in this order.
    pub fn new(limits: &'a [&'a dyn Limit]) -> Composite<'a> {
        Composite { limits }
    }

    /// Decides one request.
    pub fn check(&self) -> Decision {
        self.run(1, Op::Check)
    }

    /// Decides a request of cost `n`; fails if `n` exceeds the smallest capacity among the
    /// limits.
    pub fn check_n(&self, n: u32) -> Result<Decision, CapacityError> {
        self.capacity_allows(n)?;
        Ok(self.run(n, Op::Check))
    }

    /// The decision [`check`](Self::check) would return now, consuming nothing.
    pub fn peek(&self) -> Decision {
        self.run(1, Op::Peek)
    }

    /// The decision [`check_n`](Self::check_n) would return now, consuming nothing.
    pub fn peek_n(&self, n: u32) -> Result<Decision, CapacityError> {
        self.capacity_allows(n)?;
        Ok(self.run(n, Op::Peek))
    }

    /// The smallest capacity among the limits.
    pub fn max_cost(&self) -> u32 {
        self.limits
            .iter()
            .map(|l| l.max_cost())
            .min()
            .unwrap_or(u32::MAX)
    }

    fn capacity_allows(&self, n: u32) -> Result<(), CapacityError> {
        let capacity = self.max_cost();
        if n > capacity {
            return Err(CapacityError::new(n, capacity));
        }
        Ok(())
    }

    fn run(&self, cost: u32, mode: Op) -> Decision {
        let decision = self.decide(cost, mode);
        if mode == Op::Check {
            for limit in self.limits {
                limit.count(decision.is_allowed());
            }
        }
        decision
    }

    fn decide(&self, cost: u32, mode: Op) -> Decision {
        let mut summary = Summary::default();
        let all_allow = mode == Op::Peek
            || self.limits.iter().all(|limit| {
                let peeked = limit.reserve(cost, Op::Peek).decision;
                summary.table_full |= peeked.is_table_full();
                peeked.is_allowed()
            });
        if all_allow && reserve_from(self.limits, cost, mode, &mut summary) {
            return summary.decision(true);
        }
        // Denied, and every consumption undone: report where each limit stands now. (A peek
        // cannot see a full table, which stores nothing for a peek: keep that from above.)
        let mut summary = Summary {
            table_full: summary.table_full,
            ..Summary::default()
        };
        for limit in self.limits {
            let now = limit.reserve(0, Op::Peek).decision;
            let with_cost = limit.reserve(cost, Op::Peek).decision;
            summary.add_remaining(&now);
            summary.add_times(&with_cost);
        }
        summary.decision(false)
    }
}

/// Reserves `limits[0]` and then, recursively, the rest, keeping each reservation on the
/// stack until the outcome is known; undoes this one if a later limit denies.
fn reserve_from(limits: &[&dyn Limit], cost: u32, mode: Op, summary: &mut Summary) -> bool {
    let Some((first, rest)) = limits.split_first() else {
        return true;
    };
    let reservation = first.reserve(cost, mode);
    summary.add_remaining(&reservation.decision);
    summary.add_times(&reservation.decision);
    let allowed = reservation.decision.is_allowed() && reserve_from(rest, cost, mode, summary);
    if !allowed && reservation.decision.is_allowed() {
        first.undo(&reservation);
    }
    allowed
}

/// The tightest remaining and the longest times among the limits' decisions.
#[derive(Default)]
pub(crate) struct Summary {
    remaining: Option<(u32, u32)>,
    retry_after: u64,
    reset_after: u64,
    wait: u64,
    table_full: bool,
}

impl Summary {
    pub(crate) fn add_remaining(&mut self, d: &Decision) {
        self.add_remaining_value(d.remaining(), d.limit());
    }

    /// A limit with `remaining` left of `limit`.
    pub(crate) fn add_remaining_value(&mut self, remaining: u32, limit: u32) {
        if self.remaining.is_none_or(|(r, _)| remaining < r) {
            self.remaining = Some((remaining, limit));
        }
    }

    pub(crate) fn add_times(&mut self, d: &Decision) {
        let nanos = |t: std::time::Duration| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        if let Some(retry) = d.retry_after() {
            self.retry_after = self.retry_after.max(nanos(retry));
        }
        self.table_full |= d.is_table_full();
        self.reset_after = self.reset_after.max(nanos(d.reset_after()));
        self.wait = self.wait.max(nanos(d.wait()));
    }

    pub(crate) fn decision(&self, allowed: bool) -> Decision {
        let (remaining, limit) = self.remaining.unwrap_or((u32::MAX, u32::MAX));
        if !allowed && self.table_full {
            return Decision::table_full(limit);
        }
        Decision::eager(
            allowed,
            limit,
            Details {
                remaining,
                retry_after: self.retry_after,
                reset_after: self.reset_after,
                wait: self.wait,
            },
        )
    }
}

impl fmt::Debug for Composite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Composite")
            .field("limits", &self.limits.len())
            .finish()
    }
}

impl<K, Q: ?Sized, A: Algorithm, C: Clock, S> fmt::Debug for Keyed<'_, K, Q, A, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyed")
            .field("algorithm", &A::NAME)
            .finish_non_exhaustive()
    }
}
