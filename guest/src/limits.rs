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
//! slack. So QuickJS gets `max_memory` less what is already in use outside
//! its heap, less a reserve. QuickJS's limit is best effort: near it QuickJS
//! may still fail an allocation it cannot report, and then the wasm cap ends
//! the run.
//!
//! **Stack.** The QuickJS in rquickjs 0.14 disables its stack check when
//! built for WASI (`update_stack_limit` forces `stack_limit = 0` under
//! `__wasi__`, so `JS_SetMaxStackSize` has no effect there; quickjs-ng fixed
//! this upstream later). Natively its check works and throws `RangeError`.
//! On wasm the guest is linked stack-first (see `build.rs`), so a shadow
//! stack that overflows faults below address 0 instead of writing over the
//! heap, and [`StackGuard`] watches the shadow stack from QuickJS's interrupt
//! handler and stops a runaway recursion while half the stack is still free.
//! The handler runs only every few thousand calls, so the guard is a best
//! effort too; the parent's trap handling is the backstop.

use std::cell::Cell;
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

/// The QuickJS memory limit for a budget of `max_memory` bytes (0 = none),
/// given the linear memory in use and QuickJS's share of it. An error when
/// the budget leaves no room for a program.
pub(crate) fn quickjs_memory_limit(
    max_memory: u64,
    linear_in_use: u64,
    quickjs_in_use: u64,
) -> Result<Option<usize>, String> {
    if max_memory == 0 {
        return Ok(None);
    }
    let outside = linear_in_use.saturating_sub(quickjs_in_use);
    let reserve = (max_memory / 8).clamp(MIN_RESERVE, MAX_RESERVE);
    match max_memory.checked_sub(outside.saturating_add(reserve)) {
        Some(limit) if limit >= quickjs_in_use.saturating_add(MIN_PROGRAM_HEAP) => {
            Ok(Some(usize::try_from(limit).unwrap_or(usize::MAX)))
        }
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
pub(crate) fn gc_threshold(quickjs_in_use: u64, memory_limit: Option<usize>) -> usize {
    let in_use = usize::try_from(quickjs_in_use).unwrap_or(usize::MAX);
    let room = memory_limit.map_or(usize::MAX, |limit| limit.saturating_sub(in_use));
    in_use.saturating_add(GC_HEADROOM.min(room / 4))
}

/// Sets QuickJS's own stack limit where it has an effect.
pub(crate) fn configure_stack(runtime: &Runtime) {
    // Natively the default (1 MiB) suits the threads tests run on. On WASI
    // the call is a no-op in rquickjs 0.14; it is made anyway so that the
    // limit takes effect once the vendored QuickJS honours it there.
    #[cfg(target_arch = "wasm32")]
    if let Some((low, high)) = shadow_stack::bounds() {
        runtime.set_max_stack_size((high - low) / 2);
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = runtime;
}

/// Stops a program whose recursion is about to exhaust the shadow stack.
///
/// Installed as QuickJS's interrupt handler: when it fires, QuickJS throws
/// an uncatchable `InternalError: interrupted`, and [`StackGuard::tripped`]
/// tells the evaluator why.
#[derive(Debug, Clone, Default)]
pub(crate) struct StackGuard {
    tripped: Rc<Cell<bool>>,
}

impl StackGuard {
    /// A guard, armed by [`install_interrupt_handler`] (on wasm; natively
    /// QuickJS's own check does the job and the guard never trips).
    pub(crate) fn new() -> Self {
        StackGuard::default()
    }

    /// Whether the guard stopped the program.
    pub(crate) fn tripped(&self) -> bool {
        self.tripped.get()
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

    /// Roughly the current shadow stack pointer: the address of a local
    /// that is forced into linear memory.
    #[inline(never)]
    pub(super) fn pointer() -> usize {
        let marker = 0u8;
        core::hint::black_box(&marker) as *const u8 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn no_budget_means_no_quickjs_limit() {
        assert_eq!(quickjs_memory_limit(0, 10 * MIB, MIB), Ok(None));
    }

    #[test]
    fn quickjs_gets_the_budget_less_memory_outside_its_heap_and_a_reserve() {
        // 64 MiB budget, 9 MiB in use of which 1 MiB is QuickJS's: 8 MiB
        // outside, reserve 8 MiB.
        let limit = quickjs_memory_limit(64 * MIB, 9 * MIB, MIB)
            .unwrap()
            .unwrap();
        assert_eq!(limit as u64, 48 * MIB);
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
        let err = quickjs_memory_limit(8 * MIB, 9 * MIB, MIB).unwrap_err();
        assert!(err.contains("leaves no room"), "{err}");
    }
}

/// Watches QuickJS's heap for the two things a bare `null` cannot say:
/// whether memory really ran out, and whether an out-of-memory error was
/// swallowed by a promise chain.
///
/// **Near the limit.** QuickJS throws `null` when it cannot allocate even
/// the error object for "out of memory", which leaves an out-of-memory
/// `null` indistinguishable by value from a program's own `throw null`.
/// What does differ is the heap: an out-of-memory `null` is thrown with
/// QuickJS's heap within a few hundred bytes of its limit. The watch asks
/// the heap whether it is near its limit, exactly and in O(1): it lowers the
/// limit by a margin for one tiny allocation and restores it, so the probe
/// uses no memory of its own. It asks from QuickJS's interrupt handler (every
/// few thousand calls and loop iterations), when a promise is rejected with
/// `null` or `undefined`, and when the evaluator judges such an ending; once
/// any answer is yes, it stays yes for the run. A program that throws `null`
/// on purpose is judged `invalid` unless its heap came within the margin of
/// the limit; a heap that ran out and then freed most of what it held
/// while the error unwound is still caught by the linear memory it left
/// grown (linear memory never shrinks: grown to where the heap's limit puts
/// it, less the margin, the heap came near), which every probe asks first.
/// The margin is an eighth of the limit, within `NEAR_MIN..=NEAR_MAX`.
///
/// **Out of memory inside a promise job.** When memory runs out inside a
/// promise job, QuickJS rejects a promise in the chain with the error
/// instead of failing the job; the chain stops, the job queue drains, and
/// the program looks as if it awaits something nothing will settle. The
/// watch, as the runtime's promise rejection tracker, notices the error so
/// that the evaluator can call that ending what it is: a memory limit.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemoryWatch {
    state: Rc<WatchState>,
}

#[derive(Debug)]
struct WatchState {
    /// The runtime; null until the run sets a limit.
    runtime: Cell<*mut rquickjs::qjs::JSRuntime>,
    /// QuickJS's memory limit for this run; 0 = none.
    limit: Cell<usize>,
    /// The linear memory QuickJS's heap at its limit takes at least: the
    /// size at the run's start, plus the room the limit leaves the heap.
    /// Linear memory never shrinks, so it remembers the heap's high water
    /// after the heap has freed it (0 = not known).
    linear_at_limit: Cell<u64>,
    /// The heap came within the margin of its limit at some probe.
    near: Cell<bool>,
    /// An unhandled rejection carried QuickJS's out-of-memory error.
    rejected: Cell<bool>,
}

impl Default for WatchState {
    fn default() -> Self {
        WatchState {
            runtime: Cell::new(std::ptr::null_mut()),
            limit: Cell::new(0),
            linear_at_limit: Cell::new(0),
            near: Cell::new(false),
            rejected: Cell::new(false),
        }
    }
}

/// The least margin below the limit that counts as near it.
const NEAR_MIN: usize = 256 << 10;

/// The most margin below the limit that counts as near it.
const NEAR_MAX: usize = 4 << 20;

impl MemoryWatch {
    /// Installs the watch as `runtime`'s promise rejection tracker.
    pub(crate) fn install(runtime: &Runtime) -> Self {
        let watch = MemoryWatch::default();
        let tracker = watch.clone();
        runtime.set_host_promise_rejection_tracker(Some(Box::new(
            move |ctx, promise, reason: rquickjs::Value<'_>, is_handled| {
                let out_of_memory = !is_handled
                    && (is_out_of_memory_error(&reason)
                        || (reason.is_null() || reason.is_undefined()) && {
                            // A `null` may be QuickJS's: ask the heap while
                            // the rejection is fresh.
                            tracker.probe();
                            tracker.near_limit()
                        });
                if out_of_memory {
                    tracker.state.rejected.set(true);
                } else if let Some(session) = crate::session::Session::current(&ctx) {
                    // The run's own record, for the warning a program that
                    // ends well gets about rejections nothing handled. Not
                    // of memory running out: the run ends `limit` anyway,
                    // and holding the rejected promise would hold the heap
                    // it fills (a chain that grows without end kept its
                    // queue from draining, for good).
                    session.track_rejection(promise, reason.clone(), is_handled);
                }
            },
        )));
        watch
    }

    /// Starts watching `ctx`'s runtime under a QuickJS limit of `limit` bytes,
    /// with `quickjs_in_use` bytes of its heap in use now.
    pub(crate) fn watch(&self, ctx: &rquickjs::Ctx<'_>, limit: usize, quickjs_in_use: u64) {
        // SAFETY: a live context's runtime.
        let runtime = unsafe { rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
        self.state.runtime.set(runtime);
        self.state.limit.set(limit);
        let linear = linear_memory_in_use();
        if linear > 0 {
            let room = (limit as u64).saturating_sub(quickjs_in_use);
            self.state.linear_at_limit.set(linear.saturating_add(room));
        }
    }

    /// Asks the heap now whether it is near its limit; the answer sticks.
    pub(crate) fn probe(&self) {
        let (runtime, limit) = (self.state.runtime.get(), self.state.limit.get());
        if runtime.is_null() || limit == 0 || self.state.near.get() {
            return;
        }
        let margin = (limit / 8).clamp(NEAR_MIN, NEAR_MAX);
        // The high water: a heap that reached its limit and freed what it
        // held as the error unwound (a `JSON.parse` or a `structuredClone`
        // of a large input: native code, where no interrupt samples) left
        // the linear memory it grew.
        let at_limit = self.state.linear_at_limit.get();
        if at_limit > 0 && linear_memory_in_use().saturating_add(margin as u64) >= at_limit {
            self.state.near.set(true);
            return;
        }
        // SAFETY: `runtime` is the live runtime this watch was given (the
        // evaluator's, which outlives every run), and is used from its own
        // thread. A limit of 0 means none to QuickJS, so the lowered limit is
        // at least 1. The allocation, if made, is freed at once.
        let near = unsafe {
            rquickjs::qjs::JS_SetMemoryLimit(runtime, limit.saturating_sub(margin).max(1) as _);
            let probe = rquickjs::qjs::js_malloc_rt(runtime, 16);
            rquickjs::qjs::JS_SetMemoryLimit(runtime, limit as _);
            if probe.is_null() {
                true
            } else {
                rquickjs::qjs::js_free_rt(runtime, probe);
                false
            }
        };
        if near {
            self.state.near.set(true);
        }
    }

    /// Whether any probe found the heap near its limit.
    pub(crate) fn near_limit(&self) -> bool {
        self.state.near.get()
    }

    /// Whether an unhandled rejection was an out-of-memory error (or a
    /// `null` thrown with the heap near its limit).
    pub(crate) fn seen(&self) -> bool {
        self.state.rejected.get()
    }
}

/// Installs QuickJS's interrupt handler: the run's stop (its wall clock,
/// or a cancel from another thread: see `stop`), the stack guard (on wasm)
/// and the memory watch's sampling.
///
/// QuickJS calls it every 10,000 ticks (`JS_INTERRUPT_COUNTER_INIT`); when
/// it says yes, QuickJS throws an uncatchable `InternalError: interrupted`,
/// again at every later check, so neither `catch` nor `finally` can keep a
/// stopped program going.
pub(crate) fn install_interrupt_handler(
    runtime: &Runtime,
    guard: &StackGuard,
    watch: &MemoryWatch,
    stop: &Rc<std::cell::RefCell<crate::stop::Stop>>,
) {
    let watch = watch.clone();
    let stop = stop.clone();
    #[cfg(target_arch = "wasm32")]
    let stack =
        shadow_stack::bounds().map(|(low, high)| (low + (high - low) / 2, guard.tripped.clone()));
    #[cfg(not(target_arch = "wasm32"))]
    let _ = guard;
    runtime.set_interrupt_handler(Some(Box::new(move || {
        watch.probe();
        if stop.try_borrow().is_ok_and(|stop| stop.is_stopped()) {
            return true;
        }
        #[cfg(target_arch = "wasm32")]
        if let Some((floor, tripped)) = &stack {
            if shadow_stack::pointer() < *floor {
                tripped.set(true);
            }
            return tripped.get();
        }
        false
    })));
}

/// QuickJS's out-of-memory error.
fn is_out_of_memory_error(reason: &rquickjs::Value<'_>) -> bool {
    reason
        .as_object()
        .and_then(|o| o.get::<_, String>("message").ok())
        .is_some_and(|m| m == "out of memory" || m == "out of memory in regexp execution")
}
