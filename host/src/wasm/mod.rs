//! The wasm backend: runs a `child` component (wit/child.wit) with wasmtime,
//! every limit held by the parent.
//!
//! A [`WasmChild`] is built once from a component's bytes: one [`Engine`]
//! (epoch interruption, async), the component compiled once (or loaded from
//! the on-disk cache), and its imports linked once. Each
//! [`run`](WasmChild::run) then makes only a new Store, wired to the
//! byte streams in [`ChildIo`]:
//!
//! ```text
//!              parent                              child (wasm)
//!   call_in  ── Responses ──────────────▶  WASI stdin
//!   call_out ◀───────────────── Requests ── WASI stdout
//!   start_in ── Start ──────────────────▶  start-channel.read
//!   start_out◀───────────────────  Result ── start-channel.write
//!   console  ◀──────────── console lines ── WASI stderr
//! ```
//!
//! The backend knows nothing of frames or messages: the protocol roles in
//! `wire` sit on the other ends of these streams.
//!
//! What a child gets: those streams, clocks and random. No arguments, no
//! environment, no preopened directory, every socket refused.
//!
//! How each limit is held (docs/protocol.md §6 and the README's limits table):
//!
//! | limit        | held by |
//! |--------------|---------|
//! | `max_memory` | [`limits::MemoryLimiter`]: caps the sum of linear memories, records refusals |
//! | `wall_clock` | an epoch ticker thread (every [`EPOCH_TICK`]) and a per-Store deadline for a child computing; a host timer for one blocked on a channel |
//! | stack        | [`EngineOptions::max_wasm_stack`]; a shadow-stack overflow is recognised too |
//! | cancellation | the same two paths as the wall clock |
//!
//! [`Engine`]: wasmtime::Engine

pub(crate) mod cache;
mod call_channel;
mod child;
mod engine;
mod epoch;
mod error;
mod exit;
pub mod limits;
pub(crate) mod pipe;
mod snapshot;
mod start_channel;
mod state;

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

pub use cache::default_cache_dir;
pub use child::WasmChild;
pub use engine::{
    DEFAULT_MAX_WASM_STACK, EngineOptions, KEEP_RESIDENT, Pooling, STACK_KEEP_RESIDENT,
};
pub use epoch::TICK as EPOCH_TICK;
pub use error::WasmError;
pub(crate) use exit::no_slot;
pub use exit::{ChildEnd, ChildExit, ChildFailure};
pub use limits::Refusal;
pub use snapshot::INIT_EXPORT;
pub use tokio_util::sync::CancellationToken;

use crate::console::Console;

/// The byte streams of one run. The backend owns them for the run and drops
/// (closes) them when it ends.
pub struct ChildIo {
    /// Becomes the child's WASI stdin: the parent's Responses.
    pub call_in: Box<dyn AsyncRead + Send + Sync + Unpin>,
    /// Becomes the child's WASI stdout: the child's Requests.
    pub call_out: Box<dyn AsyncWrite + Send + Sync + Unpin>,
    /// What the child's start-channel `read` reads: the Start.
    pub start_in: Box<dyn AsyncRead + Send + Sync + Unpin>,
    /// Where the child's start-channel `write` writes: the Result.
    pub start_out: Box<dyn AsyncWrite + Send + Sync + Unpin>,
    /// The child's stderr.
    pub console: Console,
}

impl std::fmt::Debug for ChildIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildIo")
            .field("console", &self.console)
            .finish_non_exhaustive()
    }
}

/// The limits of one run that the Store enforces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChildLimits {
    /// Most linear memory, in bytes, summed over the child's memories.
    /// 0: no cap beyond the engine's (see [`Pooling::max_memory`]).
    pub max_memory: u64,
    /// Wall time for the whole run. [`Duration::ZERO`]: none.
    pub wall_clock: Duration,
}
