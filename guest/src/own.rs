//! The guest's own allocations: Rust's, beside QuickJS's heap.
//!
//! What the guest holds for a program outside QuickJS's heap grows at the
//! program's will: a call's args text until its Request is written, the
//! tables of calls queued and in flight, the transport's Requests waiting
//! for a slot, the timers. Left uncounted, 64 unawaited calls of a 1 MB
//! string, 100,000 unawaited calls or 2,000,000 timers ran the linear
//! memory into the parent's cap, with Rust's "memory allocation failed"
//! on the console and the host's words instead of the place.
//!
//! [`OwnAllocator`] is the child's global allocator: the C library's (as
//! Rust's own `System` is in the component) with a count of the bytes it
//! holds ([`live`]), which the heap adds to QuickJS's where a program
//! makes a call or sets a timer (`Heap::admit_own`). A table that grows
//! by doubling holds its old and new storage at once, so its growth is
//! taken ahead, with `try_reserve`, inside [`within`]: an allocation there
//! that does not fit the room given is refused, the `try_reserve` fails,
//! and the heap stops the run as it does for a refusal of QuickJS's
//! (`Heap::reserve`). Nothing else is refused: outside [`within`] every
//! allocation succeeds if the memory has it, as before.
//!
//! The count is the process's: the native child's threads hand blocks to
//! each other (its call channel's reader thread allocates what arrives,
//! the run's thread frees it), so a count per thread ran below zero there
//! and wrapped, and the first call admitted after about a thousand answers
//! was refused as if the guest held 16 EiB. The component has one thread,
//! where the two are the same. The library's own tests run many runs at
//! once, each on its thread, so theirs is per thread; [`since`] reads a
//! count that fell below where it was taken as nothing held. The room of
//! [`within`] is per thread everywhere: it bounds what one thread's work
//! allocates, never another thread's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Bytes the child's allocations hold, for the whole process.
#[cfg(not(test))]
mod count {
    use std::sync::atomic::{AtomicUsize, Ordering};

    static LIVE: AtomicUsize = AtomicUsize::new(0);

    pub(super) fn get() -> usize {
        LIVE.load(Ordering::Relaxed)
    }

    pub(super) fn add(size: usize) {
        LIVE.fetch_add(size, Ordering::Relaxed);
    }

    pub(super) fn sub(size: usize) {
        LIVE.fetch_sub(size, Ordering::Relaxed);
    }
}

/// Bytes this thread's allocations hold (the library's tests: one run per
/// thread, many at once).
#[cfg(test)]
mod count {
    use std::cell::Cell;

    thread_local! {
        static LIVE: Cell<usize> = const { Cell::new(0) };
    }

    pub(super) fn get() -> usize {
        LIVE.with(Cell::get)
    }

    pub(super) fn add(size: usize) {
        LIVE.with(|live| live.set(live.get().wrapping_add(size)));
    }

    pub(super) fn sub(size: usize) {
        LIVE.with(|live| live.set(live.get().wrapping_sub(size)));
    }
}

thread_local! {
    /// Bytes an allocation may still take inside [`within`]; `usize::MAX`
    /// outside it.
    static ROOM: Cell<usize> = const { Cell::new(usize::MAX) };
    /// The size of the last allocation refused inside [`within`].
    static REFUSED: Cell<usize> = const { Cell::new(0) };
}

/// The child's global allocator: the system's, counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnAllocator;

/// Bytes the allocations hold now (0 where [`OwnAllocator`] is not the
/// global allocator).
pub(crate) fn live() -> usize {
    count::get()
}

/// Bytes the allocations hold beyond `base`, a [`live`] read earlier; 0 if
/// they hold less (blocks held before were freed, or, in the tests' count
/// per thread, another thread's blocks were freed on this one).
pub(crate) fn since(base: usize) -> usize {
    let more = live().wrapping_sub(base);
    if more > isize::MAX as usize { 0 } else { more }
}

/// Runs `work` with at most `room` bytes for what it allocates: an
/// allocation past what is left is refused (null), which `try_reserve`
/// reports as an error. `work` must allocate only fallibly. Returns its
/// answer and, when an allocation was refused, that allocation's size.
pub(crate) fn within<R>(room: usize, work: impl FnOnce() -> R) -> (R, Option<usize>) {
    let was = ROOM.with(|r| r.replace(room));
    REFUSED.with(|r| r.set(0));
    let done = work();
    ROOM.with(|r| r.set(was));
    let refused = REFUSED.with(|r| r.replace(0));
    (done, (refused > 0).then_some(refused))
}

/// Takes `size` bytes of the room, if they fit; `false` (and the size
/// noted) if not.
fn take_room(size: usize) -> bool {
    ROOM.with(|room| {
        let left = room.get();
        if left == usize::MAX {
            return true;
        }
        if size > left {
            REFUSED.with(|r| r.set(size.max(1)));
            return false;
        }
        room.set(left - size);
        true
    })
}

/// A new block of `size` bytes from `alloc`, if the room has them; counted.
fn counted_alloc(size: usize, alloc: impl FnOnce() -> *mut u8) -> *mut u8 {
    if !take_room(size) {
        return std::ptr::null_mut();
    }
    let ptr = alloc();
    if !ptr.is_null() {
        counted(size);
    }
    ptr
}

fn counted(size: usize) {
    count::add(size);
}

fn uncounted(size: usize) {
    count::sub(size);
}

// SAFETY: every call is passed to `System` as it came; the counts and the
// room are plain per-thread numbers that allocate nothing.
//
// Not inlined: with LTO each of the child's thousands of allocation sites
// took its own copy of these (45 KB of the component), where the system
// allocator is one call away.
unsafe impl GlobalAlloc for OwnAllocator {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        counted_alloc(layout.size(), || unsafe { System.alloc(layout) })
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        counted_alloc(layout.size(), || unsafe { System.alloc_zeroed(layout) })
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: a block of this allocator's, with its layout.
        unsafe { System.dealloc(ptr, layout) };
        uncounted(layout.size());
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A block that grows may move: for a moment both are held.
        if new_size > layout.size() && !take_room(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's block, layout and size, as required.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            uncounted(layout.size());
            counted(new_size);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The library's tests run with this allocator (lib.rs), so the counts
    // are real here.

    #[test]
    fn what_is_allocated_is_counted_until_it_is_freed() {
        let before = live();
        let block: Vec<u8> = Vec::with_capacity(10_000);
        assert_eq!(live() - before, 10_000);
        drop(block);
        assert_eq!(live(), before);
    }

    /// The tests' count is per thread (the child's, one for the process,
    /// is run by `tests/foreign/parent.py`'s 5,000 calls to the native
    /// child, and by every component test).
    #[test]
    fn a_count_below_where_it_was_read_is_nothing_held() {
        let base = live();
        let block: Vec<u8> = Vec::with_capacity(5_000);
        assert_eq!(since(base), 5_000);
        drop(block);
        assert_eq!(since(base), 0);
        // Blocks allocated on another thread and freed on this one take
        // this thread's count below the base, and past zero.
        let theirs = std::thread::spawn(|| vec![0u8; 1 << 20])
            .join()
            .expect("the thread allocates");
        let base = live();
        drop(theirs);
        assert_eq!(since(base), 0);
        let block: Vec<u8> = Vec::with_capacity(100);
        assert_eq!(since(base), 0, "less is held than at the base");
        drop(block);
    }

    #[test]
    fn a_growth_past_the_room_is_refused_and_the_table_is_left_whole() {
        let mut table: Vec<u64> = Vec::with_capacity(4);
        table.extend([1, 2, 3, 4]);
        // The growth to 8 needs 64 bytes: 63 do not hold it.
        let (grown, refused) = within(63, || table.try_reserve(4));
        assert!(grown.is_err());
        assert_eq!(refused, Some(64));
        assert_eq!(table, [1, 2, 3, 4]);
        // 64 do, and the room is only for inside.
        let (grown, refused) = within(64, || table.try_reserve(4));
        assert!(grown.is_ok() && refused.is_none());
        assert!(table.capacity() >= 8);
        let outside: Vec<u8> = Vec::with_capacity(1 << 20);
        assert_eq!(outside.capacity(), 1 << 20);
    }

    #[test]
    fn the_room_is_spent_by_each_allocation_inside() {
        let mut a: Vec<u8> = Vec::new();
        let mut b: Vec<u8> = Vec::new();
        let (both, refused) = within(150, || (a.try_reserve_exact(100), b.try_reserve_exact(100)));
        assert!(both.0.is_ok());
        assert!(both.1.is_err());
        assert_eq!(refused, Some(100));
    }
}
