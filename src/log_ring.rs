//! [`LogRing`]: the sliding log's concurrent ring of timestamps.
//!
//! Why not a CAS loop: an admission of cost `n` must log `n` timestamps atomically, which one
//! word cannot hold. Design: a head word `seq << 2 | DEAD | WRITING` beside the slots.
//! - Reads (every denial, peek and zero-cost check) are optimistic, as in a seqlock: load the
//!   head, read the slots the decision needs, load the head again; if it moved, retry. They
//!   write nothing, so denials never contend.
//! - An admission decides on the same optimistic read, then claims the head with one CAS from
//!   exactly the head it read (so nothing changed since), writes its slots and publishes
//!   `seq + n` with a release store. The writing bit is held only for those `n` stores.
//! - A keyed table retires the ring of an idle key by setting `DEAD` with one CAS from a head
//!   whose every entry has expired; checks that meet `DEAD` look the key up again, so an
//!   admission racing with the sweep is never lost.
//!
//! Ordering: slot stores are `Release` and slot loads `Acquire`, so a reader that sees any
//! slot of an in-progress write also sees the head that write set, and fails validation.
//! Model-checked in `loom-tests/` (linearizability against the sequential log).

use crate::algorithm::engine::{Mode, Stale, Swap};
use crate::algorithm::sliding_log::{decide, SlidingLogParams, Snapshot};
use crate::decision::Decision;
use crate::sync::{AtomicU64, Ordering, SpinWait};

const WRITING: u64 = 1;
const DEAD: u64 = 2;
const SEQ_SHIFT: u32 = 2;

/// A ring of `limit` timestamps (`ts + 1`; 0 = never written) and the head word.
#[derive(Debug)]
pub struct LogRing {
    head: AtomicU64,
    slots: Box<[AtomicU64]>,
    /// Under loom, reclamation marks a ring freed instead of freeing it (see `Array`).
    #[cfg(loom)]
    freed: crate::sync::AtomicBool,
}

impl LogRing {
    /// An empty log of `limit` slots.
    pub(crate) fn new(limit: u32) -> LogRing {
        LogRing {
            head: AtomicU64::new(0),
            slots: (0..limit).map(|_| AtomicU64::new(0)).collect(),
            #[cfg(loom)]
            freed: crate::sync::AtomicBool::new(false),
        }
    }

    /// Under loom: records that reclamation would free this ring now.
    #[cfg(loom)]
    pub(crate) fn mark_freed(&self) {
        self.freed.store(true, Ordering::SeqCst);
    }

    /// A head with no writer in progress, or `Err` once the ring is retired.
    fn settled_head(&self) -> Result<u64, Stale> {
        #[cfg(loom)]
        assert!(
            !self.freed.load(Ordering::SeqCst),
            "a reader touched a ring after reclamation freed it"
        );
        let spin = SpinWait::new();
        loop {
            let head = self.head.load(Ordering::Acquire);
            if head & DEAD != 0 {
                return Err(Stale);
            }
            if head & WRITING == 0 {
                return Ok(head);
            }
            spin.wait();
        }
    }

    /// Decides a request of `cost` at `now`, logging it if admitted (and not peeking; a hit
    /// logs it whatever the answer), or reports that the ring was retired. A logging check
    /// returns the head swap it made.
    pub(crate) fn check(
        &self,
        p: &SlidingLogParams,
        now: u64,
        cost: u32,
        mode: Mode,
    ) -> Result<(Decision, Option<Swap>), Stale> {
        loop {
            let head = self.settled_head()?;
            let seq = head >> SEQ_SHIFT;
            let (allowed, at, decision) = decide(&self.snapshot(p, seq), p, now, cost);
            let logs = cost > 0 && (mode == Mode::Hit || (allowed && mode == Mode::Consume));
            if !logs {
                if self.head.load(Ordering::Acquire) == head {
                    return Ok((decision, None));
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
            let after = seq + u64::from(cost);
            // Only the newest `limit` entries are ever read: a hit of more overwrites the rest.
            for j in after.saturating_sub(u64::from(p.limit)).max(seq)..after {
                self.slot(p, j).store(at + 1, Ordering::Release);
            }
            // A hit beyond the limit answers as the single request after it would be answered.
            let decision = if allowed {
                decision
            } else {
                decide(&self.snapshot(p, after), p, now, 1).2
            };
            let next = after << SEQ_SHIFT;
            self.head.store(next, Ordering::Release);
            let swap = Swap {
                before: head,
                after: next,
            };
            return Ok((decision, Some(swap)));
        }
    }

    /// The log as `seq` entries, read from the slots.
    fn snapshot<'a>(
        &'a self,
        p: &'a SlidingLogParams,
        seq: u64,
    ) -> Snapshot<impl Fn(u64) -> u64 + 'a> {
        Snapshot {
            seq,
            timestamp: move |j: u64| self.slot(p, j).load(Ordering::Acquire) - 1,
        }
    }

    /// Un-logs an admission if nothing was logged (and the ring was not retired) since: the
    /// head goes back, and the entries past it are overwritten by the next admissions.
    pub(crate) fn undo(&self, swap: Swap) -> bool {
        self.head
            .compare_exchange(swap.after, swap.before, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Marks the ring dead if every entry has expired at `now` (it then decides every future
    /// request as an empty log would). After `true`, no check can log into it any more.
    pub(crate) fn try_retire(&self, p: &SlidingLogParams, now: u64) -> bool {
        loop {
            let Ok(head) = self.settled_head() else {
                return false;
            };
            if let Some(newest) = (head >> SEQ_SHIFT).checked_sub(1) {
                let logged = self.slot(p, newest).load(Ordering::Acquire) - 1;
                if logged + p.period > now {
                    return false;
                }
            }
            // Retiring from exactly `head` proves nothing was logged since the read.
            let dead = head | DEAD;
            if self
                .head
                .compare_exchange(head, dead, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return true;
            }
        }
    }

    fn slot(&self, p: &SlidingLogParams, j: u64) -> &AtomicU64 {
        &self.slots[p.slots.div_rem(j).1 as usize]
    }
}
