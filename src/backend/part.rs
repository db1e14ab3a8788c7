//! [`Part`]: one limit bound to its key, as the all-or-nothing protocol sees it; [`Member`], a
//! backend and a key as a part.

use super::{Backend, Call, Joint, Receipt, Reservation};
use crate::algorithm::Op;
use std::fmt;

/// One limit of an all-or-nothing decision, bound to its key. [`Member`] makes one of any
/// [`Backend`]; a [`Limiter`](crate::Limiter) is one (it has no key), and so is a
/// [`KeyedLimiter`](crate::KeyedLimiter)'s [`key`](crate::KeyedLimiter::key) view.
pub trait Part: Send + Sync {
    /// The largest cost one check can be allowed.
    fn max_cost(&self) -> u32;

    /// The cost this part weighs a request of `request` at: the request's, unless the part
    /// has its own ([`Member::with_cost`]).
    fn cost(&self, request: u32) -> u32 {
        request
    }

    /// Decides `op` for `cost`.
    fn decide(&self, cost: u32, op: Op) -> Call<'_>;

    /// A consuming check that also returns what [`undo`](Self::undo) needs.
    fn reserve(&self, cost: u32) -> Call<'_, Reservation>;

    /// Reverts a reservation if nothing was recorded since; `false` otherwise.
    fn undo(&self, receipt: Receipt) -> Call<'_, bool>;

    /// Where this part can be decided together with others in one step, if anywhere.
    fn joint(&self) -> Option<Joint<'_>> {
        None
    }

    /// Counts an all-or-nothing check's outcome for this limit (limiters that count).
    fn count(&self, allowed: bool) {
        let _ = allowed;
    }
}

/// One limit of [`all_of`](super::all_of): a backend, the key to decide there, and optionally
/// a cost of its own (otherwise the call's).
pub struct Member<'a, Q: ?Sized> {
    backend: &'a dyn Backend<Q>,
    key: &'a Q,
    cost: Option<u32>,
}

impl<'a, Q: ?Sized> Member<'a, Q> {
    /// `key`'s limit on `backend`.
    pub fn new(backend: &'a dyn Backend<Q>, key: &'a Q) -> Self {
        Member {
            backend,
            key,
            cost: None,
        }
    }

    /// This member weighs the request at `cost` whatever the call's cost (a request of 3 KiB
    /// for a bytes limit beside a cost of 1 for a requests limit; 0 only looks).
    pub fn with_cost(self, cost: u32) -> Self {
        Member {
            cost: Some(cost),
            ..self
        }
    }
}

impl<Q: ?Sized + Sync> Part for Member<'_, Q> {
    fn max_cost(&self) -> u32 {
        self.backend.max_cost()
    }

    fn cost(&self, request: u32) -> u32 {
        self.cost.unwrap_or(request)
    }

    fn decide(&self, cost: u32, op: Op) -> Call<'_> {
        self.backend.decide(self.key, cost, op)
    }

    fn reserve(&self, cost: u32) -> Call<'_, Reservation> {
        self.backend.reserve(self.key, cost)
    }

    fn undo(&self, receipt: Receipt) -> Call<'_, bool> {
        self.backend.undo(self.key, receipt)
    }

    fn joint(&self) -> Option<Joint<'_>> {
        self.backend.joint(self.key)
    }

    fn count(&self, allowed: bool) {
        self.backend.count(allowed);
    }
}

impl<Q: ?Sized> Clone for Member<'_, Q> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q: ?Sized> Copy for Member<'_, Q> {}

impl<Q: ?Sized> fmt::Debug for Member<'_, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Member")
            .field("quota", &self.backend.quota())
            .field("cost", &self.cost)
            .finish_non_exhaustive()
    }
}
