//! wasmwire: run untrusted JavaScript in WebAssembly children that call the
//! host's tools over the `wire` protocol.
//!
//! An agent host lets a model write a short program instead of making dozens
//! of tool calls. The program runs in a child (by default a QuickJS
//! evaluator compiled to a WASI component, run by wasmtime) that can reach
//! nothing but the tools you register, under a budget the parent holds:
//! a memory cap, a wall clock, a call quota and a byte quota.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use wasmwire::{Budget, Execution, Sandbox, SandboxOptions, Tool, Tools};
//! use std::time::Duration;
//!
//! let sandbox = Sandbox::new(SandboxOptions::default())?; // compile once, share
//! let mut tools = Tools::new();
//! tools.register(
//!     Tool::new("get_logs", |call| async move { Ok(format!("[\"{}\"]", call.args)) })
//!         .signature("get_logs(host, count)"),
//! )?;
//! let execution = Execution::new(r#"
//!     const logs = await get_logs("db1", 50);
//!     return logs.length;
//! "#)
//! .budget(Budget { wall_clock: Duration::from_secs(5), max_memory: 64 << 20, ..Budget::default() });
//! let outcome = sandbox.run(&execution, &tools, Default::default()).await?;
//! println!("{}", serde_json::to_string(&outcome.result)?);
//! # Ok(()) }
//! ```
//!
//! Every execution ends in exactly one [`wire::Result`] inside an
//! [`Outcome`]: finished, program error, tool failure, memory, wall clock,
//! stack, cancelled, protocol violation or child trap. Only an execution
//! that cannot start (a budget item the backend cannot hold, a process that
//! cannot be spawned) is a [`SandboxError`].
//!
//! Modules, one concern each: [`tools`] (what a program may call),
//! `sandbox` (running executions), [`wasm`] (the wasmtime backend and its
//! limits), [`process`] (the process backend), [`console`] (capturing a
//! child's stderr).
#![warn(missing_docs)]

mod backend;
pub mod console;
pub mod containment;
mod error;
pub mod process;
mod sandbox;
pub mod tools;
pub mod wasm;

pub use backend::Holds;
pub use error::SandboxError;
pub use process::ProcessChild;
pub use sandbox::{Execution, GUEST_COMPONENT, Outcome, Sandbox, SandboxOptions};
pub use tokio_util::sync::CancellationToken;
pub use tools::{Tool, Tools};
pub use wire::{self, FailureKind, ToolFailure};

/// An execution's budget; each item 0 means unlimited.
pub type Budget = wire::StartBudget;
