//! [`Generations`]: where a direct limiter's state lives once its quota has been changed.
//!
//! A limiter starts with its state and parameters inline (generation 0, the fast path). A
//! reconfiguration publishes a new generation (a pending cell and the new parameters), then
//! freezes the current one and fills the new one with the state carried over; checks that
//! meet a frozen cell come here, pinned in this reclamation domain, and follow `latest`.
//! Replaced generations are retired and freed once no check can still hold them.

use crate::state::engine::Engine;
use crate::state::reclaim::{Domain, Guard};
use crate::sync::{lock, AtomicPtr, Mutex, Ordering};
use crossbeam_utils::CachePadded;
use std::ptr;

/// One quota's parameters and the state kept under it.
pub(super) struct Generation<A: Engine> {
    pub(super) cell: CachePadded<A::Cell>,
    pub(super) params: A::Params,
    pub(super) max_cost: u32,
    /// 1 for the first reconfiguration, and so on; stamped on swaps (see `Swap::generation`).
    pub(super) number: u32,
    /// Under loom, reclamation marks a generation freed instead of freeing it.
    #[cfg(loom)]
    freed: crate::sync::AtomicBool,
}

impl<A: Engine> Generation<A> {
    /// A generation whose cell checks wait on until a reconfiguration fills it from `old`.
    pub(super) fn pending(old: &A::Cell, params: A::Params, number: u32) -> Self {
        Generation {
            cell: CachePadded::new(A::pending_cell(old, &params)),
            max_cost: A::max_cost(&params),
            params,
            number,
            #[cfg(loom)]
            freed: crate::sync::AtomicBool::new(false),
        }
    }

    /// Under loom: fails the model if this generation was reclaimed.
    fn assert_alive(&self) {
        #[cfg(loom)]
        assert!(
            !self.freed.load(Ordering::SeqCst),
            "a check touched a limiter generation after reclamation freed it"
        );
    }
}

/// The generations after generation 0.
pub(super) struct Generations<A: Engine> {
    latest: AtomicPtr<Generation<A>>,
    domain: Domain,
    /// Replaced generations with the epoch tag after which they may be freed.
    garbage: Mutex<Vec<(u64, Box<Generation<A>>)>>,
}

impl<A: Engine> Generations<A> {
    pub(super) fn new() -> Self {
        Generations {
            latest: AtomicPtr::new(ptr::null_mut()),
            domain: Domain::new(),
            garbage: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn pin(&self) -> Guard<'_> {
        self.domain.pin()
    }

    /// The latest generation, if any, valid while `_guard` pins.
    pub(super) fn latest<'g>(&self, _guard: &'g Guard<'_>) -> Option<&'g Generation<A>> {
        // SAFETY: generations are retired to the domain the guard pins before being freed.
        let generation = unsafe { self.latest.load(Ordering::Acquire).as_ref() }?;
        generation.assert_alive();
        Some(generation)
    }

    /// Makes `next` the latest generation; the one it replaces is retired. The caller
    /// serializes publications and must not use the replaced generation after `_guard` drops.
    pub(super) fn publish<'g>(
        &self,
        next: Generation<A>,
        _guard: &'g Guard<'_>,
    ) -> &'g Generation<A> {
        let fresh = Box::into_raw(Box::new(next));
        let replaced = self.latest.swap(fresh, Ordering::AcqRel);
        if !replaced.is_null() {
            let tag = self.domain.retire_tag();
            // SAFETY: `replaced` came from `Box::into_raw` and is no longer reachable.
            let replaced = unsafe { Box::from_raw(replaced) };
            lock(&self.garbage).push((tag, replaced));
        }
        // SAFETY: just published; retired only by a later publication, after the guard.
        unsafe { &*fresh }
    }

    /// Frees the replaced generations no check can still hold. Call unpinned.
    pub(super) fn collect(&self) {
        let epoch = self.domain.advance();
        let mut garbage = lock(&self.garbage);
        garbage.retain(|(tag, _generation)| {
            let keep = !Domain::is_safe(*tag, epoch);
            #[cfg(loom)]
            if !keep {
                _generation.freed.store(true, Ordering::SeqCst);
                return true; // kept (marked freed) until the limiter drops
            }
            keep
        });
    }
}

impl<A: Engine> Drop for Generations<A> {
    fn drop(&mut self) {
        let latest = self.latest.load(Ordering::Relaxed);
        if !latest.is_null() {
            // SAFETY: `&mut self`: no check remains; it came from `Box::into_raw`.
            drop(unsafe { Box::from_raw(latest) });
        }
    }
}
