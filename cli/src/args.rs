//! The arguments of `wasmwire run`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use wasmwire::{Budget, SandboxOptions};

use super::shell_tool::ToolSpec;
use super::units::{parse_duration, parse_memory, parse_size};

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
    /// Print the tools' TypeScript declarations, or the prompt that tells a
    /// model the sandbox's rules, its limits and the declarations.
    Describe(super::describe::DescribeArgs),
    /// Serve code mode over MCP: one tool, run_javascript, whose programs
    /// call the tools of the MCP servers in --config (docs/mcp.md).
    Mcp(wasmwire_mcp::cli::McpArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The program: the body of an async function (top-level await and return work).
    pub program: PathBuf,

    #[command(flatten)]
    pub tools: ToolArgs,

    #[command(flatten)]
    pub limits: LimitArgs,

    /// Use the process backend: run COMMAND with `sh -c` as the child
    /// (call channel on stdin/stdout, Start on fd 3, Result on fd 4).
    #[arg(long, value_name = "COMMAND", conflicts_with = "child_wasm")]
    pub child: Option<String>,

    /// Run another component that implements the `child` world instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub child_wasm: Option<PathBuf>,

    /// What goes to stdout: the Result as one JSON line, or only the
    /// program's value as JSON (nothing when it failed; the error goes to
    /// stderr). The exit codes are the same either way, but for a value
    /// nested deeper than the CLI reads (1,000 levels): `value` cannot print
    /// it and exits 1, where the Result line carries it as text.
    #[arg(long, value_enum, default_value_t = Output::Result)]
    pub output: Output,

    /// The program's language: TypeScript has its types stripped before it
    /// runs. By default, TypeScript for a file ending in .ts, .mts or
    /// .cts, else JavaScript (for a --child, the program as written); a
    /// .tsx or .jsx file is refused (no JSX).
    #[arg(long, value_enum)]
    pub lang: Option<Lang>,
}

/// `--lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// JavaScript.
    Js,
    /// TypeScript.
    Ts,
}

impl RunArgs {
    /// The program's language: `--lang`, else TypeScript by its file's
    /// extension, else the backend's default (see `Execution::language`).
    ///
    /// A `.tsx` or `.jsx` file without `--lang` is refused: neither
    /// language here has JSX, and read as JavaScript such a file fails
    /// with a syntax error that does not say why.
    pub fn language(&self) -> anyhow::Result<Option<wasmwire::source::Language>> {
        use wasmwire::source::Language;
        // In any case (`x.TS` is TypeScript too, as a manifest's `.TOML`
        // is TOML).
        let extension = self
            .program
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let typescript = match (self.lang, extension.as_deref()) {
            (Some(lang), _) => lang == Lang::Ts,
            (None, Some("ts" | "mts" | "cts")) => true,
            (None, Some("tsx" | "jsx")) => anyhow::bail!(
                "{}: JSX is not supported: a TypeScript program is a .ts file, a JavaScript \
                 one a .js file (or give --lang ts or --lang js)",
                self.program.display()
            ),
            (None, _) => return Ok(None),
        };
        Ok(Some(if typescript {
            Language::TypeScript
        } else {
            Language::JavaScript
        }))
    }
}

/// What `wasmwire run` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// The Result, one JSON line.
    Result,
    /// The program's value only, as JSON.
    Value,
}

/// `NAME=DURATION` (a zero timeout is refused where the tool is registered).
fn parse_tool_timeout(text: &str) -> Result<(String, Duration), String> {
    let (name, duration) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not NAME=DURATION (e.g. search=5s)"))?;
    Ok((name.trim().to_string(), parse_duration(duration)?))
}

/// The tools of the command line, the same for `run` and `describe`.
#[derive(Debug, Default, Args)]
pub struct ToolArgs {
    /// A tool: NAME=COMMAND or NAME(PARAM, ...)=COMMAND. COMMAND runs with `sh -c`,
    /// the call's args on stdin and WASMWIRE_TOOL=NAME in its environment. Repeatable.
    /// The program receives what it prints as a string.
    #[arg(long = "tool", value_name = "SPEC", value_parser = ToolSpec::parse)]
    pub tools: Vec<ToolSpec>,

    /// A tool whose stdout is JSON: the same SPEC as --tool, and the program
    /// receives the JSON value (a number, an object, ...). Text that is not
    /// JSON fails the call. Repeatable.
    #[arg(long = "json-tool", value_name = "SPEC", value_parser = ToolSpec::parse_json)]
    pub json_tools: Vec<ToolSpec>,

    /// A manifest of tools (JSON, or TOML for a .toml file): each with its
    /// name, description, params and result JSON Schemas, command, output
    /// (json or text) and timeout. The args of every call are checked
    /// against its params schema before the command runs.
    #[arg(long = "tools", value_name = "FILE")]
    pub manifest: Option<PathBuf>,

    /// The longest one call to tool NAME may take (e.g. search=5s); past it
    /// the call fails `transient`. Repeatable.
    #[arg(long = "tool-timeout", value_name = "NAME=DURATION", value_parser = parse_tool_timeout)]
    pub timeouts: Vec<(String, Duration)>,

    /// Let tool NAME have a name that cannot be a global function
    /// (`search-docs`, `delete`): the program reaches it only as
    /// host.call(NAME, args). Repeatable.
    #[arg(long = "call-only", value_name = "NAME")]
    pub call_only: Vec<String>,
}

/// An execution's limits, the same for `run` and for the prompt of
/// `describe`.
#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Wall clock for the whole execution (e.g. 250ms, 5s; 0 = none).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub wall_clock: Duration,

    /// Memory cap of the child (e.g. 64MiB, at least 1MiB; 0 = none).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_memory)]
    pub max_memory: u64,

    /// Most tool calls the program may make (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_calls: u64,

    /// Most bytes of tool values the program may receive (e.g. 10MiB, 500B; 0 = unlimited).
    #[arg(long, value_name = "SIZE", default_value = "0", value_parser = parse_size)]
    pub max_bytes: u64,

    /// Most calls on the wire at once (at least 1); the program's calls are paced to it.
    #[arg(long, value_name = "N", default_value_t = wire::DEFAULT_MAX_INFLIGHT, value_parser = parse_in_flight)]
    pub max_inflight: usize,

    /// Longest any one call may take (the program's own deadline can only be shorter; 0 = none).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_call_deadline: Option<Duration>,
}

impl LimitArgs {
    /// The execution's budget.
    pub fn budget(&self) -> Budget {
        Budget {
            wall_clock: self.wall_clock,
            max_calls: self.max_calls,
            max_bytes: self.max_bytes,
            max_memory: self.max_memory,
        }
    }

    /// The sandbox's settings these limits name.
    pub fn sandbox_options(&self) -> SandboxOptions {
        let mut options = SandboxOptions {
            max_in_flight: self.max_inflight,
            // 0 is none, as for every duration here (not a deadline every
            // call misses).
            max_call_deadline: self.max_call_deadline.filter(|d| !d.is_zero()),
            ..SandboxOptions::default()
        };
        // One execution per process: a pool of one slot. The default pool
        // (1000 slots, for a long-lived embedder) cost a third of a run's
        // CPU here, in the kernel: a guard page mprotected per stack slot at
        // start, and all of it unmapped again at exit.
        if let Some(pooling) = options.engine.pooling.as_mut() {
            pooling.max_children = 1;
        }
        options
    }
}

/// `--max-inflight`: a whole number of at least 1 (0 would refuse every call).
fn parse_in_flight(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("0 would refuse every call: at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{text:?}: {e}")),
    }
}
