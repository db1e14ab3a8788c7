//! The lanes' bookkeeping, apart from the async work that drives it (`batch.rs`): the calls
//! queued on each lane, how many calls (lone or batches) each lane has in flight, and which
//! watchdog fails its late calls. All of it changes under one lock, reached through the sync
//! shim, so the loom models (`loom-tests/tests/redis_lanes.rs`) race callers, returning
//! flights, flushes and watchdogs through this very code.
//!
//! What holds in every interleaving: a queued call is answered exactly once (by the batch
//! that takes it, or as late by the watchdog or the taking flush); a lane with calls queued
//! always has a flight that will take them; a lane never has more than its limit in flight;
//! an idle lane is forgotten.

// `pub` items here are reachable only by the loom models (through `cfg(loom)` re-exports).
#![cfg_attr(not(loom), allow(unreachable_pub))]

use crate::sync::{lock, AtomicU64, Mutex, Ordering::Relaxed};
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// A call waiting on a lane.
pub trait Waiting {
    /// When its caller's timeout ends.
    type Time: Ord + Copy;
    /// Bytes of keys and arguments it adds to a batch.
    fn size(&self) -> usize;
    /// When its caller's timeout ends.
    fn deadline(&self) -> Self::Time;
    /// True when its caller gave up on it (its future was dropped).
    fn is_abandoned(&self) -> bool;
    /// Answers it with a timeout.
    fn time_out(self);
}

/// How large a lane's batches and flights may grow.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Calls per batch at most.
    pub max_groups: usize,
    /// Bytes of keys and arguments per batch at most (a larger call still goes, alone).
    pub max_bytes: usize,
    /// Calls (lone or batches) in flight per lane at most.
    pub max_in_flight: u32,
}

/// One lane's calls.
struct Lane<W> {
    in_flight: u32,
    queue: VecDeque<W>,
    bytes: usize,
    /// The number of the watchdog failing this queue's calls whose time is up, if one runs.
    watchdog: Option<u64>,
}

impl<W> Default for Lane<W> {
    fn default() -> Self {
        Lane {
            in_flight: 0,
            queue: VecDeque::new(),
            bytes: 0,
            watchdog: None,
        }
    }
}

/// Where [`Lanes::enqueue`] put a call.
#[derive(Debug)]
pub enum Enqueued<G, R> {
    /// The lane was idle: it is now busy, and the call (handed back) goes at once, alone.
    Alone(G),
    /// The call queued; its answer comes through `answer`.
    Queued {
        /// What the caller awaits.
        answer: R,
        /// Start this watchdog (its number), which fails the lane's late calls from the
        /// first deadline on.
        watchdog: Option<u64>,
        /// Start a flush now: a full batch is waiting and the lane may have one more flight.
        flush: bool,
    },
}

/// What [`Lanes::hand_over`] decided for a lane whose flight returned.
#[derive(Debug, PartialEq, Eq)]
pub enum HandOver<S> {
    /// Nothing was queued: the flight ended (an idle lane is forgotten).
    Released,
    /// Calls are queued: the flight goes on as a flush, started on `S`.
    Flush(S),
    /// Calls were queued but nothing can send them (no runtime): they were dropped, so that
    /// their callers see their channels close, and the flight ended.
    Dropped,
}

/// Every lane of one connection.
pub struct Lanes<L, W> {
    lanes: Mutex<HashMap<L, Lane<W>>>,
    /// Numbers the watchdogs, so that one that outlived its lane's queue knows to stop.
    watchdogs: AtomicU64,
    limits: Limits,
}

impl<L, W> std::fmt::Debug for Lanes<L, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl<L: Hash + Eq + Copy, W: Waiting> Lanes<L, W> {
    /// No lane busy.
    pub fn new(limits: Limits) -> Self {
        Lanes {
            lanes: Mutex::new(HashMap::new()),
            watchdogs: AtomicU64::new(0),
            limits,
        }
    }

    /// A call of `size` bytes for `lane`: on an idle lane, marks it busy and hands `call`
    /// back to go alone; on a busy one, queues what `queue(call)` makes (called under the
    /// lock, so that deadlines grow along the queue) and returns the caller's half.
    pub fn enqueue<G, R>(
        &self,
        lane: L,
        call: G,
        queue: impl FnOnce(G) -> (W, R),
    ) -> Enqueued<G, R> {
        let mut lanes = lock(&self.lanes);
        let entry = lanes.entry(lane).or_default();
        if entry.in_flight == 0 {
            entry.in_flight = 1;
            return Enqueued::Alone(call);
        }
        let (waiting, answer) = queue(call);
        entry.bytes += waiting.size();
        entry.queue.push_back(waiting);
        let watchdog = entry.watchdog.is_none().then(|| {
            let number = self.watchdogs.fetch_add(1, Relaxed);
            entry.watchdog = Some(number);
            number
        });
        let full =
            entry.queue.len() >= self.limits.max_groups || entry.bytes >= self.limits.max_bytes;
        let flush = full && entry.in_flight < self.limits.max_in_flight;
        if flush {
            entry.in_flight += 1;
        }
        Enqueued::Queued {
            answer,
            watchdog,
            flush,
        }
    }

    /// Watchdog `number`'s round at `now`: fails the calls at the front of `lane`'s queue
    /// whose time is up, and returns the next deadline; `None` when the queue is empty (the
    /// watchdog then stops) or another watchdog has taken over.
    pub fn expire(&self, lane: L, number: u64, now: W::Time) -> Option<W::Time> {
        let mut lanes = lock(&self.lanes);
        let entry = lanes.get_mut(&lane)?;
        if entry.watchdog != Some(number) {
            return None;
        }
        // Deadlines grow along the queue (`enqueue`).
        while entry
            .queue
            .front()
            .is_some_and(|next| next.deadline() <= now)
        {
            let late = entry.queue.pop_front().expect("a front");
            entry.bytes -= late.size();
            late.time_out();
        }
        let next = entry.queue.front().map(Waiting::deadline);
        if next.is_none() {
            entry.watchdog = None;
        }
        next
    }

    /// A flight on `lane` returned: with calls queued it goes on as a flush, started on what
    /// `spawner` gives (called under the lock, only then); with none queued it ends.
    pub fn hand_over<S>(&self, lane: L, spawner: impl FnOnce() -> Option<S>) -> HandOver<S> {
        let mut lanes = lock(&self.lanes);
        let Some(entry) = lanes.get_mut(&lane) else {
            return HandOver::Released;
        };
        if entry.queue.is_empty() {
            release(&mut *lanes, lane);
            return HandOver::Released;
        }
        match spawner() {
            Some(spawn) => HandOver::Flush(spawn),
            None => {
                entry.queue.clear();
                entry.bytes = 0;
                entry.watchdog = None;
                release(&mut *lanes, lane);
                HandOver::Dropped
            }
        }
    }

    /// Up to a batch of the calls queued on `lane` at `now` (those still awaited and in time),
    /// oldest first; the late ones are timed out and the abandoned ones dropped. None when
    /// the queue is empty, and the lane's flight then ends.
    pub fn take(&self, lane: L, now: W::Time) -> Vec<W> {
        let mut lanes = lock(&self.lanes);
        let Some(entry) = lanes.get_mut(&lane) else {
            return Vec::new();
        };
        let mut batch = Vec::with_capacity(entry.queue.len().min(self.limits.max_groups));
        let mut bytes = 0;
        while batch.len() < self.limits.max_groups {
            let Some(next) = entry.queue.front() else {
                break;
            };
            let size = next.size();
            if !batch.is_empty() && bytes + size > self.limits.max_bytes {
                break;
            }
            let next = entry.queue.pop_front().expect("a front");
            entry.bytes -= size;
            // A call whose caller left or whose time is up is not decided.
            if next.deadline() <= now {
                next.time_out();
            } else if !next.is_abandoned() {
                bytes += size;
                batch.push(next);
            }
        }
        if batch.is_empty() {
            release(&mut *lanes, lane);
        }
        batch
    }

    /// Lanes with a flight out or calls queued.
    #[cfg(loom)]
    pub fn busy(&self) -> usize {
        lock(&self.lanes).len()
    }

    /// `lane`'s flights, queued calls, queued bytes, and whether a watchdog runs for it:
    /// `None` for an idle lane.
    #[cfg(any(test, loom))]
    pub fn lane(&self, lane: L) -> Option<(u32, usize, usize, bool)> {
        let lanes = lock(&self.lanes);
        let entry = lanes.get(&lane)?;
        Some((
            entry.in_flight,
            entry.queue.len(),
            entry.bytes,
            entry.watchdog.is_some(),
        ))
    }
}

/// Ends one flight on `lane`; an idle lane is forgotten (a cluster has many slots).
fn release<L: Hash + Eq, W>(lanes: &mut HashMap<L, Lane<W>>, lane: L) {
    if let Some(entry) = lanes.get_mut(&lane) {
        entry.in_flight -= 1;
        if entry.in_flight == 0 && entry.queue.is_empty() {
            lanes.remove(&lane);
        }
    }
}
