//! How much of the calling thread's stack is left, so that a small program
//! can be parsed where it is instead of on the parser's thread.

use std::cell::Cell;

/// Not yet read for this thread.
const UNREAD: usize = usize::MAX;

thread_local! {
    /// The lowest address this thread's stack may reach (above its guard);
    /// 0 when the platform does not say.
    static LOWEST: Cell<usize> = const { Cell::new(UNREAD) };
}

/// Bytes between here and the end of this thread's stack, if known.
pub(super) fn remaining() -> Option<usize> {
    let here = std::hint::black_box(0u8);
    let here = std::ptr::from_ref(&here) as usize;
    let lowest = LOWEST.with(|lowest| {
        if lowest.get() == UNREAD {
            lowest.set(read_lowest());
        }
        lowest.get()
    });
    (lowest != 0).then(|| here.saturating_sub(lowest))
}

/// Stack kept below the caller's frame when the rest is given back: its
/// callees' frames, and the red zone below the stack pointer.
const KEPT_BELOW: usize = 64 << 10;

/// Gives the kernel back the pages of this thread's stack below what the
/// caller uses (less [`KEPT_BELOW`]): they read as zeroes when touched
/// again. A parser thread is kept for the next program, and a deeply
/// nested one touches up to 225 MiB of its stack, which stayed resident
/// for as long as the thread lived.
#[inline(never)]
pub(super) fn release_unused() {
    let here = std::hint::black_box(0u8);
    let here = std::ptr::from_ref(&here) as usize;
    let lowest = LOWEST.with(|lowest| {
        if lowest.get() == UNREAD {
            lowest.set(read_lowest());
        }
        lowest.get()
    });
    release(lowest, here.saturating_sub(KEPT_BELOW));
}

/// `madvise(MADV_DONTNEED)` over the whole pages in `[from, to)`.
#[cfg(target_os = "linux")]
fn release(from: usize, to: usize) {
    const PAGE: usize = 4096;
    let start = from.div_ceil(PAGE) * PAGE;
    let end = to / PAGE * PAGE;
    if from == 0 || end <= start {
        return;
    }
    // SAFETY: the range is this thread's own stack below its live frames
    // (the caller's frame and KEPT_BELOW under it), which nothing reads
    // before writing; the kernel maps zero pages there when it is touched.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
    }
}

#[cfg(not(target_os = "linux"))]
fn release(_from: usize, _to: usize) {}

/// Bytes of this thread's stack resident below the caller (Linux's
/// `mincore`), for tests.
#[cfg(all(test, target_os = "linux"))]
pub(super) fn resident_below_here() -> usize {
    const PAGE: usize = 4096;
    let here = std::hint::black_box(0u8);
    let here = std::ptr::from_ref(&here) as usize;
    let lowest = read_lowest();
    let start = lowest.div_ceil(PAGE) * PAGE;
    let end = here.saturating_sub(KEPT_BELOW) / PAGE * PAGE;
    if lowest == 0 || end <= start {
        return 0;
    }
    let mut pages = vec![0u8; (end - start) / PAGE];
    // SAFETY: a range of this thread's mapped stack, and a vector of one
    // byte per page of it.
    let read =
        unsafe { libc::mincore(start as *mut libc::c_void, end - start, pages.as_mut_ptr()) };
    assert_eq!(read, 0, "mincore of the stack");
    pages.iter().filter(|&&p| p & 1 != 0).count() * PAGE
}

/// The stack's lowest usable address, as glibc (or musl) reports it: the
/// start of the mapping plus its guard. For the main thread this is where
/// `RLIMIT_STACK` lets it grow to.
#[cfg(target_os = "linux")]
fn read_lowest() -> usize {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: pthread_getattr_np initialises `attr` for the calling thread
    // when it returns 0; only then is it read, and then destroyed once.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return 0;
        }
        let mut start = std::ptr::null_mut();
        let mut size = 0;
        let mut guard = 0;
        let read = libc::pthread_attr_getstack(attr.as_ptr(), &mut start, &mut size) == 0
            && libc::pthread_attr_getguardsize(attr.as_ptr(), &mut guard) == 0;
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if read && size > 0 {
            (start as usize).saturating_add(guard)
        } else {
            0
        }
    }
}

/// Unknown elsewhere: every program goes to the parser's thread.
#[cfg(not(target_os = "linux"))]
fn read_lowest() -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn under_64_kib() -> usize {
        let pad = std::hint::black_box([0u8; 64 << 10]);
        let left = remaining().expect("still known");
        std::hint::black_box(&pad);
        left
    }

    #[test]
    fn a_thread_knows_the_stack_it_was_given() {
        const SIZE: usize = 4 << 20;
        let left = std::thread::Builder::new()
            .stack_size(SIZE)
            .spawn(|| {
                let first = remaining().expect("Linux reports a thread's stack");
                // Under a frame of 64 KiB, at least that much less is left.
                let deeper = under_64_kib();
                (first, deeper)
            })
            .unwrap()
            .join()
            .unwrap();
        let (first, deeper) = left;
        assert!(first <= SIZE && first > SIZE - (256 << 10), "{first}");
        assert!(deeper <= first - (64 << 10), "{deeper} vs {first}");
    }
}
