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
//! - A reconfiguration freezes the ring the same way (`DEAD` from a settled head, whatever its
//!   entries) and carries every entry still live under the new period into a new ring of at
//!   least the new limit's length, created with `WRITING` set so that checks wait until it is
//!   filled. A ring may so be longer than its limit: decisions read only its newest `limit`
//!   entries, and the extra ones keep what was consumed for a later, larger limit.
//!
//! Ordering: slot stores are `Release` and slot loads `Acquire`, so a reader that sees any
//! slot of an in-progress write also sees the head that write set, and fails validation.
//! Model-checked in `loom-tests/` (linearizability against the sequential log).

use crate::algorithm::divide::Divisor;
use crate::algorithm::sliding_log::{decide, SlidingLogParams, Snapshot};
use crate::algorithm::Op;
use crate::decision::Decision;
use crate::state::outcome::{Stale, Swap};
use crate::sync::{AtomicU64, Ordering, SpinWait};

const WRITING: u64 = 1;
const DEAD: u64 = 2;
const SEQ_SHIFT: u32 = 2;

/// A ring of at least `limit` timestamps (`ts + 1`; 0 = never written) and the head word.
#[derive(Debug)]
pub struct LogRing {
    head: AtomicU64,
    slots: Box<[AtomicU64]>,
    /// Divides sequence numbers by the ring's length to find their slot.
    length: Divisor,
    /// Under loom, reclamation marks a ring freed instead of freeing it (see `Array`).
    #[cfg(loom)]
    freed: crate::sync::AtomicBool,
}

impl LogRing {
    /// An empty log of `length` slots (at least the limit).
    pub(crate) fn new(length: u32) -> LogRing {
        LogRing {
            head: AtomicU64::new(0),
            slots: (0..length).map(|_| AtomicU64::new(0)).collect(),
            length: Divisor::new(u64::from(length)).expect("a ring has at least one slot"),
            #[cfg(loom)]
            freed: crate::sync::AtomicBool::new(false),
        }
    }

    /// An empty log of `length` slots that checks wait on until [`fill_from`](Self::fill_from).
    pub(crate) fn pending(length: u32) -> LogRing {
        let ring = LogRing::new(length);
        ring.head.store(WRITING, Ordering::Relaxed);
        ring
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
        mode: Op,
    ) -> Result<(Decision, Option<Swap>), Stale> {
        loop {
            let head = self.settled_head()?;
            let seq = head >> SEQ_SHIFT;
            let (allowed, at, decision) = decide(&self.snapshot(seq), p, now, cost);
            let logs = cost > 0 && (mode == Op::Hit || (allowed && mode == Op::Check));
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
            // Only the ring's newest entries are ever read: a hit of more overwrites the rest.
            for j in after.saturating_sub(self.len()).max(seq)..after {
                self.slot(j).store(at + 1, Ordering::Release);
            }
            // A hit beyond the limit answers as the single request after it would be answered.
            let decision = if allowed {
                decision
            } else {
                decide(&self.snapshot(after), p, now, 1).2
            };
            let next = after << SEQ_SHIFT;
            self.head.store(next, Ordering::Release);
            return Ok((decision, Some(Swap::new(head, next))));
        }
    }

    /// The log as `seq` entries, read from the slots.
    fn snapshot(&self, seq: u64) -> Snapshot<impl Fn(u64) -> u64 + '_> {
        Snapshot {
            seq,
            timestamp: move |j: u64| self.slot(j).load(Ordering::Acquire) - 1,
        }
    }

    /// Un-logs an admission (a check's, made under `p`) if nothing was logged and the ring
    /// was not retired since: the head goes back, and the entries past it are overwritten by
    /// the next admissions.
    ///
    /// The admission also overwrote the slots of the entries one ring length older than its
    /// own, which a later decision may still read. They had expired (else it would not have
    /// been admitted), so they are written back as expired at the admission's time, as late
    /// as possible: every later decision counts them as the originals, and a clock that steps
    /// back finds them live wherever it would find the originals live, so nothing is
    /// over-admitted. (Left as the admission wrote them, they read as live: the undone units
    /// went on denying.)
    pub(crate) fn undo(&self, p: &SlidingLogParams, swap: Swap) -> bool {
        // Claiming from exactly `after` proves nothing was logged or retired since.
        if self
            .head
            .compare_exchange(
                swap.after,
                swap.after | WRITING,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return false;
        }
        let (seq, after) = (swap.before >> SEQ_SHIFT, swap.after >> SEQ_SHIFT);
        let length = self.len();
        for j in after.saturating_sub(length).max(seq)..after {
            let restored = match j.checked_sub(length) {
                // Before the ring's first wrap the slot had never been written.
                None => 0,
                Some(_) => {
                    let at = self.slot(j).load(Ordering::Relaxed) - 1;
                    at.saturating_sub(p.period) + 1
                }
            };
            self.slot(j).store(restored, Ordering::Release);
        }
        self.head.store(swap.before, Ordering::Release);
        true
    }

    /// Marks the ring dead if every entry has expired at `now` (it then decides every future
    /// request as an empty log would). After `true`, no check can log into it any more.
    pub(crate) fn try_retire(&self, p: &SlidingLogParams, now: u64) -> bool {
        loop {
            let Ok(head) = self.settled_head() else {
                return false;
            };
            if let Some(newest) = (head >> SEQ_SHIFT).checked_sub(1) {
                let logged = self.slot(newest).load(Ordering::Acquire) - 1;
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

    /// Freezes the ring whatever its entries (checks of it get [`Stale`] from now on) and
    /// returns how many units it had logged. A ring frozen already returns `None`.
    pub(crate) fn freeze(&self) -> Option<u64> {
        loop {
            let head = self.settled_head().ok()?;
            if self
                .head
                .compare_exchange(head, head | DEAD, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return Some(head >> SEQ_SHIFT);
            }
        }
    }

    /// A ring for `to`, filled with every entry of `old` (frozen after logging `seq` units)
    /// still live under `to`'s period at `now`, that checks may use at once. Entries keep their
    /// times; the ring is at least `to.limit` long, longer if more entries are live.
    pub(crate) fn carried_over(old: &LogRing, seq: u64, to: &SlidingLogParams, now: u64) -> Self {
        let live = old.live_entries(seq, to, now);
        let length = u32::try_from(live.len()).map_or(u32::MAX, |n| n.max(to.limit));
        let ring = LogRing::pending(length);
        ring.fill(&live);
        ring
    }

    /// Fills this pending ring (at least as long as `old`) as
    /// [`carried_over`](Self::carried_over) would.
    pub(crate) fn fill_from(&self, old: &LogRing, seq: u64, to: &SlidingLogParams, now: u64) {
        let live = old.live_entries(seq, to, now);
        debug_assert!(live.len() as u64 <= self.len());
        self.fill(&live);
    }

    /// The entries of this frozen ring (after `seq` units) still live under `to`'s period at
    /// `now`, oldest first, as stored (`ts + 1`).
    fn live_entries(&self, seq: u64, to: &SlidingLogParams, now: u64) -> Vec<u64> {
        (seq.saturating_sub(self.len())..seq)
            .map(|j| self.slot(j).load(Ordering::Acquire))
            .filter(|&logged| (logged - 1).saturating_add(to.period) > now)
            .collect()
    }

    /// Writes `entries` (oldest first) into this pending ring and lets checks in.
    fn fill(&self, entries: &[u64]) {
        for (j, &logged) in entries.iter().enumerate() {
            self.slot(j as u64).store(logged, Ordering::Relaxed);
        }
        self.head
            .store((entries.len() as u64) << SEQ_SHIFT, Ordering::Release);
    }

    /// The ring's length.
    pub(crate) fn len(&self) -> u64 {
        self.length.get()
    }

    fn slot(&self, j: u64) -> &AtomicU64 {
        &self.slots[self.length.div_rem(j).1 as usize]
    }
}
