//! Embedding wasmwire in an agent host: register tools written in Rust, run
//! a model's program, and read its value.
//!
//! The program fans out to a tool (`Promise.all`), branches on a tool's
//! failure class, logs as it goes, and ends in an expression whose value is
//! the answer. The host streams the console as it happens and gets the
//! value as JSON, or a typed error.
//!
//! ```sh
//! cargo run --release -p wasmwire --example embed
//! ```

use std::time::Duration;

use serde_json::json;
use wasmwire::{
    Budget, Call, CancellationToken, Execution, FailureKind, Sandbox, SandboxOptions, Tool,
    ToolFailure, Tools,
};

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
({ busiest, results })
"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Built once: the engine, the compiled guest component and its pre-instantiation.
    let sandbox = Sandbox::new(SandboxOptions::default())?;

    let mut tools = Tools::new();
    tools.register(
        Tool::new("get_load", |call: Call| async move {
            let args: serde_json::Value = serde_json::from_str(&call.args)?;
            let load = match args["host"].as_str() {
                Some("db1") => 0.91,
                Some("db2") => 0.42,
                Some("web1") => 0.17,
                other => {
                    let why = format!("no host {}", other.unwrap_or("given"));
                    return Err(ToolFailure::new(FailureKind::NotFound, why).into());
                }
            };
            Ok(json!({ "host": args["host"], "load": load }))
        })
        .signature("get_load(host)")
        .timeout(Duration::from_secs(1)),
    )?;

    // The default budget (10 s, 64 MiB) with quotas on top.
    let execution = Execution::new(PROGRAM)
        .budget(Budget {
            max_calls: 10,
            max_bytes: 64 * 1024,
            ..Budget::default()
        })
        .console_sink(|line| eprintln!("console: {line}"));
    let outcome = sandbox
        .run(&execution, &tools, CancellationToken::new())
        .await?;

    match outcome.value() {
        Ok(value) => println!("{}", serde_json::to_string_pretty(value)?),
        Err(failure) => println!("failed: {failure}"),
    }
    println!(
        "calls {} bytes {} in {:?}",
        outcome.result.calls, outcome.result.bytes, outcome.elapsed
    );
    Ok(())
}
