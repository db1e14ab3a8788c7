//! The seam between backends: one small trait, [`Backend`], that the in-process limiters
//! ([`KeyedLimiter`](crate::KeyedLimiter), [`Limiter`](crate::Limiter)) and the Redis one
//! implement, so that the HTTP layer, composites across backends and async waiting take any
//! of them.
//!
//! The trait is async-friendly without costing the in-process path anything: a call returns a
//! [`Call`], a future that an in-process backend has already completed (no allocation, no
//! executor needed: [`Call::now`] reads it), and that a remote backend fills with its round
//! trip. The core crate needs no async runtime for any of this.
//!
//! ```
//! use sluicegate::backend::{Backend, Op};
//! use sluicegate::{KeyedLimiter, Quota};
//!
//! fn admit(limit: &dyn Backend<str>, client: &str) -> bool {
//!     // In-process: the answer is already there, no executor needed.
//!     match limit.decide(client, 1, Op::Check).now() {
//!         Ok(Ok(decision)) => decision.is_allowed(),
//!         Ok(Err(_)) | Err(_) => false,
//!     }
//! }
//!
//! let per_client = KeyedLimiter::<String>::new(Quota::per_second(1))?;
//! assert!(admit(&per_client, "10.0.0.1"));
//! assert!(!admit(&per_client, "10.0.0.1"));
//! # Ok::<(), sluicegate::QuotaError>(())
//! ```
//!
//! # The all-or-nothing protocol
//!
//! One request against several limits ([`Composite`], [`all_of`], [`all_of_each`]; the HTTP
//! layer's several limits; the rate-limit service's descriptors) is allowed only if every
//! limit allows it, and then every one consumes; a denial consumes nothing. Every composite
//! runs the same steps, over [`Part`]s (a limit bound to its key):
//!
//! 1. A cost no wait can admit (above a member's capacity) is refused before anything runs.
//! 2. One member: its own check is already all-or-nothing.
//! 3. Every member in one store that decides groups (the batch hook, [`Backend::joint`]: one
//!    Redis node): one step there, a single script that decides every limit before writing.
//! 4. Otherwise member by member: every member is peeked, so a denial writes nothing
//!    anywhere; then each is reserved in order, and if one changed since its peek and now
//!    denies, the earlier ones are undone, exactly unless something else was recorded on them
//!    in between (then those units stay consumed: a race errs toward denying, never toward
//!    admitting). An error from any member undoes the reservations made before it.

mod all_of;
mod call;
mod composite;
mod deny_all;
mod error;
mod in_process;
mod joint;
mod key_state;
mod part;
mod receipt;
mod summary;

pub use crate::algorithm::Op;
pub use all_of::{all_of, all_of_each};
pub use call::Call;
pub use composite::{Composite, Keyed, Limit};
pub use deny_all::DenyAll;
pub use error::{BackendError, BackendErrorKind};
pub use joint::{Joint, JointStore};
pub use part::{Member, Part};
pub use receipt::{Receipt, Reservation};

pub(crate) use all_of::{decide as decide_parts, summarize, Found};
#[cfg(feature = "http")]
pub(crate) use all_of::{reserve_each, Receipts};

use crate::quota::Quota;

/// A rate limit reachable through the seam: a quota per key `Q`, decided in process or
/// remotely. Object safe: `&dyn Backend<str>` holds any of them.
///
/// Implement [`decide`](Self::decide), [`quota`](Self::quota) and
/// [`max_cost`](Self::max_cost); implement [`reserve`](Self::reserve) and
/// [`undo`](Self::undo) too if consumptions can be undone, which lets [`all_of`] keep a
/// composite's denial from consuming anything even when it races (without them, a racing
/// composite errs toward denying).
pub trait Backend<Q: ?Sized>: Send + Sync {
    /// The quota each key gets.
    fn quota(&self) -> Quota;

    /// The largest cost one check can be allowed (the burst, or the limit for windows).
    fn max_cost(&self) -> u32;

    /// Decides `op` for a request of `cost` on `key`.
    fn decide<'a>(&'a self, key: &'a Q, cost: u32, op: Op) -> Call<'a>;

    /// True when every call is complete when it returns ([`Call::now`] always has the
    /// answer), as for in-process limiters: callers may then decide without an executor.
    /// False (the default) for backends that wait on something.
    fn immediate(&self) -> bool {
        false
    }

    /// Like `decide(key, cost, Op::Check)`, also returning what [`undo`](Self::undo) needs.
    fn reserve<'a>(&'a self, key: &'a Q, cost: u32) -> Call<'a, Reservation> {
        let call = self.decide(key, cost, Op::Check);
        Call::new(async move {
            Ok(Reservation {
                decision: call.await?,
                receipt: Receipt::none(),
            })
        })
    }

    /// Reverts a reservation if nothing has been recorded on `key` since; `false` (changing
    /// nothing) otherwise, or when the backend cannot undo.
    fn undo<'a>(&'a self, key: &'a Q, receipt: Receipt) -> Call<'a, bool> {
        let _ = (key, receipt);
        Call::ready(Ok(false))
    }

    /// Forgets `key`'s state, so that its next request is decided as a new key's; `true` when
    /// the key held one. `false` (the default) for backends without a state per key, such as
    /// a direct limiter, which has one state for every key and nothing to forget for one.
    fn reset<'a>(&'a self, key: &'a Q) -> Call<'a, bool> {
        let _ = key;
        Call::ready(Ok(false))
    }

    /// Where `key`'s limit can be decided together with other limits in one step (the seam's
    /// batch hook: a Redis limiter names its node), if anywhere. `None` (the default) keeps
    /// the backend out of group decisions.
    fn joint<'a>(&'a self, key: &'a Q) -> Option<Joint<'a>> {
        let _ = key;
        None
    }

    /// Counts the outcome of an all-or-nothing check this limit took part in (for backends
    /// that count their decisions; nothing by default).
    fn count(&self, allowed: bool) {
        let _ = allowed;
    }

    /// `decide(key, 1, Op::Check)`.
    fn check<'a>(&'a self, key: &'a Q) -> Call<'a> {
        self.decide(key, 1, Op::Check)
    }

    /// `decide(key, 1, Op::Peek)`.
    fn peek<'a>(&'a self, key: &'a Q) -> Call<'a> {
        self.decide(key, 1, Op::Peek)
    }

    /// `decide(key, n, Op::Hit)`.
    fn hit<'a>(&'a self, key: &'a Q, n: u32) -> Call<'a> {
        self.decide(key, n, Op::Hit)
    }
}
