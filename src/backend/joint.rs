//! [`Joint`]: the seam's batch hook. Limits kept in a store that can decide several of them in
//! one atomic step (one Redis node) say so, and the all-or-nothing protocol hands that store
//! the whole group at once instead of peeking, reserving and undoing member by member.

use super::Call;
use crate::algorithm::Op;
use crate::decision::Decision;
use std::any::Any;
use std::fmt;

/// One limit and key in a store that decides groups ([`Backend::joint`](super::Backend::joint)).
#[derive(Clone, Copy)]
pub struct Joint<'a> {
    /// The store.
    pub store: &'a dyn JointStore,
    /// The limit, in the store's own terms (the store downcasts it).
    pub limit: &'a (dyn Any + Send + Sync),
    /// The key, as the store names it.
    pub key: &'a str,
}

impl fmt::Debug for Joint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Joint")
            .field("store", &self.store.identity())
            .finish_non_exhaustive()
    }
}

/// A store that decides several limits in one atomic step.
pub trait JointStore: Send + Sync {
    /// Equal for stores that reach the same data (two connections to one Redis): members
    /// whose stores share an identity may be decided together.
    fn identity(&self) -> &str;

    /// Decides `group` (each member with its cost) all-or-nothing in one step: under
    /// [`Op::Check`] every member consumes or none does, [`Op::Peek`] writes nothing,
    /// [`Op::Hit`] records on every member. Returns each member's decision in order: when the
    /// group is denied, a member that would have allowed reports its peek. `None` when the
    /// group cannot go in one step (keys on different cluster slots): the protocol then
    /// decides member by member.
    fn decide_group<'a>(
        &'a self,
        group: &'a [(Joint<'a>, u32)],
        op: Op,
    ) -> Option<Call<'a, Vec<Decision>>>;
}
