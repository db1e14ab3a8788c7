//! [`LogRing`]: the sliding log's concurrent ring of timestamps.
//!
//! Why not a CAS loop: an admission of cost `n` must log `n` timestamps atomically, which one
//! word cannot hold. Design: a head word `seq << 1 | WRITING` beside the slots.
//! - Reads (every denial, peek and zero-cost check) are optimistic, as in a seqlock: load the
//!   head, read the slots the decision needs, load the head again; if it moved, retry. They
//!   write nothing, so denials never contend.
//! - An admission decides on the same optimistic read, then claims the head with one CAS from
//!   exactly the head it read (so nothing changed since), writes its slots and publishes
//!   `seq + n` with a release store. The writing bit is held only for those `n` stores.
//!
//! Ordering: slot stores are `Release` and slot loads `Acquire`, so a reader that sees any
//! slot of an in-progress write also sees the head that write set, and fails validation.
//! Model-checked in `loom-tests/` (linearizability against the sequential log).

use crate::algorithm::engine::Mode;
use crate::algorithm::sliding_log::{decide, SlidingLogParams, Snapshot};
use crate::decision::Decision;
use crate::sync::{AtomicU64, Ordering, SpinWait};

const WRITING: u64 = 1;

/// A ring of `limit` timestamps (`ts + 1`; 0 = never written) and the head word.
#[derive(Debug)]
pub struct LogRing {
    head: AtomicU64,
    slots: Box<[AtomicU64]>,
}

impl LogRing {
    /// An empty log of `limit` slots.
    pub(crate) fn new(limit: u32) -> LogRing {
        LogRing {
            head: AtomicU64::new(0),
            slots: (0..limit).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Decides a request of `cost` at `now`, logging it if admitted (and not peeking).
    pub(crate) fn check(&self, p: &SlidingLogParams, now: u64, cost: u32, mode: Mode) -> Decision {
        let spin = SpinWait::new();
        loop {
            let head = self.head.load(Ordering::Acquire);
            if head & WRITING != 0 {
                spin.wait();
                continue;
            }
            let snapshot = Snapshot {
                seq: head >> 1,
                timestamp: |j: u64| self.slot(p, j).load(Ordering::Acquire).saturating_sub(1),
            };
            let (allowed, at, decision) = decide(&snapshot, p, now, cost);
            if !allowed || cost == 0 || mode == Mode::Peek {
                if self.head.load(Ordering::Acquire) == head {
                    return decision;
                }
                continue;
            }
            // Claiming from exactly `head` proves no admission happened since the read.
            if self
                .head
                .compare_exchange(head, head | WRITING, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            let seq = head >> 1;
            for j in seq..seq + u64::from(cost) {
                self.slot(p, j).store(at + 1, Ordering::Release);
            }
            self.head
                .store((seq + u64::from(cost)) << 1, Ordering::Release);
            return decision;
        }
    }

    fn slot(&self, p: &SlidingLogParams, j: u64) -> &AtomicU64 {
        &self.slots[p.slots.div_rem(j).1 as usize]
    }
}
