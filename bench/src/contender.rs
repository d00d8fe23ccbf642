//! The contenders, and one way to run a program on each of wasmwire's and
//! the floor (the peers that run in Node.js are measured by their drivers:
//! `peers.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use wasmwire::wasm::EngineOptions;
use wasmwire::{
    Budget, CancellationToken, Execution, ProcessChild, Sandbox, SandboxOptions, Tools,
};

use crate::floor;
use crate::workload::{self, Gate};

/// Which contender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// wasmwire's wasm backend: the product.
    Wasm,
    /// wasmwire's process backend running the guest compiled natively.
    Process,
    /// A Node.js child speaking wire, running the program with `node:vm`.
    Node,
    /// quickjs-emscripten in Node.js: a fresh QuickJS runtime per execution
    /// in one shared wasm module (`peers/qjs-emscripten.js`).
    QjsRuntime,
    /// quickjs-emscripten in Node.js: a fresh instance of the wasm module per
    /// execution (`peers/qjs-emscripten.js`).
    QjsModule,
    /// isolated-vm in Node.js: a fresh V8 isolate per execution
    /// (`peers/isolated-vm.js`).
    IsolatedVm,
    /// QuickJS in this process: no isolation, no protocol.
    Floor,
}

impl Kind {
    /// Every contender, in table order.
    pub const ALL: [Kind; 7] = [
        Kind::Wasm,
        Kind::Process,
        Kind::Node,
        Kind::QjsRuntime,
        Kind::QjsModule,
        Kind::IsolatedVm,
        Kind::Floor,
    ];

    /// The column heading.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Wasm => "wasmwire wasm",
            Kind::Process => "process (native)",
            Kind::Node => "node:vm child",
            Kind::QjsRuntime => "quickjs-emscripten, fresh runtime",
            Kind::QjsModule => "quickjs-emscripten, fresh module",
            Kind::IsolatedVm => "isolated-vm",
            Kind::Floor => "in-process QuickJS",
        }
    }

    /// The name on the command line (`--only`).
    pub fn flag(self) -> &'static str {
        match self {
            Kind::Wasm => "wasm",
            Kind::Process => "process",
            Kind::Node => "node",
            Kind::QjsRuntime => "qjs-emscripten",
            Kind::QjsModule => "qjs-emscripten-module",
            Kind::IsolatedVm => "isolated-vm",
            Kind::Floor => "floor",
        }
    }

    /// The isolation one execution gets (a row of the table).
    pub fn isolation(self) -> &'static str {
        match self {
            Kind::Wasm => "fresh wasm instance per execution, memory cap, wall clock",
            Kind::Process => "fresh child process per execution, memory cap (cgroup), wall clock",
            Kind::Node => "fresh Node.js process per execution (node:vm context), wall clock",
            Kind::QjsRuntime => {
                "fresh QuickJS runtime in a shared wasm module, memory cap, interrupt deadline"
            }
            Kind::QjsModule => {
                "fresh wasm module instance per execution, memory cap, interrupt deadline"
            }
            Kind::IsolatedVm => {
                "fresh V8 isolate per execution, memory cap, timeout and wall clock"
            }
            Kind::Floor => "none: fresh QuickJS runtime in this process, no limits",
        }
    }
}

/// Where the other binaries of this build are.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The `wasmwire` CLI.
    pub cli: PathBuf,
    /// The guest compiled natively (`wasmwire-guest`).
    pub native_guest: PathBuf,
    /// The Node.js child.
    pub node_child: PathBuf,
}

impl Paths {
    /// The binaries next to this one (one `cargo build` makes them all).
    pub fn beside_this_binary() -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("locating this binary")?;
        let dir = exe.parent().context("this binary has no directory")?;
        Ok(Paths {
            cli: dir.join("wasmwire"),
            native_guest: dir.join("wasmwire-guest"),
            node_child: Path::new(env!("CARGO_MANIFEST_DIR")).join("node/child.js"),
        })
    }
}

/// How the wasm contender's engine is built (to measure each optimisation).
#[derive(Debug, Clone, Default)]
pub struct WasmConfig {
    /// The engine options; `None` is wasmwire's default.
    pub engine: Option<EngineOptions>,
}

/// A contender, ready to run programs.
#[derive(Debug, Clone)]
pub struct Contender {
    /// Which one.
    pub kind: Kind,
    sandbox: Option<Sandbox>,
    budget: Budget,
}

/// Budgets: every backend gets a wall clock; a memory cap where it holds one.
fn budget(max_memory: u64) -> Budget {
    Budget {
        wall_clock: Duration::from_secs(120),
        max_memory,
        ..Budget::default()
    }
}

/// Calls in flight per execution: the fan-out puts 1000 on the wire at once.
const MAX_IN_FLIGHT: usize = 2000;

impl Contender {
    /// Builds `kind`; `Ok(None)` when it cannot run on this machine (no Node.js).
    pub fn new(kind: Kind, paths: &Paths, wasm: &WasmConfig) -> anyhow::Result<Option<Self>> {
        let options = |engine: Option<EngineOptions>| SandboxOptions {
            max_in_flight: MAX_IN_FLIGHT,
            engine: engine.unwrap_or_default(),
            ..SandboxOptions::default()
        };
        let contender = match kind {
            Kind::Wasm => Contender {
                kind,
                sandbox: Some(Sandbox::new(options(wasm.engine.clone()))?),
                budget: budget(256 << 20),
            },
            Kind::Process => {
                if !paths.native_guest.is_file() {
                    bail!(
                        "{} is missing: build it with `cargo build --release -p wasmwire-guest`",
                        paths.native_guest.display()
                    );
                }
                let child = ProcessChild::new(format!("exec '{}'", paths.native_guest.display()));
                Contender {
                    kind,
                    sandbox: Some(Sandbox::with_process(child, options(None))),
                    budget: budget(256 << 20),
                }
            }
            Kind::Node => {
                if !node_available() {
                    return Ok(None);
                }
                // Node reserves far more address space than it uses: no RLIMIT_AS.
                let child =
                    ProcessChild::new(format!("exec node '{}'", paths.node_child.display()))
                        .without_memory_limit();
                Contender {
                    kind,
                    sandbox: Some(Sandbox::with_process(child, options(None))),
                    budget: budget(0),
                }
            }
            Kind::Floor => Contender {
                kind,
                sandbox: None,
                budget: budget(0),
            },
            Kind::QjsRuntime | Kind::QjsModule | Kind::IsolatedVm => {
                bail!(
                    "{} is measured by its Node.js driver (peers.rs)",
                    kind.name()
                )
            }
        };
        Ok(Some(contender))
    }

    /// Runs `program` once and checks its answer; the time from Start to Result.
    ///
    /// The floor runs on the calling thread, blocking it.
    pub async fn run(
        &self,
        program: &str,
        tools: &Tools,
        gate: &Arc<Gate>,
    ) -> anyhow::Result<Duration> {
        let started = Instant::now();
        let result = match &self.sandbox {
            Some(sandbox) => {
                let execution = Execution::new(program).budget(self.budget);
                let outcome = sandbox
                    .run(&execution, tools, CancellationToken::new())
                    .await?;
                outcome.result
            }
            None => floor::run(program, gate),
        };
        let took = started.elapsed();
        check(self.kind, program, &result)?;
        Ok(took)
    }

    /// Whether this contender runs executions on threads of its own (the
    /// floor) rather than as tasks.
    pub fn blocking(&self) -> bool {
        self.sandbox.is_none()
    }
}

/// Fails unless `result` is the program's expected answer.
pub fn check(kind: Kind, program: &str, result: &wire::Result) -> anyhow::Result<()> {
    let want = workload::expected(program);
    if !result.ok || result.value != want {
        bail!(
            "{}: expected {want}, got {}: {:?} {}",
            kind.name(),
            result.value,
            result.kind,
            result.error
        );
    }
    Ok(())
}

/// Whether `node` runs.
pub fn node_available() -> bool {
    std::process::Command::new("node")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
