//! What a slot's word holds: a marker, or a live key's state (packed algorithms: the state
//! plus [`OFFSET`]; the sliding log: a pointer to the key's ring).
//!
//! Markers are small so that a zeroed array is an empty one.

/// Never used: ends every probe sequence.
pub(crate) const EMPTY: u64 = 0;
/// Swept: the key's state was fresh and has been dropped. The key stays readable (probes
/// compare it) until the array is freed; a later check of it inserts it anew.
pub(crate) const TOMBSTONE: u64 = 1;
/// Migrated: the key and its state now live in the array's successor. (In a direct limiter's
/// cell: frozen by a reconfiguration, the state lives in the next generation.)
pub(crate) const MOVED: u64 = 2;
/// A direct limiter's new cell that a reconfiguration has yet to fill: checks wait.
pub(crate) const PENDING: u64 = 3;
/// Packed states are stored as `state + OFFSET`; every algorithm keeps its states at or
/// below [`MAX_STATE`](crate::algorithm::MAX_STATE) so this never wraps.
pub(crate) const OFFSET: u64 = crate::algorithm::HEADROOM;

/// True for a word holding a key's state.
#[inline]
pub(crate) fn is_live(word: u64) -> bool {
    word >= OFFSET
}
