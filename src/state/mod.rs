//! Where a limit's state lives in memory, and how it changes there safely under concurrency:
//! the CAS cell every packed algorithm runs on, the sliding log's ring, the keyed table, the
//! reclamation that frees what the table drops, a quota readable while it is replaced, and
//! the `sync` shim through which all of it reaches atomics (loom's under `cfg(loom)`).
//!
//! The rules themselves are pure and live in `algorithm/`; [`Algorithm`] is the sealed trait
//! through which a limiter runs one of them here.

pub(crate) mod cell;
pub(crate) mod engine;
mod log_engine;
pub(crate) mod log_ring;
pub(crate) mod outcome;
pub(crate) mod reclaim;
pub(crate) mod shared_quota;
pub(crate) mod table;

pub use engine::Algorithm;
