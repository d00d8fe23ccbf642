//! wasmwire-mcp: code mode over MCP. `wasmwire mcp --config FILE` serves
//! one MCP server whose `run_javascript` tool runs a program, in
//! wasmwire's sandbox, against the tools of other MCP servers.
//!
//! What this crate adds to `wasmwire`:
//!
//! - [`config`]: the config file (the `mcpServers` map MCP clients use, a
//!   budget, an allow/deny list of upstream tools);
//! - [`upstream`]: each upstream server reached as an MCP client, started
//!   again when it dies;
//! - [`naming`]: each upstream tool's name in the program
//!   (`<server>_<tool>`, made a valid, unique JavaScript name);
//! - [`values`]: what a program gets from an upstream `tools/call` (the
//!   value rule) and how an upstream failure becomes a failure class (the
//!   error rule);
//! - [`server`]: the `run_javascript` and `describe_tools` tools, with
//!   cancellation and console lines as progress notifications, and at most
//!   `max_running` answers held for a client that does not read them;
//! - `waiting`: at most `max_waiting` calls, holding at most
//!   `max_waiting_bytes`, wait for a place; past them a call is refused
//!   "server busy" at once, and a call whose client cancelled it or whose
//!   HTTP stream closed stops waiting and never runs;
//! - [`serve`](mod@serve): serving on stdio or on streamable HTTP, with at
//!   most `max_sessions` HTTP sessions and `max_connections` connections
//!   open, and a request's headers due within `header_timeout`; on stdin
//!   closing, every call is cancelled at once and the server exits within
//!   [`serve::EXIT_FLUSH`] of it, whatever the client does with stdout;
//! - [`cli`]: `wasmwire mcp`'s arguments and run, for the CLI to call.
//!
//! What it leaves to `wasmwire`: running the program, every limit (wall
//! clock, memory, calls, bytes, in-flight calls, per-call deadlines), the
//! check of a call's args against the upstream input schema, and the
//! TypeScript declarations. The protocol is the official Rust MCP SDK's
//! (`rmcp`). The rules are written out in docs/mcp.md of the repository.
#![warn(missing_docs)]

/// A line of the server's own on stderr, `wasmwire mcp: ...`: what an
/// upstream server, a client or a config put in it (a name, an error's
/// text, a request's id) is shown as the console shows text, on one line,
/// so that it can neither drive the operator's terminal nor forge a line.
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!(
            "wasmwire mcp: {}",
            wasmwire::console::neutralise_line(&format!($($arg)*))
        )
    };
}

pub mod cli;
pub mod config;
mod deep;
mod held;
pub mod naming;
mod peer_requests;
mod progress;
pub mod serve;
pub mod server;
pub mod upstream;
pub mod values;
mod waiting;

pub use config::Config;
pub use serve::{Transport, build, serve};
pub use server::CodeMode;

/// Why `wasmwire mcp` could not start or serve.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The config file could not be read, or is wrong.
    #[error("config {path}: {why}")]
    Config {
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// An upstream server could not be started or listed.
    #[error("upstream server {server:?}: {why}")]
    Upstream {
        /// Its name in the config.
        server: String,
        /// What went wrong.
        why: String,
    },
    /// The sandbox could not be built.
    #[error(transparent)]
    Sandbox(#[from] wasmwire::SandboxError),
    /// Serving failed.
    #[error("serving: {0}")]
    Serve(String),
}
