//! The [`Backend`] seam for the dynamic limiters: each call goes to the generic limiter's own
//! implementation, so reservations and undos behave exactly as theirs.

use super::direct::{AnyLimiter, Direct};
use super::dispatch;
use super::keyed::{AnyKeyedLimiter, Keyed};
use crate::backend::{Backend, Call, Op, Receipt, Reservation};
use crate::clock::Clock;
use crate::quota::Quota;
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

impl<K, Q, C, S> Backend<Q> for AnyKeyedLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + Borrow<Q>,
    Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    fn quota(&self) -> Quota {
        AnyKeyedLimiter::quota(self)
    }

    fn max_cost(&self) -> u32 {
        AnyKeyedLimiter::max_cost(self)
    }

    fn immediate(&self) -> bool {
        dispatch!(Keyed, &self.0, limiter => Backend::<Q>::immediate(limiter))
    }

    #[inline]
    fn decide<'a>(&'a self, key: &'a Q, cost: u32, op: Op) -> Call<'a> {
        dispatch!(Keyed, &self.0, limiter => Backend::<Q>::decide(limiter, key, cost, op))
    }

    fn reserve<'a>(&'a self, key: &'a Q, cost: u32) -> Call<'a, Reservation> {
        dispatch!(Keyed, &self.0, limiter => Backend::<Q>::reserve(limiter, key, cost))
    }

    fn undo<'a>(&'a self, key: &'a Q, receipt: Receipt) -> Call<'a, bool> {
        dispatch!(Keyed, &self.0, limiter => Backend::<Q>::undo(limiter, key, receipt))
    }

    fn reset<'a>(&'a self, key: &'a Q) -> Call<'a, bool> {
        Call::ready(Ok(AnyKeyedLimiter::reset(self, key)))
    }
}

/// A direct limiter is one limit for every key: the key is ignored.
impl<Q, C> Backend<Q> for AnyLimiter<C>
where
    Q: ?Sized,
    C: Clock,
{
    fn quota(&self) -> Quota {
        AnyLimiter::quota(self)
    }

    fn max_cost(&self) -> u32 {
        self.max_cost()
    }

    fn immediate(&self) -> bool {
        dispatch!(Direct, self.inner(), limiter => Backend::<Q>::immediate(limiter))
    }

    #[inline]
    fn decide<'a>(&'a self, key: &'a Q, cost: u32, op: Op) -> Call<'a> {
        dispatch!(Direct, self.inner(), limiter => Backend::<Q>::decide(limiter, key, cost, op))
    }

    fn reserve<'a>(&'a self, key: &'a Q, cost: u32) -> Call<'a, Reservation> {
        dispatch!(Direct, self.inner(), limiter => Backend::<Q>::reserve(limiter, key, cost))
    }

    fn undo<'a>(&'a self, key: &'a Q, receipt: Receipt) -> Call<'a, bool> {
        dispatch!(Direct, self.inner(), limiter => Backend::<Q>::undo(limiter, key, receipt))
    }
}
