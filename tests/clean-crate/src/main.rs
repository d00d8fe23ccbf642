//! A user's program: one tool, one JavaScript program in the sandbox, the
//! value printed as JSON on stdout.

use serde_json::json;
use wasmwire::{Call, CancellationToken, Execution, Sandbox, SandboxOptions, Tool, Tools};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sandbox = Sandbox::new(SandboxOptions::default())?;
    let mut tools = Tools::new();
    tools.register(Tool::new("add", |call: Call| async move {
        let args: serde_json::Value = serde_json::from_str(&call.args)?;
        let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
        Ok(json!(sum))
    }))?;
    let program = "const [x, y] = await Promise.all([add({a: 1, b: 2}), add({a: 3, b: 4})]);\n({ sum: x + y })";
    let outcome = sandbox
        .run(&Execution::new(program), &tools, CancellationToken::new())
        .await?;
    println!("{}", outcome.value().map_err(|e| e.to_string())?);
    Ok(())
}
