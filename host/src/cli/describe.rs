//! `wasmwire describe`: what a model is shown of the tools, printed from
//! the same `--tool`, `--json-tool` and `--tools` arguments as `run`: the
//! TypeScript declarations (`Tools::typescript`), or with `--prompt` the
//! sandbox's rules, the limits given here and the declarations
//! (`Tools::prompt`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use wasmwire::{Budget, SandboxOptions};

use super::args::parse_tool_timeout;
use super::manifest::{self, ToolSources};
use super::shell_tool::ToolSpec;
use super::units::{parse_duration, parse_memory, parse_size};

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// A tool, as for `run`: NAME=COMMAND or NAME(PARAM, ...)=COMMAND. Repeatable.
    #[arg(long = "tool", value_name = "SPEC", value_parser = ToolSpec::parse)]
    pub tools: Vec<ToolSpec>,

    /// A tool whose stdout is JSON, as for `run`. Repeatable.
    #[arg(long = "json-tool", value_name = "SPEC", value_parser = ToolSpec::parse_json)]
    pub json_tools: Vec<ToolSpec>,

    /// A manifest of tools (JSON, or TOML for a .toml file), as for `run`.
    #[arg(long = "tools", value_name = "FILE")]
    pub tools_file: Option<PathBuf>,

    /// As for `run`. Repeatable.
    #[arg(long = "tool-timeout", value_name = "NAME=DURATION", value_parser = parse_tool_timeout)]
    pub tool_timeouts: Vec<(String, Duration)>,

    /// As for `run`: NAME is reached only as host.call(NAME, args). Repeatable.
    #[arg(long = "call-only", value_name = "NAME")]
    pub call_only: Vec<String>,

    /// Print the prompt (the sandbox's rules, the limits below and the
    /// declarations) instead of the declarations alone.
    #[arg(long)]
    pub prompt: bool,

    /// The wall clock the prompt states.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub wall_clock: Duration,

    /// The memory cap the prompt states.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_memory)]
    pub max_memory: u64,

    /// The call quota the prompt states (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_calls: u64,

    /// The byte quota the prompt states (0 = unlimited).
    #[arg(long, value_name = "SIZE", default_value = "0", value_parser = parse_size)]
    pub max_bytes: u64,

    /// The in-flight cap the prompt states.
    #[arg(long, value_name = "N", default_value_t = wire::DEFAULT_MAX_INFLIGHT)]
    pub max_inflight: usize,

    /// The longest one call may take, as the prompt states it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_call_deadline: Option<Duration>,
}

/// Prints the declarations or the prompt on stdout.
pub fn run(args: &DescribeArgs) -> anyhow::Result<()> {
    let tools = manifest::tools(&ToolSources {
        specs: args.tools.iter().chain(&args.json_tools).collect(),
        timeouts: &args.tool_timeouts,
        call_only: &args.call_only,
        manifest: args.tools_file.as_deref(),
    })?;
    let text = if args.prompt {
        let budget = Budget {
            wall_clock: args.wall_clock,
            max_memory: args.max_memory,
            max_calls: args.max_calls,
            max_bytes: args.max_bytes,
        };
        let options = SandboxOptions {
            max_in_flight: args.max_inflight,
            max_call_deadline: args.max_call_deadline,
            ..SandboxOptions::default()
        };
        tools.prompt(&budget, &options)
    } else {
        tools.typescript()
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("writing the description")
}
