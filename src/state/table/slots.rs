//! [`Slots`]: the memory behind an array's slots (of any slot type `T`).
//!
//! A large table is read at random, one slot per check, so beyond the caches each check also
//! misses the TLB, and under a hypervisor a TLB miss is a two-level page walk. Arrays of
//! 2 MiB or more are therefore allocated 2 MiB-aligned and advised as transparent huge pages
//! (`madvise(MADV_HUGEPAGE)`) before their first touch; smaller ones, other systems and loom
//! builds use a plain boxed slice.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ops::Deref;
use std::ptr::NonNull;

/// Huge-page size, and the smallest array worth advising.
const HUGE_PAGE: usize = 2 << 20;

/// A fixed number of slots, allocated once.
pub(super) struct Slots<T> {
    ptr: NonNull<T>,
    len: usize,
    /// `Some` when allocated here with this layout; `None` when it came from a `Box<[_]>`.
    layout: Option<Layout>,
}

impl<T> Slots<T> {
    /// `len` empty slots (at least one).
    pub(super) fn new(len: usize, empty: impl Fn() -> T) -> Self {
        let len = len.max(1);
        let bytes = len * std::mem::size_of::<T>();
        if cfg!(all(target_os = "linux", not(loom))) && bytes >= HUGE_PAGE {
            if let Ok(layout) = Layout::from_size_align(bytes, HUGE_PAGE) {
                return Self::huge(len, layout, empty);
            }
        }
        let boxed: Box<[T]> = (0..len).map(|_| empty()).collect();
        Slots {
            len,
            // SAFETY: a boxed slice's pointer is never null.
            ptr: unsafe { NonNull::new_unchecked(Box::into_raw(boxed).cast()) },
            layout: None,
        }
    }

    fn huge(len: usize, layout: Layout, empty: impl Fn() -> T) -> Self {
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            handle_alloc_error(layout)
        };
        advise_huge(raw, layout.size());
        for i in 0..len {
            // SAFETY: `i < len` slots fit in the allocation; each is written once.
            unsafe { ptr.as_ptr().add(i).write(empty()) };
        }
        Slots {
            ptr,
            len,
            layout: Some(layout),
        }
    }
}

#[cfg(all(target_os = "linux", not(loom)))]
fn advise_huge(start: *mut u8, bytes: usize) {
    // SAFETY: the range is one allocation of ours; the advice only changes how it is backed.
    // Failure (THP disabled) leaves ordinary pages, which is fine.
    unsafe { libc::madvise(start.cast(), bytes, libc::MADV_HUGEPAGE) };
}

#[cfg(not(all(target_os = "linux", not(loom))))]
fn advise_huge(_start: *mut u8, _bytes: usize) {}

impl<T> Deref for Slots<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialized slots live at `ptr` until drop.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for Slots<T> {
    fn drop(&mut self) {
        let slice = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
        match self.layout {
            // SAFETY: allocated here with `layout`, holding `len` initialized slots (whose
            // keys the array has already dropped).
            Some(layout) => unsafe {
                std::ptr::drop_in_place(slice);
                dealloc(self.ptr.as_ptr().cast(), layout);
            },
            // SAFETY: came from `Box::into_raw` of a slice of `len` slots.
            None => drop(unsafe { Box::from_raw(slice) }),
        }
    }
}

// SAFETY: `Slots` owns its `T`s as a `Box<[T]>` would.
unsafe impl<T: Send> Send for Slots<T> {}
// SAFETY: as above: shared, it hands out `&T` only.
unsafe impl<T: Sync> Sync for Slots<T> {}
