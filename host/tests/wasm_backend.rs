//! The wasm backend against the real guest (built from source by
//! `host/build.rs`) and a few probe components written in WAT: every limit
//! of the README's limits table ends a run the way `wasmwire::wasm` documents, and
//! the same `WasmChild` keeps working afterwards.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use wasmwire::console::Console;
use wasmwire::wasm::{
    CancellationToken, ChildEnd, ChildExit, ChildFailure, ChildIo, ChildLimits, EngineOptions,
    Pooling, WasmChild, WasmError,
};
use wire::{FailureKind, Start, StartBinding, StartBudget};

const MIB: u64 = 1 << 20;

/// Compiled components are cached under the target directory, so that only
/// the first test run pays for compiling the guest.
fn options() -> EngineOptions {
    EngineOptions {
        cache_dir: Some(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("wasmwire-cache")),
        ..EngineOptions::default()
    }
}

/// The real guest, compiled once for the whole test binary.
fn guest() -> Arc<WasmChild> {
    static GUEST: OnceLock<Arc<WasmChild>> = OnceLock::new();
    GUEST
        .get_or_init(|| {
            Arc::new(
                WasmChild::new(wasmwire::GUEST_COMPONENT, &options()).expect("the guest compiles"),
            )
        })
        .clone()
}

/// One execution to hand to a child.
struct Execution {
    program: String,
    bindings: Vec<&'static str>,
    limits: ChildLimits,
    console_cap: usize,
    /// Whether the Start is sent at all.
    send_start: bool,
    /// Cancel the run once the console shows this text: the program is
    /// provably running by then.
    cancel_on_console: Option<&'static str>,
}

impl Execution {
    fn new(program: impl Into<String>) -> Self {
        Execution {
            program: program.into(),
            bindings: Vec::new(),
            limits: ChildLimits {
                max_memory: 64 * MIB,
                wall_clock: Duration::from_secs(10),
            },
            console_cap: 64 * 1024,
            send_start: true,
            cancel_on_console: None,
        }
    }

    fn limits(mut self, max_memory: u64, wall_clock: Duration) -> Self {
        self.limits = ChildLimits {
            max_memory,
            wall_clock,
        };
        self
    }
}

/// What came back from a run.
struct Ran {
    exit: ChildExit,
    /// The bytes the child wrote to its start channel.
    start_out: Vec<u8>,
    console: String,
}

impl Ran {
    /// The Result frame the child wrote, if it wrote a whole one.
    fn result(&self) -> Option<wire::Result> {
        let (prefix, payload) = self.start_out.split_at_checked(4)?;
        let len = u32::from_be_bytes(prefix.try_into().ok()?) as usize;
        wire::decode::<wire::Result>(payload.get(..len)?).ok()
    }

    fn failure(&self) -> Option<&ChildFailure> {
        self.exit.failure()
    }

    /// Why the run ended, for assertion messages.
    fn describe(&self) -> String {
        format!(
            "exit: {:?}\nresult: {:?}\nconsole: {}",
            self.exit,
            self.result(),
            self.console.chars().take(2000).collect::<String>()
        )
    }
}

/// Runs `execution` on `child`: the Start goes in on the start channel, the
/// call channel is drained and never answered (no test here serves tools).
async fn run(child: &WasmChild, execution: Execution) -> Ran {
    let (mut start_writer, start_in) = tokio::io::duplex(64 * 1024);
    let (start_out, mut result_reader) = tokio::io::duplex(64 * 1024);
    let (_responses, call_in) = tokio::io::duplex(64 * 1024);
    let (call_out, mut requests) = tokio::io::duplex(64 * 1024);
    let console = Console::new(execution.console_cap);

    let start = Start {
        v: wire::VERSION,
        program: execution.program,
        bindings: execution
            .bindings
            .iter()
            .map(|name| StartBinding {
                name: name.to_string(),
                signature: String::new(),
            })
            .collect(),
        budget: StartBudget {
            wall_clock: execution.limits.wall_clock,
            max_memory: execution.limits.max_memory,
            ..StartBudget::default()
        },
        max_inflight: None,
        withdraw: false,
        places: vec![],
        result_id: "r1".into(),
    };
    if execution.send_start {
        let frame = wire::encode(&start).expect("the Start encodes");
        tokio::spawn(async move {
            // Kept open afterwards: a child must not need EOF to start.
            let _ = wire::write_frame_async(&mut start_writer, &frame).await;
            std::future::pending::<()>().await;
        });
    }
    let results = tokio::spawn(async move {
        let mut bytes = Vec::new();
        let _ = result_reader.read_to_end(&mut bytes).await;
        bytes
    });
    tokio::spawn(async move {
        let mut sink = Vec::new();
        let _ = requests.read_to_end(&mut sink).await;
    });

    let cancel = CancellationToken::new();
    if let Some(needle) = execution.cancel_on_console {
        let (cancel, console) = (cancel.clone(), console.clone());
        tokio::spawn(async move {
            // Bounded: a program that never prints is not cancelled, and the
            // test sees the run end some other way.
            for _ in 0..5000 {
                if console.finish().contains(needle) {
                    cancel.cancel();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
    }
    let io = ChildIo {
        call_in: Box::new(call_in),
        call_out: Box::new(call_out),
        start_in: Box::new(start_in),
        start_out: Box::new(start_out),
        console: console.clone(),
    };
    let exit = child.run(io, execution.limits, &cancel).await;
    let start_out = results.await.expect("the result reader does not panic");
    Ran {
        exit,
        start_out,
        console: console.finish(),
    }
}

/// After a hostile run, the same child still runs a normal program.
async fn still_works(child: &WasmChild) {
    let ran = run(child, Execution::new("return 1 + 1")).await;
    let result = ran
        .result()
        .unwrap_or_else(|| panic!("no Result:\n{}", ran.describe()));
    assert!(result.ok, "{}", ran.describe());
    assert_eq!(result.value, "2");
}

fn is_limit(ran: &Ran) -> bool {
    ran.result()
        .is_some_and(|r| r.kind == Some(FailureKind::Limit))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_runs_to_its_result() {
    let ran = run(&guest(), Execution::new("return 6 * 7")).await;
    assert_eq!(
        ran.exit.end,
        ChildEnd::Exited { code: 0 },
        "{}",
        ran.describe()
    );
    let result = ran
        .result()
        .unwrap_or_else(|| panic!("no Result:\n{}", ran.describe()));
    assert!(result.ok, "{}", ran.describe());
    assert_eq!(result.value, "42");
    assert_eq!(result.result_id, "r1");
    assert!(ran.exit.peak_memory > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_bomb_is_held_to_the_cap() {
    let child = guest();
    let bomb = Execution::new("let a = []; for (;;) a.push(new Array(1e5).fill(1));")
        .limits(32 * MIB, Duration::from_secs(20));
    let ran = run(&child, bomb).await;
    // Either QuickJS's own limit (set below the cap) made it a clean `limit`
    // Result, or the wasm cap refused a growth and the child trapped.
    let held = is_limit(&ran)
        || matches!(ran.failure(), Some(ChildFailure::MemoryLimit { max_memory, .. }) if *max_memory == 32 * MIB);
    assert!(held, "{}", ran.describe());
    // No `peak_memory <= cap` check: `peak_memory` is the limiter's own
    // record of what it granted, so that would only restate the limiter.
    // The cap is shown by the outcome above (a refusal at 32 MiB).
    still_works(&child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_larger_than_the_memory_cap_ends_as_a_limit() {
    let child = guest();
    // The program alone is larger than the cap: whatever QuickJS's own limit,
    // the child cannot hold it.
    let program = format!("return 1 // {}", "x".repeat(12 * MIB as usize));
    let ran = run(
        &child,
        Execution::new(program).limits(8 * MIB, Duration::from_secs(20)),
    )
    .await;
    let held = is_limit(&ran)
        || matches!(ran.failure(), Some(ChildFailure::MemoryLimit { max_memory, .. }) if *max_memory == 8 * MIB);
    assert!(held, "{}", ran.describe());
    // No `peak_memory <= cap` check: it would only restate the limiter's
    // own bookkeeping (see a_memory_bomb_is_held_to_the_cap).
    still_works(&child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spinning_program_is_stopped_by_the_wall_clock() {
    let child = guest();
    for program in [
        "for (;;) {}",
        // The interrupt is not a JS exception: a catch-all cannot swallow it.
        "for (;;) { try { for (;;) {} } catch (e) {} finally { continue; } }",
    ] {
        let started = Instant::now();
        let ran = run(
            &child,
            Execution::new(program).limits(64 * MIB, Duration::from_millis(300)),
        )
        .await;
        assert!(
            matches!(
                ran.failure(),
                Some(ChildFailure::WallClock { limit, .. }) if *limit == Duration::from_millis(300)
            ),
            "{program}: {}",
            ran.describe()
        );
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
    still_works(&child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_waiting_on_a_tool_is_stopped_by_the_wall_clock() {
    let child = guest();
    let mut waiting =
        Execution::new("await never(); return 1").limits(64 * MIB, Duration::from_millis(300));
    waiting.bindings = vec!["never"];
    let started = Instant::now();
    let ran = run(&child, waiting).await;
    assert!(
        matches!(ran.failure(), Some(ChildFailure::WallClock { .. })),
        "{}",
        ran.describe()
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    still_works(&child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_waiting_for_its_start_is_stopped_by_the_wall_clock() {
    let mut silent = Execution::new("return 1").limits(64 * MIB, Duration::from_millis(300));
    silent.send_start = false;
    let ran = run(&guest(), silent).await;
    assert!(
        matches!(ran.failure(), Some(ChildFailure::WallClock { .. })),
        "{}",
        ran.describe()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_a_spinning_program() {
    // Compiled (a cold cache) before the clock starts.
    let child = guest();
    let mut spinning = Execution::new(r#"console.log("spinning"); for (;;) {}"#);
    // Cancelled once the program has printed, so it is running, never
    // before it started however slow the start.
    spinning.cancel_on_console = Some("spinning");
    let started = Instant::now();
    let ran = run(&child, spinning).await;
    assert_eq!(
        ran.failure(),
        Some(&ChildFailure::Cancelled),
        "{}",
        ran.describe()
    );
    assert!(ran.console.contains("spinning"), "{}", ran.describe());
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_ends_as_a_limit() {
    let child = guest();
    let ran = run(
        &child,
        Execution::new("function f() { return f() + 1 } return f()"),
    )
    .await;
    let limited = is_limit(&ran) || ran.failure() == Some(&ChildFailure::StackOverflow);
    assert!(limited, "{}", ran.describe());
    still_works(&child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_wasm_stack_overflows_as_a_stack_overflow() {
    // With 128 KiB of wasm stack the native stack runs out long before the
    // guest's shadow stack does: wasmtime's own stack-overflow trap.
    let small = EngineOptions {
        max_wasm_stack: 128 * 1024,
        ..options()
    };
    let child = WasmChild::new(wasmwire::GUEST_COMPONENT, &small).expect("the guest compiles");
    let ran = run(
        &child,
        Execution::new("function f() { return f() + 1 } return f()"),
    )
    .await;
    assert_eq!(
        ran.failure(),
        Some(&ChildFailure::StackOverflow),
        "{}",
        ran.describe()
    );
    still_works(&child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_flood_is_cut_at_the_cap_and_the_program_finishes() {
    let mut flood = Execution::new(
        r#"for (let i = 0; i < 20000; i++) console.log("x".repeat(100)); return "done""#,
    );
    flood.console_cap = 8 * 1024;
    let ran = run(&guest(), flood).await;
    let result = ran
        .result()
        .unwrap_or_else(|| panic!("no Result:\n{}", ran.describe()));
    assert!(result.ok, "{}", ran.describe());
    assert_eq!(result.value, "\"done\"");
    assert!(ran.console.len() < 9 * 1024, "{}", ran.console.len());
    assert!(
        ran.console.ends_with("more dropped]\n")
            && ran.console.contains("[console output truncated"),
        "{}",
        &ran.console[ran.console.len().saturating_sub(200)..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_runs_at_once_share_one_child() {
    for pooling in [
        None,
        Some(Pooling {
            max_children: 4,
            max_memory: 256 * MIB,
        }),
    ] {
        let child = Arc::new(
            WasmChild::new(
                wasmwire::GUEST_COMPONENT,
                &EngineOptions {
                    pooling,
                    ..options()
                },
            )
            .expect("the guest compiles"),
        );
        let runs = (0..24).map(|n| {
            let child = Arc::clone(&child);
            tokio::spawn(
                async move { (n, run(&child, Execution::new(format!("return {n}"))).await) },
            )
        });
        for handle in runs.collect::<Vec<_>>() {
            let (n, ran) = handle.await.expect("a run does not panic");
            let result = ran
                .result()
                .unwrap_or_else(|| panic!("no Result:\n{}", ran.describe()));
            assert_eq!(
                result.value,
                n.to_string(),
                "pooling {pooling:?}: {}",
                ran.describe()
            );
        }
    }
}

// Probe components: what the guest cannot show from JavaScript.

/// A component whose `wasi:cli/run` is the core function body `run`.
fn run_only(run: &str) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(component
            (core module $M (memory 1) (func (export "run") (result i32) {run}))
            (core instance $m (instantiate $M))
            (func $run (result (result)) (canon lift (core func $m "run")))
            (instance $i (export "run" (func $run)))
            (export "wasi:cli/run@0.2.0" (instance $i)))"#
    ))
    .expect("valid WAT")
}

fn probe_child(component: &[u8]) -> WasmChild {
    let uncached = EngineOptions {
        cache_dir: None,
        ..EngineOptions::default()
    };
    WasmChild::new(component, &uncached).expect("the probe compiles")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_child_sees_no_environment_arguments_or_directories() {
    let probe = wat::parse_str(include_str!("wasm_backend/probe.wat")).expect("valid WAT");
    let ran = run(&probe_child(&probe), Execution::new("")).await;
    // Three u32 lengths: environment variables, arguments, preopens.
    assert_eq!(ran.start_out, [0; 12], "{}", ran.describe());
    assert_eq!(ran.exit.end, ChildEnd::Exited { code: 0 });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_other_trap_is_reported_with_its_message() {
    let ran = run(&probe_child(&run_only("unreachable")), Execution::new("")).await;
    match ran.failure() {
        Some(ChildFailure::Trap { message }) => {
            assert!(message.contains("unreachable"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_just_below_address_zero_is_a_shadow_stack_overflow() {
    // A stack-first shadow stack that overflows wraps to the top of memory.
    let wrapped = run_only("(i32.store (i32.const -16) (i32.const 1)) (i32.const 0)");
    let ran = run(&probe_child(&wrapped), Execution::new("")).await;
    assert_eq!(
        ran.failure(),
        Some(&ChildFailure::StackOverflow),
        "{}",
        ran.describe()
    );
    // An ordinary out-of-bounds access stays a trap.
    let stray = run_only("(i32.store (i32.const 0x200000) (i32.const 1)) (i32.const 0)");
    let ran = run(&probe_child(&stray), Execution::new("")).await;
    assert!(
        matches!(ran.failure(), Some(ChildFailure::Trap { .. })),
        "{}",
        ran.describe()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_growth_refused_by_the_cap_is_recorded_and_named() {
    // memory.grow by 100 pages (6.25 MiB) under a 4 MiB cap returns -1; the
    // child traps on it, and the outcome names the memory limit rather than
    // the `unreachable`.
    let grow = run_only(
        "(if (i32.eq (memory.grow (i32.const 100)) (i32.const -1)) (then unreachable)) (i32.const 0)",
    );
    let ran = run(
        &probe_child(&grow),
        Execution::new("").limits(4 * MIB, Duration::from_secs(5)),
    )
    .await;
    assert!(
        matches!(ran.failure(), Some(ChildFailure::MemoryLimit { max_memory, .. }) if *max_memory == 4 * MIB),
        "{}",
        ran.describe()
    );
    assert_eq!(
        ran.exit.refused,
        Some(wasmwire::wasm::Refusal::Memory {
            requested: 101 * 64 * 1024
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_with_other_imports_is_not_a_child() {
    let foreign = wat::parse_str(
        r#"(component
            (import "example:other/thing" (instance (export "f" (func))))
            (core module $M (func (export "run") (result i32) (i32.const 0)))
            (core instance $m (instantiate $M))
            (func $run (result (result)) (canon lift (core func $m "run")))
            (instance $i (export "run" (func $run)))
            (export "wasi:cli/run@0.2.0" (instance $i)))"#,
    )
    .expect("valid WAT");
    let uncached = EngineOptions {
        cache_dir: None,
        ..EngineOptions::default()
    };
    assert!(matches!(
        WasmChild::new(&foreign, &uncached),
        Err(WasmError::NotAChild(_))
    ));
    assert!(matches!(
        WasmChild::new(b"not wasm", &uncached),
        Err(WasmError::Compile(_))
    ));
}

// The same probes through `Sandbox`: a child that traps, or cannot be
// instantiated, ends in exactly one Result that says so.

/// Runs `component` through `Sandbox::with_component(..).run(..)`.
async fn run_through_sandbox(component: &[u8]) -> wasmwire::Outcome {
    let options = wasmwire::SandboxOptions {
        engine: EngineOptions {
            cache_dir: None,
            ..EngineOptions::default()
        },
        ..wasmwire::SandboxOptions::default()
    };
    let sandbox = wasmwire::Sandbox::with_component(component, options).expect("a child");
    let execution = wasmwire::Execution::new("return 1").budget(wasmwire::Budget {
        wall_clock: Duration::from_secs(10),
        max_memory: 64 * MIB,
        ..wasmwire::Budget::default()
    });
    sandbox
        .run(
            &execution,
            &wasmwire::Tools::new(),
            CancellationToken::new(),
        )
        .await
        .expect("the execution starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trapping_child_ends_in_one_unknown_result_through_the_sandbox() {
    let outcome = run_through_sandbox(&run_only("unreachable")).await;
    let result = &outcome.result;
    assert!(!result.ok, "{outcome:#?}");
    assert_eq!(result.kind, Some(FailureKind::Unknown), "{outcome:#?}");
    assert!(
        result.error.contains("the child trapped") && result.error.contains("unreachable"),
        "{outcome:#?}"
    );
    // At once, not at the 10 s wall clock.
    assert!(outcome.elapsed < Duration::from_secs(5), "{outcome:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_cannot_be_instantiated_ends_in_one_unknown_result_through_the_sandbox() {
    // A core start function that traps: instantiation itself fails.
    let component = wat::parse_str(
        r#"(component
            (core module $M
                (func $boom unreachable)
                (start $boom)
                (func (export "run") (result i32) (i32.const 0)))
            (core instance $m (instantiate $M))
            (func $run (result (result)) (canon lift (core func $m "run")))
            (instance $i (export "run" (func $run)))
            (export "wasi:cli/run@0.2.0" (instance $i)))"#,
    )
    .expect("valid WAT");
    let outcome = run_through_sandbox(&component).await;
    let result = &outcome.result;
    assert!(!result.ok, "{outcome:#?}");
    assert_eq!(result.kind, Some(FailureKind::Unknown), "{outcome:#?}");
    assert!(
        result.error.contains("could not be instantiated"),
        "{outcome:#?}"
    );
    assert!(outcome.elapsed < Duration::from_secs(5), "{outcome:#?}");
}
