//! What a step on a state reports to whoever holds it: [`Stale`], [`Swap`], [`Sweep`]. A
//! leaf, shared by the engine trait and the cells, rings and tables that implement it.

/// A keyed state that is no longer where the lookup found it (swept, or migrated to a larger
/// array): look the key up again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale;

/// The word a consuming check replaced, and what it wrote: enough to undo that check exactly
/// if nothing has written since (see [`Engine::undo`](super::engine::Engine::undo)). `generation` names the quota it was
/// made under (bumped by every reconfiguration), so an undo never applies it to a state
/// converted to another quota since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swap {
    pub(crate) before: u64,
    pub(crate) after: u64,
    pub(crate) generation: u32,
}

impl Swap {
    /// A swap of `before` for `after` in generation 0; see [`in_generation`](Self::in_generation).
    pub(crate) fn new(before: u64, after: u64) -> Swap {
        Swap {
            before,
            after,
            generation: 0,
        }
    }

    /// The same swap, made under the quota of `generation`.
    pub(crate) fn in_generation(self, generation: u32) -> Swap {
        Swap { generation, ..self }
    }
}

/// The outcome of trying to sweep one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// The state carries information (or is already gone); the key stays.
    Kept,
    /// The word is now a tombstone; `Some(word)` owns memory to free after a grace period.
    Swept(Option<u64>),
}
