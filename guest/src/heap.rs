//! QuickJS's heap, held to the run's memory limit by its own allocator.
//!
//! QuickJS reports running out of memory as an ordinary exception (an
//! `InternalError: out of memory`, or `null` when it has no memory left
//! even for that), which a program can catch and go on from: a loop that
//! catches everything ran on past its limit, its later calls failing, and
//! ended `ok`. QuickJS's own limit cannot say when it refused, so the limit
//! is held here instead, in the allocator QuickJS is given
//! ([`Heap::allocator`]), and QuickJS's own is left unset. Every refusal is
//! then seen where it happens, and the first one stops the run
//! ([`Reason::Memory`]): QuickJS's interrupt handler ends the program with
//! an exception it cannot catch, the event loop sends nothing more, and
//! the Result is `limit`, whatever the program did with the error.
//!
//! QuickJS serves allocations of up to 512 bytes from 4 KiB arenas it
//! takes from this allocator, so what is counted here is what QuickJS
//! holds of the C allocator (arenas and larger blocks, at their usable
//! size), and the allocator is called about once per arena, not per object.
//!
//! One allocation may fail without stopping the run: the guest's own
//! building of a tool's value ([`Heap::tolerating`]), which fails the call
//! `limit` instead, so that a program can ask for less.
//!
//! The limit must not keep the stop from ending the program: the
//! exception that does (QuickJS's uncatchable "interrupted") is itself an
//! allocation, and refused it becomes a `null` any `catch` takes, so a
//! program that kept its heap full ran on after the stop until the wall
//! clock, or for ever without one. The interrupt handler makes room for it
//! first ([`Heap::make_room_to_stop`]).
//!
//! Nor must the limit refuse what a collection would free. QuickJS
//! collects cycles when, at an object it makes, its heap holds half as
//! much again as the last collection left; with a live set past two
//! thirds of the limit that is beyond it, and cyclic garbage beside such
//! a set was refused rather than collected. The allocator therefore
//! moves QuickJS's next collection, whenever QuickJS has set it, to
//! halfway between what the last collection left and the limit
//! ([`HeapAllocator::watch_collections`]). It moves a level, not a
//! moment: a collection still happens only at an object made while the
//! heap is above it, so a program whose large temporary has been freed by
//! the time it makes its next object pays nothing (a first version, which
//! asked for a collection at the next object outright, made such a
//! program 27 times slower, one collection a turn that freed nothing).
//! Each collection that frees nothing halves the room it leaves above the
//! next level, and under [`COLLECT_LAST`] of the limit QuickJS's own rule
//! is left as it is, so a live set that fills the limit costs a few
//! collections, not one per object.
//!
//! What the guest itself holds for the program (a call's args until its
//! Request is framed, the tables of calls and timers, text a native copies)
//! is outside QuickJS's heap, in the guest's own allocations (`own`,
//! counted). It counts with the heap past the reserve the limit leaves,
//! where the program adds to it ([`Heap::admit_own`]), and the tables grow
//! ahead, fallibly, in the room that leaves ([`Heap::reserve`]): a call or
//! timer that does not fit stops the run as the heap's own refusal does.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::rc::Rc;

use rquickjs::allocator::Allocator;

use crate::own;
use crate::stop::{Reason, Stop};

/// Room the stop's exception is given past the limit: an error object and
/// its message (its stack is left out when there is no room for it).
const STOP_ROOM: usize = 64 << 10;

/// The room left, as a share of the limit, under which QuickJS's next
/// collection is no longer moved (1/64).
const COLLECT_LAST: usize = 64;

// The C library's allocator (wasi-libc's in the component, the system's
// natively), which QuickJS's default functions call too.
unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn calloc(count: usize, size: usize) -> *mut c_void;
    fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
    fn malloc_usable_size(ptr: *mut c_void) -> usize;
}

/// The heap's shared state: the allocator QuickJS owns and the evaluator's
/// handle both hold it.
#[derive(Debug)]
struct State {
    /// Bytes QuickJS holds of the C allocator (usable sizes).
    used: Cell<usize>,
    /// The most it may hold; 0 = no limit.
    limit: Cell<usize>,
    /// Set while the guest does work whose refusal it handles itself.
    tolerant: Cell<bool>,
    /// QuickJS's runtime, to read and move its next collection; null
    /// until [`Heap::attach`].
    runtime: Cell<*mut rquickjs::qjs::JSRuntime>,
    /// QuickJS's next collection as last seen (or set) here.
    collection: Cell<usize>,
    /// Bytes of what the guest holds for the program that do not count
    /// with the heap (see [`Heap::admit_own`]).
    own_allowance: Cell<usize>,
    /// Set once what the guest holds for the program did not fit.
    refused_own: Cell<bool>,
    /// What the guest's own allocations held when the limit was set
    /// ([`own::live`]): what they hold beyond it is held for the program.
    own_base: Cell<usize>,
    /// The run's stop, told of the first refusal.
    stop: Rc<RefCell<Stop>>,
}

/// The evaluator's handle on QuickJS's heap.
#[derive(Debug, Clone)]
pub(crate) struct Heap {
    state: Rc<State>,
}

impl Heap {
    /// A heap with no limit that stops `stop`'s run when it refuses.
    pub(crate) fn new(stop: Rc<RefCell<Stop>>) -> Self {
        Heap {
            state: Rc::new(State {
                used: Cell::new(0),
                limit: Cell::new(0),
                tolerant: Cell::new(false),
                runtime: Cell::new(std::ptr::null_mut()),
                collection: Cell::new(0),
                own_base: Cell::new(0),
                own_allowance: Cell::new(0),
                refused_own: Cell::new(false),
                stop,
            }),
        }
    }

    /// The allocator to make QuickJS's runtime with.
    pub(crate) fn allocator(&self) -> HeapAllocator {
        HeapAllocator {
            state: self.state.clone(),
        }
    }

    /// Bytes QuickJS holds now.
    pub(crate) fn used(&self) -> usize {
        self.state.used.get()
    }

    /// Holds QuickJS to `limit` bytes from now on.
    pub(crate) fn set_limit(&self, limit: usize) {
        self.state.limit.set(limit);
    }

    /// Lets what the guest holds for the program take `allowance` bytes
    /// before it counts with QuickJS's heap (see [`Heap::admit_own`]).
    pub(crate) fn set_own_allowance(&self, allowance: usize) {
        self.state.own_allowance.set(allowance);
    }

    /// Counts what the guest holds for the program from now on: what it
    /// made for the run itself (the program's text, the run's state) is
    /// not the program's doing.
    pub(crate) fn own_from_now(&self) {
        self.state.own_base.set(own::live());
        self.state.refused_own.set(false);
    }

    /// Bytes the guest's own allocations hold beyond what they held when
    /// [`own_from_now`](Heap::own_from_now) was called: what it holds for
    /// the program outside QuickJS's heap (its calls' args and tables, its
    /// timers).
    pub(crate) fn own_held(&self) -> usize {
        own::since(self.state.own_base.get())
    }

    /// What QuickJS's heap and what the guest holds for the program may
    /// hold together: the limit and the allowance. `None`: no limit.
    fn own_limit(&self) -> Option<usize> {
        let limit = self.state.limit.get();
        (limit != 0).then(|| limit.saturating_add(self.state.own_allowance.get()))
    }

    /// What QuickJS's heap and what the guest holds for the program hold.
    fn own_used(&self) -> usize {
        self.state.used.get().saturating_add(self.own_held())
    }

    /// Whether QuickJS's heap and what the guest holds for the program
    /// ([`own_held`](Heap::own_held)), with `more` bytes it is about to
    /// hold, fit under the limit and the allowance. Called where a program
    /// adds to what the guest holds (a call, a timer); if they do not fit,
    /// the run is stopped as for a refusal of QuickJS's, and the caller
    /// throws QuickJS's out-of-memory error where the program is.
    ///
    /// The allowance is the reserve the limit leaves outside the heap: a
    /// program's few calls and timers fit in it, as they did before they
    /// were counted, and only what it piles up past it takes room from its
    /// heap. QuickJS's own allocations are held to its heap alone, as
    /// before, so that the guest's passing buffers (an answer's frame while
    /// its value is made) keep the reserve.
    pub(crate) fn admit_own(&self, more: usize) -> bool {
        if self.own_fits(more) {
            return true;
        }
        self.refuse_own(more);
        false
    }

    /// Whether [`admit_own`](Heap::admit_own) would admit `more`, without
    /// stopping the run if not.
    pub(crate) fn own_fits(&self, more: usize) -> bool {
        self.own_limit()
            .is_none_or(|limit| self.own_used().saturating_add(more) <= limit)
    }

    /// Runs `work`, which grows a table the guest holds for the program
    /// with `try_reserve` (a table that doubles holds its old and new
    /// storage at once, so the growth is taken before it is needed), with
    /// the room [`admit_own`](Heap::admit_own) would allow. `false`, and
    /// the run stopped, if it failed for want of that room.
    pub(crate) fn reserve<T, E>(&self, work: impl FnOnce() -> Result<T, E>) -> bool {
        let room = self
            .own_limit()
            .map_or(usize::MAX, |limit| limit.saturating_sub(self.own_used()));
        match own::within(room, work) {
            (Ok(_), _) => true,
            (Err(_), refused) => {
                self.refuse_own(refused.unwrap_or(1));
                false
            }
        }
    }

    /// Whether what the guest holds for the program has not fitted (the
    /// run is stopped, and its error is not the program's to handle).
    pub(crate) fn refused_own(&self) -> bool {
        self.state.refused_own.get()
    }

    /// Stops the run: `requested` bytes held for the program outside
    /// QuickJS's heap did not fit.
    fn refuse_own(&self, requested: usize) {
        let state = &self.state;
        state.refused_own.set(true);
        let reason = Reason::Memory {
            requested,
            used: self.own_used(),
            limit: self.own_limit(),
            outside: self.own_held(),
        };
        if let Ok(stop) = state.stop.try_borrow() {
            stop.request(reason);
        }
    }

    /// The runtime whose collections the heap moves under its limit.
    pub(crate) fn attach(&self, ctx: &rquickjs::Ctx<'_>) {
        // SAFETY: a live context's runtime, which outlives every use of it
        // here (the evaluator drops the runtime last, and nothing here runs
        // after it).
        let runtime = unsafe { rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
        self.state.runtime.set(runtime);
    }

    /// Sets the heap size at which QuickJS next collects cycles, as set here
    /// (the watch moves only what QuickJS sets after a collection).
    pub(crate) fn set_next_collection(&self, size: usize) {
        let state = &self.state;
        let runtime = state.runtime.get();
        if !runtime.is_null() {
            // SAFETY: the live runtime (see `attach`); the call sets a field.
            unsafe { rquickjs::qjs::JS_SetGCThreshold(runtime, size as _) };
            state.collection.set(size);
        }
    }

    /// Lets the heap grow [`STOP_ROOM`] past what it holds, so that the
    /// exception that ends a stopped program can be made. Called by the
    /// interrupt handler just before it stops the program (for any
    /// reason): the run's ending is then the stop's, which the room cannot
    /// change.
    pub(crate) fn make_room_to_stop(&self) {
        let state = &self.state;
        let room = state.used.get().saturating_add(STOP_ROOM);
        if state.limit.get() != 0 && state.limit.get() < room {
            state.limit.set(room);
        }
    }

    /// Runs `work`, whose failures for want of memory the caller handles:
    /// a refusal inside it does not stop the run.
    pub(crate) fn tolerating<R>(&self, work: impl FnOnce() -> R) -> R {
        let was = self.state.tolerant.replace(true);
        let done = work();
        self.state.tolerant.set(was);
        done
    }
}

/// QuickJS's allocator: the C library's, counted and held to the limit.
#[derive(Debug)]
pub(crate) struct HeapAllocator {
    state: Rc<State>,
}

impl HeapAllocator {
    /// Whether `more` bytes fit under the limit.
    fn admits(&self, more: usize) -> bool {
        let limit = self.state.limit.get();
        limit == 0 || self.state.used.get().saturating_add(more) <= limit
    }

    /// Refuses an allocation of `requested` bytes: stops the run, unless the
    /// guest is doing work it handles the refusal of.
    fn refuse(&self, requested: usize) -> *mut u8 {
        let state = &self.state;
        if !state.tolerant.get() {
            let limit = state.limit.get();
            let reason = Reason::Memory {
                requested,
                used: state.used.get(),
                limit: (limit > 0).then_some(limit),
                outside: 0,
            };
            // Allocation-free: the stop's first reason wins, and a later
            // refusal changes nothing.
            if let Ok(stop) = state.stop.try_borrow() {
                stop.request(reason);
            }
        }
        std::ptr::null_mut()
    }

    /// Counts a block just allocated (never null).
    fn count(&self, ptr: *mut c_void) -> *mut u8 {
        let state = &self.state;
        // SAFETY: a live block of the C allocator's.
        let used = state.used.get() + unsafe { malloc_usable_size(ptr) };
        state.used.set(used);
        if state.limit.get() != 0 {
            self.watch_collections(used);
        }
        ptr.cast()
    }

    /// When QuickJS has set its next collection (it does after each one,
    /// at half as much again as the collection left), moves it to halfway
    /// between what was left and the limit if that is lower, while the room
    /// left is at least [`COLLECT_LAST`] of the limit. What was left is
    /// read back from QuickJS's own setting (two thirds of it), and the
    /// room from this heap's count, which QuickJS's own undercounts by the
    /// slack of its arenas.
    fn watch_collections(&self, used: usize) {
        let state = &self.state;
        let runtime = state.runtime.get();
        if runtime.is_null() {
            return;
        }
        // SAFETY: the live runtime (see `attach`); the call reads a field.
        let next = unsafe { rquickjs::qjs::JS_GetGCThreshold(runtime) } as usize;
        if next == state.collection.get() {
            return;
        }
        let limit = state.limit.get();
        let room = limit.saturating_sub(used);
        let moved = next / 3 * 2 + room / 2;
        if room >= limit / COLLECT_LAST && moved < next {
            // SAFETY: as above; the call only sets the size QuickJS's next
            // check (at an object it makes) compares with.
            unsafe { rquickjs::qjs::JS_SetGCThreshold(runtime, moved as _) };
            state.collection.set(moved);
        } else {
            state.collection.set(next);
        }
    }

    /// Uncounts `size` bytes given back.
    fn uncount(&self, size: usize) {
        let state = &self.state;
        state.used.set(state.used.get().saturating_sub(size));
    }
}

// SAFETY: every block comes from the C library's allocator, whose blocks
// are aligned for any type, and is given back to it; `usable_size` is its
// own answer for the block.
unsafe impl Allocator for HeapAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admits(size) {
            return self.refuse(size);
        }
        // SAFETY: plain malloc.
        let ptr = unsafe { malloc(size) };
        if ptr.is_null() {
            // Linear memory is full: the parent's cap, not this limit.
            return self.refuse(size);
        }
        self.count(ptr)
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let total = count.saturating_mul(size);
        if !self.admits(total) {
            return self.refuse(total);
        }
        // SAFETY: plain calloc, which checks the product itself.
        let ptr = unsafe { calloc(count, size) };
        if ptr.is_null() {
            return self.refuse(total);
        }
        self.count(ptr)
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        let ptr = ptr.cast::<c_void>();
        // SAFETY: the caller gives back a block of this allocator's.
        unsafe {
            self.uncount(malloc_usable_size(ptr));
            free(ptr);
        }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        let ptr = ptr.cast::<c_void>();
        // SAFETY: the caller gives a block of this allocator's (or null).
        let old = if ptr.is_null() {
            0
        } else {
            unsafe { malloc_usable_size(ptr) }
        };
        if new_size > old && !self.admits(new_size - old) {
            return self.refuse(new_size - old);
        }
        // SAFETY: as above; on failure the old block stays, and counted.
        let moved = unsafe { realloc(ptr, new_size) };
        if moved.is_null() {
            return self.refuse(new_size.saturating_sub(old));
        }
        self.uncount(old);
        self.count(moved)
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller gives a block of this allocator's.
        unsafe { malloc_usable_size(ptr.cast()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heap() -> (Heap, Stop) {
        let stop = Stop::new();
        (Heap::new(Rc::new(RefCell::new(stop.clone()))), stop)
    }

    #[test]
    fn what_is_allocated_is_counted_and_what_is_freed_uncounted() {
        let (heap, stop) = heap();
        let mut allocator = heap.allocator();
        let block = allocator.alloc(1000);
        assert!(!block.is_null());
        assert!(heap.used() >= 1000);
        // SAFETY: the block just allocated.
        let grown = unsafe { allocator.realloc(block, 5000) };
        assert!(heap.used() >= 5000);
        // SAFETY: the same block, moved.
        unsafe { allocator.dealloc(grown) };
        assert_eq!(heap.used(), 0);
        assert_eq!(stop.reason(), None);
    }

    #[test]
    fn the_first_refusal_stops_the_run_and_says_what_was_asked() {
        let (heap, stop) = heap();
        let mut allocator = heap.allocator();
        let kept = allocator.alloc(1000);
        let used = heap.used();
        heap.set_limit(used + 4096);
        assert!(allocator.alloc(8192).is_null());
        assert_eq!(
            stop.reason(),
            Some(Reason::Memory {
                requested: 8192,
                used,
                limit: Some(used + 4096),
                outside: 0,
            })
        );
        // Within the limit it still allocates, and a growth past it is
        // refused with the block kept.
        let small = allocator.alloc(100);
        assert!(!small.is_null());
        // SAFETY: blocks of this allocator's.
        unsafe {
            assert!(allocator.realloc(kept, 1 << 20).is_null());
            allocator.dealloc(small);
            allocator.dealloc(kept);
        }
        assert_eq!(heap.used(), 0);
    }

    #[test]
    fn the_stop_is_given_room_for_its_exception_past_the_limit() {
        let (heap, _stop) = heap();
        let mut allocator = heap.allocator();
        heap.set_limit(4096);
        assert!(allocator.alloc(8192).is_null());
        heap.make_room_to_stop();
        let error = allocator.alloc(1024);
        assert!(!error.is_null());
        // SAFETY: the block just allocated.
        unsafe { allocator.dealloc(error) };
    }

    #[test]
    fn the_stop_is_given_room_for_its_exception_when_the_heap_is_full() {
        let (heap, _stop) = heap();
        let mut allocator = heap.allocator();
        let full = allocator.alloc(64 << 10);
        heap.set_limit(heap.used());
        assert!(allocator.alloc(16).is_null());
        heap.make_room_to_stop();
        // An error object, its message and some of its stack.
        let error = allocator.alloc(8 << 10);
        assert!(!error.is_null());
        // SAFETY: blocks of this allocator's.
        unsafe {
            allocator.dealloc(error);
            allocator.dealloc(full);
        }
    }

    #[test]
    fn a_refusal_the_guest_tolerates_does_not_stop_the_run() {
        let (heap, stop) = heap();
        let mut allocator = heap.allocator();
        heap.set_limit(4096);
        let refused = heap.tolerating(|| allocator.alloc(8192));
        assert!(refused.is_null());
        assert_eq!(stop.reason(), None);
        assert!(allocator.calloc(4, 4096).is_null());
        assert!(matches!(stop.reason(), Some(Reason::Memory { .. })));
    }

    #[test]
    fn an_allocation_that_exactly_fills_the_limit_is_admitted() {
        let (heap, stop) = heap();
        let mut allocator = heap.allocator();
        heap.set_limit(4096);
        let block = allocator.alloc(4096);
        assert!(!block.is_null());
        assert_eq!(stop.reason(), None);
        // SAFETY: the block just allocated.
        unsafe { allocator.dealloc(block) };
    }

    #[test]
    fn a_refusal_with_no_limit_says_the_memory_itself_is_full() {
        let (heap, stop) = heap();
        let mut allocator = heap.allocator();
        // More than any C allocator gives: malloc refuses it.
        let requested = usize::MAX / 2 + 1;
        assert!(allocator.alloc(requested).is_null());
        assert_eq!(
            stop.reason(),
            Some(Reason::Memory {
                requested,
                used: 0,
                limit: None,
                outside: 0,
            })
        );
    }

    #[test]
    fn the_room_to_stop_sets_no_limit_where_there_was_none() {
        let (heap, stop) = heap();
        let mut allocator = heap.allocator();
        heap.make_room_to_stop();
        let block = allocator.alloc(1 << 20);
        assert!(!block.is_null());
        assert_eq!(stop.reason(), None);
        // SAFETY: the block just allocated.
        unsafe { allocator.dealloc(block) };
    }

    /// A heap attached to a live runtime; QuickJS's next collection is read
    /// and set as QuickJS itself does.
    fn attached() -> (Heap, rquickjs::Runtime, rquickjs::Context) {
        let (heap, _stop) = heap();
        let runtime = rquickjs::Runtime::new_with_alloc(heap.allocator()).unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| heap.attach(&ctx));
        (heap, runtime, context)
    }

    fn next_collection(heap: &Heap) -> usize {
        // SAFETY: the live runtime the heap is attached to.
        unsafe { rquickjs::qjs::JS_GetGCThreshold(heap.state.runtime.get()) as usize }
    }

    /// As QuickJS sets its next collection after one.
    fn quickjs_sets_next_collection(heap: &Heap, size: usize) {
        // SAFETY: as above.
        unsafe { rquickjs::qjs::JS_SetGCThreshold(heap.state.runtime.get(), size as _) };
    }

    #[test]
    fn a_collection_the_heap_set_is_not_moved_again() {
        let (heap, _runtime, _context) = attached();
        let used = heap.used();
        heap.set_limit(used + (1 << 20));
        heap.set_next_collection(used + (4 << 20));
        let mut allocator = heap.allocator();
        let block = allocator.alloc(1000);
        assert_eq!(next_collection(&heap), used + (4 << 20));
        // SAFETY: the block just allocated.
        unsafe { allocator.dealloc(block) };
    }

    #[test]
    fn quickjs_next_collection_is_moved_halfway_between_what_it_left_and_the_limit() {
        let (heap, _runtime, _context) = attached();
        let left = heap.used();
        let room = left / 4;
        heap.set_limit(left + room);
        // Half as much again as the collection left: past the limit.
        quickjs_sets_next_collection(&heap, left / 2 * 3);
        let mut allocator = heap.allocator();
        let block = allocator.alloc(1000);
        let next = next_collection(&heap);
        assert!(
            next.abs_diff(left + room / 2) < room / 16,
            "left {left}, limit {}, next {next}",
            left + room
        );
        // SAFETY: the block just allocated.
        unsafe { allocator.dealloc(block) };
    }

    #[test]
    fn quickjs_next_collection_is_left_as_it_is_when_the_heap_is_nearly_full() {
        let (heap, _runtime, _context) = attached();
        let left = heap.used();
        // Less room than a 64th of the limit.
        heap.set_limit(left + left / 128);
        quickjs_sets_next_collection(&heap, left / 2 * 3);
        let mut allocator = heap.allocator();
        let block = allocator.alloc(100);
        assert!(!block.is_null());
        assert_eq!(next_collection(&heap), left / 2 * 3);
        // SAFETY: the block just allocated.
        unsafe { allocator.dealloc(block) };
    }
}
