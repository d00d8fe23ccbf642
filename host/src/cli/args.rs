//! The arguments of `wasmwire run`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use wasmwire::Budget;

use super::shell_tool::ToolSpec;
use super::units::{parse_duration, parse_size};

/// Run untrusted JavaScript in a WebAssembly sandbox that can call only the tools you give it.
#[derive(Debug, Parser)]
#[command(name = "wasmwire", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run PROGRAM (a file, or - for stdin) and print its Result as one JSON line.
    Run(RunArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The program: the body of an async function (top-level await and return work).
    pub program: PathBuf,

    /// A tool: NAME=COMMAND or NAME(PARAM, ...)=COMMAND. COMMAND runs with `sh -c`,
    /// the call's args on stdin and WASMWIRE_TOOL=NAME in its environment. Repeatable.
    #[arg(long = "tool", value_name = "SPEC", value_parser = ToolSpec::parse)]
    pub tools: Vec<ToolSpec>,

    /// Wall clock for the whole execution (e.g. 250ms, 5s; 0 = none).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub wall_clock: Duration,

    /// Memory cap of the child (e.g. 64MiB; 0 = none).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    pub max_memory: u64,

    /// Most tool calls the program may make (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_calls: u64,

    /// Most bytes of tool values the program may receive (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_bytes: u64,

    /// Most calls in flight at once; one more is refused with kind `limit`.
    #[arg(long, value_name = "N", default_value_t = wire::DEFAULT_MAX_INFLIGHT, value_parser = clap::value_parser!(usize))]
    pub max_inflight: usize,

    /// Longest any one call may take (the program's own deadline can only be shorter).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_call_deadline: Option<Duration>,

    /// Use the process backend: run COMMAND with `sh -c` as the child
    /// (call channel on stdin/stdout, Start on fd 3, Result on fd 4).
    #[arg(long, value_name = "COMMAND", conflicts_with = "child_wasm")]
    pub child: Option<String>,

    /// Run another component that implements the `child` world instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub child_wasm: Option<PathBuf>,
}

impl RunArgs {
    pub fn budget(&self) -> Budget {
        Budget {
            wall_clock: self.wall_clock,
            max_calls: self.max_calls,
            max_bytes: self.max_bytes,
            max_memory: self.max_memory,
        }
    }
}
