//! `wasmwire-bench`: wasmwire against its peers, measured side by side in
//! one run on one machine, printed as one table (issue 6).
//!
//! The contenders run the same JavaScript programs with the same tools
//! (`echo`, `hold`; see `workload.rs`):
//!
//! 1. **wasmwire wasm**: the product, `Sandbox::new` with its defaults;
//! 2. **process (native)**: wasmwire's process backend running the same
//!    evaluator compiled natively (`target/release/wasmwire-guest`);
//! 3. **node:vm child**: a Node.js child speaking wire (`node/child.js`);
//! 4. **quickjs-emscripten** (issue 15): QuickJS compiled to wasm by
//!    Emscripten, in Node.js; a fresh runtime per execution in a shared wasm
//!    module, and (a second column) a fresh wasm module instance per
//!    execution (`peers/qjs-emscripten.js`);
//! 5. **isolated-vm** (issue 15): a fresh V8 isolate per execution, in
//!    Node.js (`peers/isolated-vm.js`);
//! 6. **in-process QuickJS**: the evaluator linked into this process, tools
//!    called directly: no isolation, no protocol (the floor).
//!
//! The peers in Node.js (4, 5) are measured by their drivers, one child
//! process per figure (`peers.rs`); a peer that cannot run reads n/a.
//!
//! ```text
//! wasmwire-bench [--quick]
//!                [--only wasm,process,node,qjs-emscripten,qjs-emscripten-module,isolated-vm,floor]
//!                [--no-preinit] [--no-pooling]
//!                [--figures overhead,round-trip,round-trip-awaiting,fan-out,throughput,memory,compute,cli]
//! ```
//!
//! `--quick` divides the run counts by ten (a smoke test). `--no-preinit`
//! and `--no-pooling` turn the wasm backend's optimisations off one at a
//! time, to measure what each buys; `--figures` measures only some figures
//! (to profile one). Progress goes to stderr; the table
//! (Markdown) to stdout.

mod contender;
mod figures;
mod floor;
mod layout;
mod peers;
mod rss;
mod table;
mod workload;

use std::time::Instant;

use anyhow::{Context, bail};
use wasmwire::wasm::EngineOptions;

use contender::{Contender, Kind, Paths, WasmConfig};
use figures::Plan;
use table::{Row, Table, Unit};

/// The command line.
#[derive(Debug, Default)]
struct Args {
    quick: bool,
    only: Option<Vec<Kind>>,
    no_preinit: bool,
    no_pooling: bool,
    /// Only these figures (for profiling one of them).
    figures: Option<Vec<String>>,
    /// Run one round of the memory figure for the one contender `--only`
    /// names and print its bytes per execution, RSS then PSS (how `memory`
    /// measures each round in a fresh process).
    memory_round: bool,
}

impl Args {
    fn parse() -> anyhow::Result<Self> {
        let mut args = Args::default();
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--quick" => args.quick = true,
                "--no-preinit" => args.no_preinit = true,
                "--no-pooling" => args.no_pooling = true,
                "--memory-round" => args.memory_round = true,
                "--figures" => {
                    let list = it.next().context("--figures needs a list")?;
                    args.figures = Some(list.split(',').map(str::to_string).collect());
                }
                "--only" => {
                    let list = it.next().context("--only needs a list")?;
                    let mut kinds = Vec::new();
                    for name in list.split(',') {
                        match Kind::ALL.iter().find(|k| k.flag() == name) {
                            Some(kind) => kinds.push(*kind),
                            None => bail!("unknown contender {name:?}"),
                        }
                    }
                    args.only = Some(kinds);
                }
                "-h" | "--help" => {
                    println!(
                        "wasmwire-bench [--quick] [--only wasm,process,node,qjs-emscripten,qjs-emscripten-module,isolated-vm,floor] [--no-preinit] [--no-pooling] [--figures overhead,round-trip,round-trip-awaiting,fan-out,throughput,memory,compute,cli]"
                    );
                    std::process::exit(0);
                }
                other => bail!("unknown argument {other:?} (try --help)"),
            }
        }
        Ok(args)
    }

    /// The arguments that run one memory round of `kind` in a fresh
    /// process, with this run's settings.
    fn memory_round_for(&self, kind: Kind) -> Vec<String> {
        let mut args = vec![
            "--memory-round".to_owned(),
            "--only".to_owned(),
            kind.flag().to_owned(),
        ];
        for (set, flag) in [
            (self.quick, "--quick"),
            (self.no_preinit, "--no-preinit"),
            (self.no_pooling, "--no-pooling"),
        ] {
            if set {
                args.push(flag.to_owned());
            }
        }
        args
    }

    fn wasm_config(&self) -> WasmConfig {
        let mut engine = EngineOptions::default();
        if self.no_preinit {
            engine.pre_initialize = false;
        }
        if self.no_pooling {
            engine.pooling = None;
        }
        WasmConfig {
            engine: Some(engine),
        }
    }
}

/// Every figure of one contender.
#[derive(Debug, Default, Clone, Copy)]
struct Figures {
    overhead: Option<f64>,
    round_trip: Option<f64>,
    round_trip_awaiting: Option<f64>,
    /// The peers' synchronous host functions (wasmwire's tools are async).
    round_trip_sync: Option<f64>,
    fan_out: Option<f64>,
    throughput: Option<f64>,
    memory: Option<f64>,
    /// The same as PSS: pages the executions share counted once.
    memory_pss: Option<f64>,
    memory_at_once: usize,
    fib: Option<f64>,
    json: Option<f64>,
    cli: Option<f64>,
    cli_rss: Option<f64>,
}

async fn measure(
    contender: &Contender,
    paths: &Paths,
    plan: &Plan,
    cores: usize,
    args: &Args,
) -> anyhow::Result<Figures> {
    let only = args.figures.as_deref();
    let name = contender.kind.name();
    let selected = |figure: &str| selects(only, figure);
    let wanted = |figure: &str| wanted(name, only, figure);
    eprintln!("bench: {name}: warming up");
    figures::warm_up(contender, plan).await?;
    let mut f = Figures {
        memory_at_once: plan.memory_at_once,
        ..Figures::default()
    };
    // The call and compute figures subtract the overhead, so they need it.
    let needs_overhead = selected("round-trip")
        || selected("round-trip-awaiting")
        || selected("fan-out")
        || selected("compute");
    if wanted("overhead") || needs_overhead {
        f.overhead = Some(figures::overhead(contender, plan).await?);
    }
    let overhead = f.overhead.unwrap_or(0.0);
    if wanted("round-trip") {
        f.round_trip = Some(figures::round_trip(contender, plan, overhead).await?);
    }
    // The floor calls its tools directly: there is no handler to await.
    if !contender.blocking() && wanted("round-trip-awaiting") {
        f.round_trip_awaiting =
            Some(figures::round_trip_awaiting(contender, plan, overhead).await?);
    }
    if wanted("fan-out") {
        f.fan_out = Some(figures::fan_out(contender, plan, overhead).await?);
    }
    if wanted("throughput") {
        f.throughput = Some(figures::throughput(contender, plan, cores).await?);
    }
    if wanted("memory") {
        let relaunch = args.memory_round_for(contender.kind);
        let memory = figures::memory(plan, relaunch).await?;
        f.memory = Some(memory.rss);
        f.memory_pss = Some(memory.pss);
    }
    if wanted("compute") {
        let json = workload::JSON_ROUND_TRIPS;
        f.fib = Some(figures::compute(contender, plan, workload::FIB, overhead).await?);
        f.json = Some(figures::compute(contender, plan, json, overhead).await?);
    }
    if wanted("cli")
        && let Some(cli) = figures::cli(contender.kind, paths, plan).await?
    {
        f.cli = Some(cli.seconds);
        f.cli_rss = Some(cli.max_rss);
    }
    Ok(f)
}

async fn bench(args: Args, cores: usize) -> anyhow::Result<()> {
    let paths = Paths::beside_this_binary()?;
    if args.memory_round {
        return memory_round(&args, &paths).await;
    }
    let kinds = args.only.clone().unwrap_or_else(|| Kind::ALL.to_vec());
    let wasm = args.wasm_config();
    let started = Instant::now();
    let mut columns = Vec::new();
    let mut versions = Vec::new();
    let mut node_version = None;
    let mut kept = Vec::new();
    for kind in kinds {
        eprintln!("bench: {}: setting up", kind.name());
        if let Some(peer) = peers::Peer::for_kind(kind) {
            let figures = match peer.probe() {
                Ok(probe) => {
                    eprintln!(
                        "bench: {}: {} {} in Node.js {}",
                        kind.name(),
                        probe.package,
                        probe.version,
                        probe.node
                    );
                    let line = format!("{} {}", probe.package, probe.version);
                    if !versions.contains(&line) {
                        versions.push(line);
                    }
                    node_version = Some(probe.node);
                    let plan = Plan::for_kind(kind, args.quick);
                    peer.measure(&plan, cores, args.figures.as_deref()).await
                }
                Err(e) => {
                    eprintln!(
                        "bench: {}: not available here, its column reads n/a: {e:#}",
                        kind.name()
                    );
                    Figures::default()
                }
            };
            columns.push((kind, figures));
            continue;
        }
        let Some(contender) = Contender::new(kind, &paths, &wasm)? else {
            eprintln!("bench: {}: not available here, skipped", kind.name());
            continue;
        };
        let plan = Plan::for_kind(kind, args.quick);
        let figures = measure(&contender, &paths, &plan, cores, &args).await?;
        columns.push((kind, figures));
        // Kept for the compute figures measured alternately (below).
        if matches!(kind, Kind::Wasm | Kind::Floor) {
            kept.push((kind, contender, figures.overhead.unwrap_or(0.0)));
        }
    }
    let alternately = alternately(&kept, &args).await?;
    drop(kept);

    let floor = |f: &Figures, pick: fn(&Figures) -> Option<f64>| {
        let base = columns
            .iter()
            .find(|(k, _)| *k == Kind::Floor)
            .and_then(|(_, f)| pick(f))?;
        Some(pick(f)? / base)
    };
    let mut table = Table::new(columns.iter().map(|(k, _)| *k).collect());
    table.describe(
        "isolation of one execution",
        columns
            .iter()
            .map(|(k, _)| k.isolation().to_string())
            .collect(),
    );
    let row = |figure: &str, unit, pick: &dyn Fn(&Figures) -> Option<f64>| Row {
        figure: figure.to_string(),
        unit,
        values: columns.iter().map(|(_, f)| pick(f)).collect(),
    };
    let at_once: Vec<String> = columns
        .iter()
        .filter(|(_, f)| f.memory.is_some())
        .map(|(k, f)| format!("{} {}", k.flag(), f.memory_at_once))
        .collect();
    table.push(row(
        "per-execution overhead, `return 1` (median, lower is better)",
        Unit::Micros,
        &|f| f.overhead,
    ));
    table.push(row(
        "tool-call round trip, `await echo(i)` x1000, handler ready at once (per call)",
        Unit::Micros,
        &|f| f.round_trip,
    ));
    table.push(row(
        "tool-call round trip, `await echo_later(i)` x1000, handler awaits once (per call)",
        Unit::Micros,
        &|f| f.round_trip_awaiting,
    ));
    table.push(row(
        "tool-call round trip, `await echo(i)` x1000, `echo` a synchronous host function (per call; the peers in Node.js)",
        Unit::Micros,
        &|f| f.round_trip_sync,
    ));
    table.push(row(
        "fan-out, `Promise.all` of 1000 calls (calls/s, higher is better)",
        Unit::Rate,
        &|f| f.fan_out,
    ));
    table.push(row(
        &format!("throughput, trivial executions/s, {cores} cores busy (higher is better)"),
        Unit::Rate,
        &|f| f.throughput,
    ));
    let at_once = if at_once.is_empty() {
        String::new()
    } else {
        format!(" ({} at once)", at_once.join(", "))
    };
    table.push(row(
        &format!("memory, RSS per in-flight execution{at_once}"),
        Unit::MiB,
        &|f| f.memory,
    ));
    table.push(row(
        "memory, PSS per in-flight execution (the same executions; a page mapped by many counted once)",
        Unit::MiB,
        &|f| f.memory_pss,
    ));
    table.push(row(
        "compute, fib(27), less the `return 1` overhead",
        Unit::Millis,
        &|f| f.fib,
    ));
    table.push(row(
        "compute, fib(27) relative to the floor",
        Unit::Times,
        &|f| floor(f, |f| f.fib),
    ));
    table.push(Row {
        figure: format!(
            "compute, fib(27) relative to the floor, the two measured alternately ({} rounds' median)",
            alternately.rounds
        ),
        unit: Unit::Times,
        values: columns
            .iter()
            .map(|(k, _)| alternately.fib.filter(|_| *k == Kind::Wasm))
            .collect(),
    });
    table.push(row(
        "compute, 20k JSON round-trips, less the `return 1` overhead",
        Unit::Millis,
        &|f| f.json,
    ));
    table.push(row(
        "compute, JSON round-trips relative to the floor",
        Unit::Times,
        &|f| floor(f, |f| f.json),
    ));
    table.push(Row {
        figure: format!(
            "compute, JSON round-trips relative to the floor, the two measured alternately ({} rounds' median)",
            alternately.rounds
        ),
        unit: Unit::Times,
        values: columns
            .iter()
            .map(|(k, _)| alternately.json.filter(|_| *k == Kind::Wasm))
            .collect(),
    });
    table.push(row(
        "CLI `wasmwire run` of `return 1`, whole process (median)",
        Unit::Millis,
        &|f| f.cli,
    ));
    table.push(row(
        "CLI `wasmwire run` of `return 1`, peak RSS of the process (median)",
        Unit::MiB,
        &|f| f.cli_rss,
    ));

    println!(
        "wasmwire-bench: {cores} cores, {} run, {:.0} s",
        if args.quick { "quick" } else { "full" },
        started.elapsed().as_secs_f64()
    );
    println!();
    if let Some(node) = node_version {
        println!(
            "Peers: {} in Node.js {node} (bench/peers/package-lock.json).",
            versions.join(", ")
        );
        println!();
    }
    print!("{}", table.markdown());
    Ok(())
}

/// Rounds of the compute figures measured alternately.
const ALTERNATE_ROUNDS: usize = 5;

/// The wasm contender's compute figures relative to the floor's, the two
/// measured alternately in the same seconds (`figures::compute_relative`).
#[derive(Debug, Default, Clone, Copy)]
struct Alternately {
    rounds: usize,
    fib: Option<f64>,
    json: Option<f64>,
}

/// [`Alternately`], when this run measured compute for both the wasm
/// contender and the floor (`kept`: each with its `return 1` overhead).
async fn alternately(kept: &[(Kind, Contender, f64)], args: &Args) -> anyhow::Result<Alternately> {
    let find = |kind| kept.iter().find(|(k, ..)| *k == kind);
    let (Some((_, wasm, wasm_overhead)), Some((_, floor, floor_overhead))) =
        (find(Kind::Wasm), find(Kind::Floor))
    else {
        return Ok(Alternately::default());
    };
    if !selects(args.figures.as_deref(), "compute") {
        return Ok(Alternately::default());
    }
    eprintln!("bench: wasm and the floor: compute, alternately");
    let rounds = if args.quick { 2 } else { ALTERNATE_ROUNDS };
    let runs = (Plan::for_kind(Kind::Wasm, args.quick).compute / 3).max(1);
    let (one, other) = ((wasm, *wasm_overhead), (floor, *floor_overhead));
    Ok(Alternately {
        rounds,
        fib: Some(figures::compute_relative(one, other, workload::FIB, rounds, runs).await?),
        json: Some(
            figures::compute_relative(one, other, workload::JSON_ROUND_TRIPS, rounds, runs).await?,
        ),
    })
}

/// `--memory-round`: one round of the memory figure, after the same
/// warm-up as every contender gets, printed as bytes per execution: RSS,
/// then PSS.
async fn memory_round(args: &Args, paths: &Paths) -> anyhow::Result<()> {
    let [kind] = args.only.as_deref().unwrap_or_default() else {
        bail!("--memory-round needs --only with one contender");
    };
    let contender = Contender::new(*kind, paths, &args.wasm_config())?
        .with_context(|| format!("{} is not available here", kind.name()))?;
    let plan = Plan::for_kind(*kind, args.quick);
    figures::warm_up(&contender, &plan).await?;
    println!("{}", figures::memory_round(&contender, &plan).await?);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    // Before anything else, so that this process holds as little as it can.
    let mut argv = std::env::args().skip(1);
    if argv.next().as_deref() == Some(figures::PEAK_RSS_OF) {
        return figures::peak_rss_of(argv.collect());
    }
    let args = Args::parse()?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    // On a worker thread, as a server's request handler would be.
    runtime.block_on(async move { tokio::spawn(bench(args, cores)).await? })
}

/// Whether `figure` is one `--figures` selected (all are when `only` is
/// `None`).
fn selects(only: Option<&[String]>, figure: &str) -> bool {
    only.is_none_or(|only| only.iter().any(|f| f == figure))
}

/// [`selects`], said on stderr when it is, as `name` starts measuring it.
fn wanted(name: &str, only: Option<&[String]>, figure: &str) -> bool {
    let yes = selects(only, figure);
    if yes {
        eprintln!("bench: {name}: {figure}");
    }
    yes
}
