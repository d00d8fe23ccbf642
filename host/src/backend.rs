//! What a backend is: a way to start a child and hand back its four streams.
//!
//! The protocol roles do not care where the bytes go. A backend decides how
//! the child is started, which budget items it can hold, and how it is
//! stopped; [`crate::Sandbox`] does the rest the same way for all of them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::console::Console;
use crate::process::ProcessChild;
use crate::wasm::pipe::pipe;
use crate::wasm::{ChildEnd, ChildIo, ChildLimits, WasmChild};
use crate::{Budget, SandboxError};

/// Which budget items a backend can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holds {
    /// It can stop the child when the wall clock runs out.
    pub wall_clock: bool,
    /// The Server counts calls (every backend).
    pub max_calls: bool,
    /// The Server counts value bytes (every backend).
    pub max_bytes: bool,
    /// It can cap the child's memory.
    pub max_memory: bool,
}

impl Holds {
    /// Refuses `budget` if it asks for an item not held, naming the item.
    pub fn check(&self, backend: &'static str, budget: &Budget) -> Result<(), SandboxError> {
        let asks = [
            ("wall_clock", !budget.wall_clock.is_zero(), self.wall_clock),
            ("max_calls", budget.max_calls > 0, self.max_calls),
            ("max_bytes", budget.max_bytes > 0, self.max_bytes),
            ("max_memory", budget.max_memory > 0, self.max_memory),
        ];
        match asks.iter().find(|(_, asked, held)| *asked && !*held) {
            Some((item, _, _)) => Err(SandboxError::Unsupported { backend, item }),
            None => Ok(()),
        }
    }
}

/// Boxed async byte streams, so every backend hands back the same types.
pub(crate) type Reader = Box<dyn AsyncRead + Send + Sync + Unpin>;
/// See [`Reader`].
pub(crate) type Writer = Box<dyn AsyncWrite + Send + Sync + Unpin>;

/// A started child: the parent's ends of its channels and its end.
pub(crate) struct Spawned {
    /// Requests from the child (its stdout).
    pub call_reader: Reader,
    /// Responses to the child (its stdin).
    pub call_writer: Writer,
    /// The Result from the child.
    pub start_reader: Reader,
    /// The Start to the child.
    pub start_writer: Writer,
    /// Resolves when the child has ended; cancelling the `stop` token given
    /// to `spawn` makes it end promptly. It must be polled for the child to
    /// make progress (a wasm child runs inside it).
    pub exit: Pin<Box<dyn Future<Output = ChildEnd> + Send>>,
}

/// The backends.
#[derive(Debug, Clone)]
pub(crate) enum Backend {
    Wasm(Arc<WasmChild>),
    Process(Arc<ProcessChild>),
}

/// Buffer of each in-memory channel to a wasm child.
const PIPE_BYTES: usize = 256 * 1024;

impl Backend {
    /// Where compiled components are cached for this backend's executions
    /// (the TypeScript compiler's): the wasm backend's own directory, the
    /// default one for the process backend.
    pub fn cache_dir(&self) -> Option<std::path::PathBuf> {
        match self {
            Backend::Wasm(child) => child.cache_dir().map(std::path::Path::to_path_buf),
            Backend::Process(_) => crate::wasm::default_cache_dir(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Wasm(_) => "wasm",
            Backend::Process(_) => "process",
        }
    }

    /// Whether the child runs inside the execution's own task (the wasm
    /// child, its `exit` future), so that it can write no faster than the
    /// Server reads: then the channels between them spend none of tokio's
    /// cooperative budget (the wasm `exit` future below, and the Starter and
    /// Server in `Sandbox::execute`). A child process floods a pipe at no
    /// cost to itself: there the budget is what makes its reader give the
    /// thread up.
    pub fn child_in_task(&self) -> bool {
        matches!(self, Backend::Wasm(_))
    }

    /// Refuses `budget` before start if it asks for an item this backend
    /// cannot hold, or for more of one than it can.
    pub fn check(&self, budget: &Budget) -> Result<(), SandboxError> {
        self.holds().check(self.name(), budget)?;
        if let Backend::Wasm(child) = self
            && budget.max_memory > child.memory_ceiling()
        {
            return Err(SandboxError::OverCeiling {
                backend: self.name(),
                item: "max_memory",
                asked: budget.max_memory,
                most: child.memory_ceiling(),
            });
        }
        Ok(())
    }

    pub fn holds(&self) -> Holds {
        match self {
            // Memory by StoreLimits, time by epochs plus a host timeout.
            Backend::Wasm(_) => Holds {
                wall_clock: true,
                max_calls: true,
                max_bytes: true,
                max_memory: true,
            },
            Backend::Process(p) => p.holds(),
        }
    }

    pub fn spawn(
        &self,
        console: Console,
        budget: &Budget,
        stop: CancellationToken,
    ) -> Result<Spawned, SandboxError> {
        match self {
            Backend::Wasm(child) => {
                let (call_writer, call_in) = pipe(PIPE_BYTES);
                let (call_out, call_reader) = pipe(PIPE_BYTES);
                let (start_writer, start_in) = pipe(PIPE_BYTES);
                let (start_out, start_reader) = pipe(PIPE_BYTES);
                let io = ChildIo {
                    call_in: Box::new(call_in),
                    call_out: Box::new(call_out),
                    start_in: Box::new(start_in),
                    start_out: Box::new(start_out),
                    console,
                };
                let limits = ChildLimits {
                    max_memory: budget.max_memory,
                    wall_clock: budget.wall_clock,
                };
                let child = child.clone();
                // Not spawned: the child runs inside the execution's own
                // task, next to the Starter and the Server, so that handing a
                // frame across costs no wake-up of another thread. It spends
                // none of tokio's cooperative budget (`child_in_task`); it
                // yields at every epoch tick.
                let exit = async move { child.run(io, limits, &stop).await.end };
                let exit = tokio::task::coop::unconstrained(exit);
                Ok(Spawned {
                    call_reader: Box::new(call_reader),
                    call_writer: Box::new(call_writer),
                    start_reader: Box::new(start_reader),
                    start_writer: Box::new(start_writer),
                    exit: Box::pin(exit),
                })
            }
            Backend::Process(child) => child.spawn(console, budget, stop),
        }
    }
}
