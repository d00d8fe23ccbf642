//! The child's own memory and stack limits.
//!
//! The parent's caps are what hold (docs/protocol.md §6 and the README's limits table): wasmtime's
//! `StoreLimits` on linear memory, `max_wasm_stack` on the native stack.
//! These limits sit just inside them so that most overruns end as a clean
//! `limit` Result written by the child rather than as a trap.
//!
//! **Memory.** QuickJS counts only its own heap, while the parent's cap
//! covers all linear memory: the shadow stack, static data, the evaluator's
//! own buffers (a Response read whole before it is parsed) and allocator
//! slack. So QuickJS's heap gets `max_memory` less what is already in use
//! outside it, less a reserve, held by the heap's own allocator (`heap`),
//! whose first refusal ends the run. Memory outside the heap (the
//! evaluator's own Rust allocations) has the reserve. They are counted
//! (`own`), and where a program adds to what the guest holds for it (a
//! call's args and its place in the tables of calls, a timer), they count
//! with the heap past the reserve: a call or timer that does not fit ends
//! the run as the heap's refusal does. The free heap the snapshot starts
//! with is counted as in use outside the heap, which leaves the
//! allocator's slack its room.
//!
//! **Stack.** QuickJS checks its stack at every call (and in its recursive
//! C: the JSON parser, the regexp engine, the compiler) and throws V8's
//! `RangeError: Maximum call stack size exceeded`, which a program can
//! catch, as in Node; uncaught, the run ends `limit` with the program's
//! place (`outcome`). The QuickJS in rquickjs 0.14 compiles that check's
//! limit out when built for WASI (`update_stack_limit` forces
//! `stack_limit = 0` under `__wasi__`), so [`configure_stack`] writes the
//! limit into the runtime itself: a quarter of the shadow stack above its
//! bottom. On wasm the guest is linked stack-first (see `build.rs`), so a
//! shadow stack that overflows faults below address 0 instead of writing
//! over the heap (the parent ends such a run `limit`); nothing else
//! watches it (a guard that looked from the interrupt handler could no
//! longer trip: the handler runs only in frames QuickJS's check has just
//! passed, a quarter of the stack above the bottom). The native stack is
//! the parent's (`max_wasm_stack`): a path whose calls use more of
//! it than of the shadow stack (getters, `map` callbacks, constructors,
//! `apply`) can reach its end first, and the parent's trap handling ends
//! the run `limit` there, uncatchably.

use std::rc::Rc;

use rquickjs::Runtime;

/// Bytes of linear memory per wasm page.
#[cfg(target_arch = "wasm32")]
const WASM_PAGE: u64 = 65_536;

/// The least headroom left outside QuickJS's heap.
const MIN_RESERVE: u64 = 1 << 20;

/// The most headroom left outside QuickJS's heap: enough for a maximal
/// frame (16 MiB) to be read while QuickJS is at its limit would be too
/// much to take from small budgets, so large frames rely on the wasm cap.
const MAX_RESERVE: u64 = 16 << 20;

/// The least QuickJS heap a program is started with; below it the run is
/// refused up front rather than failing on its first allocation.
const MIN_PROGRAM_HEAP: u64 = 1 << 20;

/// Bytes of linear memory in use now; 0 natively, where there is none.
pub(crate) fn linear_memory_in_use() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) as u64 * WASM_PAGE
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}

/// Linear memory a budget of `max_memory` bytes keeps outside QuickJS's
/// heap, for the guest's own allocations.
fn reserve(max_memory: u64) -> u64 {
    (max_memory / 8).clamp(MIN_RESERVE, MAX_RESERVE)
}

/// What the guest's own allocations may hold, beyond what they held when
/// the run started, before they count with the program's heap: the
/// reserve (see `Heap::admit_own`).
pub(crate) fn own_allowance(max_memory: u64) -> usize {
    usize::try_from(reserve(max_memory)).unwrap_or(usize::MAX)
}

/// Copies of the program's text the guest makes outside QuickJS's heap
/// once its limit is set: the text it keeps to place the program's errors
/// (`Sent`) and the text it compiles.
const TEXT_COPIES: u64 = 2;

/// The QuickJS memory limit for a budget of `max_memory` bytes (0 = none),
/// given the linear memory in use, QuickJS's share of it, and the length
/// of the program's text, of which the guest is yet to make
/// [`TEXT_COPIES`] outside the heap: left to the reserve, a text of 15
/// MiB ran the linear memory past the cap as it was copied. An error when
/// the budget leaves no room for a program.
pub(crate) fn quickjs_memory_limit(
    max_memory: u64,
    linear_in_use: u64,
    quickjs_in_use: u64,
    program_text: u64,
) -> Result<Option<usize>, String> {
    if max_memory == 0 {
        return Ok(None);
    }
    let copies = program_text.saturating_mul(TEXT_COPIES);
    let outside = linear_in_use
        .saturating_sub(quickjs_in_use)
        .saturating_add(copies);
    let reserve = reserve(max_memory);
    match max_memory.checked_sub(outside.saturating_add(reserve)) {
        Some(limit) if limit >= quickjs_in_use.saturating_add(MIN_PROGRAM_HEAP) => {
            Ok(Some(usize::try_from(limit).unwrap_or(usize::MAX)))
        }
        _ if copies >= MIN_RESERVE => Err(format!(
            "max_memory of {max_memory} bytes leaves no room for a program of {program_text} \
             bytes: the child already uses {linear_in_use} bytes, keeps {reserve} in reserve and \
             needs {copies} more for its copies of the program's text to compile it"
        )),
        _ => Err(format!(
            "max_memory of {max_memory} bytes leaves no room for a program: the child already \
             uses {linear_in_use} bytes and keeps {reserve} in reserve"
        )),
    }
}

/// Most a program's heap grows before QuickJS first collects cycles.
///
/// QuickJS frees most garbage by reference counting; its cycle collector
/// runs when the heap grows past a threshold, and each run walks every live
/// object, the evaluator's own globals included. The threshold it is left
/// with after setting up is half as much again as the heap then held, so a
/// program that made a thousand calls at once (each a promise, its
/// resolving functions and its call site) paid for several full walks:
/// 10% of such a run. Measured with 1,000 calls in flight, 8.9 -> 8.1 ms.
const GC_HEADROOM: usize = 4 << 20;

/// The heap size at which QuickJS first collects cycles in a run: what it
/// holds at the start plus [`GC_HEADROOM`], or a quarter of the room the
/// memory limit leaves, whichever is less, so that a small budget still
/// collects cyclic garbage long before the limit (QuickJS does not collect
/// when an allocation would pass its limit; it fails the allocation).
/// `heap_in_use` is the heap's own count, a little over QuickJS's (the
/// slack of its arenas), which puts the first collection that much later.
pub(crate) fn gc_threshold(heap_in_use: u64, memory_limit: Option<usize>) -> usize {
    let in_use = usize::try_from(heap_in_use).unwrap_or(usize::MAX);
    let room = memory_limit.map_or(usize::MAX, |limit| limit.saturating_sub(in_use));
    in_use.saturating_add(GC_HEADROOM.min(room / 4))
}

/// Sets QuickJS's own stack limit, which it checks at every call (and in
/// its recursive C: the JSON parser, the regexp engine, the bytecode
/// emitter): a recursion that reaches it throws `RangeError: Maximum call
/// stack size exceeded`, as V8 does, at the same depth every time.
///
/// Natively the default (1 MiB) suits the threads tests run on. On wasm the
/// limit is the shadow stack's lowest address plus [`STACK_MARGIN`] of it,
/// written into the runtime ([`quickjs_stack`]); an error when the runtime's
/// field cannot be found, so that a QuickJS whose layout changed fails the
/// set-up (and every test) rather than running without a limit.
pub(crate) fn configure_stack(ctx: &rquickjs::Ctx<'_>) -> Result<(), &'static str> {
    #[cfg(target_arch = "wasm32")]
    if let Some((low, high)) = shadow_stack::bounds() {
        // SAFETY: the context is live for the call.
        let runtime = unsafe { rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
        // SAFETY: the runtime is alive (the context holds it), the
        // evaluator made it with the heap's allocator, and no other thread
        // exists.
        unsafe { quickjs_stack::set_limit(runtime, low + (high - low) / STACK_MARGIN) }?;
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = ctx;
    Ok(())
}

/// The part of the shadow stack kept below QuickJS's limit (a quarter):
/// what runs after the limit is reached (the `RangeError` made with its
/// stack, a program's `catch`, each of its calls checked again) and C
/// that recurses without a check.
#[cfg(target_arch = "wasm32")]
const STACK_MARGIN: usize = 4;

/// QuickJS's stack limit on WASI.
///
/// rquickjs 0.14's QuickJS compiles its stack check out for WASI:
/// `update_stack_limit` writes 0 (no limit) to the runtime's `stack_limit`
/// under `__wasi__`, whatever `JS_SetMaxStackSize` is given. The check
/// itself is compiled in (`js_check_stack_overflow`: the frame's address
/// against `stack_limit`), and `__builtin_frame_address` is the shadow
/// stack's pointer on wasm. So the limit is written into the field
/// directly; nothing else writes it after set-up (only
/// `JS_UpdateStackTop` and `JS_SetMaxStackSize` do, and the guest calls
/// neither afterwards: its jobs run through `JS_ExecutePendingJob`).
///
/// The field is private to quickjs.c; it is found by its place beside
/// `stack_size`, which `JS_SetMaxStackSize` writes: three words
/// `stack_size, stack_top, stack_limit`. Each of two distinct sizes is
/// written and the runtime searched for the one place where that size is
/// followed, two words on, by the 0 of `stack_limit`; the two searches
/// must agree on exactly one place.
#[cfg(target_arch = "wasm32")]
mod quickjs_stack {
    use rquickjs::allocator::Allocator;
    use rquickjs::qjs;

    use crate::heap::HeapAllocator;

    /// Two sizes no other word of the runtime holds, each under rquickjs's
    /// 16 MiB sanity bound (past it the size is taken as 0).
    const PROBES: [qjs::size_t; 2] = [0x00a5_5a5c, 0x005a_a5a4];

    /// Writes `limit` as the runtime's stack limit.
    ///
    /// # Safety
    ///
    /// `runtime` is a live QuickJS runtime, made with the heap's allocator
    /// ([`HeapAllocator`]), used by no other thread.
    pub(super) unsafe fn set_limit(
        runtime: *mut qjs::JSRuntime,
        limit: usize,
    ) -> Result<(), &'static str> {
        let limit = qjs::size_t::try_from(limit).map_err(|_| "the stack limit is out of range")?;
        // `uintptr_t`, the fields' type, is `size_t`'s width on wasm32.
        let words = runtime.cast::<qjs::size_t>();
        // The runtime is one block of the heap's allocator (QuickJS's
        // `js_calloc` of its size): only its own words are read.
        // SAFETY: as the caller promises.
        let size = unsafe { <HeapAllocator as Allocator>::usable_size(runtime.cast()) };
        let count = size / std::mem::size_of::<qjs::size_t>();
        let places = |probe: qjs::size_t| -> Vec<usize> {
            // SAFETY: as the caller promises; every word read is the
            // runtime's.
            unsafe {
                qjs::JS_SetMaxStackSize(runtime, probe);
                (0..count.saturating_sub(2))
                    .filter(|&i| *words.add(i) == probe && *words.add(i + 2) == 0)
                    .collect()
            }
        };
        let (first, second) = (places(PROBES[0]), places(PROBES[1]));
        let [at] = first[..] else {
            return Err("QuickJS's stack limit could not be found in its runtime");
        };
        if second != [at] {
            return Err("QuickJS's stack limit could not be found in its runtime");
        }
        // SAFETY: `at + 2` was read above; the size written is the limit's
        // distance from the stack's top, for what reads it (nothing here).
        unsafe {
            let top = *words.add(at + 1);
            qjs::JS_SetMaxStackSize(runtime, top.saturating_sub(limit));
            *words.add(at + 2) = limit;
        }
        Ok(())
    }
}

#[cfg(target_arch = "wasm32")]
mod shadow_stack {
    // Defined by wasm-ld: the bounds of the shadow stack in linear memory.
    unsafe extern "C" {
        static __stack_low: u8;
        static __stack_high: u8;
    }

    /// The shadow stack's `[low, high)` bounds, if the linker laid one out.
    pub(super) fn bounds() -> Option<(usize, usize)> {
        // Only the symbols' addresses are taken; the bytes are never read.
        let (low, high) = (
            &raw const __stack_low as usize,
            &raw const __stack_high as usize,
        );
        (high > low).then_some((low, high))
    }
}

/// Installs the runtime's promise rejection tracker, which keeps the run's
/// record of rejections nothing handled (for the warning a program that
/// ends well gets), unless the run is stopped: it ends as the stop says,
/// and holding a rejection then (an out-of-memory error, say) would hold
/// the heap it filled.
pub(crate) fn install_rejection_tracker(
    runtime: &Runtime,
    stop: &Rc<std::cell::RefCell<crate::stop::Stop>>,
) {
    let stop = stop.clone();
    runtime.set_host_promise_rejection_tracker(Some(Box::new(
        move |ctx, promise, reason: rquickjs::Value<'_>, is_handled| {
            if stop.try_borrow().is_ok_and(|stop| stop.is_stopped()) {
                return;
            }
            if let Some(session) = crate::session::Session::current(&ctx) {
                session.track_rejection(promise, reason, is_handled);
            }
        },
    )));
}

/// Installs QuickJS's interrupt handler: the run's stop (its wall clock,
/// or a cancel from another thread, or the heap refusing an allocation: see
/// `stop`).
///
/// QuickJS calls it every 10,000 ticks (`JS_INTERRUPT_COUNTER_INIT`); when
/// it says yes, QuickJS throws an uncatchable `InternalError: interrupted`,
/// again at every later check, so neither `catch` nor `finally` can keep a
/// stopped program going.
///
/// The exception is an allocation, and a heap kept full would refuse it
/// (QuickJS then throws a `null` any `catch` takes): the heap is given
/// room for it first.
pub(crate) fn install_interrupt_handler(
    runtime: &Runtime,
    heap: &crate::heap::Heap,
    stop: &Rc<std::cell::RefCell<crate::stop::Stop>>,
) {
    let stop = stop.clone();
    let heap = heap.clone();
    runtime.set_interrupt_handler(Some(Box::new(move || {
        let stopped = stop.try_borrow().is_ok_and(|stop| stop.is_stopped());
        if stopped {
            heap.make_room_to_stop();
        }
        stopped
    })));
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn no_budget_means_no_quickjs_limit() {
        assert_eq!(quickjs_memory_limit(0, 10 * MIB, MIB, 0), Ok(None));
    }

    #[test]
    fn quickjs_gets_the_budget_less_memory_outside_its_heap_and_a_reserve() {
        // 64 MiB budget, 9 MiB in use of which 1 MiB is QuickJS's: 8 MiB
        // outside, reserve 8 MiB.
        let limit = quickjs_memory_limit(64 * MIB, 9 * MIB, MIB, 0)
            .unwrap()
            .unwrap();
        assert_eq!(limit as u64, 48 * MIB);
        // A program of 1 MiB: two more copies of its text outside.
        let limit = quickjs_memory_limit(64 * MIB, 9 * MIB, MIB, MIB)
            .unwrap()
            .unwrap();
        assert_eq!(limit as u64, 46 * MIB);
    }

    #[test]
    fn a_program_too_large_to_copy_is_refused_naming_its_text() {
        // 36 MiB in use (the Start's frame and program), 15 MiB of text.
        let err = quickjs_memory_limit(64 * MIB, 36 * MIB, MIB, 15 * MIB).unwrap_err();
        assert!(
            err.contains("a program of 15728640 bytes")
                && err.contains("needs 31457280 more for its copies"),
            "{err}"
        );
    }

    #[test]
    fn the_first_collection_comes_after_the_headroom_or_a_quarter_of_the_room() {
        let mib = MIB as usize;
        assert_eq!(gc_threshold(MIB, None), mib + GC_HEADROOM);
        assert_eq!(gc_threshold(MIB, Some(48 * mib)), mib + GC_HEADROOM);
        // 4 MiB of room under the limit: the first collection after 1 MiB.
        assert_eq!(gc_threshold(MIB, Some(5 * mib)), 2 * mib);
        assert_eq!(gc_threshold(MIB, Some(mib / 2)), mib);
    }

    #[test]
    fn a_budget_below_what_is_in_use_is_refused() {
        let err = quickjs_memory_limit(8 * MIB, 9 * MIB, MIB, 0).unwrap_err();
        assert!(err.contains("leaves no room"), "{err}");
    }
}
