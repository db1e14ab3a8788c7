//! [`SharedQuota`]: a quota that one writer replaces while others read it, without locks.

use crate::quota::Quota;
use crate::sync::{fence, AtomicU64, Ordering};

/// A [`Quota`] readable while a reconfiguration replaces it: a sequence lock over atomics
/// (the version is odd while a write is in progress; a reader retries if it changed).
/// Writers are serialized by the caller.
#[derive(Debug)]
pub(crate) struct SharedQuota {
    version: AtomicU64,
    /// `limit << 32 | burst`.
    counts: AtomicU64,
    /// The period in ns (at most 2^58), with bit 63 set for an anchored quota.
    period: AtomicU64,
}

impl SharedQuota {
    pub(crate) fn new(quota: Quota) -> Self {
        SharedQuota {
            version: AtomicU64::new(0),
            counts: AtomicU64::new(pack(&quota)),
            period: AtomicU64::new(period_word(&quota)),
        }
    }

    pub(crate) fn load(&self) -> Quota {
        loop {
            let before = self.version.load(Ordering::Acquire);
            let (counts, period) = (
                self.counts.load(Ordering::Relaxed),
                self.period.load(Ordering::Relaxed),
            );
            fence(Ordering::Acquire);
            if before & 1 == 0 && self.version.load(Ordering::Relaxed) == before {
                let (limit, burst) = ((counts >> 32) as u32, counts as u32);
                let anchored = period & ANCHORED != 0;
                return Quota::from_parts(limit, burst, period & !ANCHORED, anchored);
            }
            std::hint::spin_loop();
        }
    }

    /// Replaces the quota; one writer at a time.
    pub(crate) fn store(&self, quota: Quota) {
        let version = self.version.load(Ordering::Relaxed);
        self.version.store(version + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.counts.store(pack(&quota), Ordering::Relaxed);
        self.period.store(period_word(&quota), Ordering::Relaxed);
        self.version.store(version + 2, Ordering::Release);
    }
}

const ANCHORED: u64 = 1 << 63;

fn period_word(quota: &Quota) -> u64 {
    quota.period_nanos() | if quota.is_anchored() { ANCHORED } else { 0 }
}

fn pack(quota: &Quota) -> u64 {
    u64::from(quota.limit()) << 32 | u64::from(quota.burst())
}
