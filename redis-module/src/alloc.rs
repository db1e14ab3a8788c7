//! The module's heap is Redis's: once Redis has loaded the module, every allocation goes
//! through `RedisModule_Alloc` and its kin, so `used_memory`, `maxmemory` and the
//! `deny-oom` flag see the module's memory as they see Redis's own (the C library's `malloc`
//! would hide it from them).
//!
//! Before that (the crate linked into a test, or a function called before
//! `RedisModule_OnLoad`) allocations go to the system allocator, and the switch happens only
//! if none was made: a block is always freed by the allocator that made it. The one other
//! exception is an alignment above 8 bytes, more than Redis's allocator promises (a build
//! of Redis on the C library's `malloc` keeps an 8-byte size prefix): such blocks, rare
//! (none in this crate), always come from the system allocator, alloc and free alike, as
//! both see the layout.
//!
//! Redis's allocator ends the process when memory runs out, as the C library's did through
//! Rust's allocation error: what keeps a call from reaching that point is its caps
//! (`limits.rs`), which bound a call's memory to a few MiB.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Redis's allocation functions.
#[derive(Clone, Copy)]
pub(crate) struct RedisHeap {
    /// `RedisModule_Alloc`.
    pub(crate) alloc: unsafe extern "C" fn(usize) -> *mut c_void,
    /// `RedisModule_Calloc`.
    pub(crate) calloc: unsafe extern "C" fn(usize, usize) -> *mut c_void,
    /// `RedisModule_Realloc`.
    pub(crate) realloc: unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void,
    /// `RedisModule_Free`.
    pub(crate) free: unsafe extern "C" fn(*mut c_void),
}

/// The largest alignment Redis's allocator guarantees on every build.
const REDIS_ALIGN: usize = 8;

/// The global allocator: Redis's once [`route_to_redis`] succeeded, the system's before.
pub(crate) struct ModuleAllocator {
    redis: AtomicPtr<RedisHeap>,
    /// The system allocator has served an allocation of at most [`REDIS_ALIGN`] bytes'
    /// alignment: switching now could free its block with Redis's allocator.
    used_system: AtomicBool,
}

impl ModuleAllocator {
    /// An allocator on the system's heap until routed.
    pub(crate) const fn new() -> Self {
        ModuleAllocator {
            redis: AtomicPtr::new(std::ptr::null_mut()),
            used_system: AtomicBool::new(false),
        }
    }

    /// Sends every later allocation to `heap`, unless the system allocator already served
    /// one (then nothing changes, and this says so).
    pub(crate) fn route_to_redis(&self, heap: &'static RedisHeap) -> bool {
        if self.used_system.load(Ordering::SeqCst) {
            return false;
        }
        self.redis
            .store((heap as *const RedisHeap).cast_mut(), Ordering::SeqCst);
        true
    }

    /// Whether allocations go to Redis's allocator.
    #[cfg(test)]
    fn routed(&self) -> bool {
        !self.redis.load(Ordering::Relaxed).is_null()
    }

    /// Redis's functions for a block of `layout`, or `None` for the system's.
    fn heap(&self, layout: Layout) -> Option<&RedisHeap> {
        if layout.align() > REDIS_ALIGN {
            return None;
        }
        let heap = self.redis.load(Ordering::Acquire);
        if heap.is_null() {
            // One store only, so that a test binary's threads do not share a written line.
            if !self.used_system.load(Ordering::Relaxed) {
                self.used_system.store(true, Ordering::SeqCst);
            }
            return None;
        }
        // SAFETY: a non-null pointer here came from `route_to_redis`'s `&'static RedisHeap`.
        Some(unsafe { &*heap })
    }
}

impl Default for ModuleAllocator {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every block is served and returned by one allocator: the choice depends on the
// layout's alignment (which `dealloc` and `realloc` are given unchanged) and on whether the
// switch to Redis's happened, which is once, and only before any block of that alignment
// class was served by the system. Redis's functions return blocks aligned to at least
// `REDIS_ALIGN` bytes, of the size asked, or end the process.
unsafe impl GlobalAlloc for ModuleAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.heap(layout) {
            // SAFETY: Redis's allocator takes any size; `layout` is non-zero in size.
            Some(heap) => unsafe { (heap.alloc)(layout.size()).cast() },
            // SAFETY: forwarded with the caller's own guarantees.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.heap(layout) {
            // SAFETY: as in `alloc`; calloc returns zeroed memory.
            Some(heap) => unsafe { (heap.calloc)(1, layout.size()).cast() },
            // SAFETY: forwarded with the caller's own guarantees.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.heap(layout) {
            // SAFETY: `ptr` was served by Redis's allocator for this layout (the impl's
            // invariant above).
            Some(heap) => unsafe { (heap.free)(ptr.cast()) },
            // SAFETY: `ptr` was served by the system allocator for this layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match self.heap(layout) {
            // SAFETY: `ptr` was served by Redis's allocator for this layout; the new block
            // keeps its alignment class.
            Some(heap) => unsafe { (heap.realloc)(ptr.cast(), new_size).cast() },
            // SAFETY: forwarded with the caller's own guarantees.
            None => unsafe { System.realloc(ptr, layout, new_size) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn counted_alloc(size: usize) -> *mut c_void {
        CALLS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: plain malloc of a non-zero size.
        unsafe { libc_malloc(size) }
    }
    unsafe extern "C" fn counted_calloc(n: usize, size: usize) -> *mut c_void {
        CALLS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: plain calloc.
        unsafe { libc_calloc(n, size) }
    }
    unsafe extern "C" fn counted_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        CALLS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: `ptr` came from `counted_alloc`.
        unsafe { libc_realloc(ptr, size) }
    }
    unsafe extern "C" fn counted_free(ptr: *mut c_void) {
        CALLS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: `ptr` came from one of the functions above.
        unsafe { libc_free(ptr) }
    }

    extern "C" {
        #[link_name = "malloc"]
        fn libc_malloc(size: usize) -> *mut c_void;
        #[link_name = "calloc"]
        fn libc_calloc(n: usize, size: usize) -> *mut c_void;
        #[link_name = "realloc"]
        fn libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
        #[link_name = "free"]
        fn libc_free(ptr: *mut c_void);
    }

    static HEAP: RedisHeap = RedisHeap {
        alloc: counted_alloc,
        calloc: counted_calloc,
        realloc: counted_realloc,
        free: counted_free,
    };

    #[test]
    fn once_routed_every_block_goes_to_redis_and_back() {
        let allocator = ModuleAllocator::new();
        assert!(allocator.route_to_redis(&HEAP));
        assert!(allocator.routed());
        let layout = Layout::from_size_align(24, 8).unwrap();
        // SAFETY: a non-zero layout; each block is freed once with its layout.
        unsafe {
            let ptr = allocator.alloc(layout);
            assert!(!ptr.is_null());
            ptr.write_bytes(7, 24);
            let ptr = allocator.realloc(ptr, layout, 4096);
            assert_eq!(*ptr.add(23), 7, "realloc kept the contents");
            allocator.dealloc(ptr, Layout::from_size_align(4096, 8).unwrap());
            let zeroed = allocator.alloc_zeroed(layout);
            assert_eq!(*zeroed.add(5), 0);
            allocator.dealloc(zeroed, layout);
        }
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            5,
            "alloc, realloc, free, calloc, free"
        );
        // A wider alignment than Redis promises stays on the system's heap.
        let wide = Layout::from_size_align(64, 64).unwrap();
        // SAFETY: as above.
        unsafe {
            let ptr = allocator.alloc(wide);
            assert_eq!(ptr as usize % 64, 0);
            allocator.dealloc(ptr, wide);
        }
        assert_eq!(CALLS.load(Ordering::SeqCst), 5);
    }

    #[test]
    fn after_a_system_block_it_never_switches() {
        let allocator = ModuleAllocator::new();
        let layout = Layout::from_size_align(16, 8).unwrap();
        // SAFETY: a non-zero layout, freed with it.
        let ptr = unsafe { allocator.alloc(layout) };
        assert!(!allocator.route_to_redis(&HEAP), "a system block is live");
        assert!(!allocator.routed());
        // SAFETY: the block came from the system allocator, which still frees it.
        unsafe { allocator.dealloc(ptr, layout) };
    }
}
