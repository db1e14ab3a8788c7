//! Epoch-based reclamation for the keyed table: when a shard's array is replaced or a key's
//! ring is swept, the old memory is freed only once no reader can still hold it.
//!
//! The classic three-epoch scheme (Fraser; crossbeam-epoch's structure, including its fence
//! placement) with two changes for the hot path:
//! - each thread owns one cache-line [`Record`] per domain, found by a dense thread index, so
//!   pinning is two plain stores to a line no other thread writes (no RMW, no shared write);
//! - the reader's fence is [`barrier::light`] (a compiler fence where Linux `membarrier` is
//!   available) and the reclaimer pays [`barrier::heavy`] instead.
//!
//! Rules: a reader pins, loads shared pointers, and unpins when done with them. Memory
//! unlinked before [`Domain::retire_tag`] returned `t` is freed once [`Domain::advance`]
//! returns an epoch `>= t + 2`: every reader pinned at that point pinned after the unlink.
//! The per-thread records also carry the allowed/denied counters, so counting costs the hot
//! path two plain stores to the same line.

pub(crate) mod barrier;
mod thread_index;

use crate::sync::{fence, thread_local, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::ptr;

/// Records per chunk; chunks are allocated as thread indices reach them.
const CHUNK: usize = if cfg!(loom) { 8 } else { 64 };
/// Chunks per domain: 4,096 threads with a record. Threads beyond (or a thread whose
/// thread-locals are being destroyed) share the overflow counters instead. (Under loom every
/// load is a branch to explore, and a model has a handful of threads, numbered from 0.)
const CHUNKS: usize = if cfg!(loom) { 2 } else { 64 };

/// One thread's state in one domain. Written only by its owner; read by reclaimers and by
/// the counters' readers.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct Record {
    /// `epoch << 1 | 1` while pinned, 0 otherwise.
    epoch: AtomicU64,
    /// Nesting depth of the owner's guards (owner-only).
    depth: AtomicU32,
    allowed: AtomicU64,
    denied: AtomicU64,
}

struct Chunk {
    records: [Record; CHUNK],
}

#[cfg(not(loom))]
thread_local! {
    /// The last domain this thread pinned (by id) and its record there.
    static LAST_RECORD: Cell<(u64, *const Record)> = const { Cell::new((0, ptr::null())) };
}

#[cfg(loom)]
thread_local! {
    static LAST_RECORD: Cell<(u64, *const Record)> = Cell::new((0, ptr::null()));
}

/// Domain ids; 0 means none, so ids start at 1.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A reclamation domain: the global epoch and the records of the threads that pin it.
#[derive(Debug)]
pub(crate) struct Domain {
    /// Unique for the life of the process, so a cached record is never another domain's.
    id: u64,
    epoch: CachePadded<AtomicU64>,
    chunks: Box<[AtomicPtr<Chunk>]>,
    /// Pinned threads without a record; while non-zero the epoch cannot advance.
    overflow_pinned: CachePadded<AtomicUsize>,
    overflow_allowed: AtomicU64,
    overflow_denied: AtomicU64,
}

impl std::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Chunk")
    }
}

impl Domain {
    pub(crate) fn new() -> Domain {
        barrier::init();
        Domain {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            epoch: CachePadded::new(AtomicU64::new(0)),
            chunks: (0..CHUNKS)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            overflow_pinned: CachePadded::new(AtomicUsize::new(0)),
            overflow_allowed: AtomicU64::new(0),
            overflow_denied: AtomicU64::new(0),
        }
    }

    /// This thread's record, allocating its chunk on first use. The last domain a thread
    /// pinned and its record there are cached in a plain thread-local, so pinning the same
    /// limiter again skips the index and chunk lookups.
    #[inline]
    fn record(&self) -> Option<&Record> {
        let cached = LAST_RECORD.try_with(Cell::get).ok()?;
        if cached.0 == self.id {
            // SAFETY: cached for this domain (ids are never reused) by `find_record`, and a
            // domain's records live as long as it does.
            return Some(unsafe { &*cached.1 });
        }
        self.find_record()
    }

    #[cold]
    fn find_record(&self) -> Option<&Record> {
        let record = self.record_at(thread_index::current()?)?;
        let _ = LAST_RECORD.try_with(|last| last.set((self.id, record)));
        Some(record)
    }

    /// The record of thread index `index`, allocating its chunk on first use.
    fn record_at(&self, index: usize) -> Option<&Record> {
        let slot = self.chunks.get(index / CHUNK)?;
        let mut chunk = slot.load(Ordering::Acquire);
        if chunk.is_null() {
            chunk = self.allocate_chunk(slot);
        }
        // SAFETY: chunks are only freed when the domain is dropped.
        Some(unsafe { &(*chunk).records[index % CHUNK] })
    }

    #[cold]
    fn allocate_chunk(&self, slot: &AtomicPtr<Chunk>) -> *mut Chunk {
        let fresh = Box::into_raw(Box::new(Chunk {
            records: std::array::from_fn(|_| Record::default()),
        }));
        match slot.compare_exchange(ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => fresh,
            Err(winner) => {
                // SAFETY: `fresh` was never shared.
                drop(unsafe { Box::from_raw(fresh) });
                winner
            }
        }
    }

    /// Pins the current thread: until the guard drops, nothing retired after this point is
    /// freed.
    #[inline]
    pub(crate) fn pin(&self) -> Guard<'_> {
        self.pin_record(self.record())
    }

    #[inline]
    fn pin_record<'a>(&'a self, record: Option<&'a Record>) -> Guard<'a> {
        match record {
            Some(record) => {
                let depth = record.depth.load(Ordering::Relaxed);
                record.depth.store(depth + 1, Ordering::Relaxed);
                if depth == 0 {
                    let epoch = self.epoch.load(Ordering::Relaxed);
                    record.epoch.store(epoch << 1 | 1, Ordering::Relaxed);
                    barrier::light();
                }
                Guard {
                    domain: self,
                    record: Some(record),
                }
            }
            None => {
                self.overflow_pinned.fetch_add(1, Ordering::Relaxed);
                barrier::light();
                Guard {
                    domain: self,
                    record: None,
                }
            }
        }
    }

    /// Counts one decision in this thread's record without pinning: for a direct limiter,
    /// which keeps its counts here (feature `metrics`) and has nothing to reclaim.
    #[inline]
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn count(&self, allowed: bool) {
        let (mine, shared) = if allowed {
            (self.record().map(|r| &r.allowed), &self.overflow_allowed)
        } else {
            (self.record().map(|r| &r.denied), &self.overflow_denied)
        };
        match mine {
            Some(counter) => counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed),
            None => {
                shared.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The tag for memory unlinked just before this call (see the module rules).
    pub(crate) fn retire_tag(&self) -> u64 {
        fence(Ordering::SeqCst);
        self.epoch.load(Ordering::Relaxed)
    }

    /// Advances the global epoch if every pinned thread has seen the current one, and returns
    /// the epoch after the attempt.
    pub(crate) fn advance(&self) -> u64 {
        let epoch = self.epoch.load(Ordering::Relaxed);
        if !barrier::heavy() || self.overflow_pinned.load(Ordering::Relaxed) != 0 {
            return epoch;
        }
        for record in self.records() {
            let pinned = record.epoch.load(Ordering::Relaxed);
            if pinned & 1 == 1 && pinned >> 1 != epoch {
                return epoch;
            }
        }
        fence(Ordering::Acquire);
        match self
            .epoch
            .compare_exchange(epoch, epoch + 1, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => epoch + 1,
            Err(current) => current,
        }
    }

    /// True when memory retired with `tag` may be freed, given an epoch from [`advance`].
    ///
    /// [`advance`]: Domain::advance
    pub(crate) fn is_safe(tag: u64, epoch: u64) -> bool {
        epoch >= tag + 2
    }

    fn records(&self) -> impl Iterator<Item = &Record> {
        // Every chunk: thread indices are process-wide, so a domain may have a chunk for
        // indices 64..128 and none for 0..64 (a scan stopping at the first gap would miss
        // pinned readers).
        self.chunks
            .iter()
            .map(|slot| slot.load(Ordering::Acquire))
            .filter(|chunk| !chunk.is_null())
            // SAFETY: chunks live as long as the domain.
            .flat_map(|chunk| unsafe { (*chunk).records.iter() })
    }

    /// Total (allowed, denied) counted by every thread.
    pub(crate) fn counts(&self) -> (u64, u64) {
        self.records().fold(
            (
                self.overflow_allowed.load(Ordering::Relaxed),
                self.overflow_denied.load(Ordering::Relaxed),
            ),
            |(a, d), r| {
                (
                    a + r.allowed.load(Ordering::Relaxed),
                    d + r.denied.load(Ordering::Relaxed),
                )
            },
        )
    }

    /// Bytes of records allocated.
    pub(crate) fn memory_bytes(&self) -> usize {
        let chunks = self.records().count() / CHUNK;
        std::mem::size_of::<Self>()
            + CHUNKS * std::mem::size_of::<AtomicPtr<Chunk>>()
            + chunks * std::mem::size_of::<Chunk>()
    }
}

impl Default for Domain {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        for slot in self.chunks.iter() {
            let chunk = slot.load(Ordering::Relaxed);
            if !chunk.is_null() {
                // SAFETY: no guard can outlive the domain it borrows.
                drop(unsafe { Box::from_raw(chunk) });
            }
        }
    }
}

/// Keeps the current thread pinned; see [`Domain::pin`].
#[derive(Debug)]
pub(crate) struct Guard<'a> {
    domain: &'a Domain,
    record: Option<&'a Record>,
}

impl Guard<'_> {
    /// Counts one decision in this thread's record: a plain add on a line only this thread
    /// writes.
    #[inline]
    pub(crate) fn count(&self, allowed: bool) {
        let (mine, shared) = if allowed {
            (
                self.record.map(|r| &r.allowed),
                &self.domain.overflow_allowed,
            )
        } else {
            (self.record.map(|r| &r.denied), &self.domain.overflow_denied)
        };
        match mine {
            Some(counter) => {
                counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
            None => {
                shared.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Drop for Guard<'_> {
    #[inline]
    fn drop(&mut self) {
        match self.record {
            Some(record) => {
                let depth = record.depth.load(Ordering::Relaxed) - 1;
                record.depth.store(depth, Ordering::Relaxed);
                if depth == 0 {
                    record.epoch.store(0, Ordering::Release);
                }
            }
            None => {
                self.domain.overflow_pinned.fetch_sub(1, Ordering::Release);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A reader whose thread index falls in a later chunk, in a domain where no earlier chunk
    /// exists, still holds the epoch back (a scan that stopped at the first missing chunk
    /// would let memory it holds be freed).
    #[test]
    fn a_reader_in_a_later_chunk_holds_the_epoch() {
        let domain = Domain::new();
        let start = domain.advance();
        let guard = domain.pin_record(domain.record_at(CHUNK + 5));
        assert!(domain.chunks[0].load(Ordering::Acquire).is_null());
        for _ in 0..4 {
            domain.advance();
        }
        let pinned = domain.epoch.load(Ordering::Relaxed);
        assert!(
            pinned <= start + 1,
            "advanced to {pinned} past a reader pinned at {start}"
        );
        drop(guard);
        assert!(domain.advance() > pinned);
    }

    #[test]
    fn counts_sum_every_record() {
        let domain = Domain::new();
        domain.pin_record(domain.record_at(3)).count(true);
        domain.pin_record(domain.record_at(CHUNK * 2)).count(false);
        domain.pin().count(true);
        assert_eq!(domain.counts(), (2, 1));
    }
}
