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
//!
//! The steps are the [one protocol](super::all_of) every composite uses; here every limit is
//! in process, so it completes at once, with no executor and no allocation.

use super::{decide_parts, summarize, Backend, Call, Found, Part, Receipt, Reservation};
use crate::algorithm::Op;
use crate::clock::Clock;
use crate::decision::Decision;
use crate::error::CapacityError;
use crate::keyed::KeyedLimiter;
use crate::limiter::Limiter;
use crate::state::Algorithm;
use std::borrow::Borrow;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// A limit that can take part in a [`Composite`]: a [`Limiter`], a [`KeyedLimiter`] with a key
/// ([`KeyedLimiter::key`]), or their run-time-chosen forms. Sealed: every one decides in
/// process, so a composite of them never waits.
pub trait Limit: Part + sealed::InProcess {}

impl<T: Part + sealed::InProcess> Limit for T {}

pub(crate) mod sealed {
    /// Parts whose calls are complete when they return.
    pub trait InProcess {}
}

impl<A: Algorithm, C: Clock> sealed::InProcess for Limiter<A, C> {}

impl<A: Algorithm, C: Clock> Part for Limiter<A, C> {
    fn max_cost(&self) -> u32 {
        self.max_cost()
    }

    fn decide(&self, cost: u32, op: Op) -> Call<'_> {
        Backend::<()>::decide(self, &(), cost, op)
    }

    fn reserve(&self, cost: u32) -> Call<'_, Reservation> {
        Backend::<()>::reserve(self, &(), cost)
    }

    fn undo(&self, receipt: Receipt) -> Call<'_, bool> {
        Backend::<()>::undo(self, &(), receipt)
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

impl<K, Q: ?Sized, A: Algorithm, C: Clock, S> sealed::InProcess for Keyed<'_, K, Q, A, C, S> {}

impl<K, Q, A, C, S> Part for Keyed<'_, K, Q, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + Borrow<Q>,
    Q: Hash + Eq + ToOwned<Owned = K> + Sync + ?Sized,
    A: Algorithm,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    fn max_cost(&self) -> u32 {
        self.limiter.max_cost()
    }

    fn decide(&self, cost: u32, op: Op) -> Call<'_> {
        Backend::decide(self.limiter, self.key, cost, op)
    }

    fn reserve(&self, cost: u32) -> Call<'_, Reservation> {
        Backend::reserve(self.limiter, self.key, cost)
    }

    fn undo(&self, receipt: Receipt) -> Call<'_, bool> {
        Backend::undo(self.limiter, self.key, receipt)
    }

    fn count(&self, allowed: bool) {
        self.limiter.count(allowed);
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
        Op::Check.within_capacity(n, self.max_cost())
    }

    fn run(&self, cost: u32, op: Op) -> Decision {
        let mut found = Found::new();
        let decided = decide_parts(self.limits, as_part, cost, op, &mut found);
        // Every limit is in process: each of its calls is ready, so this is too.
        let Poll::Ready(decided) = pin!(decided).poll(&mut Context::from_waker(Waker::noop()))
        else {
            unreachable!("in-process limits answer at once")
        };
        match decided {
            Ok(allowed) => summarize(self.limits, as_part, &found, cost, op, allowed),
            // In-process limits fail only on capacity: a quota lowered since `check_n` measured
            // the cost. Such a request can never be admitted any more.
            Err(failed) => {
                let failing = failed.member().unwrap_or(0);
                let standing = self.limits[failing].decide(0, Op::Peek).now();
                match standing {
                    Ok(Ok(standing)) => Decision::beyond_capacity(&standing),
                    _ => Decision::beyond_capacity(&Decision::table_full(0)),
                }
            }
        }
    }
}

/// A limit as the protocol sees it.
fn as_part<'a>(limit: &'a &dyn Limit) -> &'a dyn Part {
    *limit
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
