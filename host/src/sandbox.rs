//! [`Sandbox`]: built once, runs many executions, each ending in one Result.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio_util::either::Either;
use tokio_util::sync::CancellationToken;
use wire::{
    Cancelled, DEFAULT_MAX_HELD, DEFAULT_MAX_INFLIGHT, Ending, FailureKind, MAX_FRAME_BYTES,
    Server, ServerOptions, Start, Starter, StarterError, Unfinished, VERSION,
};

use crate::backend::Backend;
use crate::console::{Console, ConsoleSink, DEFAULT_CONSOLE_CAP};
use crate::inline_wake::inline_wakes;
use crate::json;
use crate::process::ProcessChild;
use crate::source::{self, Language};
use crate::tools::Tools;
use crate::wasm::{ChildEnd, ChildFailure, EngineOptions, WasmChild};
use crate::{Budget, SandboxError, WireResult};

/// How long the parent waits for a child to wind down after its Result
/// (or after being told to stop) before it stops waiting. A wasm child is
/// stopped within one epoch tick; a process child is killed at once.
const WIND_DOWN: Duration = Duration::from_secs(2);

/// A Sandbox's settings.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// Calls in flight at once per execution (docs/protocol.md, invariant 4).
    pub max_in_flight: usize,
    /// The host's maximum per-call deadline; `None` leaves only the program's wish.
    pub max_call_deadline: Option<Duration>,
    /// Bytes of console output kept per execution.
    pub console_cap: usize,
    /// Bytes the parent holds at most for one execution on the child's
    /// behalf: args waiting for a tool, answers not yet written, a tool's
    /// output being read. A call that would go over is answered `limit`.
    pub max_held: usize,
    /// How the wasm engine is built.
    pub engine: EngineOptions,
}

impl SandboxOptions {
    /// The error a setting that would fail every tool call is refused with
    /// (each run returns it): a cap of 0 calls in flight, 0 bytes held, or
    /// a per-call deadline of zero (`None` is no deadline).
    pub fn check(&self) -> Result<(), SandboxError> {
        let refuse = |option, why| Err(SandboxError::BadOption { option, why });
        if self.max_in_flight == 0 {
            return refuse(
                "max_in_flight",
                "0 refuses every tool call; the default is 64",
            );
        }
        if self.max_held == 0 {
            return refuse(
                "max_held",
                "0 bytes holds no call's args, so every tool call fails",
            );
        }
        if self.max_call_deadline == Some(Duration::ZERO) {
            return refuse(
                "max_call_deadline",
                "a deadline of zero fails every call that waits; `None` is no deadline",
            );
        }
        Ok(())
    }
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            max_in_flight: DEFAULT_MAX_INFLIGHT,
            max_call_deadline: None,
            console_cap: DEFAULT_CONSOLE_CAP,
            max_held: DEFAULT_MAX_HELD,
            engine: EngineOptions::default(),
        }
    }
}

/// One program to run, and its budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// The JavaScript program: the body of an async function.
    pub program: String,
    /// Its budget; [`Budget::default`] unless set.
    pub budget: Budget,
    /// Where the program's console lines go as they happen, if anywhere.
    pub console_sink: Option<ConsoleSink>,
    /// What the program is written in, and so how it is prepared before
    /// it is sent (see [`crate::source`]): TypeScript has its types
    /// stripped, and in both languages a last expression is returned.
    /// `None` (the default) is JavaScript for a wasm child; a process child
    /// gets the program exactly as written, as it may evaluate another
    /// language (say `Some(Language::JavaScript)` to prepare it anyway).
    pub language: Option<Language>,
}

impl Execution {
    /// `program` with the default budget ([`Budget::default`]: 10 s, 64 MiB).
    pub fn new(program: impl Into<String>) -> Self {
        Execution {
            program: program.into(),
            budget: Budget::default(),
            console_sink: None,
            language: None,
        }
    }

    /// `program`, written in TypeScript, with the default budget.
    pub fn typescript(program: impl Into<String>) -> Self {
        Execution {
            language: Some(Language::TypeScript),
            ..Self::new(program)
        }
    }

    /// Sets the budget.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Sends each console line to `sink` as the program writes it (see
    /// [`ConsoleSink`]); [`Outcome::console`] still has them all, up to the
    /// cap.
    pub fn console_sink(mut self, sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.console_sink = Some(ConsoleSink::new(sink));
        self
    }
}

/// How an execution ended: always exactly one Result.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The Result as it travels on the wire. Its `calls` and `bytes` are the
    /// parent's own counts. [`Outcome::value`] reads it for you.
    pub result: WireResult,
    /// The program's console output (stderr), truncated at the cap with a marker.
    pub console: String,
    /// What the child claimed it counted, when the Result came from it.
    pub child_counts: Option<(u64, u64)>,
    /// Whether the child's counts cannot be true: fewer calls than the
    /// parent accepted, or more value bytes than the parent wrote. Every
    /// call the parent accepted was sent, and every byte the child read was
    /// written; the reverse need not hold. A child counts a call when it
    /// writes it, and a Request written just before the Result may be left
    /// unread by the parent (which then neither runs nor counts it); it
    /// counts a value when it reads it, and one that ended with calls
    /// unanswered never read the answers the parent wrote meanwhile.
    pub counts_disagree: bool,
    /// Wall time from start to Result.
    pub elapsed: Duration,
    /// The most the parent held at once for this execution on the child's
    /// behalf (never more than [`SandboxOptions::max_held`] plus failure
    /// answers, whose size and number are bounded).
    pub held_peak: usize,
    /// `result` read as a value or a failure: parsed on first ask, not by
    /// every execution (a value can be 16 MiB of JSON nobody reads).
    ended: OnceLock<Result<serde_json::Value, ExecutionError>>,
}

impl Outcome {
    fn new(result: WireResult) -> Self {
        Outcome {
            result,
            console: String::new(),
            child_counts: None,
            counts_disagree: false,
            elapsed: Duration::ZERO,
            held_peak: 0,
            ended: OnceLock::new(),
        }
    }

    /// What the program returned (`null` for nothing or `undefined`), or
    /// why it has no value: the Result read once, on the first call.
    ///
    /// The value is read into a tree, which can take fifty times the
    /// memory of its text (`[{"":0},{"":0},...]`: a 16 MiB value, about a
    /// GiB). A parent that only passes the value on reads
    /// [`Outcome::value_json`] instead; [`json::tree_bytes`] says what the
    /// tree would take before it is built.
    pub fn value(&self) -> Result<&serde_json::Value, &ExecutionError> {
        self.ended.get_or_init(|| ended(&self.result)).as_ref()
    }

    /// [`Outcome::value`] as JSON text, read without building a tree: the
    /// same value and the same failures, with each lone surrogate escape
    /// (`"\ud83d"`, which no Rust string holds) written `\ufffd`.
    pub fn value_json(&self) -> Result<Cow<'_, str>, ExecutionError> {
        let result = &self.result;
        if !result.ok {
            return Err(failure(result));
        }
        if result.value.is_empty() {
            return Ok(Cow::Borrowed("null"));
        }
        let survey = wire::json::survey(&result.value);
        if survey.depth > json::MAX_DEPTH {
            return Err(unreadable(json::ReadError::TooDeep {
                depth: survey.depth,
                max: json::MAX_DEPTH,
            }));
        }
        Ok(if survey.lone_surrogates > 0 {
            Cow::Owned(wire::json::replace_lone_surrogates(result.value.clone()))
        } else {
            Cow::Borrowed(&result.value)
        })
    }

    /// [`Outcome::value`], owned.
    pub fn into_value(self) -> Result<serde_json::Value, ExecutionError> {
        let Outcome {
            result,
            ended: read,
            ..
        } = self;
        read.into_inner().unwrap_or_else(|| ended(&result))
    }

    /// Whether the execution ended because the child broke the protocol.
    pub fn protocol_violation(&self) -> bool {
        !self.result.ok && self.result.kind.is_none()
    }
}

/// Equal when everything but the cached reading of `result` is (the
/// reading is `result`'s, whether or not it was made yet).
impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        // Every field named, so that a new one cannot be left out.
        let Outcome {
            result,
            console,
            child_counts,
            counts_disagree,
            elapsed,
            held_peak,
            ended: _,
        } = self;
        (
            result,
            console,
            child_counts,
            counts_disagree,
            elapsed,
            held_peak,
        ) == (
            &other.result,
            &other.console,
            &other.child_counts,
            &other.counts_disagree,
            &other.elapsed,
            &other.held_peak,
        )
    }
}

impl Eq for Outcome {}

/// The program's value from a Result, or its failure. A Result's value is
/// JSON by the time it gets here (the parent checks every Result it reads).
/// A string with half a surrogate pair in it reads as U+FFFD; a value that
/// nests deeper than [`json::MAX_DEPTH`] is an `invalid` failure here (its
/// text is still the Result's `value`); one that does not parse is the
/// child's fault.
fn ended(result: &WireResult) -> Result<serde_json::Value, ExecutionError> {
    if !result.ok {
        return Err(failure(result));
    }
    if result.value.is_empty() {
        return Ok(serde_json::Value::Null);
    }
    json::from_str(&result.value).map_err(unreadable)
}

/// A Result's failure, as [`Outcome::value`] gives it.
fn failure(result: &WireResult) -> ExecutionError {
    ExecutionError {
        kind: result.kind,
        message: result.error.clone(),
    }
}

/// Why a Result's value cannot be read.
fn unreadable(e: json::ReadError) -> ExecutionError {
    match e {
        json::ReadError::TooDeep { .. } => ExecutionError {
            kind: Some(FailureKind::Invalid),
            message: format!("the program's value cannot be read: {e}"),
        },
        json::ReadError::Json(e) => ExecutionError {
            kind: None,
            message: format!("protocol violation: the Result's value is not JSON: {e}"),
        },
    }
}

/// Why an execution has no value: its failure class and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.map_or("protocol violation", FailureKind::as_str))]
pub struct ExecutionError {
    /// The failure class; `None` when the child broke the protocol.
    pub kind: Option<FailureKind>,
    /// What went wrong, with the program's line and column where it has them.
    pub message: String,
}

impl ExecutionError {
    /// Whether the child broke the protocol (no failure class).
    pub fn is_protocol_violation(&self) -> bool {
        self.kind.is_none()
    }
}

/// Runs untrusted programs in children and serves their tool calls.
///
/// Built once; the engine, the compiled component and its pre-instantiation
/// are shared by every execution. `Send + Sync` and cheap to clone: run as
/// many executions at once as you like.
#[derive(Debug, Clone)]
pub struct Sandbox {
    backend: Backend,
    options: Arc<SandboxOptions>,
}

/// The built-in QuickJS guest component, built from guest/ by build.rs.
pub static GUEST_COMPONENT: &[u8] = include_bytes!(env!("WASMWIRE_GUEST_WASM"));

/// The SHA-256 of [`GUEST_COMPONENT`], computed by build.rs.
pub(crate) static GUEST_COMPONENT_SHA256: [u8; 32] = *include_bytes!(env!("WASMWIRE_GUEST_SHA256"));

impl Sandbox {
    /// A sandbox running the built-in QuickJS guest.
    pub fn new(options: SandboxOptions) -> Result<Self, SandboxError> {
        Self::with_component(GUEST_COMPONENT, options)
    }

    /// A sandbox running any component that implements the `child` world.
    pub fn with_component(component: &[u8], options: SandboxOptions) -> Result<Self, SandboxError> {
        let child = WasmChild::new(component, &options.engine)?;
        Ok(Sandbox {
            backend: Backend::Wasm(Arc::new(child)),
            options: Arc::new(options),
        })
    }

    /// A sandbox driving an executable as the child (the process backend).
    pub fn with_process(child: ProcessChild, options: SandboxOptions) -> Self {
        Sandbox {
            backend: Backend::Process(Arc::new(child)),
            options: Arc::new(options),
        }
    }

    /// Which budget items this sandbox's backend can hold.
    pub fn holds(&self) -> crate::Holds {
        self.backend.holds()
    }

    /// The error [`run`](Self::run) would refuse `budget` with, checked
    /// without running anything: a server that takes one budget for every
    /// execution refuses a bad one when it starts, not on each call.
    pub fn check_budget(&self, budget: &Budget) -> Result<(), SandboxError> {
        self.backend.check(budget)
    }

    /// Runs one execution to its one Result.
    ///
    /// Returns an error only when the execution could not start (a budget
    /// item the backend cannot hold, a process that cannot be spawned).
    /// Everything that happens once it has started, whatever the program or
    /// the child does, ends in the returned [`Outcome`].
    pub async fn run(
        &self,
        execution: &Execution,
        tools: &Tools,
        cancel: CancellationToken,
    ) -> Result<Outcome, SandboxError> {
        // The child, the Server and the Starter wake one another inside this
        // one task: poll again in place rather than through the scheduler,
        // which would wake another worker to steal the task.
        inline_wakes(self.execute(execution, tools, cancel)).await
    }

    async fn execute(
        &self,
        execution: &Execution,
        tools: &Tools,
        cancel: CancellationToken,
    ) -> Result<Outcome, SandboxError> {
        let budget = execution.budget;
        self.options.check()?;
        self.backend.check(&budget)?;
        let result_id = next_result_id();
        // TypeScript stripped, a last expression returned; a TypeScript
        // program that does not parse ends like any program with a syntax
        // error: one Result, kind `invalid`, at its own line and column.
        let language = match (execution.language, &self.backend) {
            (Some(language), _) => Some(language),
            (None, Backend::Wasm(_)) => Some(Language::JavaScript),
            (None, Backend::Process(_)) => None,
        };
        // Only TypeScript needs it: JavaScript (every `return 1`) is parsed
        // here, and pays for no path.
        let typescript = language == Some(Language::TypeScript);
        let cache_dir = typescript.then(|| self.backend.cache_dir()).flatten();
        if typescript {
            // The TypeScript compiler is compiled once (seconds, with a cold
            // cache) before the wall clock starts, as the guest is when the
            // Sandbox is built: making it is not the program's time. A
            // compiler that cannot be made says so when it is asked to
            // compile, below.
            tokio::select! {
                biased;
                () = cancel.cancelled() => {}
                _ = source::load_compiler(cache_dir.clone()) => {}
            }
        }
        // The wall clock runs from here: preparing the program is part of
        // the execution (swc's parse of some TypeScript grows faster than
        // its length), and a cancel ends the wait for it too.
        let started = Instant::now();
        // A wall clock past what the clock can count to never runs out.
        let out_of_time = (!budget.wall_clock.is_zero())
            .then(|| tokio::time::Instant::from_std(started).checked_add(budget.wall_clock))
            .flatten();
        let deadline = async {
            match out_of_time {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(deadline);
        // A byte-order mark is no part of the program an editor shows: left
        // in, QuickJS counted it as line 1's first column.
        let program = execution
            .program
            .strip_prefix('\u{feff}')
            .unwrap_or(&execution.program);
        let prepared = match language {
            None => Ok(Ok(source::Prepared::as_written(&execution.program))),
            Some(language) => tokio::select! {
                biased;
                () = cancel.cancelled() => Err(End::Cancelled),
                () = &mut deadline => Err(End::WallClock),
                prepared = source::prepare_within(
                    program,
                    language,
                    budget.max_memory,
                    cache_dir,
                ) => Ok(prepared),
            },
        };
        let prepared = match prepared {
            Ok(Ok(prepared)) => prepared,
            Ok(Err(e)) => {
                let kind = match e {
                    source::SourceError::Memory { .. } => FailureKind::Limit,
                    _ => FailureKind::Invalid,
                };
                let failure = WireResult::failure(&result_id, kind, e.to_string());
                return Ok(Outcome {
                    elapsed: started.elapsed(),
                    ..Outcome::new(failure)
                });
            }
            Err(end) => {
                return Ok(Outcome {
                    elapsed: started.elapsed(),
                    ..Outcome::new(end.into_result(&result_id, &budget))
                });
            }
        };
        let start = Start {
            v: VERSION,
            program: prepared.text,
            bindings: tools.bindings(),
            budget: budget.into(),
            max_inflight: Some(u32::try_from(self.options.max_in_flight).unwrap_or(u32::MAX)),
            // The server takes Withdraw messages: a program's aborted call
            // ends its handler here too.
            withdraw: true,
            // The child names places as the program's own.
            places: prepared.map.places(),
            result_id,
        };
        // The caller's program must fit before anything starts: a Start
        // that cannot be sent is the caller's error, not the child's.
        let start_frame = wire::encode(&start).map_err(|_| {
            // Blame what takes the frame: a program of one byte was told
            // it was too large when the tools took it all.
            let bound: usize = start
                .bindings
                .iter()
                .map(|b| b.name.len() + b.signature.len())
                .sum();
            if bound > execution.program.len() {
                SandboxError::ToolsTooLarge {
                    tools: start.bindings.len(),
                    bytes: bound,
                    max: MAX_FRAME_BYTES,
                }
            } else {
                SandboxError::ProgramTooLarge {
                    bytes: execution.program.len(),
                    max: MAX_FRAME_BYTES,
                }
            }
        })?;
        let console = Console::with_sink(self.options.console_cap, execution.console_sink.clone());
        // Stops the child and the server: on cancel, and once we have our answer.
        let stop = cancel.child_token();
        let child = self.backend.spawn(console.clone(), &budget, stop.clone())?;
        // A child in this task spends none of tokio's cooperative budget,
        // nor do the Server's reads and writes or the Starter: with it the
        // task yielded every few dozen calls, and on a multi-threaded
        // runtime each yield woke another worker to steal it (round trip
        // 9.1 -> 7.4 µs on two workers without). The handlers, the
        // embedder's code, still spend it, as any task's code does: one
        // whose every await is ready yields, and its timeout and the wall
        // clock can fire.
        let in_task = self.backend.child_in_task();

        let server = Server::new(
            ServerOptions {
                max_held: self.options.max_held,
                accept_until: out_of_time,
                max_in_flight: self.options.max_in_flight,
                max_call_deadline: self.options.max_call_deadline,
                max_calls: budget.max_calls,
                max_bytes: budget.max_bytes,
                frames_spend_budget: !in_task,
            },
            Arc::new(tools.clone()),
        );
        // The server stops apart from the child: a Result ends the child at
        // once, but the Requests it wrote before the Result may still be in
        // the call channel, and the server reads them (`drain`) before it
        // stops. Stopped with the child, a call made and not awaited went
        // uncounted when the child's last poll wrote both it and the Result
        // (`echo(300 KB)` not awaited: `calls` 0 and the call cancelled, in
        // 10 of 150 runs under CPU load).
        let stop_serving = cancel.child_token();
        let drain = CancellationToken::new();
        let server = server.drain_on(drain.clone());
        let tally = server.tally();
        let holdings = server.holdings();
        // The child (for the wasm backend), the Server and the Starter all
        // run in this one task: a frame handed from one to another wakes no
        // other thread.
        let serving = server.serve(child.call_reader, child.call_writer, stop_serving.clone());
        tokio::pin!(serving);
        let mut exit = child.exit;
        let starting = Starter::new(child.start_reader, child.start_writer).start_encoded(
            &start_frame,
            &start.result_id,
            &cancel,
            None,
        );
        let starting = if in_task {
            Either::Left(tokio::task::coop::unconstrained(starting))
        } else {
            Either::Right(starting)
        };
        tokio::pin!(starting);
        // The wall clock (`deadline`, above) is polled before anything the
        // child can keep busy: tokio's timers give way when a task has spent
        // its cooperative budget, so a timer polled after a flooded channel
        // would never fire.

        let mut serving_done = false;
        let mut exited: Option<ChildEnd> = None;
        let mut cancelled = Cancelled::new(&cancel);
        let end = loop {
            tokio::select! {
                biased;
                () = &mut cancelled => break End::Cancelled,
                () = &mut deadline => break End::WallClock,
                served = &mut serving, if !serving_done => {
                    serving_done = true;
                    match served {
                        Err(violation) if violation.is_cut_short() => {
                            break cut_short(
                                format!("on the call channel: {violation}"),
                                &mut exited,
                                &mut exit,
                                &mut deadline,
                                &cancel,
                            )
                            .await;
                        }
                        Err(violation) => break End::Protocol(format!("on the call channel: {violation}")),
                        // The child closed its call channel: the Result may still come.
                        Ok(Ending::Closed | Ending::Cancelled | Ending::Drained) => {}
                    }
                }
                // The child ended: whatever Result it wrote is already in
                // the start channel, and the Starter reads it next.
                ended = &mut exit, if exited.is_none() => exited = Some(ended),
                result = &mut starting => break match result {
                    Ok(result) => End::Result(result),
                    Err(StarterError::TimedOut(_)) => End::WallClock,
                    Err(StarterError::Cancelled) => End::Cancelled,
                    Err(StarterError::Protocol(e)) if e.is_cut_short() => {
                        cut_short(
                            format!("on the start channel: {e}"),
                            &mut exited,
                            &mut exit,
                            &mut deadline,
                            &cancel,
                        )
                        .await
                    }
                    Err(StarterError::Protocol(e)) => End::Protocol(format!("on the start channel: {e}")),
                    Err(StarterError::NoResult | StarterError::Send(_)) => match &exited {
                        Some(end) => End::Child(end.clone()),
                        None => {
                            // The child is gone or going: its end says why,
                            // unless the wall clock or a cancel comes first.
                            let waited = async {
                                match out_of_time {
                                    Some(_) => (&mut deadline).await,
                                    None => tokio::time::sleep(WIND_DOWN).await,
                                }
                            };
                            tokio::select! {
                                biased;
                                () = cancel.cancelled() => End::Cancelled,
                                end = &mut exit => {
                                    exited = Some(end.clone());
                                    End::Child(end)
                                }
                                () = waited => match out_of_time {
                                    Some(_) => End::WallClock,
                                    None => End::Protocol(format!(
                                        "on the start channel: the child closed it without a Result and was still running {WIND_DOWN:?} later"
                                    )),
                                },
                            }
                        }
                    },
                },
            }
        };

        // A Result that comes once the wall clock has run out is too late,
        // though the timer above may not have fired yet (tokio's timers
        // have a millisecond's grain): by then the Server refuses calls
        // for the wall clock, and a program that caught the refusal and
        // answered ended `ok` in 189 of 200 runs.
        let end = match end {
            End::Result(_) if out_of_time.is_some_and(|at| tokio::time::Instant::now() >= at) => {
                End::WallClock
            }
            end => end,
        };
        // Whatever ended it: stop the child and every handler, and wait for
        // both. After a Result the server first reads what the child wrote
        // (to the channel's end, which the child's exit makes), then drops
        // the handlers still running.
        stop.cancel();
        if matches!(end, End::Result(_)) {
            drain.cancel();
        } else {
            stop_serving.cancel();
        }
        if exited.is_none() {
            exited = tokio::time::timeout(WIND_DOWN, &mut exit).await.ok();
        }
        if exited.is_none() {
            // A child still not ended keeps its side open: nothing to drain to.
            stop_serving.cancel();
        }
        // A run stopped while it waited for a pool slot never started: its
        // wall clock's words say so, not what the program was doing.
        let unstarted = match &exited {
            Some(ChildEnd::Failed(ChildFailure::NoSlot { slots, waited, .. })) => {
                Some((*slots, *waited))
            }
            _ => None,
        };
        // One that started late, after a wait for a slot of a tenth of its
        // wall clock or more: 814 of 3,000 runs at once on 1,000 slots,
        // each given a slot near its deadline, were told the program was
        // computing.
        let late = match &exited {
            Some(ChildEnd::Failed(ChildFailure::WallClock {
                slot_wait: Some((slots, waited)),
                limit,
            })) if *waited >= *limit / 10 => Some((*slots, *waited)),
            _ => None,
        };
        // A process tree the kernel cut for memory went over its cap, even
        // if what was left of it wrote a Result before the cut was seen.
        let end = match (end, exited) {
            (End::Result(_), Some(over)) if over.voids_result() => End::Child(over),
            (end, _) => end,
        };
        // A child's side still open after the wind-down (a process's
        // descendant holds it): stop where the drain got to.
        if !serving_done && tokio::time::timeout(WIND_DOWN, &mut serving).await.is_err() {
            stop_serving.cancel();
            let _ = tokio::time::timeout(WIND_DOWN, &mut serving).await;
        }

        let (calls, bytes) = (tally.calls(), tally.bytes());
        let (mut result, child_counts) = match end {
            End::Result(result) => {
                let counts = (result.calls, result.bytes);
                (result, Some(counts))
            }
            other => (other.into_result(&start.result_id, &budget), None),
        };
        // A wall clock that ran out says what the execution was waiting on
        // (the native child's own Result words it as the parent does).
        if !result.ok
            && result.kind == Some(FailureKind::Limit)
            && result.error == wall_clock_ran_out(&budget)
        {
            result.error = match unstarted {
                Some((slots, waited)) => wall_clock_before_a_slot(&budget, slots, waited),
                None => {
                    let waiting = waiting_on(
                        result.error,
                        tally.unfinished().as_deref(),
                        tally.unwritten(),
                        matches!(self.backend, Backend::Process(_)),
                    );
                    match late {
                        Some((slots, waited)) => format!(
                            "{waiting} (it started only after {} ms, waiting for {}: \
                             `Pooling::max_children`)",
                            waited.as_millis(),
                            match slots {
                                1 => "the pool's only slot".to_owned(),
                                n => format!("one of the pool's {n} slots"),
                            }
                        ),
                        None => waiting,
                    }
                }
            };
        }
        result.calls = calls;
        result.bytes = bytes;
        // `const total = ...` last, or a `try` whose branches end in
        // expressions, and no answer: one was likely meant.
        if let Some(hint) = prepared.unanswered.as_deref()
            && result.ok
            && result.value == "null"
        {
            console.write(format!("warn: {hint}\n").as_bytes());
        }
        Ok(Outcome {
            console: console.finish(),
            counts_disagree: child_counts.is_some_and(|(child_calls, child_bytes)| {
                child_calls < calls || child_bytes > bytes
            }),
            child_counts,
            elapsed: started.elapsed(),
            held_peak: holdings.peak(),
            ..Outcome::new(result)
        })
    }
}

/// What ended an execution whose child left a frame cut short (`why`): a
/// child stopped while it wrote one (its own wall clock's epoch, which can
/// fall just before the parent's timer; its memory or stack; the kernel)
/// leaves that behind, and its end is the verdict. Only a child that goes
/// on, or ends without failing, broke the protocol. Seen: an honest guest
/// writing a 2 MB Request as its wall clock ran out was reported as a
/// protocol violation in 7 of 300 runs under load.
async fn cut_short(
    why: String,
    exited: &mut Option<ChildEnd>,
    exit: &mut (impl Future<Output = ChildEnd> + Unpin),
    deadline: &mut (impl Future<Output = ()> + Unpin),
    cancel: &CancellationToken,
) -> End {
    if exited.is_none() {
        *exited = tokio::select! {
            biased;
            () = cancel.cancelled() => return End::Cancelled,
            () = deadline => return End::WallClock,
            end = exit => Some(end),
            () = tokio::time::sleep(WIND_DOWN) => None,
        };
    }
    match exited {
        Some(end @ ChildEnd::Failed(_)) => End::Child(end.clone()),
        _ => End::Protocol(why),
    }
}

/// What ended an execution, before it is put as a Result.
#[derive(Debug)]
enum End {
    Result(wire::Result),
    Cancelled,
    WallClock,
    Protocol(String),
    Child(ChildEnd),
}

impl End {
    fn into_result(self, result_id: &str, budget: &Budget) -> WireResult {
        let failure = |kind, why: String| wire::Result::failure(result_id, kind, why);
        let wall_clock = || failure(FailureKind::Limit, wall_clock_ran_out(budget));
        match self {
            End::Result(result) => result,
            End::Cancelled => failure(FailureKind::Cancelled, "the execution was cancelled".into()),
            End::WallClock => wall_clock(),
            End::Protocol(why) => {
                wire::Result::protocol_error(result_id, format!("protocol violation {why}"))
            }
            End::Child(ChildEnd::Exited { code }) => wire::Result::protocol_error(
                result_id,
                format!(
                    "protocol violation: the child exited (code {code}) without sending a Result"
                ),
            ),
            End::Child(ChildEnd::Failed(f)) => match f {
                ChildFailure::WallClock { .. } => wall_clock(),
                ChildFailure::MemoryLimit { .. } | ChildFailure::StackOverflow => {
                    failure(FailureKind::Limit, f.to_string())
                }
                ChildFailure::Cancelled
                | ChildFailure::NoSlot {
                    cancelled: true, ..
                } => failure(FailureKind::Cancelled, "the execution was cancelled".into()),
                ChildFailure::NoSlot { slots, waited, .. } => failure(
                    FailureKind::Limit,
                    wall_clock_before_a_slot(budget, slots, waited),
                ),
                ChildFailure::Trap { .. } | ChildFailure::Instantiate { .. } => {
                    failure(FailureKind::Unknown, f.to_string())
                }
            },
        }
    }
}

/// What a Result says when the wall clock ran out.
fn wall_clock_ran_out(budget: &Budget) -> String {
    format!("wall clock of {:?} ran out", budget.wall_clock)
}

/// What a Result says when the wall clock ran out while the run waited for
/// a pool slot.
fn wall_clock_before_a_slot(budget: &Budget, slots: u32, waited: Duration) -> String {
    format!(
        "{} before the program started: {}",
        wall_clock_ran_out(budget),
        crate::wasm::no_slot(slots, waited)
    )
}

/// Bytes of answers the child had not read, at least, for a wall clock
/// that ran out with no call running to say so: a large answer on its
/// way, not a refusal of a few bytes.
const UNREAD_TOLD: usize = 64 << 10;

/// Tools named in [`waiting_on`]; the rest are counted.
const TOOLS_NAMED: usize = 5;

/// The longest tool name [`waiting_on`] writes whole (a host may name
/// tools at length; the Result's error stays short).
const NAME_SHOWN: usize = 64;

/// `ran_out` with what the execution was waiting on when it did: the tool
/// calls whose handlers were still running, by tool, longest first; or, if
/// none was, answers of at least [`UNREAD_TOLD`] bytes (`unwritten`) the
/// child had not yet read (a large answer on its way was told as the
/// program computing); or else that the program itself was busy.
/// `unfinished` is `None` when the server did not stop in time to say. Of
/// a `process` child, which may be any program, the parent cannot tell
/// busy from stuck.
fn waiting_on(
    ran_out: String,
    unfinished: Option<&[Unfinished]>,
    unwritten: usize,
    process: bool,
) -> String {
    let Some(unfinished) = unfinished else {
        return ran_out;
    };
    if unfinished.is_empty() && unwritten >= UNREAD_TOLD {
        return format!(
            "{ran_out} with no tool call running: the child had not yet read {unwritten} bytes \
             of tool answers (it was taking one in, or computing)"
        );
    }
    if unfinished.is_empty() {
        let busy = if process {
            "the child was computing, waiting on a timer, or not answering (the parent cannot tell which)"
        } else {
            "the program was computing or waiting on a timer"
        };
        return format!("{ran_out} with no tool call running: {busy}");
    }
    let shown = |tool: &str| match tool.char_indices().nth(NAME_SHOWN) {
        Some((cut, _)) => format!("{}...", &tool[..cut]),
        None => tool.to_owned(),
    };
    // By tool, in the order of each tool's longest-running call.
    let mut tools: Vec<(&str, usize, Duration)> = Vec::new();
    for call in unfinished {
        match tools.iter_mut().find(|(tool, ..)| *tool == call.tool) {
            Some((_, n, _)) => *n += 1,
            None => tools.push((&call.tool, 1, call.running_for)),
        }
    }
    let for_how_long = |d: Duration| match d.as_millis() {
        ms @ 0..1000 => format!("{ms} ms"),
        _ => format!("{:.1} s", d.as_secs_f64()),
    };
    let mut named: Vec<String> = tools
        .iter()
        .take(TOOLS_NAMED)
        .map(|&(tool, n, longest)| match n {
            1 => format!("{} (for {})", shown(tool), for_how_long(longest)),
            n => format!(
                "{} x{n} (the longest for {})",
                shown(tool),
                for_how_long(longest)
            ),
        })
        .collect();
    if tools.len() > TOOLS_NAMED {
        let rest = &tools[TOOLS_NAMED..];
        let calls: usize = rest.iter().map(|&(_, n, _)| n).sum();
        let more = if calls == 1 {
            "more call"
        } else {
            "more calls"
        };
        let others = plural(rest.len(), "other tool");
        named.push(format!("and {calls} {more} to {others}"));
    }
    // Said as what was still running, not as the cause: the program may
    // have been computing beside them.
    format!(
        "{ran_out} with {} still running: {}",
        plural(unfinished.len(), "tool call"),
        named.join(", ")
    )
}

/// `n thing`, or `n things`.
fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// A process-unique id for each Start, so a stale Result cannot pass for a new one.
fn next_result_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "r{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;

    #[test]
    fn the_value_as_text_is_the_value_read_and_fails_as_it_does() {
        let ok = |value: &str| Outcome::new(WireResult::success("r1", value));
        for text in [r#"{"a":[1,"x"]}"#, "null", r#""\ud83d ok""#, "[1.5e300,-0]"] {
            let o = ok(text);
            let read: serde_json::Value =
                json::from_str(&o.value_json().unwrap()).expect("still JSON");
            assert_eq!(&read, o.value().unwrap(), "{text}");
        }
        assert_eq!(ok(r#""\ud83d""#).value_json().unwrap(), r#""\ufffd""#);
        assert_eq!(ok("").value_json().unwrap(), "null");
        let levels = json::MAX_DEPTH + 1;
        let o = ok(&format!("{}{}", "[".repeat(levels), "]".repeat(levels)));
        assert_eq!(&o.value_json().unwrap_err(), o.value().unwrap_err());
        let o = Outcome::new(WireResult::failure(
            "r1",
            FailureKind::Limit,
            "memory limit",
        ));
        assert_eq!(&o.value_json().unwrap_err(), o.value().unwrap_err());
    }

    /// The built-in guest, pre-initialised and pooled (the defaults), shared.
    fn sandbox() -> &'static Sandbox {
        static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
        SANDBOX.get_or_init(|| {
            Sandbox::new(SandboxOptions::default()).expect("the built-in guest loads")
        })
    }

    async fn value(program: &str) -> String {
        let outcome = sandbox()
            .run(
                &Execution::new(program),
                &Tools::new(),
                CancellationToken::new(),
            )
            .await
            .expect("the execution starts");
        assert!(outcome.result.ok, "{outcome:#?}");
        outcome.result.value
    }

    /// What a wall clock that ran out says it was waiting on: bounded
    /// whatever the tools' names (six names of 20,000 characters made an
    /// error of 100 KB, where every other is cut to 8 KiB), and worded as
    /// what was still running.
    #[test]
    fn what_was_still_running_is_said_briefly() {
        let call = |tool: &str, ms| Unfinished {
            tool: tool.to_owned(),
            running_for: Duration::from_millis(ms),
        };
        let ran_out = || "wall clock of 1s ran out".to_owned();
        assert_eq!(
            waiting_on(ran_out(), None, 0, false),
            "wall clock of 1s ran out"
        );
        assert!(waiting_on(ran_out(), Some(&[]), 0, false).ends_with(
            "with no tool call running: the program was computing or waiting on a timer"
        ));
        // Answers unread: said when large, and only with no call running
        // (the calls named below are said whatever was unwritten).
        assert!(
            waiting_on(ran_out(), Some(&[]), UNREAD_TOLD, false).ends_with(
                "with no tool call running: the child had not yet read 65536 bytes of tool \
                 answers (it was taking one in, or computing)"
            )
        );
        assert!(
            waiting_on(ran_out(), Some(&[]), UNREAD_TOLD - 1, false)
                .ends_with("the program was computing or waiting on a timer")
        );
        assert!(waiting_on(ran_out(), Some(&[]), 0, true).ends_with(
            "with no tool call running: the child was computing, waiting on a timer, or not answering (the parent cannot tell which)"
        ));
        assert_eq!(
            waiting_on(
                ran_out(),
                Some(&[call("a", 1500), call("b", 20), call("a", 900)]),
                UNREAD_TOLD,
                false
            ),
            "wall clock of 1s ran out with 3 tool calls still running: a x2 (the longest for 1.5 s), b (for 20 ms)"
        );
        let long: Vec<Unfinished> = (0..7)
            .map(|i| call(&format!("{i}{}", "n".repeat(20_000)), 900 - i))
            .chain([call("z", 1)])
            .collect();
        let said = waiting_on(ran_out(), Some(&long), 0, false);
        assert!(said.len() < 600, "{} bytes", said.len());
        assert!(
            said.ends_with("and 3 more calls to 3 other tools"),
            "{said}"
        );
        assert!(
            said.contains(&format!("0{}... (for 900 ms)", "n".repeat(63))),
            "{said}"
        );
        let one_more = [0, 1, 2, 3, 4, 5].map(|i| call(&i.to_string(), 10));
        let said = waiting_on(ran_out(), Some(&one_more), 0, false);
        assert!(said.ends_with("and 1 more call to 1 other tool"), "{said}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_execution_cannot_see_globals_another_set() {
        // Every run starts from the same pre-initialised snapshot, and the
        // pool hands the next run the slot this one used: what the first
        // program leaves behind must be gone for the second.
        let first = r#"
            globalThis.leaked = "secret";
            Object.prototype.polluted = true;
            JSON.stringify = () => "forged";
            Math.random = () => 4;
            return typeof leaked;
        "#;
        let second = r#"
            return [typeof globalThis.leaked, ({}).polluted === undefined,
                    JSON.parse(JSON.stringify([1])).length, Math.random() !== 4];
        "#;
        for _ in 0..3 {
            assert_eq!(value(first).await, r#""string""#);
            assert_eq!(value(second).await, r#"["undefined",true,1,true]"#);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn math_random_is_seeded_afresh_for_each_execution() {
        // A seed taken when the snapshot was made would give every
        // execution the same sequence.
        let program = "return [Math.random(), Math.random()]";
        let runs = [
            value(program).await,
            value(program).await,
            value(program).await,
        ];
        assert_ne!(runs[0], runs[1]);
        assert_ne!(runs[1], runs[2]);
    }
}
