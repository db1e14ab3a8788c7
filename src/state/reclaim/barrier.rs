//! Asymmetric fences: readers pay a compiler fence, the rare reclaimer a process-wide barrier.
//!
//! Epoch reclamation needs a full fence between a reader announcing its epoch and reading the
//! shared pointer, paired with one in the reclaimer. A full fence costs ~10.6 ns on this
//! repository's benchmark VM, against ~0.5 ns for a compiler fence. On Linux,
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` makes every running thread of the process
//! execute a full barrier before it returns (threads not running have passed a context
//! switch, itself a barrier), so readers may use a compiler fence while reclaimers, which
//! only run when a table is replaced or a key swept, pay the system call. Where membarrier is
//! unavailable both sides use real fences. Under loom both sides always use `SeqCst` fences,
//! which is the protocol the models verify.

use std::sync::atomic::{compiler_fence, AtomicU8, Ordering};

const UNKNOWN: u8 = 0;
const ASYMMETRIC: u8 = 1;
const SYMMETRIC: u8 = 2;

/// Which scheme this process uses; decided once, before the first domain exists, and never
/// changed after (a reader and a reclaimer must never disagree).
static MODE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Decides the scheme (registering with membarrier if possible). Called when a reclamation
/// domain is created, so it happens before any reader or reclaimer of that domain runs.
pub(crate) fn init() {
    if MODE.load(Ordering::Acquire) == UNKNOWN {
        let mode = if cfg!(loom) || !membarrier::register() {
            SYMMETRIC
        } else {
            ASYMMETRIC
        };
        // Racing initializers compute the same answer; the first store wins.
        let _ = MODE.compare_exchange(UNKNOWN, mode, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// The reader's side: orders its epoch announcement before its loads of shared pointers.
#[inline]
pub(crate) fn light() {
    if MODE.load(Ordering::Relaxed) == ASYMMETRIC {
        compiler_fence(Ordering::SeqCst);
    } else {
        crate::sync::fence(crate::sync::Ordering::SeqCst);
    }
}

/// The reclaimer's side: pairs with every reader's [`light`] barrier. False when it could
/// not be executed, and then nothing may be reclaimed.
#[must_use]
pub(crate) fn heavy() -> bool {
    if MODE.load(Ordering::Relaxed) == ASYMMETRIC {
        // A forked child may have lost the registration its parent made: register again. If
        // even that fails, readers (compiler fence only) cannot be paired with: report it, so
        // retired memory waits instead of being freed under a reader.
        return membarrier::expedited() || (membarrier::register() && membarrier::expedited());
    }
    crate::sync::fence(crate::sync::Ordering::SeqCst);
    true
}

#[cfg(all(target_os = "linux", not(loom)))]
mod membarrier {
    const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn call(command: libc::c_long) -> bool {
        // SAFETY: membarrier takes integer arguments only and touches no memory of ours.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                command,
                0 as libc::c_long,
                0 as libc::c_long,
            ) == 0
        }
    }

    pub(super) fn register() -> bool {
        call(REGISTER_PRIVATE_EXPEDITED)
    }

    pub(super) fn expedited() -> bool {
        call(PRIVATE_EXPEDITED)
    }
}

#[cfg(not(all(target_os = "linux", not(loom))))]
mod membarrier {
    pub(super) fn register() -> bool {
        false
    }

    pub(super) fn expedited() -> bool {
        false
    }
}
