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
//! use serde_json::json;
//! use wasmwire::{Call, Execution, Sandbox, SandboxOptions, Tool, Tools};
//!
//! let sandbox = Sandbox::new(SandboxOptions::default())?; // compile once, share
//! let mut tools = Tools::new();
//! tools.register(
//!     Tool::new("get_logs", |call: Call| async move {
//!         let args: serde_json::Value = serde_json::from_str(&call.args)?;
//!         Ok(json!([format!("{} is up", args["host"])]))
//!     })
//!     .signature("get_logs(host, count)"),
//! )?;
//! // The default budget: a 10 s wall clock and 64 MiB.
//! let execution = Execution::new(r#"
//!     const logs = await get_logs("db1", 50);
//!     logs.length
//! "#);
//! let outcome = sandbox.run(&execution, &tools, Default::default()).await?;
//! match outcome.value() {
//!     Ok(value) => println!("{value}"),
//!     Err(failure) => eprintln!("{failure}"), // e.g. "limit: wall clock of 10s ran out"
//! }
//! # Ok(()) }
//! ```
//!
//! Every execution ends in exactly one Result ([`WireResult`], the wire's
//! message) inside an [`Outcome`], whose [`Outcome::value`] is the
//! program's value as JSON or an [`ExecutionError`] (failure class and
//! message): finished, program error, tool failure, memory, wall clock,
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
mod budget;
pub mod console;
pub mod containment;
mod describe;
mod error;
mod inline_wake;
pub mod json;
pub mod process;
mod sandbox;
mod schema;
pub mod source;
pub mod tools;
pub mod wasm;

#[cfg(test)]
mod test_waker;

pub use backend::Holds;
pub use budget::{Budget, DEFAULT_MAX_MEMORY, DEFAULT_WALL_CLOCK};
pub use console::ConsoleSink;
pub use error::SandboxError;
pub use process::ProcessChild;
pub use sandbox::{Execution, ExecutionError, GUEST_COMPONENT, Outcome, Sandbox, SandboxOptions};
/// The schemars the typed tools derive their schemas with ([`Tool::typed`]).
pub use schemars;
pub use tokio_util::sync::CancellationToken;
pub use tools::{Json, JsonText, Text, Tool, ToolValue, Tools};
pub use wire::{self, Call, FailureKind, HandlerError, ToolFailure};

/// The Result message as it travels on the wire (named so that it does not
/// shadow `std::result::Result` where it is imported).
pub use wire::Result as WireResult;
