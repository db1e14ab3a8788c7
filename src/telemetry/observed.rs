//! [`Observed`]: what a limiter tells dashboards and metrics about itself.

use crate::quota::Quota;

/// Checks decided so far: allowed and denied (peeks are not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Counts {
    /// Checks allowed.
    pub allowed: u64,
    /// Checks denied.
    pub denied: u64,
}

/// A limiter's figures, read without touching its hot path: [`Snapshot`](super::Snapshot)
/// and the metrics `Publisher` (feature `metrics`) read limiters through this trait.
///
/// Every figure is optional: a limiter reports what it keeps. Keyed limiters count their
/// checks in per-thread records, summed when read, so reading costs the reader a walk over
/// those records and costs the checks nothing.
///
/// Implemented for every limiter of this crate (beside each limiter: telemetry is a leaf that
/// knows no limiter); implement it for your own wrappers to publish them the same way.
pub trait Observed: Send + Sync {
    /// Checks allowed and denied so far, if this limiter counts them.
    fn counts(&self) -> Option<Counts>;

    /// Keys currently held, for a keyed limiter.
    fn keys(&self) -> Option<usize>;

    /// Bytes the limiter holds, if it measures them.
    fn memory_bytes(&self) -> Option<usize>;

    /// Idle keys dropped by sweeps so far, if counted.
    fn swept_keys(&self) -> Option<u64> {
        None
    }

    /// Requests denied because the key table was full, if counted.
    fn table_full(&self) -> Option<u64> {
        None
    }

    /// The quota every key gets, when there is one.
    fn quota(&self) -> Option<Quota> {
        None
    }
}
