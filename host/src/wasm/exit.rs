//! How a run of a wasm child ends.
//!
//! Every run ends in exactly one [`ChildEnd`]: the child exited (with a WASI
//! exit code), or it was stopped for one named reason. Traps are classified
//! here once (`classify`), so the stack-overflow and memory-limit cases are
//! recognised in one place.

use std::time::Duration;

use wasmtime::Trap;
use wasmtime_wasi::I32Exit;

use super::limits::Refusal;
use super::state::{ChildState, Interrupt};

/// What one run of a child came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildExit {
    /// How the child ended.
    pub end: ChildEnd,
    /// The most linear memory the child held at once, in bytes.
    pub peak_memory: u64,
    /// The first growth the memory cap refused, if any. Set even when the
    /// child went on after it: the guest meets the refusal as a failed
    /// allocation and writes a `limit` Result itself.
    pub refused: Option<Refusal>,
    /// Wall time of the whole run, instantiation included.
    pub elapsed: Duration,
}

impl ChildExit {
    /// The failure, if the child did not exit by itself.
    pub fn failure(&self) -> Option<&ChildFailure> {
        match &self.end {
            ChildEnd::Exited { .. } => None,
            ChildEnd::Failed(failure) => Some(failure),
        }
    }
}

/// The way a child's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnd {
    /// `wasi:cli/run` returned, or the child called `exit`: `code` is 0 for
    /// success, 1 for `run` returning an error, else the code it exited with.
    /// Whether it wrote a Result is for the start channel's reader to say.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// The child was stopped, or stopped itself by trapping.
    Failed(ChildFailure),
}

impl ChildEnd {
    /// Whether this end makes the child's Result void: the kernel cut the
    /// child's process tree for going over its memory cap, so whatever
    /// was left of the tree answered after the execution had already
    /// failed. (A wasm child's memory refusal happens inside the program,
    /// which sees it before it answers: its Result stands.)
    pub fn voids_result(&self) -> bool {
        matches!(
            self,
            ChildEnd::Failed(ChildFailure::MemoryLimit {
                refusal: Refusal::ProcessTree { .. },
                ..
            })
        )
    }
}

/// Why a child was stopped. Each is one failure a parent reports; the
/// display text names the limit so it can go into a Result's `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChildFailure {
    /// The memory cap refused a growth and the child then trapped (or could
    /// not even be instantiated within the cap).
    #[error("memory limit reached: {refusal}{}", cap_text(*max_memory))]
    MemoryLimit {
        /// The growth that was refused.
        refusal: Refusal,
        /// The run's cap in bytes (0: none; the refusal came from a table
        /// limit or the allocator's maximum).
        max_memory: u64,
    },
    /// The wall clock ran out, whether the child was computing or waiting on
    /// a channel.
    #[error("wall clock of {limit:?} ran out")]
    WallClock {
        /// The run's wall clock.
        limit: Duration,
        /// How long the run waited for one of the pool's slots before its
        /// program started, and the pool's slots; `None` without a pool.
        /// A run that got its slot only near its deadline ran out of time
        /// it never had, which its Result says.
        slot_wait: Option<(u32, Duration)>,
    },
    /// The child ran out of stack: wasmtime's `max_wasm_stack`, or the C
    /// shadow stack in its linear memory (seen as a fault just below address
    /// 0, which wraps to the top of the 32-bit address space). A shadow-stack
    /// overflow that faults inside `memory.fill`/`memory.copy` carries no
    /// address and shows up as a [`Trap`](ChildFailure::Trap) instead. In
    /// the QuickJS guest a JavaScript recursion meets QuickJS's own stack
    /// check first, a quarter of its shadow stack above the bottom (10,836
    /// plain calls: a `RangeError` the program may catch, its own `limit`
    /// Result if it does not); at the default `max_wasm_stack` (8 MiB) a
    /// recursion through QuickJS's C (`JSON.parse` of deep brackets) or
    /// through calls heavy on the wasm stack (callbacks, getters, an async
    /// recursion) ends here.
    #[error("stack overflow: the child recursed too deeply")]
    StackOverflow,
    /// The caller cancelled the run.
    #[error("cancelled")]
    Cancelled,
    /// The child trapped for any other reason (`unreachable`, a Rust panic,
    /// an out-of-bounds access, a host call refusing to go on...).
    #[error("the child trapped: {message}")]
    Trap {
        /// The trap and its cause, as wasmtime reports it.
        message: String,
    },
    /// The run was stopped (its wall clock, or a cancel) while it waited
    /// for one of the pooling allocator's slots: the program never started.
    #[error("the program never started: {}", no_slot(*slots, *waited))]
    NoSlot {
        /// The pool's slots ([`Pooling::max_children`](super::Pooling::max_children)).
        slots: u32,
        /// How long the run waited for one.
        waited: Duration,
        /// Whether a cancel stopped the wait (else its wall clock did).
        cancelled: bool,
    },
    /// The child could not be instantiated (for a reason other than the
    /// memory cap), e.g. the pooling allocator's slots are exhausted.
    #[error("the child could not be instantiated: {message}")]
    Instantiate {
        /// wasmtime's reason.
        message: String,
    },
}

/// Faulting addresses at or above this are a shadow-stack pointer that went
/// below 0: with the stack placed first in linear memory, overflowing it
/// wraps to the top of the 32-bit space. No real linear memory reaches here
/// (it would be 4 GiB less one MiB).
const WRAPPED_STACK_FLOOR: u64 = 0xfff0_0000;

/// Names what ended a run that returned `error` from wasmtime.
pub(super) fn classify(
    error: &wasmtime::Error,
    state: &ChildState,
    limits: &super::ChildLimits,
) -> ChildEnd {
    if let Some(exit) = error.downcast_ref::<I32Exit>() {
        return ChildEnd::Exited { code: exit.0 };
    }
    let failure = match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => {
            interrupted(state.interrupt.unwrap_or(Interrupt::WallClock), limits)
        }
        Some(Trap::StackOverflow) => ChildFailure::StackOverflow,
        Some(Trap::MemoryOutOfBounds) if wrapped_stack_fault(error) => ChildFailure::StackOverflow,
        _ => match state.limiter.refused() {
            Some(refusal) => memory_limit(refusal, limits),
            None => ChildFailure::Trap {
                message: describe(error),
            },
        },
    };
    ChildEnd::Failed(failure)
}

/// Names what stopped the child's instantiation. Instantiating runs wasm
/// (the component's start functions), where an epoch tick can find the
/// wall clock out or the run cancelled: that is the interrupt, not a child
/// that could not be instantiated (a wall clock of 1 ns under load ended
/// `unknown`, "the child could not be instantiated: wasm trap: interrupt",
/// in 4 runs of 2,000).
pub(super) fn not_instantiated(
    error: &wasmtime::Error,
    state: &ChildState,
    limits: &super::ChildLimits,
) -> ChildFailure {
    if let Some(Trap::Interrupt) = error.downcast_ref::<Trap>() {
        return interrupted(state.interrupt.unwrap_or(Interrupt::WallClock), limits);
    }
    match state.limiter.refused() {
        Some(refusal) => memory_limit(refusal, limits),
        None => ChildFailure::Instantiate {
            message: describe(error),
        },
    }
}

/// The failure for an epoch interrupt or a host-side stop.
pub(super) fn interrupted(why: Interrupt, limits: &super::ChildLimits) -> ChildFailure {
    match why {
        Interrupt::WallClock => ChildFailure::WallClock {
            limit: limits.wall_clock,
            slot_wait: None,
        },
        Interrupt::Cancelled => ChildFailure::Cancelled,
    }
}

/// The failure for a run that ended after the limiter refused `refusal`.
pub(super) fn memory_limit(refusal: Refusal, limits: &super::ChildLimits) -> ChildFailure {
    ChildFailure::MemoryLimit {
        refusal,
        max_memory: limits.max_memory,
    }
}

/// What a run that got no pool slot waited on.
pub(crate) fn no_slot(slots: u32, waited: Duration) -> String {
    let whom = match slots {
        1 => "the pool's only slot".to_owned(),
        n => format!("all {n} of the pool's slots"),
    };
    format!(
        "{whom} stayed in use for the {} ms it waited (`Pooling::max_children`)",
        waited.as_millis()
    )
}

fn cap_text(max_memory: u64) -> String {
    if max_memory > 0 {
        format!(" (cap: {max_memory} bytes)")
    } else {
        String::new()
    }
}

/// Whether `error` is a memory fault at an address a wrapped-around shadow
/// stack pointer would produce. wasmtime reports the address only in the
/// text of its context ("memory fault at wasm address 0x... in linear memory
/// of size 0x..."), so it is read from there.
fn wrapped_stack_fault(error: &wasmtime::Error) -> bool {
    const PREFIX: &str = "memory fault at wasm address 0x";
    error.chain().any(|cause| {
        let text = cause.to_string();
        let Some(rest) = text.strip_prefix(PREFIX) else {
            return false;
        };
        let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
        u64::from_str_radix(&hex, 16).is_ok_and(|address| address >= WRAPPED_STACK_FLOOR)
    })
}

/// The error and its causes on one line; the wasm backtrace, if any, is left
/// out (it is long and names the guest's internals).
pub(super) fn describe(error: &wasmtime::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let line = cause.to_string();
        if line.starts_with("error while executing at wasm backtrace") {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(line.trim());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault_at(address: u64) -> wasmtime::Error {
        wasmtime::Error::from(Trap::MemoryOutOfBounds).context(format!(
            "memory fault at wasm address {address:#x} in linear memory of size 0x110000"
        ))
    }

    #[test]
    fn a_fault_just_below_zero_is_a_wrapped_stack() {
        assert!(wrapped_stack_fault(&fault_at(0xffff_fff0)));
        assert!(!wrapped_stack_fault(&fault_at(0x20_0000)));
        assert!(!wrapped_stack_fault(&wasmtime::Error::from(
            Trap::MemoryOutOfBounds
        )));
    }

    #[test]
    fn failure_texts_name_the_limit() {
        let memory = ChildFailure::MemoryLimit {
            refusal: Refusal::Memory { requested: 10 },
            max_memory: 8,
        };
        assert_eq!(
            memory.to_string(),
            "memory limit reached: the child asked for 10 bytes of memory (cap: 8 bytes)"
        );
        let clock = ChildFailure::WallClock {
            limit: Duration::from_millis(250),
            slot_wait: Some((4, Duration::from_millis(200))),
        };
        assert_eq!(clock.to_string(), "wall clock of 250ms ran out");
    }

    fn quiet_state(limits: &super::super::ChildLimits) -> ChildState {
        let io = super::super::ChildIo {
            call_in: Box::new(tokio::io::empty()),
            call_out: Box::new(tokio::io::sink()),
            start_in: Box::new(tokio::io::empty()),
            start_out: Box::new(tokio::io::sink()),
            console: crate::console::Console::new(0),
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        ChildState::new(io, limits, std::time::Instant::now(), cancel)
    }

    /// An interrupt during instantiation (an epoch tick in a start
    /// function) is the wall clock or the cancel that caused it; anything
    /// else stays "could not be instantiated".
    #[test]
    fn an_interrupt_while_instantiating_is_the_wall_clock_or_the_cancel() {
        let limits = super::super::ChildLimits {
            max_memory: 0,
            wall_clock: Duration::from_nanos(1),
        };
        let mut state = quiet_state(&limits);
        let interrupt = wasmtime::Error::from(Trap::Interrupt);
        assert!(matches!(
            not_instantiated(&interrupt, &state, &limits),
            ChildFailure::WallClock { .. }
        ));
        state.interrupt = Some(Interrupt::Cancelled);
        assert!(matches!(
            not_instantiated(&interrupt, &state, &limits),
            ChildFailure::Cancelled
        ));
        let other = wasmtime::Error::msg("no slot");
        assert!(matches!(
            not_instantiated(&other, &state, &limits),
            ChildFailure::Instantiate { .. }
        ));
    }

    #[test]
    fn the_description_leaves_out_the_backtrace() {
        let error = wasmtime::Error::from(Trap::UnreachableCodeReached)
            .context("error while executing at wasm backtrace:\n    0: 0x1 - f");
        assert_eq!(
            describe(&error),
            "wasm trap: wasm `unreachable` instruction executed"
        );
    }
}
