//! The child's own memory and stack limits.
//!
//! The parent's caps are what hold (DESIGN section 7): wasmtime's
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
    /// Installs the guard on `runtime` (on wasm; natively QuickJS's own
    /// check does the job and the guard never trips).
    pub(crate) fn install(runtime: &Runtime) -> Self {
        let guard = StackGuard::default();
        #[cfg(target_arch = "wasm32")]
        if let Some((low, high)) = shadow_stack::bounds() {
            let tripped = guard.tripped.clone();
            let floor = low + (high - low) / 2;
            runtime.set_interrupt_handler(Some(Box::new(move || {
                if shadow_stack::pointer() < floor {
                    tripped.set(true);
                }
                tripped.get()
            })));
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = runtime;
        guard
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
    fn a_budget_below_what_is_in_use_is_refused() {
        let err = quickjs_memory_limit(8 * MIB, 9 * MIB, MIB).unwrap_err();
        assert!(err.contains("leaves no room"), "{err}");
    }
}

/// Notices an out-of-memory error that QuickJS turned into a promise
/// rejection nobody handles.
///
/// When memory runs out inside a promise job, QuickJS rejects a promise in
/// the chain with the error instead of failing the job; the chain stops,
/// the job queue drains, and the program looks as if it awaits something
/// nothing will settle. This watch lets the evaluator call that what it
/// is: a memory limit.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutOfMemoryWatch {
    seen: Rc<Cell<bool>>,
}

impl OutOfMemoryWatch {
    /// Installs the watch as `runtime`'s promise rejection tracker.
    pub(crate) fn install(runtime: &Runtime) -> Self {
        let watch = OutOfMemoryWatch::default();
        let seen = watch.seen.clone();
        runtime.set_host_promise_rejection_tracker(Some(Box::new(
            move |_ctx, _promise, reason: rquickjs::Value<'_>, is_handled| {
                if !is_handled && is_out_of_memory(&reason) {
                    seen.set(true);
                }
            },
        )));
        watch
    }

    /// Whether an unhandled rejection was an out-of-memory error.
    pub(crate) fn seen(&self) -> bool {
        self.seen.get()
    }
}

/// QuickJS's out-of-memory error, or the `null` it throws when it cannot
/// even allocate that.
fn is_out_of_memory(reason: &rquickjs::Value<'_>) -> bool {
    reason.is_null()
        || reason
            .as_object()
            .and_then(|o| o.get::<_, String>("message").ok())
            .is_some_and(|m| m == "out of memory")
}
