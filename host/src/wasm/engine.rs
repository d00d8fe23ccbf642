//! The wasmtime engine every child of one [`WasmChild`](super::WasmChild)
//! shares: epoch interruption on, a bounded wasm stack, copy-on-write
//! memory images, and (by default) a pooling instance allocator whose slots
//! keep the pages a child dirtied resident, reset in place from the image.

use std::path::PathBuf;

use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, WasmBacktraceDetails,
};

use super::cache;
use super::error::WasmError;

/// Default most wasm stack a child may use: 8 MiB. QuickJS recurses through its
/// interpreter for every JavaScript call, so this bounds a program's recursion
/// depth. Measured with the QuickJS guest: a plain recursion reaches 10,836
/// calls (Node 20: about 10,400 to 13,900 by the function), where QuickJS's own
/// stack check on the guest's shadow stack throws `RangeError: Maximum call
/// stack size exceeded`, catchable as in Node; recursions whose calls use more
/// native stack than shadow stack (through getters, `map` callbacks,
/// constructors, `apply`, generators, `async` functions) end at this stack's
/// overflow instead, at 4,250 to 9,350 calls (Node throws at 3,200 to 10,400 on
/// those), as `limit`, which no `try` catches. At 2 MiB they ended at 2,800 and
/// 1,500, short of what ordinary code (a recursive walk of a deep tree) needs.
/// The stack is host memory outside `max_memory`, touched only as deep as the
/// child recurses, and returned to the kernel past [`STACK_KEEP_RESIDENT`] when
/// the child ends: `return 1` measured the same at 2 and 8 MiB.
pub const DEFAULT_MAX_WASM_STACK: usize = 8 << 20;

/// Stack left to host functions on top of the wasm stack, on the fiber each
/// child runs on. wasmtime-wasi's host calls are shallow; 1 MiB is ample.
const HOST_STACK: usize = 1 << 20;

/// How the engine is built; [`Default`] suits a CLI and a long-lived parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOptions {
    /// Where compiled components are kept between processes, so a CLI does
    /// not recompile the guest on every run. `None`: compile every time.
    /// Defaults to [`default_cache_dir`](super::default_cache_dir). Any cache error falls back to
    /// compiling.
    pub cache_dir: Option<PathBuf>,
    /// Preallocate instance slots (see [`Pooling`]); the default is
    /// [`Pooling::default`]. `None`: allocate (and map, and unmap) each
    /// child's memory, tables and stack on demand.
    pub pooling: Option<Pooling>,
    /// Most wasm stack a child may use, in bytes; past it the child traps
    /// with a stack overflow.
    pub max_wasm_stack: usize,
    /// Pre-initialise a component that exports `wizer-initialize` (as the
    /// built-in guest does): run that function once, snapshot the instance
    /// with wasmtime-wizer, and start every run from the snapshot. `false`
    /// runs the component as it is.
    pub pre_initialize: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            cache_dir: cache::default_cache_dir(),
            pooling: Some(Pooling::default()),
            max_wasm_stack: DEFAULT_MAX_WASM_STACK,
            pre_initialize: true,
        }
    }
}

/// A pooling instance allocator: memory, tables and stacks for up to
/// `max_children` children are reserved once and reused, which makes each
/// instantiation cheaper. Runs beyond `max_children` wait for a free slot,
/// inside their wall clock: one whose wall clock runs out first ends
/// `limit`, saying that the program never started.
///
/// A slot is reserved address space, not memory: memory is used only by the
/// pages a child touches. When a child ends, the pages it dirtied are found
/// (Linux's `PAGEMAP_SCAN`, where the kernel has it) and reset in place from
/// the component's memory image, up to [`KEEP_RESIDENT`] bytes per memory
/// (and [`STACK_KEEP_RESIDENT`] per stack), so the next child in that slot
/// takes no page faults for them; the rest goes back to the kernel. A slot
/// therefore keeps well under 1 MiB of memory while idle.
///
/// Where this process can swap, the scan is not used (see `may_swap`):
/// the scan sees only pages in memory, so a page a child wrote that was
/// swapped out when the child ended would be neither reset nor returned,
/// and the next child in that slot would read it. Without the scan the
/// first [`KEEP_RESIDENT`] bytes are reset whatever they hold and the rest
/// returned, which holds, at a cost (measured: `return 1` 87 -> 280 µs, 68
/// page faults a run; a fan-out of 1,000 calls 5-8% slower).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pooling {
    /// Children that can run at once.
    pub max_children: u32,
    /// Most linear memory one child can have, in bytes, whatever its own
    /// `max_memory` says (a slot's size is fixed when the pool is made).
    pub max_memory: u64,
}

impl Default for Pooling {
    /// 1000 children of up to 1 GiB each: about 8 TiB of address space
    /// (two memory slots per child, each reserving 4 GiB so that wasm needs
    /// no bounds checks), out of the 128 TiB a process has: a process runs
    /// out after about 15 Sandboxes made with the default, so share one.
    fn default() -> Self {
        Pooling {
            max_children: 1000,
            max_memory: 1 << 30,
        }
    }
}

/// Bytes of a pooled linear memory reset in place rather than returned to
/// the kernel when its child ends. Measured with the QuickJS guest: without
/// it (every dirty page returned) a run of `return 1` costs 3x as much. It
/// bounds what an idle slot keeps: this times `MAX_WARM_SLOTS`.
///
/// The pages kept are the first dirty ones by address, and once kept they
/// stay the slot's own, reset on every later run whether it wrote them or
/// not. So a slot that once ran a heavier program keeps that program's
/// pages in place of the ones a light run writes, which it then faults in
/// again every time. At 256 KiB, one run of 1,000 calls (or of a 200,000
/// element array) in a slot made every later `return 1` there 120-170 µs
/// with 8-24 page faults, against 85 µs in a fresh slot; at 512 KiB, 92-94
/// µs with none, and a fresh slot's 85 µs unchanged. At 1 MiB the fresh
/// slot was no faster and the heavier runs' pages made it slower again
/// (109-111 µs), and the two-minute soak's RSS rose round after round as
/// slots filled. A deep recursion still costs the slot its light runs'
/// pages at any of these sizes: its shadow stack's pages come first.
pub const KEEP_RESIDENT: usize = 512 << 10;

/// Bytes of a pooled stack zeroed in place (the rest is returned to the
/// kernel) when its child ends: a small program's native stack.
pub const STACK_KEEP_RESIDENT: usize = 128 << 10;

/// Idle slots remembered as holding this component's memory image, so that
/// the next child reuses one (wasmtime's `max_unused_warm_slots`).
pub const MAX_WARM_SLOTS: u32 = 64;

/// Core instances, memories and tables a pool reserves per child. A
/// component built by `wasm-component-ld` has one main module plus a few
/// small shims for its imports.
const POOLED_CORE_INSTANCES_PER_CHILD: u32 = 16;
const POOLED_MEMORIES_PER_CHILD: u32 = 2;
const POOLED_TABLES_PER_CHILD: u32 = 8;
/// Elements a pooled table slot holds: the guest's function table has a few
/// thousand. Slots are reserved up front, so this is kept well below
/// [`MAX_TABLE_ELEMENTS`](super::limits::MAX_TABLE_ELEMENTS).
const POOLED_TABLE_ELEMENTS: usize = 64 * 1024;

/// Builds the engine for `options`.
pub(super) fn build(options: &EngineOptions) -> Result<Engine, WasmError> {
    let mut config = Config::new();
    config
        .epoch_interruption(true)
        .max_wasm_stack(options.max_wasm_stack)
        .async_stack_size(options.max_wasm_stack.saturating_add(HOST_STACK))
        // Fixed rather than read from WASMTIME_BACKTRACE_DETAILS, so that the
        // environment cannot change the compiled artifact or its cache key.
        .wasm_backtrace_details(WasmBacktraceDetails::Disable)
        .memory_init_cow(true);
    if let Some(pooling) = options.pooling {
        // A pooled stack is reused: zero it, and return all but its top
        // to the kernel, so a deep recursion's pages are not kept for good.
        config.async_stack_zeroing(true);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool(pooling)));
    }
    Engine::new(&config).map_err(WasmError::engine)
}

fn pool(pooling: Pooling) -> PoolingAllocationConfig {
    let children = pooling.max_children.max(1);
    let max_memory = usize::try_from(pooling.max_memory).unwrap_or(usize::MAX);
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(children)
        .total_core_instances(children.saturating_mul(POOLED_CORE_INSTANCES_PER_CHILD))
        .total_memories(children.saturating_mul(POOLED_MEMORIES_PER_CHILD))
        .total_tables(children.saturating_mul(POOLED_TABLES_PER_CHILD))
        .total_stacks(children)
        .max_core_instances_per_component(POOLED_CORE_INSTANCES_PER_CHILD)
        .max_memories_per_component(POOLED_MEMORIES_PER_CHILD)
        .max_tables_per_component(POOLED_TABLES_PER_CHILD)
        .max_memory_size(max_memory)
        .table_elements(POOLED_TABLE_ELEMENTS)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(POOLED_TABLE_ELEMENTS * std::mem::size_of::<usize>())
        .async_stack_keep_resident(STACK_KEEP_RESIDENT)
        .max_unused_warm_slots(MAX_WARM_SLOTS.min(children))
        .pagemap_scan(if may_swap() {
            wasmtime::Enabled::No
        } else {
            wasmtime::Enabled::Auto
        });
    pool
}

/// Whether a page of this process could be swapped out, as far as Linux
/// says when the engine is built: a swap area is in use (`/proc/swaps`)
/// and no cgroup of this process has `memory.swap.max` 0. True when it
/// cannot be read. (A swap area turned on later is not seen by an engine
/// built before.) False elsewhere, where the scan is not used.
///
/// Why it matters: wasmtime's `PAGEMAP_SCAN` reset asks for pages written
/// *and present*; one swapped out is neither reset nor returned to the
/// kernel, so its contents would pass to the next child in the slot
/// (bytecodealliance/wasmtime#14357, open when this was written).
fn may_swap() -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Ok(swaps) = std::fs::read_to_string("/proc/swaps") else {
        return true;
    };
    if !swaps_in_use(&swaps) {
        return false;
    }
    !cgroup_swap_off(
        std::fs::read_to_string("/proc/self/cgroup").ok().as_deref(),
        |path| std::fs::read_to_string(path).ok(),
    )
}

/// Whether `/proc/swaps`'s text lists a swap area (its first line is the
/// heading).
fn swaps_in_use(swaps: &str) -> bool {
    swaps.lines().skip(1).any(|line| !line.trim().is_empty())
}

/// Whether the cgroup v2 of this process (`/proc/self/cgroup`'s `0::PATH`
/// line), or one above it, allows it no swap (`memory.swap.max` of 0).
/// `read` reads a file of `/sys/fs/cgroup`.
fn cgroup_swap_off(cgroups: Option<&str>, read: impl Fn(&str) -> Option<String>) -> bool {
    let Some(path) = cgroups
        .into_iter()
        .flat_map(str::lines)
        .find_map(|line| line.strip_prefix("0::"))
    else {
        return false;
    };
    let mut dir = path.trim().trim_end_matches('/').to_owned();
    loop {
        if dir.split('/').any(|part| part == "..") {
            return false;
        }
        if read(&format!("/sys/fs/cgroup{dir}/memory.swap.max"))
            .is_some_and(|max| max.trim() == "0")
        {
            return true;
        }
        match dir.rfind('/') {
            Some(at) => dir.truncate(at),
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_area_is_a_line_past_the_heading() {
        let heading = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
        assert!(!swaps_in_use(heading));
        assert!(!swaps_in_use(""));
        assert!(swaps_in_use(&format!(
            "{heading}/swapfile                               file\t\t2097148\t\t0\t\t-2\n"
        )));
    }

    #[test]
    fn a_cgroup_or_one_above_it_can_turn_swap_off() {
        let files = |dir: &'static str, max: &'static str| {
            move |path: &str| {
                (path == format!("/sys/fs/cgroup{dir}/memory.swap.max")).then(|| max.to_owned())
            }
        };
        let me = Some("0::/user.slice/app.scope\n");
        assert!(cgroup_swap_off(me, files("/user.slice/app.scope", "0\n")));
        assert!(cgroup_swap_off(me, files("/user.slice", "0\n")));
        assert!(!cgroup_swap_off(me, files("/user.slice", "max\n")));
        assert!(!cgroup_swap_off(me, files("/other.slice", "0\n")));
        // cgroup v1 only, or nothing to read: swap is not known to be off.
        assert!(!cgroup_swap_off(Some("1:memory:/x\n"), files("/x", "0")));
        assert!(!cgroup_swap_off(None, files("", "0")));
        assert!(!cgroup_swap_off(Some("0::/../x\n"), files("/../x", "0")));
    }
}
