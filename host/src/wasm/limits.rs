//! The memory cap: a [`ResourceLimiter`] that refuses growth past the cap
//! and remembers that it did.
//!
//! When a growth is refused the guest only sees `memory.grow` return -1; what
//! it does next (throw, abort, trap on a null pointer) says nothing about why.
//! The limiter keeps the refusal so the run's outcome can say "memory limit".
//!
//! The cap is on the *sum* of the child's linear memories, not on each one
//! (wasmtime's `StoreLimits` caps each memory separately), because a
//! component may have several.

use wasmtime::ResourceLimiter;

/// Most core instances one child may create. A component made by
/// `wasm-component-ld` has a handful; this only stops a pathological one.
pub const MAX_INSTANCES: usize = 64;

/// Most linear memories one child may create (the real guest has one).
pub const MAX_MEMORIES: usize = 16;

/// Most tables one child may create.
pub const MAX_TABLES: usize = 64;

/// Most elements any one table may grow to. Tables are not counted in the
/// memory cap; this keeps `table.grow` from being a way around it
/// (an element costs a pointer or two of host memory).
pub const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// Why a growth was refused, for the run's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A linear memory would have passed the cap.
    #[error("the child asked for {requested} bytes of memory")]
    Memory {
        /// The total the child asked for, in bytes.
        requested: u64,
    },
    /// A memory's initial size alone was over the cap: the component could
    /// not even be instantiated, whatever its program. Said apart from
    /// [`Refusal::Memory`], so that a cap set too low for anything to run
    /// reads as the budget's mistake. What more a program needs past the
    /// start is the child's own (the built-in guest keeps a reserve and a
    /// least heap, and says so itself under a cap just above the start).
    #[error(
        "the child's memory starts at {requested} bytes ({} MiB), so no program runs under \
         this cap; give it more than that (64 MiB is the default)",
        requested.div_ceil(1 << 20)
    )]
    Start {
        /// The bytes the child's memories start at (those made so far).
        requested: u64,
    },
    /// A table would have passed [`MAX_TABLE_ELEMENTS`].
    #[error("the child asked for a table of {requested} elements")]
    Table {
        /// The elements the table asked for.
        requested: u64,
    },
    /// A process child's processes together went over the memory cap of
    /// their cgroup, and the kernel's OOM killer ended some of them (the
    /// process backend).
    #[error("the child's processes went over the cap and the kernel ended {oom_kills} of them")]
    ProcessTree {
        /// How many processes the OOM killer ended.
        oom_kills: u64,
    },
}

/// Caps a child's memories and tables and records what it refused.
#[derive(Debug)]
pub struct MemoryLimiter {
    /// Cap on the sum of all linear memories, in bytes; `None` = no cap.
    max_memory: Option<u64>,
    /// Current sum of all linear memories, in bytes.
    total: u64,
    /// Highest `total` reached.
    peak: u64,
    /// The size the last table growth asked for, in elements.
    table_requested: u64,
    /// The first refusal, if any.
    refused: Option<Refusal>,
}

impl MemoryLimiter {
    /// A limiter with a cap of `max_memory` bytes (0 = no cap).
    pub fn new(max_memory: u64) -> Self {
        MemoryLimiter {
            max_memory: (max_memory > 0).then_some(max_memory),
            total: 0,
            peak: 0,
            table_requested: 0,
            refused: None,
        }
    }

    /// The first growth this limiter refused (or that failed), if any.
    pub fn refused(&self) -> Option<Refusal> {
        self.refused
    }

    /// The most linear memory the child held at once, in bytes.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    fn refuse(&mut self, refusal: Refusal) -> bool {
        self.refused.get_or_insert(refusal);
        false
    }
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let growth = to_u64(desired.saturating_sub(current));
        let total = self.total.saturating_add(growth);
        let over_cap = self.max_memory.is_some_and(|cap| total > cap);
        let over_max = maximum.is_some_and(|max| desired > max);
        if over_cap || over_max {
            // A memory being made (from nothing, at instantiation) that
            // does not fit: no program could run.
            let refusal = if current == 0 && over_cap && !over_max {
                Refusal::Start { requested: total }
            } else {
                Refusal::Memory { requested: total }
            };
            return Ok(self.refuse(refusal));
        }
        // Counted now: if the growth later fails, `memory_grow_failed` records
        // it, and the child cannot use memory it did not get anyway.
        self.total = total;
        self.peak = self.peak.max(total);
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // The host could not provide memory the cap allowed: still a memory
        // limit from the child's point of view. Keep the guest's -1.
        self.refuse(Refusal::Memory {
            requested: self.total,
        });
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.table_requested = to_u64(desired);
        let over_max = maximum.is_some_and(|max| desired > max);
        if desired > MAX_TABLE_ELEMENTS || over_max {
            return Ok(self.refuse(Refusal::Table {
                requested: self.table_requested,
            }));
        }
        Ok(true)
    }

    fn table_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.refuse(Refusal::Table {
            requested: self.table_requested,
        });
        Ok(())
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grow(limiter: &mut MemoryLimiter, current: usize, desired: usize) -> bool {
        limiter
            .memory_growing(current, desired, None)
            .expect("the limiter never errors")
    }

    const PAGE: usize = 64 * 1024;

    #[test]
    fn growth_up_to_the_cap_is_allowed() {
        let mut limiter = MemoryLimiter::new(4 * PAGE as u64);
        assert!(grow(&mut limiter, 0, 2 * PAGE));
        assert!(grow(&mut limiter, 2 * PAGE, 4 * PAGE));
        assert_eq!(limiter.refused(), None);
        assert_eq!(limiter.peak(), 4 * PAGE as u64);
    }

    #[test]
    fn a_memory_made_over_the_cap_is_refused_as_a_start_that_cannot_be() {
        let mut limiter = MemoryLimiter::new(4 * PAGE as u64);
        assert!(!grow(&mut limiter, 0, 5 * PAGE));
        let refused = limiter.refused().expect("refused");
        assert_eq!(
            refused,
            Refusal::Start {
                requested: 5 * PAGE as u64
            }
        );
        assert!(refused.to_string().contains("(1 MiB)"), "{refused}");
        // A second memory made past what the first left is one too.
        let mut limiter = MemoryLimiter::new(4 * PAGE as u64);
        assert!(grow(&mut limiter, 0, 3 * PAGE));
        assert!(!grow(&mut limiter, 0, 2 * PAGE));
        assert!(
            matches!(limiter.refused(), Some(Refusal::Start { requested }) if requested == 5 * PAGE as u64)
        );
    }

    #[test]
    fn growth_past_the_cap_is_refused_and_recorded() {
        let mut limiter = MemoryLimiter::new(4 * PAGE as u64);
        assert!(grow(&mut limiter, 0, 3 * PAGE));
        assert!(!grow(&mut limiter, 3 * PAGE, 5 * PAGE));
        assert_eq!(
            limiter.refused(),
            Some(Refusal::Memory {
                requested: 5 * PAGE as u64
            })
        );
        assert_eq!(limiter.peak(), 3 * PAGE as u64);
    }

    #[test]
    fn the_cap_is_on_the_sum_of_all_memories() {
        let mut limiter = MemoryLimiter::new(4 * PAGE as u64);
        assert!(grow(&mut limiter, 0, 3 * PAGE));
        // A second memory of two pages would bring the sum to five.
        assert!(!grow(&mut limiter, 0, 2 * PAGE));
        assert!(limiter.refused().is_some());
    }

    #[test]
    fn no_cap_allows_growth_up_to_the_memory_maximum() {
        let mut limiter = MemoryLimiter::new(0);
        assert!(grow(&mut limiter, 0, 1 << 30));
        assert!(
            !limiter
                .memory_growing(0, 2 * PAGE, Some(PAGE))
                .expect("the limiter never errors")
        );
    }

    #[test]
    fn growth_to_exactly_the_memory_maximum_is_allowed() {
        let mut limiter = MemoryLimiter::new(0);
        assert!(
            limiter
                .memory_growing(0, 2 * PAGE, Some(2 * PAGE))
                .expect("the limiter never errors")
        );
        assert_eq!(limiter.refused(), None);
    }

    #[test]
    fn a_failed_growth_is_recorded_as_a_refusal() {
        let mut limiter = MemoryLimiter::new(0);
        assert!(grow(&mut limiter, 0, 2 * PAGE));
        limiter
            .memory_grow_failed(wasmtime::format_err!("no memory"))
            .expect("the limiter never errors");
        assert_eq!(
            limiter.refused(),
            Some(Refusal::Memory {
                requested: 2 * PAGE as u64
            })
        );

        let mut limiter = MemoryLimiter::new(0);
        assert!(
            limiter
                .table_growing(0, 1000, None)
                .expect("the limiter never errors")
        );
        limiter
            .table_grow_failed(wasmtime::format_err!("no memory"))
            .expect("the limiter never errors");
        assert_eq!(limiter.refused(), Some(Refusal::Table { requested: 1000 }));
    }

    #[test]
    fn tables_may_grow_to_exactly_their_limits() {
        let mut limiter = MemoryLimiter::new(0);
        assert!(
            limiter
                .table_growing(0, MAX_TABLE_ELEMENTS, None)
                .expect("the limiter never errors")
        );
        assert!(
            limiter
                .table_growing(0, 10, Some(10))
                .expect("the limiter never errors")
        );
        assert!(
            !limiter
                .table_growing(0, 11, Some(10))
                .expect("the limiter never errors")
        );
        assert_eq!(limiter.refused(), Some(Refusal::Table { requested: 11 }));
    }

    #[test]
    fn the_counts_a_child_may_create_are_the_documented_ones() {
        let limiter = MemoryLimiter::new(0);
        assert_eq!(
            (limiter.instances(), limiter.memories(), limiter.tables()),
            (MAX_INSTANCES, MAX_MEMORIES, MAX_TABLES)
        );
    }

    #[test]
    fn huge_tables_are_refused() {
        let mut limiter = MemoryLimiter::new(0);
        assert!(
            limiter
                .table_growing(0, 1000, None)
                .expect("the limiter never errors")
        );
        assert!(
            !limiter
                .table_growing(1000, MAX_TABLE_ELEMENTS + 1, None)
                .expect("the limiter never errors")
        );
        assert!(matches!(limiter.refused(), Some(Refusal::Table { .. })));
    }
}
