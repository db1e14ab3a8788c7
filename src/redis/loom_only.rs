//! The Redis layer's lock-based bookkeeping alone, built under `--cfg loom` (where the
//! `redis` feature's async stack does not build) for the loom models: the deny cache and the
//! batch lanes, the very files `redis/mod.rs` compiles, with the sync shim's loom types.

#[path = "deny_cache.rs"]
mod deny_cache;
#[path = "lanes.rs"]
mod lanes;

/// What the loom models (`loom-tests/`) use.
pub mod loom_hooks {
    pub use super::deny_cache::{Cached, DenyCache};
    pub use super::lanes::{Enqueued, HandOver, Lanes, Limits, Waiting};
}
