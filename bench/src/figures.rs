//! The figures of issue 6, each measured the same way for every contender.
//!
//! Every timed figure is a median over many runs, after a few warm-up runs.
//! Call and compute figures subtract the contender's own per-execution
//! overhead (its `return 1`), so that a child that takes 40 ms to start is
//! not charged 40 µs per call, and a contender that builds its runtime from
//! source at every execution (the floor: about 15 ms) is not charged that
//! as computing.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::contender::{Contender, Kind, Paths};
use crate::rss;
use crate::workload::{self, Gate};

/// How many runs each figure takes for one contender.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Warm-up runs before any timing.
    pub warm_up: usize,
    /// Runs of `return 1`.
    pub overhead: usize,
    /// Runs of the round-trip and fan-out programs.
    pub calls: usize,
    /// Rounds of the throughput figure, and executions per round.
    pub throughput_rounds: usize,
    /// Executions per throughput round.
    pub throughput_per_round: usize,
    /// Rounds of the memory figure.
    pub memory_rounds: usize,
    /// Executions held in flight at once for the memory figure.
    pub memory_at_once: usize,
    /// Runs of each compute program.
    pub compute: usize,
    /// Runs of the CLI.
    pub cli: usize,
}

impl Plan {
    /// The plan for `kind`; `quick` divides the counts for a smoke run.
    pub fn for_kind(kind: Kind, quick: bool) -> Plan {
        let plan = match kind {
            Kind::Wasm | Kind::Floor => Plan {
                warm_up: 50,
                overhead: 3000,
                calls: 30,
                throughput_rounds: 5,
                throughput_per_round: 2000,
                memory_rounds: 3,
                memory_at_once: 500,
                compute: 10,
                cli: 30,
            },
            Kind::Process => Plan {
                warm_up: 10,
                overhead: 300,
                calls: 20,
                throughput_rounds: 5,
                throughput_per_round: 300,
                memory_rounds: 1,
                memory_at_once: 500,
                compute: 10,
                cli: 30,
            },
            // Every Node.js execution is a process of ~40 MiB that takes tens
            // of milliseconds to start: fewer runs, and 50 at once (500 would
            // want 20 GiB).
            Kind::Node => Plan {
                warm_up: 3,
                overhead: 40,
                calls: 10,
                throughput_rounds: 3,
                throughput_per_round: 60,
                memory_rounds: 1,
                memory_at_once: 50,
                compute: 5,
                cli: 10,
            },
            // A fresh QuickJS runtime takes a few hundred microseconds in
            // quickjs-emscripten; its drivers run each figure in a Node.js
            // process of their own (peers.rs).
            Kind::QjsRuntime => Plan {
                warm_up: 50,
                overhead: 2000,
                calls: 30,
                throughput_rounds: 5,
                throughput_per_round: 1000,
                memory_rounds: 3,
                memory_at_once: 500,
                compute: 10,
                cli: 0,
            },
            // A fresh wasm instance or V8 isolate takes a few milliseconds.
            Kind::QjsModule | Kind::IsolatedVm => Plan {
                warm_up: 20,
                overhead: 300,
                calls: 20,
                throughput_rounds: 5,
                throughput_per_round: 300,
                memory_rounds: 3,
                memory_at_once: 500,
                compute: 10,
                cli: 0,
            },
        };
        if quick {
            let cut = |n: usize| (n / 10).max(1);
            Plan {
                warm_up: cut(plan.warm_up),
                overhead: cut(plan.overhead),
                calls: cut(plan.calls).max(3),
                throughput_rounds: plan.throughput_rounds.min(3),
                throughput_per_round: cut(plan.throughput_per_round),
                memory_rounds: 1,
                memory_at_once: cut(plan.memory_at_once),
                compute: cut(plan.compute).max(3),
                cli: cut(plan.cli).max(3),
            }
        } else {
            plan
        }
    }
}

/// The median of `samples` (which it sorts).
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    match samples.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => samples[n / 2],
        n => (samples[n / 2 - 1] + samples[n / 2]) / 2.0,
    }
}

/// Median seconds of `runs` runs of `program`.
async fn timed(contender: &Contender, program: &str, runs: usize) -> anyhow::Result<f64> {
    let gate = Gate::new();
    let tools = workload::tools(&gate)?;
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        samples.push(contender.run(program, &tools, &gate).await?.as_secs_f64());
    }
    Ok(median(&mut samples))
}

/// Runs `program` `plan.warm_up` times, untimed.
pub async fn warm_up(contender: &Contender, plan: &Plan) -> anyhow::Result<()> {
    timed(contender, workload::TRIVIAL, plan.warm_up).await?;
    timed(contender, workload::SEQUENTIAL, 1).await?;
    Ok(())
}

/// Per-execution overhead: `return 1`, Start to Result. Seconds.
pub async fn overhead(contender: &Contender, plan: &Plan) -> anyhow::Result<f64> {
    timed(contender, workload::TRIVIAL, plan.overhead).await
}

/// Seconds per call of a program that makes `workload::CALLS` calls one
/// after another in `total` seconds, the contender's `overhead` subtracted.
pub fn per_call(total: f64, overhead: f64) -> f64 {
    (total - overhead).max(0.0) / f64::from(workload::CALLS)
}

/// Calls per second of a program that makes `workload::CALLS` calls at once
/// in `total` seconds, the contender's `overhead` subtracted.
pub fn calls_per_second(total: f64, overhead: f64) -> f64 {
    f64::from(workload::CALLS) / (total - overhead).max(1e-9)
}

/// Tool-call round trip: seconds per sequential call.
pub async fn round_trip(contender: &Contender, plan: &Plan, overhead: f64) -> anyhow::Result<f64> {
    let total = timed(contender, workload::SEQUENTIAL, plan.calls).await?;
    Ok(per_call(total, overhead))
}

/// Tool-call round trip through a handler that awaits once (never answered
/// inline): seconds per sequential call.
pub async fn round_trip_awaiting(
    contender: &Contender,
    plan: &Plan,
    overhead: f64,
) -> anyhow::Result<f64> {
    let total = timed(contender, workload::SEQUENTIAL_AWAITING, plan.calls).await?;
    Ok(per_call(total, overhead))
}

/// Fan-out: calls per second with all 1000 in flight at once.
pub async fn fan_out(contender: &Contender, plan: &Plan, overhead: f64) -> anyhow::Result<f64> {
    let total = timed(contender, workload::FAN_OUT, plan.calls).await?;
    Ok(calls_per_second(total, overhead))
}

/// CPU-bound `program`: median seconds, the contender's `overhead` subtracted.
pub async fn compute(
    contender: &Contender,
    plan: &Plan,
    program: &str,
    overhead: f64,
) -> anyhow::Result<f64> {
    Ok(computing(
        timed(contender, program, plan.compute).await?,
        overhead,
    ))
}

/// `program`'s computing time on `one` relative to `other`, measured
/// alternately: each of `rounds` rounds times `runs` runs on each of the
/// two (which goes first alternates), each less its contender's overhead,
/// and the figure is the median of the rounds' quotients. A full run
/// measures its columns one contender after another, minutes apart, and
/// this machine's speed can move between them by more than the gap
/// between the two (bench/RESULTS.md); here both are measured in the same
/// seconds.
pub async fn compute_relative(
    one: (&Contender, f64),
    other: (&Contender, f64),
    program: &str,
    rounds: usize,
    runs: usize,
) -> anyhow::Result<f64> {
    let pair = [one, other];
    let mut quotients = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let mut took = [0.0; 2];
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let (contender, overhead) = pair[i];
            took[i] = computing(timed(contender, program, runs).await?, overhead);
        }
        if took[1] > 0.0 {
            quotients.push(took[0] / took[1]);
        }
    }
    Ok(median(&mut quotients))
}

/// What a run of a compute program that took `total` seconds spent
/// computing: its time less the contender's `overhead` (a `return 1`).
pub fn computing(total: f64, overhead: f64) -> f64 {
    (total - overhead).max(0.0)
}

/// Throughput: trivial executions per second with all cores busy. The
/// sandboxed contenders keep four executions per core in flight; the floor
/// runs one thread per core.
pub async fn throughput(contender: &Contender, plan: &Plan, cores: usize) -> anyhow::Result<f64> {
    let mut rates = Vec::with_capacity(plan.throughput_rounds);
    for _ in 0..plan.throughput_rounds {
        let total = plan.throughput_per_round;
        let started = Instant::now();
        if contender.blocking() {
            let next = Arc::new(AtomicUsize::new(0));
            let threads: Vec<_> = (0..cores)
                .map(|_| {
                    let next = Arc::clone(&next);
                    let gate = Gate::new();
                    std::thread::spawn(move || {
                        while next.fetch_add(1, Ordering::AcqRel) < total {
                            let result = crate::floor::run(workload::TRIVIAL, &gate);
                            crate::contender::check(Kind::Floor, workload::TRIVIAL, &result)?;
                        }
                        anyhow::Ok(())
                    })
                })
                .collect();
            for thread in threads {
                thread
                    .join()
                    .map_err(|_| anyhow::anyhow!("a floor thread panicked"))??;
            }
        } else {
            let next = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<_> = (0..cores * 4)
                .map(|_| {
                    let next = Arc::clone(&next);
                    let contender = contender.clone();
                    tokio::spawn(async move {
                        let gate = Gate::new();
                        let tools = workload::tools(&gate)?;
                        while next.fetch_add(1, Ordering::AcqRel) < total {
                            contender.run(workload::TRIVIAL, &tools, &gate).await?;
                        }
                        anyhow::Ok(())
                    })
                })
                .collect();
            for task in tasks {
                task.await??;
            }
        }
        rates.push(total as f64 / started.elapsed().as_secs_f64());
    }
    Ok(median(&mut rates))
}

/// Memory: resident memory (a fresh bench process and every child process
/// of it) per execution in flight, with `plan.memory_at_once` executions
/// waiting on a tool at once, as RSS and as PSS ([`rss::Resident`]). Bytes
/// per execution, each the median of `plan.memory_rounds` rounds.
///
/// Each round runs in a fresh process (`relaunch`: this binary with
/// `--memory-round`), as the peers' rounds do: a second round in the same
/// process reads the memory the first one left resident (a pooled slot
/// keeps up to `KEEP_RESIDENT` of its memory, and freed heap stays with the
/// allocator), not what an execution costs. Measured on 2026-12-01: 0.64
/// MiB per execution in a first round, 0.01-0.14 MiB in the rounds after
/// it.
pub async fn memory(plan: &Plan, relaunch: Vec<String>) -> anyhow::Result<Memory> {
    let mut rss = Vec::with_capacity(plan.memory_rounds);
    let mut pss = Vec::with_capacity(plan.memory_rounds);
    for _ in 0..plan.memory_rounds {
        let relaunch = relaunch.clone();
        let output = tokio::task::spawn_blocking(move || {
            std::process::Command::new(std::env::current_exe()?)
                .args(&relaunch)
                .stderr(std::process::Stdio::inherit())
                .output()
        })
        .await?
        .context("starting a memory round")?;
        anyhow::ensure!(
            output.status.success(),
            "a memory round failed ({})",
            output.status
        );
        let text = String::from_utf8_lossy(&output.stdout);
        let round = Memory::parse(&text)
            .with_context(|| format!("a memory round printed {text:?}, not RSS and PSS"))?;
        rss.push(round.rss);
        pss.push(round.pss);
    }
    Ok(Memory {
        rss: median(&mut rss),
        pss: median(&mut pss),
    })
}

/// Bytes per execution in flight, as RSS and as PSS ([`rss::Resident`]).
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    pub rss: f64,
    pub pss: f64,
}

impl Memory {
    /// What [`memory_round`]'s process prints: `RSS PSS`.
    fn parse(text: &str) -> Option<Memory> {
        let mut numbers = text.split_whitespace().map(|n| n.parse::<f64>().ok());
        let (Some(Some(rss)), Some(Some(pss)), None) =
            (numbers.next(), numbers.next(), numbers.next())
        else {
            return None;
        };
        Some(Memory { rss, pss })
    }
}

impl std::fmt::Display for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.rss, self.pss)
    }
}

/// One round of [`memory`], in this process: bytes per execution.
pub async fn memory_round(contender: &Contender, plan: &Plan) -> anyhow::Result<Memory> {
    let n = plan.memory_at_once;
    let gate = Gate::new();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss::tree();
    let mut tasks = Vec::new();
    let mut threads = Vec::new();
    for _ in 0..n {
        if contender.blocking() {
            let gate = Arc::clone(&gate);
            threads.push(
                std::thread::Builder::new()
                    .stack_size(2 << 20)
                    .spawn(move || crate::floor::run(workload::HELD, &gate))
                    .context("starting a floor thread")?,
            );
        } else {
            let contender = contender.clone();
            let gate = Arc::clone(&gate);
            tasks.push(tokio::spawn(async move {
                let tools = workload::tools(&gate)?;
                contender.run(workload::HELD, &tools, &gate).await
            }));
        }
    }
    let waiting = Instant::now();
    while gate.arrived() < n {
        if waiting.elapsed() > Duration::from_secs(300) {
            gate.open();
            bail!("only {} of {n} executions got in flight", gate.arrived());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let during = rss::tree();
    gate.open();
    for task in tasks {
        task.await??;
    }
    for thread in threads {
        let result = thread
            .join()
            .map_err(|_| anyhow::anyhow!("a floor thread panicked"))?;
        crate::contender::check(Kind::Floor, workload::HELD, &result)?;
    }
    let per_execution = |during: u64, before: u64| during.saturating_sub(before) as f64 / n as f64;
    Ok(Memory {
        rss: per_execution(during.rss, before.rss),
        pss: per_execution(during.pss, before.pss),
    })
}

/// The CLI, `wasmwire run -` of `return 1` as a whole process: the median
/// of its wall-clock time and of its peak RSS.
pub struct Cli {
    pub seconds: f64,
    /// The kernel's high-water mark of the process's resident pages, in
    /// bytes (see [`peak_rss_of`]).
    pub max_rss: f64,
}

/// `None` for the floor and the peers in Node.js, which have no CLI.
pub async fn cli(kind: Kind, paths: &Paths, plan: &Plan) -> anyhow::Result<Option<Cli>> {
    let mut args: Vec<String> = vec!["run".into()];
    match kind {
        Kind::Wasm => {}
        Kind::Process => {
            args.push("--child".into());
            args.push(format!("exec '{}'", paths.native_guest.display()));
        }
        Kind::Node => {
            args.push("--child".into());
            args.push(format!("exec node '{}'", paths.node_child.display()));
            args.push("--max-memory".into());
            args.push("0".into());
        }
        Kind::Floor | Kind::QjsRuntime | Kind::QjsModule | Kind::IsolatedVm => return Ok(None),
    }
    args.push("-".into());
    if kind == Kind::Wasm
        && let Some(note) = crate::layout::order_note(&paths.cli)
    {
        eprintln!("bench: {note}");
    }
    let cli = paths.cli.clone();
    let runs = plan.cli;
    let figure = tokio::task::spawn_blocking(move || -> anyhow::Result<Cli> {
        let mut seconds = Vec::with_capacity(runs);
        // The first run fills the compiled-component cache; it is not timed.
        for i in 0..=runs {
            let started = Instant::now();
            let output = run_cli(&cli, &args, std::process::Command::new(&cli))?;
            let took = started.elapsed().as_secs_f64();
            if i > 0 {
                seconds.push(took);
            }
            check_cli(&cli, &args, &output)?;
        }
        // The peak RSS, in runs of their own: each through a probe process,
        // which adds its own start to the time.
        let mut max_rss = Vec::with_capacity(runs);
        let probe = std::env::current_exe().context("finding wasmwire-bench")?;
        for _ in 0..runs {
            let mut command = std::process::Command::new(&probe);
            command.arg(PEAK_RSS_OF).arg(&cli);
            let output = run_cli(&cli, &args, command)?;
            check_cli(&cli, &args, &output)?;
            let stderr = String::from_utf8_lossy(&output.stderr);
            let bytes = stderr
                .lines()
                .find_map(|line| line.strip_prefix("peak_rss="))
                .and_then(|n| n.parse::<f64>().ok())
                .with_context(|| format!("the RSS probe said no peak: {stderr}"))?;
            max_rss.push(bytes);
        }
        Ok(Cli {
            seconds: median(&mut seconds),
            max_rss: median(&mut max_rss),
        })
    })
    .await??;
    Ok(Some(figure))
}

/// Runs `command` (the CLI, or the probe running it) with `args` after
/// those it has, the trivial program on its stdin.
fn run_cli(
    cli: &std::path::Path,
    args: &[String],
    mut command: std::process::Command,
) -> anyhow::Result<std::process::Output> {
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running {}", cli.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin.write_all(workload::TRIVIAL.as_bytes())?;
    }
    Ok(child.wait_with_output()?)
}

/// Fails unless the run exited 0 and printed `return 1`'s Result.
fn check_cli(
    cli: &std::path::Path,
    args: &[String],
    output: &std::process::Output,
) -> anyhow::Result<()> {
    let line = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || !line.contains(r#""value":"1""#) {
        bail!(
            "{} {}: {line} {}",
            cli.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// The argument that makes `wasmwire-bench` the RSS probe.
pub const PEAK_RSS_OF: &str = "--peak-rss-of";

/// `--peak-rss-of COMMAND ARGS...`: runs the command with this process's
/// stdin and stdout, then says its peak RSS on stderr as `peak_rss=BYTES`.
///
/// Why a process of its own: Linux counts into a child's peak RSS
/// (`ru_maxrss`) the memory of the process it was spawned from, before its
/// `exec` (std spawns with `vfork`, on the parent's memory), so a CLI run
/// spawned by the benchmark (a hundred MiB by then) reads as a hundred MiB.
/// This probe has only just started, and holds less than the CLI; it checks
/// that it does, or the figure would be its own.
pub fn peak_rss_of(command: Vec<String>) -> anyhow::Result<()> {
    let (program, args) = command
        .split_first()
        .context("--peak-rss-of needs a command")?;
    let status = std::process::Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("running {program}"))?;
    // The one child this process had: the peak of the children waited for
    // is its peak.
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct,
    // and getrusage only writes into the one it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    // Linux says ru_maxrss in KiB.
    let peak = u64::try_from(usage.ru_maxrss)? * 1024;
    let own = rss::own_peak();
    if peak <= own {
        bail!("the probe's own peak RSS ({own} bytes) is not below its child's ({peak})");
    }
    eprintln!("peak_rss={peak}");
    match status.code() {
        Some(code) => std::process::exit(code),
        None => bail!("{program} ended by a signal ({status})"),
    }
}
