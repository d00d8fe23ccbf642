//! What one child's Store holds: its WASI context, its start channel, its
//! memory limiter, and why it was stopped, if it was.

use std::time::Instant;

use tokio_util::sync::CancellationToken;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::call_channel;
use super::limits::MemoryLimiter;
use super::start_channel::StartChannel;
use super::{ChildIo, ChildLimits};

/// Why the epoch callback stopped a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// The wall clock ran out.
    WallClock,
    /// The caller cancelled the run.
    Cancelled,
}

/// The data of one child's Store.
pub struct ChildState {
    wasi: WasiCtx,
    table: ResourceTable,
    /// The `start-channel` import's streams.
    pub start: StartChannel,
    /// The memory cap, which records refusals.
    pub limiter: MemoryLimiter,
    /// When the wall clock runs out, if it can.
    pub deadline: Option<Instant>,
    /// Cancels this run.
    pub cancel: CancellationToken,
    /// Set by the epoch callback when it stops the child.
    pub interrupt: Option<Interrupt>,
}

impl ChildState {
    /// The state for a child talking over `io` within `limits`.
    ///
    /// The WASI context gives the child stdio, clocks and random, and nothing
    /// else: no arguments, no environment, no preopened directories, and every
    /// socket use denied.
    pub fn new(
        io: ChildIo,
        limits: &ChildLimits,
        started: Instant,
        cancel: CancellationToken,
    ) -> Self {
        let ChildIo {
            call_in,
            call_out,
            start_in,
            start_out,
            console,
        } = io;
        let (stdin, stdout) = call_channel::pair(call_in, call_out);
        let wasi = WasiCtx::builder()
            .stdin(stdin)
            .stdout(stdout)
            .stderr(console)
            // These are wasmtime-wasi's defaults today; they are the sandbox's
            // walls, so they are stated rather than assumed.
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .socket_addr_check(|_, _| Box::pin(async { false }))
            .build();
        ChildState {
            wasi,
            table: ResourceTable::new(),
            start: StartChannel::new(start_in, start_out),
            limiter: MemoryLimiter::new(limits.max_memory),
            deadline: (!limits.wall_clock.is_zero())
                .then(|| started.checked_add(limits.wall_clock))
                .flatten(),
            cancel,
            interrupt: None,
        }
    }
}

impl std::fmt::Debug for ChildState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildState")
            .field("start", &self.start)
            .field("limiter", &self.limiter)
            .field("deadline", &self.deadline)
            .field("interrupt", &self.interrupt)
            .finish_non_exhaustive()
    }
}

impl WasiView for ChildState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
