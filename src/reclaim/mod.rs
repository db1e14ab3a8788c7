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

use crate::sync::{fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use std::ptr;

/// Records per chunk; chunks are allocated as thread indices reach them.
const CHUNK: usize = 64;
/// Chunks per domain: 4,096 threads with a record. Threads beyond (or a thread whose
/// thread-locals are being destroyed) share the overflow counters instead.
const CHUNKS: usize = 64;

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

/// A reclamation domain: the global epoch and the records of the threads that pin it.
#[derive(Debug)]
pub(crate) struct Domain {
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
            epoch: CachePadded::new(AtomicU64::new(0)),
            chunks: (0..CHUNKS)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            overflow_pinned: CachePadded::new(AtomicUsize::new(0)),
            overflow_allowed: AtomicU64::new(0),
            overflow_denied: AtomicU64::new(0),
        }
    }

    /// This thread's record, allocating its chunk on first use.
    #[inline]
    fn record(&self) -> Option<&Record> {
        let index = thread_index::current()?;
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
        match self.record() {
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

    /// The tag for memory unlinked just before this call (see the module rules).
    pub(crate) fn retire_tag(&self) -> u64 {
        fence(Ordering::SeqCst);
        self.epoch.load(Ordering::Relaxed)
    }

    /// Advances the global epoch if every pinned thread has seen the current one, and returns
    /// the epoch after the attempt.
    pub(crate) fn advance(&self) -> u64 {
        let epoch = self.epoch.load(Ordering::Relaxed);
        barrier::heavy();
        if self.overflow_pinned.load(Ordering::Relaxed) != 0 {
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
        self.chunks
            .iter()
            .map(|slot| slot.load(Ordering::Acquire))
            .take_while(|chunk| !chunk.is_null())
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
