//! TypeScript compiled in a sandbox of its own.
//!
//! swc cannot be stopped midway, and some TypeScript costs it far more than
//! its length: 300 bytes of nested `(<any>` casts take its parse weeks, 447
//! bytes of enum members that join earlier ones took its transform 1.9 GiB.
//! So the host never runs swc on TypeScript. The TypeScript compiler
//! (package `wasmwire-typescript`: the host's own preparation, with swc's
//! stripper) is a WASI command component, built with the guest and shipped
//! with it; each TypeScript program is prepared by a fresh instance of it,
//! given the program on standard input and nothing else (no arguments, no
//! environment, no files, no sockets), which writes its answer on standard
//! output ([`Compiled`]).
//!
//! That instance is held to what the execution is held to: its linear
//! memory to the execution's memory cap, and its time to the execution's
//! wall clock, because it runs as part of the future that waits for it,
//! yielding every [`YIELD_FUEL`] units of fuel: dropping the future (the
//! wall clock, a cancel) ends the compile there, and its memory goes with
//! the store. Its stacks are bounded too, so a program nested past them
//! ends in a trap, said as "nests too deeply".
//!
//! A process has one compiler, made on first use. Its compiled form is
//! cached where the guest's is: a Sandbox's own cache directory
//! (`EngineOptions::cache_dir`; none, and it is compiled in memory), the
//! default one for a process backend and for [`prepare`](super::prepare)
//! and [`prepare_async`](super::prepare_async). The first directory asked
//! for is where it is loaded from; a later Sandbox's directory that lacks
//! it is given a copy, for the next process.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, Trap};
use wasmtime_wasi::p2::bindings::Command;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::compiled::{Compiled, CompiledStep};
use super::{Prepared, SourceError};
use crate::wasm::limits::MemoryLimiter;

/// The TypeScript compiler component (see `build.rs`).
pub(crate) static COMPONENT: &[u8] = include_bytes!(env!("WASMWIRE_TYPESCRIPT_WASM"));

/// Its SHA-256, computed when the library was built.
pub(crate) static COMPONENT_SHA256: [u8; 32] = *include_bytes!(env!("WASMWIRE_TYPESCRIPT_SHA256"));

/// Fuel the compiler burns between two yields to the caller's executor
/// (about a millisecond of its work): how late a wall clock or a cancel
/// can stop it.
const YIELD_FUEL: u64 = 1_000_000;

/// The most of the compiler's own stack its compiled code may use (the
/// stack of wasm frames; the Rust shadow stack is in its linear memory).
const MAX_WASM_STACK: usize = 8 << 20;

/// The most the compiler may write as its answer: the JavaScript, and for a
/// transformed program its input, output and source map (a 64 KiB program
/// comes to well under a megabyte). Past it the answer is cut short and
/// does not read.
const MAX_ANSWER: usize = 64 << 20;

/// The most it may write on its standard error (a panic's message).
const MAX_STDERR: usize = 64 << 10;

/// The engine and the compiled component, made once per process.
struct Compiler {
    engine: Engine,
    component: Component,
    linker: Linker<State>,
}

/// One instance's state: its WASI context and its memory's limiter.
struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The process's one compiler, made on first use.
static COMPILER: OnceLock<Compiler> = OnceLock::new();

/// The last failure to make [`COMPILER`], and when.
static FAILED: Mutex<Option<(Instant, String)>> = Mutex::new(None);

/// How long a failure to make the compiler is the answer to every later
/// TypeScript program, before one tries again.
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// `cell`'s value, made by `make` if it has none yet. A failure is not
/// kept in the cell, only in `failed`, for [`RETRY_AFTER`]: a passing
/// cause (memory short for a moment, a full disk) no longer ends
/// TypeScript for the rest of a long-lived host's life, and a lasting one
/// costs one attempt (seconds) a period, not one a program. `failed`'s lock
/// is held while `make` runs, so the value is made once.
fn made_once<T>(
    cell: &'static OnceLock<T>,
    failed: &Mutex<Option<(Instant, String)>>,
    now: Instant,
    make: impl FnOnce() -> Result<T, String>,
) -> Result<&'static T, String> {
    let mut failed = failed.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(made) = cell.get() {
        return Ok(made);
    }
    if let Some((when, why)) = &*failed
        && now.saturating_duration_since(*when) < RETRY_AFTER
    {
        return Err(why.clone());
    }
    match make() {
        Ok(made) => {
            *failed = None;
            Ok(cell.get_or_init(|| made))
        }
        Err(why) => {
            *failed = Some((now, why.clone()));
            Err(why)
        }
    }
}

/// Whether this process has not yet made sure `dir` holds the compiler
/// (among the last [`TRIED`] directories): every TypeScript program pays
/// only this check, not a look at the directory (a key's SHA-256 and a
/// `stat`), and a directory the compiler cannot be stored in (read-only,
/// full) is not tried again at a serialisation of megabytes each time.
fn first_try(dir: &Path) -> bool {
    static TRIED_IN: Mutex<VecDeque<PathBuf>> = Mutex::new(VecDeque::new());
    let mut tried = TRIED_IN.lock().unwrap_or_else(PoisonError::into_inner);
    if tried.iter().any(|d| d == dir) {
        return false;
    }
    if tried.len() == TRIED {
        tried.pop_front();
    }
    tried.push_back(dir.to_path_buf());
    true
}

/// How many directories [`first_try`] remembers.
const TRIED: usize = 64;

impl Compiler {
    /// The process's compiler, made on first use (loaded from `cache_dir`,
    /// or compiled and stored there), and stored in `cache_dir` when a later
    /// caller names a directory that lacks it; why not, if it cannot be
    /// made. Its code is the same whichever directory it came from, so one
    /// serves every Sandbox: one each, kept for good, cost 4.7 MiB and a
    /// mapping for every cache directory a process ever used. Loading and
    /// storing happen on tokio's blocking pool (seconds with a cold cache),
    /// which the caller's task waits for without holding its thread.
    async fn shared(cache_dir: Option<PathBuf>) -> Result<&'static Compiler, SourceError> {
        let failed = |e: tokio::task::JoinError| {
            SourceError::Failed(format!("the TypeScript compiler's load failed: {e}"))
        };
        let made = match COMPILER.get() {
            Some(compiler) => {
                if let Some(dir) = cache_dir
                    && first_try(&dir)
                {
                    tokio::task::spawn_blocking(move || {
                        crate::wasm::cache::keep(
                            &compiler.engine,
                            COMPONENT,
                            &compiler.component,
                            &dir,
                        );
                    })
                    .await
                    .map_err(failed)?;
                }
                Ok(compiler)
            }
            None => tokio::task::spawn_blocking(move || {
                made_once(&COMPILER, &FAILED, Instant::now(), || {
                    Compiler::new(cache_dir.as_deref()).map_err(|e| format!("{e:#}"))
                })
            })
            .await
            .map_err(failed)?,
        };
        made.map_err(|why| {
            SourceError::Failed(format!(
                "the TypeScript compiler could not be loaded: {why}"
            ))
        })
    }

    fn new(cache_dir: Option<&Path>) -> wasmtime::Result<Compiler> {
        let mut config = Config::new();
        config
            .consume_fuel(true)
            .max_wasm_stack(MAX_WASM_STACK)
            .async_stack_size(MAX_WASM_STACK + (1 << 20))
            .memory_init_cow(true);
        let engine = Engine::new(&config)?;
        let component = crate::wasm::cache::load_or_compile(&engine, COMPONENT, cache_dir)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        Ok(Compiler {
            engine,
            component,
            linker,
        })
    }
}

/// Makes the compiler for `cache_dir` ready, or says why it cannot be.
pub(crate) async fn load(cache_dir: Option<PathBuf>) -> Result<(), SourceError> {
    Compiler::shared(cache_dir).await.map(drop)
}

/// `program` (TypeScript) prepared in a fresh instance of the compiler whose
/// linear memory may grow to `max_memory` bytes (0: as far as a 32-bit
/// memory goes), the compiler's compiled form cached in `cache_dir` (none:
/// compiled in memory, once per process). Dropping the future ends the
/// compile.
pub(crate) async fn prepare(
    program: &str,
    max_memory: u64,
    cache_dir: Option<PathBuf>,
) -> Result<Prepared, SourceError> {
    let compiler = Compiler::shared(cache_dir).await?;
    let answer = MemoryOutputPipe::new(MAX_ANSWER);
    let stderr = MemoryOutputPipe::new(MAX_STDERR);
    let wasi = WasiCtx::builder()
        .stdin(MemoryInputPipe::new(program.as_bytes().to_vec()))
        .stdout(answer.clone())
        .stderr(stderr.clone())
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }))
        .build();
    let mut store = Store::new(
        &compiler.engine,
        State {
            wasi,
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(max_memory),
        },
    );
    store.limiter(|state| &mut state.limiter);
    let failed = |why: String| SourceError::Failed(format!("the TypeScript compiler {why}"));
    store
        .set_fuel(u64::MAX)
        .and_then(|()| store.fuel_async_yield_interval(Some(YIELD_FUEL)))
        .map_err(|e| failed(format!("could not be started: {e}")))?;
    let ran =
        match Command::instantiate_async(&mut store, &compiler.component, &compiler.linker).await {
            Ok(command) => command.wasi_cli_run().call_run(&mut store).await,
            Err(e) => Err(e),
        };
    let refused = store.data().limiter.refused().is_some();
    drop(store);
    if refused {
        return Err(SourceError::Memory { max_memory });
    }
    match ran {
        Ok(Ok(())) => {}
        Ok(Err(())) => {
            let said = String::from_utf8_lossy(&stderr.contents())
                .trim()
                .to_owned();
            return Err(failed(format!("failed: {said}")));
        }
        Err(e) => {
            return Err(match e.downcast_ref::<Trap>() {
                Some(Trap::StackOverflow | Trap::MemoryOutOfBounds) => SourceError::Failed(
                    "the TypeScript program nests too deeply to be compiled".to_owned(),
                ),
                _ => failed(format!("stopped: {e}")),
            });
        }
    }
    serde_json::from_slice::<Compiled>(&answer.contents())
        .ok()
        .filter(maps_fit)
        .and_then(Compiled::into_prepared)
        .unwrap_or_else(|| Err(failed("gave an answer that does not read".to_owned())))
}

/// The most source map the host reads back from the compiler, as JSON. A
/// map's tokens take the host many times their text once read, and the
/// compiler runs untrusted programs: were one to subvert it, this bounds
/// what its answer can make the host hold. A transformed program of 64 KiB
/// has a map of a few hundred KiB (a long folded string is one token).
const MAX_SOURCE_MAP: usize = 4 << 20;

/// Whether every source map in `compiled` is within [`MAX_SOURCE_MAP`].
fn maps_fit(compiled: &Compiled) -> bool {
    match compiled {
        Compiled::Prepared { steps, .. } => steps.iter().all(|step| match step {
            CompiledStep::Generated { map, .. } => map.len() <= MAX_SOURCE_MAP,
            CompiledStep::Inserted { .. } => true,
        }),
        Compiled::Syntax { .. } | Compiled::Failed(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generated(map_bytes: usize) -> Compiled {
        Compiled::Prepared {
            text: "1".to_owned(),
            steps: vec![CompiledStep::Generated {
                map: " ".repeat(map_bytes),
                first_line: 1,
                first_column: 1,
                head_columns: 0,
                input: String::new(),
                output: String::new(),
            }],
            unanswered: None,
        }
    }

    #[test]
    fn a_failure_to_make_the_compiler_is_answered_for_a_while_then_tried_again() {
        static CELL: OnceLock<u32> = OnceLock::new();
        let failed = Mutex::new(None);
        let tries = std::cell::Cell::new(0);
        let start = Instant::now();
        let attempt = |at: Duration, answer: Result<u32, String>| {
            made_once(&CELL, &failed, start + at, || {
                tries.set(tries.get() + 1);
                answer
            })
        };
        let no_memory = || Err::<u32, _>("no memory".to_owned());
        let answered = || Err::<&u32, _>("no memory".to_owned());
        assert_eq!(attempt(Duration::ZERO, no_memory()), answered());
        // Within the period: the same answer, no second attempt.
        assert_eq!(attempt(RETRY_AFTER / 2, Ok(1)), answered());
        assert_eq!(tries.get(), 1);
        // After it: tried again, and a success is kept for good.
        assert_eq!(attempt(RETRY_AFTER, Ok(2)), Ok(&2));
        assert_eq!(attempt(RETRY_AFTER * 2, Ok(3)), Ok(&2));
        assert_eq!(tries.get(), 2);
        assert!(failed.lock().unwrap().is_none());
    }

    #[test]
    fn an_answer_with_a_source_map_past_the_bound_is_not_read() {
        assert!(maps_fit(&generated(MAX_SOURCE_MAP)));
        assert!(!maps_fit(&generated(MAX_SOURCE_MAP + 1)));
        assert!(maps_fit(&Compiled::Failed("x".to_owned())));
    }
}
