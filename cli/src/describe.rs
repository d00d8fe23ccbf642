//! `wasmwire describe`: what a model is shown of the tools, printed from
//! the same `--tool`, `--json-tool` and `--tools` arguments as `run`: the
//! TypeScript declarations (`Tools::typescript`), or with `--prompt` the
//! sandbox's rules, the limits given here and the declarations
//! (`Tools::prompt`).

use std::io::Write;

use anyhow::Context;
use clap::Args;

use super::args::{LimitArgs, ToolArgs};
use super::manifest;

#[derive(Debug, Args)]
pub struct DescribeArgs {
    #[command(flatten)]
    pub tools: ToolArgs,

    /// Print the prompt (the sandbox's rules, the limits given and the
    /// declarations) instead of the declarations alone.
    #[arg(long)]
    pub prompt: bool,

    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Prints the declarations or the prompt on stdout.
pub fn run(args: &DescribeArgs) -> anyhow::Result<()> {
    let tools = manifest::tools(&args.tools)?;
    let text = if args.prompt {
        tools.prompt(&args.limits.budget(), &args.limits.sandbox_options())
    } else {
        tools.typescript()
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("writing the description")
}
