//! Embedding wasmwire in an agent host: register tools written in Rust, run
//! a model's program under a budget, and read the one Result.
//!
//! The program fans out to a tool (`Promise.all`), branches on a tool's
//! failure class, and returns a summary; the host sees one Result, the
//! console output, and its own counts of calls and bytes.
//!
//! ```sh
//! cargo run --release -p wasmwire --example embed
//! ```

use std::time::Duration;

use wasmwire::{
    Budget, CancellationToken, Execution, FailureKind, Sandbox, SandboxOptions, Tool, ToolFailure,
    Tools,
};
use wire::Call;

/// The model's program: the body of an async function.
const PROGRAM: &str = r#"
const hosts = ["db1", "db2", "web1", "nope"];
const results = await Promise.all(hosts.map(async (h) => {
  try {
    return { host: h, load: (await get_load(h)).load };
  } catch (e) {
    // A ToolError carries the failure class; not_found is not worth a retry.
    console.warn(`${h}: ${e.kind}${e.retryable ? " (retryable)" : ""}`);
    return { host: h, error: e.kind };
  }
}));
const busiest = results.filter((r) => r.load !== undefined).sort((a, b) => b.load - a.load)[0];
return { busiest, results };
"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Built once: the engine, the compiled guest component and its pre-instantiation.
    let sandbox = Sandbox::new(SandboxOptions::default())?;

    let mut tools = Tools::new();
    tools.register(
        Tool::new("get_load", |call: Call| async move {
            let args: serde_json::Value = serde_json::from_str(&call.args)?;
            let host = args["host"].as_str().unwrap_or_default();
            let load = match host {
                "db1" => 0.91,
                "db2" => 0.42,
                "web1" => 0.17,
                other => {
                    return Err(ToolFailure::new(
                        FailureKind::NotFound,
                        format!("no host {other}"),
                    )
                    .into());
                }
            };
            Ok(serde_json::json!({ "host": host, "load": load }).to_string())
        })
        .signature("get_load(host)"),
    )?;

    let execution = Execution::new(PROGRAM).budget(Budget {
        wall_clock: Duration::from_secs(2),
        max_calls: 10,
        max_bytes: 64 * 1024,
        max_memory: 32 << 20,
    });
    let outcome = sandbox
        .run(&execution, &tools, CancellationToken::new())
        .await?;

    eprint!("{}", outcome.console);
    println!("{}", serde_json::to_string_pretty(&outcome.result)?);
    println!(
        "calls {} bytes {} in {:?}{}",
        outcome.result.calls,
        outcome.result.bytes,
        outcome.elapsed,
        if outcome.counts_disagree {
            " (the child's counts disagreed)"
        } else {
            ""
        }
    );
    Ok(())
}
