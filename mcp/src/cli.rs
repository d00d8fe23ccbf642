//! `wasmwire mcp`: the arguments, and the command's whole run, so that the
//! CLI only names the subcommand.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::{Config, Transport};

/// Serve code mode over MCP: one tool, run_javascript, that runs a program
/// against the tools of the MCP servers in the config file.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The config: an `mcpServers` map as MCP clients write it, with an
    /// optional `budget` and `tools` allow/deny list (docs/mcp.md).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,

    /// Serve streamable HTTP on ADDR (e.g. 127.0.0.1:0 for any free port;
    /// the bound address is printed on stderr) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
}

/// Runs `wasmwire mcp` to its end; the exit code: 0 when the client went
/// or the process was told to stop, 2 for a bad config, an upstream server
/// that could not be started, or a failure to serve.
pub fn run(args: &McpArgs) -> u8 {
    match serve_until_done(args) {
        Ok(()) => 0,
        Err(e) => {
            // Several lines (a TOML error shows its place), each shown as
            // the console shows text.
            eprintln!(
                "wasmwire mcp: {}",
                wasmwire::console::neutralise(&format!("{e:#}"))
            );
            2
        }
    }
}

fn serve_until_done(args: &McpArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // In place before the upstream servers start: a signal while they
        // did (one that never answers `initialize` holds the start for a
        // minute) ended the process by its default action, and left them
        // running.
        let stopped = crate::serve::stop_signal();
        tokio::pin!(stopped);
        let code = tokio::select! {
            built = crate::build(&config) => built?,
            () = &mut stopped => {
                say!("stopped while the upstream servers were starting");
                return Ok(());
            }
        };
        let transport = args.listen.map_or(Transport::Stdio, Transport::Http);
        crate::serve::serve_until(code, transport, stopped).await?;
        Ok::<_, anyhow::Error>(())
    })?;
    // The upstream connections are closed, and the last answers written,
    // by now: what is left is a thread blocked reading stdin (still open
    // after a signal) or writing to a stdout nobody reads, not waited for.
    runtime.shutdown_timeout(std::time::Duration::from_millis(250));
    Ok(())
}
