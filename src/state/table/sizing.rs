//! [`Sizing`]: how many slots a shard's array gets for its keys, and when it is too full.
//!
//! A lookup probes from its key's home slot to the key, reading the slots of the keys it
//! passes, whose lines are written by whichever threads check those keys. With threads
//! checking different keys of one table, every passed line that another core wrote must be
//! fetched from that core. A table small enough to live in the caches is therefore kept
//! sparse (3-4% of its slots used), so that most probes end at their home slot and most lines
//! hold one key: with two threads each checking its own 1,024 keys, the pair measured 1.7x
//! one thread instead of 1.0x ("Threads on one table" in `git show 99e0be5:BENCHMARKS.md`;
//! BENCHMARKS.md, "Threads", measures it now). A table spends at most 4 MiB on this by
//! default (`KeyedBuilder::sparse_bytes`); past that its arrays are dense, where memory per
//! key matters (at most 24 bytes a `u64` key at 1M keys). An array just past the budget is
//! the budget's size, so a table between the two keeps the lowest load the budget allows.

/// Arrays start at least this large (tiny under loom, so that models reach a migration).
pub(super) const MIN_CAPACITY: usize = if cfg!(loom) { 2 } else { 8 };
/// Bytes of slots a whole table may spend on staying sparse, unless its builder says
/// otherwise (none under loom: its models are sized for the dense loads).
pub(crate) const DEFAULT_SPARSE_BYTES: usize = if cfg!(loom) { 0 } else { 4 << 20 };
/// Percent of a sparse array's slots live after a migration.
const SPARSE_TARGET_LOAD: usize = 3;
/// Percent of a sparse array's slots (live plus tombstones) above which an insert triggers
/// maintenance.
const SPARSE_MAX_LOAD: usize = 4;
/// Percent of a dense array's slots live after a migration.
const TARGET_LOAD: usize = 68;
/// Percent of a dense array's slots (live plus tombstones) above which an insert triggers
/// maintenance.
const MAX_LOAD: usize = 85;
/// A sparse table of line-sized slots (string keys) already holds one key a line: it only
/// keeps probes short, at a quarter to a third of its slots (about 380 bytes a key at 1,000
/// keys, where 3% cost 3.1 KiB and made each insert 4x slower: "String keys" in
/// `git show 99e0be5:BENCHMARKS.md`). Dense, such slots keep the loads above: at 50-75%
/// instead, measured no faster and 40% larger.
const LINE_SPARSE_TARGET_LOAD: usize = 25;
const LINE_SPARSE_MAX_LOAD: usize = 33;

/// One table's sizing rule: an array of at most `sparse_slots` slots is sparse, a larger one
/// dense, by its size alone, so an array made for some keys is never judged too full for
/// them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sizing {
    sparse_slots: usize,
    /// The loads (percent: sparse target and maximum, dense target and maximum) for this
    /// table's slot size.
    loads: [usize; 4],
}

impl Sizing {
    /// The rule for a table of `shards` shards whose slots take `slot_bytes` each and may
    /// spend `sparse_bytes` in all on staying sparse.
    pub(super) fn new(shards: usize, slot_bytes: usize, sparse_bytes: usize) -> Sizing {
        let loads = if slot_bytes >= 64 {
            [
                LINE_SPARSE_TARGET_LOAD,
                LINE_SPARSE_MAX_LOAD,
                TARGET_LOAD,
                MAX_LOAD,
            ]
        } else {
            [SPARSE_TARGET_LOAD, SPARSE_MAX_LOAD, TARGET_LOAD, MAX_LOAD]
        };
        Sizing {
            sparse_slots: sparse_bytes / shards.max(1) / slot_bytes.max(1),
            loads,
        }
    }

    fn is_sparse(&self, capacity: usize) -> bool {
        capacity <= self.sparse_slots
    }

    /// The slots for `live` keys: at the sparse load while that fits the sparse budget
    /// (room for one key at least, so a new table's first key needs no growth), otherwise
    /// at the dense load and past the budget.
    pub(super) fn capacity_for(&self, live: usize) -> usize {
        let sparse = (live.max(1) * 100)
            .div_ceil(self.loads[0])
            .max(MIN_CAPACITY);
        if self.is_sparse(sparse) {
            return sparse;
        }
        (live * 100)
            .div_ceil(self.loads[2])
            .max(self.sparse_slots + 1)
            .max(MIN_CAPACITY)
    }

    /// Whether `used` slots (live plus tombstones) are within an array of `capacity`'s load.
    pub(super) fn fits(&self, used: usize, capacity: usize) -> bool {
        let max = if self.is_sparse(capacity) {
            self.loads[1]
        } else {
            self.loads[3]
        };
        used * 100 <= capacity * max
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Every array `capacity_for` makes holds its keys and room for more, sparse below the
    /// budget and dense above it, and growth steps stay small (1.25-1.3x).
    #[test]
    fn arrays_fit_their_keys_and_switch_to_dense_once() {
        let sizing = Sizing::new(8, 16, 4 << 20);
        assert_eq!(sizing.sparse_slots, 32_768);
        let mut capacity = sizing.capacity_for(0);
        let mut switched = 0;
        for live in 0..2_000_000usize {
            if sizing.fits(live + 1, capacity) {
                continue;
            }
            let next = sizing.capacity_for(live + 1);
            assert!(
                sizing.fits(live + 1, next),
                "{live} keys overflow {next} slots"
            );
            assert!(
                next > capacity || !sizing.is_sparse(next),
                "growth shrank a sparse array"
            );
            if sizing.is_sparse(capacity) && !sizing.is_sparse(next) {
                switched += 1;
            } else if next > 1_000 {
                assert!(
                    next * 100 <= capacity * 135,
                    "{capacity} -> {next} slots is a big step"
                );
            }
            capacity = next;
        }
        assert_eq!(switched, 1);
        // Dense at 2M keys: 16-byte slots at 68-85% load, 19-24 bytes a key.
        let bytes_per_key = capacity * 16 / 2_000_000;
        assert!(
            (18..=24).contains(&bytes_per_key),
            "{bytes_per_key} B a key"
        );
    }

    #[test]
    fn line_slots_are_sparse_at_a_quarter_and_dense_as_others() {
        let sizing = Sizing::new(8, 64, 4 << 20);
        assert_eq!(sizing.capacity_for(1_000), 4_000);
        assert!(sizing.fits(1_320, 4_000));
        assert!(!sizing.fits(1_321, 4_000));
        let dense = Sizing::new(8, 64, 0);
        assert_eq!(dense.capacity_for(68), 100);
        assert!(!dense.fits(86, 100));
    }

    #[test]
    fn small_tables_are_sparse_and_a_budget_of_zero_keeps_every_array_dense() {
        let sizing = Sizing::new(8, 16, 4 << 20);
        assert_eq!(sizing.capacity_for(300), 10_000);
        assert!(sizing.fits(400, 10_000));
        assert!(!sizing.fits(401, 10_000));
        let dense = Sizing::new(8, 16, 0);
        assert_eq!(dense.capacity_for(68), 100);
        assert!(dense.fits(85, 100));
        assert!(!dense.fits(86, 100));
    }
}
