//! [`Budget`]: what one execution may spend, with safe defaults.

use std::time::Duration;

/// The wall clock an execution gets unless its budget says otherwise.
pub const DEFAULT_WALL_CLOCK: Duration = Duration::from_secs(10);

/// The memory cap an execution gets unless its budget says otherwise.
pub const DEFAULT_MAX_MEMORY: u64 = 64 << 20;

/// What one execution may spend. Each item 0 means no limit on it.
///
/// The default is safe, not unlimited: a wall clock of 10 s and a memory cap
/// of 64 MiB (no call or byte quota), the CLI's defaults, so a forgotten
/// budget cannot let `while (true) {}` run forever. No limit at all is
/// [`Budget::UNLIMITED`], spelled out:
///
/// ```
/// use std::time::Duration;
/// use wasmwire::Budget;
///
/// let tight = Budget { wall_clock: Duration::from_secs(2), max_calls: 20, ..Budget::default() };
/// assert_eq!(tight.max_memory, 64 << 20);
/// let open = Budget::UNLIMITED;
/// assert!(open.wall_clock.is_zero() && open.max_memory == 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock time for the whole execution, from the Start.
    pub wall_clock: Duration,
    /// Most tool calls the parent accepts.
    pub max_calls: u64,
    /// Most bytes of tool values the parent sends.
    pub max_bytes: u64,
    /// Most bytes of memory the child may use (for the process backend, its
    /// whole process tree).
    pub max_memory: u64,
}

impl Budget {
    /// No limit on anything: the caller must hold the execution some other
    /// way (a cancel token, a per-call deadline).
    pub const UNLIMITED: Budget = Budget {
        wall_clock: Duration::ZERO,
        max_calls: 0,
        max_bytes: 0,
        max_memory: 0,
    };

    /// The default: [`DEFAULT_WALL_CLOCK`] and [`DEFAULT_MAX_MEMORY`].
    pub const DEFAULT: Budget = Budget {
        wall_clock: DEFAULT_WALL_CLOCK,
        max_calls: 0,
        max_bytes: 0,
        max_memory: DEFAULT_MAX_MEMORY,
    };
}

impl Default for Budget {
    fn default() -> Self {
        Budget::DEFAULT
    }
}

impl From<Budget> for wire::StartBudget {
    fn from(b: Budget) -> Self {
        wire::StartBudget {
            wall_clock: b.wall_clock,
            max_calls: b.max_calls,
            max_bytes: b.max_bytes,
            max_memory: b.max_memory,
        }
    }
}

impl From<wire::StartBudget> for Budget {
    fn from(b: wire::StartBudget) -> Self {
        Budget {
            wall_clock: b.wall_clock,
            max_calls: b.max_calls,
            max_bytes: b.max_bytes,
            max_memory: b.max_memory,
        }
    }
}
