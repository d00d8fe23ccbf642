//! `wasmwire-sequential [--threads 1|2] [--runs N] [--warmup W] [--first PROGRAM] [--tools T] [--component FILE] [PROGRAM]`:
//! runs PROGRAM (default `return 1`) N times (default 3,000), one execution
//! after another, after W untimed ones (default 200), and prints the median and minimum wall
//! time of one execution, and the process's CPU time and minor page faults
//! per execution. `--threads 1` (the default) drives it on a current-thread
//! tokio runtime, `--threads 2` on a multi-threaded one with two workers
//! (as `wasmwire-bench` does). The tool `echo` answers its argument.
//! `--component FILE` runs another build of the guest component in place of
//! the built-in one, to compare two guests on the same host code.
//! `--first PROGRAM` runs PROGRAM once after the warm-up and before the
//! timed runs: one after another, they reuse its pool slot, so this measures
//! what a heavier run leaves a slot's later runs (the pages it kept).
//! `--tools T` registers T more tools (`tool_0` ...), to measure what each
//! tool costs a run that calls none.
//!
//! Where `wasmwire-bench` compares contenders, this isolates wasmwire's own
//! cost per execution: bench/RESULTS.md says which change moved it how much.

use std::time::Instant;

use anyhow::Context;
use wasmwire::{CancellationToken, Execution, JsonText, Sandbox, SandboxOptions, Tool, Tools};

/// CPU seconds of this process so far, and its minor page faults.
fn usage() -> (f64, i64) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        seconds(usage.ru_utime) + seconds(usage.ru_stime),
        usage.ru_minflt,
    )
}

fn main() -> anyhow::Result<()> {
    let mut plan = Plan {
        program: "return 1".to_owned(),
        first: None,
        more_tools: 0,
        runs: 3000,
        warmup: 200,
        threads: 1,
    };
    let mut component = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => plan.threads = args.next().context("--threads N")?.parse()?,
            "--runs" => plan.runs = args.next().context("--runs N")?.parse()?,
            "--warmup" => plan.warmup = args.next().context("--warmup W")?.parse()?,
            "--component" => component = Some(args.next().context("--component FILE")?),
            "--first" => plan.first = Some(args.next().context("--first PROGRAM")?),
            "--tools" => plan.more_tools = args.next().context("--tools T")?.parse()?,
            "--help" | "-h" => {
                println!(
                    "wasmwire-sequential [--threads 1|2] [--runs N] [--warmup W] [--first PROGRAM] [--tools T] [--component FILE] [PROGRAM]"
                );
                return Ok(());
            }
            _ => plan.program = arg,
        }
    }
    anyhow::ensure!(plan.runs > 0, "--runs must be at least 1");
    anyhow::ensure!(plan.threads > 0, "--threads must be at least 1");
    let runtime = match plan.threads {
        1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build()?,
    };
    let _entered = runtime.enter();
    let sandbox = match component {
        None => Sandbox::new(SandboxOptions::default())?,
        Some(path) => {
            let bytes = std::fs::read(&path).with_context(|| format!("reading {path}"))?;
            Sandbox::with_component(&bytes, SandboxOptions::default())?
        }
    };
    runtime.block_on(async move { tokio::spawn(sequential(sandbox, plan)).await? })
}

/// What to run, and how often.
struct Plan {
    program: String,
    first: Option<String>,
    more_tools: usize,
    runs: usize,
    warmup: usize,
    threads: usize,
}

async fn sequential(sandbox: Sandbox, plan: Plan) -> anyhow::Result<()> {
    let mut tools = Tools::new();
    tools.register(Tool::new("echo", |call: wire::Call| async move {
        Ok(JsonText::new(call.args)?)
    }))?;
    for i in 0..plan.more_tools {
        tools.register(Tool::new(
            format!("tool_{i}"),
            |call: wire::Call| async move { Ok(JsonText::new(call.args)?) },
        ))?;
    }
    let execution = Execution::new(plan.program);
    let run = || sandbox.run(&execution, &tools, CancellationToken::new());
    for _ in 0..plan.warmup {
        run().await?;
    }
    if let Some(first) = plan.first {
        let outcome = sandbox
            .run(&Execution::new(first), &tools, CancellationToken::new())
            .await?;
        anyhow::ensure!(outcome.result.ok, "--first failed: {:?}", outcome.result);
    }
    let (cpu, faults) = usage();
    let (runs, threads) = (plan.runs, plan.threads);
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let outcome = run().await?;
        samples.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(
            outcome.result.ok,
            "the program failed: {:?}",
            outcome.result
        );
    }
    let (cpu_after, faults_after) = usage();
    samples.sort_by(f64::total_cmp);
    let per = |x: f64| x / runs as f64 * 1e6;
    println!(
        "{runs} executions on {threads} thread(s): median {:.1} µs, min {:.1} µs; per execution {:.1} µs CPU, {:.1} minor faults",
        samples[runs / 2] * 1e6,
        samples[0] * 1e6,
        per(cpu_after - cpu),
        (faults_after - faults) as f64 / runs as f64,
    );
    Ok(())
}
