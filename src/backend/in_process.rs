//! The in-process limiters behind the [`Backend`] seam ([`KeyedLimiter`], [`Limiter`]), as
//! `redis/backend.rs` puts the Redis one and `dynamic/backend.rs` the dynamic ones: each
//! backend's implementation in a file of its own, the seam knowing none of them. Every call
//! is complete when it returns.

use super::{Backend, BackendError, Call, Op, Receipt, Reservation};
use crate::clock::Clock;
use crate::keyed::KeyedLimiter;
use crate::limiter::Limiter;
use crate::quota::Quota;
use crate::state::Algorithm;
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

/// Refuses what no wait can ever admit.
fn fits(cost: u32, max: u32, op: Op) -> Result<(), BackendError> {
    Ok(op.within_capacity(cost, max)?)
}

impl<K, Q, A, C, S> Backend<Q> for KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + Borrow<Q>,
    Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    A: Algorithm,
    C: Clock,
    S: BuildHasher + Send + Sync,
{
    fn quota(&self) -> Quota {
        KeyedLimiter::quota(self)
    }

    fn max_cost(&self) -> u32 {
        KeyedLimiter::max_cost(self)
    }

    fn immediate(&self) -> bool {
        true
    }

    #[inline]
    fn decide<'a>(&'a self, key: &'a Q, cost: u32, op: Op) -> Call<'a> {
        Call::ready(fits(cost, self.max_cost(), op).map(|()| self.decide_mode(key, cost, op)))
    }

    fn reserve<'a>(&'a self, key: &'a Q, cost: u32) -> Call<'a, Reservation> {
        Call::ready(fits(cost, self.max_cost(), Op::Check).map(|()| {
            let (decision, swap) = self.reserve_key(key, cost);
            Reservation {
                decision,
                receipt: Receipt::swap(swap),
            }
        }))
    }

    fn undo<'a>(&'a self, key: &'a Q, receipt: Receipt) -> Call<'a, bool> {
        Call::ready(Ok(receipt
            .into_swap()
            .is_some_and(|swap| self.undo_key(key, swap))))
    }

    fn reset<'a>(&'a self, key: &'a Q) -> Call<'a, bool> {
        Call::ready(Ok(KeyedLimiter::reset(self, key)))
    }

    fn count(&self, allowed: bool) {
        KeyedLimiter::count(self, allowed);
    }
}

/// A direct limiter is one limit for every key: the key is ignored.
impl<Q, A, C> Backend<Q> for Limiter<A, C>
where
    Q: ?Sized,
    A: Algorithm,
    C: Clock,
{
    fn quota(&self) -> Quota {
        Limiter::quota(self)
    }

    fn max_cost(&self) -> u32 {
        Limiter::max_cost(self)
    }

    fn immediate(&self) -> bool {
        true
    }

    #[inline]
    fn decide<'a>(&'a self, _key: &'a Q, cost: u32, op: Op) -> Call<'a> {
        Call::ready(
            fits(cost, Limiter::max_cost(self), op).map(|()| Limiter::decide(self, cost, op)),
        )
    }

    fn reserve<'a>(&'a self, _key: &'a Q, cost: u32) -> Call<'a, Reservation> {
        Call::ready(fits(cost, Limiter::max_cost(self), Op::Check).map(|()| {
            let (decision, swap) = Limiter::reserve(self, cost, Op::Check);
            Reservation {
                decision,
                receipt: Receipt::swap(swap),
            }
        }))
    }

    fn undo<'a>(&'a self, _key: &'a Q, receipt: Receipt) -> Call<'a, bool> {
        Call::ready(Ok(receipt
            .into_swap()
            .is_some_and(|swap| Limiter::undo(self, swap))))
    }

    fn count(&self, allowed: bool) {
        Limiter::count(self, allowed);
    }
}
