//! The wasmwire child's evaluator: runs one JavaScript program with QuickJS
//! and calls the parent's tools over the `wire` protocol.
//!
//! The child (`main.rs`) takes one [`wire::Start`] from its start channel,
//! hands it to an [`Evaluator`] together with a [`wire::Client`] on its
//! stdin/stdout, and writes back the one [`wire::Result`] the evaluator
//! returns. Everything in between is here, and none of it depends on wasm,
//! so the tests drive it natively through a scripted [`Transport`].
//!
//! The JavaScript surface (README, "The library"):
//!
//! * the program is the body of an async function: top-level `await` and
//!   `return` work, and the Result's value is the JSON text of what it
//!   returns (`undefined` becomes `null`);
//! * each binding is a global async function (when its name allows) and
//!   `host.<name>`; `host.call(name, args, {deadlineMs, signal})` sets a
//!   deadline, or an AbortSignal that withdraws the call;
//! * a call resolves to its value parsed as JSON (or the raw string) and
//!   rejects with a `ToolError` carrying `kind`, `retryable`, `message` and
//!   `tool`;
//! * calls are paced to the Start's `max_inflight` (64 when absent): at
//!   most that many on the wire, the rest queued in order;
//! * `setTimeout`, `setInterval`, `clearTimeout` and `clearInterval` run in
//!   real time; a pending timer keeps the program alive, and timers still
//!   pending when it settles are dropped;
//! * `console` has Node's methods (`log`, `warn`, `table`, `count`, `time`,
//!   `group`, `assert`, `trace`, ...), each call one line (a table's row
//!   each), values shown as Node's `util.inspect` shows them;
//! * errors name their line and column in the program;
//! * the web APIs of a Worker that need no network or filesystem (`web`):
//!   URL, URLSearchParams, TextEncoder, TextDecoder, structuredClone,
//!   crypto (with `subtle.digest`), Event, CustomEvent, EventTarget,
//!   AbortController, AbortSignal, `performance`; numbers formatted as
//!   en-US and strings compared in English order, exactly as ICU does
//!   (`Intl.NumberFormat`, `toLocaleString`, `Intl.Collator`,
//!   `localeCompare`), and the other locale methods throw instead of
//!   answering as if there were a locale.
//!
//! One module per concern: `bindings` (`host` and the global functions),
//! `tool_error`, `console` and `timers` (made before the snapshot; they find
//! the run in progress when called), `program` (the wrapper, and places in
//! the program), `event_loop` (jobs, timers and the call channel), `calls`
//! (the call table), `outcome` (endings and their Results), `limits` (memory
//! and stack), `intrinsics` (what is captured before the program runs), `own` (the
//! guest's own allocations, counted),
//! `session` (one run's state, and how to find it), `transport`, `channel`
//! (the call channel the child itself uses: it reads while it writes),
//! `web` (the web APIs, set up before the snapshot).
//!
//! ```
//! use wire::{Client, Response, Start, StartBinding, StartBudget};
//!
//! let start = Start {
//!     v: 1,
//!     program: "const logs = await get_logs('db1', 2);\nreturn logs.length;".into(),
//!     bindings: vec![StartBinding { name: "get_logs".into(), signature: "get_logs(host, count)".into() }],
//!     budget: StartBudget::default(),
//!     max_inflight: None,
//!     withdraw: false,
//!     places: vec![],
//!     result_id: "r1".into(),
//! };
//! // The parent's answer to call "1", and a buffer for the child's Requests.
//! let answers = wire::encode(&Response::success("1", r#"["a","b"]"#)).unwrap();
//! let mut requests = Vec::new();
//! let mut client = Client::new(&answers[..], &mut requests);
//!
//! let result = wasmwire_guest::evaluate(&start, &mut client, std::io::sink());
//! assert_eq!((result.ok, result.value.as_str(), result.calls), (true, "2", 1));
//! ```
#![warn(missing_docs)]
// Tests may unwrap: a panic there is a failed test, not a crashed child.
#![cfg_attr(test, allow(clippy::unwrap_used))]

/// One of the set-up scripts (`src/*.js`), as `build.rs` embeds it:
/// without comment-only lines and indentation, deflated (a
/// [`setup::Script`]).
macro_rules! script {
    ($path:literal) => {
        crate::setup::Script::deflated(include_bytes!(concat!(
            env!("OUT_DIR"),
            "/",
            $path,
            ".deflate"
        )))
    };
}

mod bindings;
mod c_format;
mod c_strtod;
mod calls;
pub mod channel;
mod console;
mod event_loop;
mod heap;
mod hints;
mod intrinsics;
mod limits;
mod outcome;
mod own;
mod pending;
mod program;
mod random;
mod session;
mod setup;
mod sort;
mod stack;
pub mod stop;
mod throw_site;
mod timers;
mod tool_error;
mod transport;
mod web;

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use rquickjs::{Context, Runtime};
use wire::{FailureKind, Start};

use crate::calls::ToolTally;
use crate::event_loop::Settled;
use crate::heap::Heap;
use crate::intrinsics::{Intrinsics, Originals};
use crate::outcome::{Ending, Judge};
use crate::program::Sent;
use crate::session::Session;
use crate::web::Web;

pub use crate::channel::{Channel, Inbox, Link, OUT_BATCH, ThreadLink};
pub use crate::own::OwnAllocator;
pub use crate::stop::{Reason, Stop};
pub use crate::transport::Transport;

// The library's own tests count what they allocate, as the child does.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: OwnAllocator = OwnAllocator;

/// QuickJS could not be set up (in practice: no memory for a runtime).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// QuickJS refused (no memory).
    #[error("could not set up the JavaScript engine: {0}")]
    Engine(#[from] rquickjs::Error),
    /// Its stack limit could not be set (`limits::configure_stack`).
    #[error("could not set up the JavaScript engine: {0}")]
    Stack(&'static str),
}

/// One QuickJS runtime and context, ready to run one program.
///
/// Set-up is separate from [`run`](Evaluator::run) so that it can happen
/// ahead of time: the child component builds its evaluator in
/// `wizer-initialize` and the host snapshots it. Nothing that must differ
/// between runs is fixed at set-up (`Math.random` is seeded when a run
/// starts). An evaluator runs exactly one program: afterwards its globals
/// are that program's.
pub struct Evaluator {
    /// The web surface's internals: first, so that they are dropped before
    /// the runtime they live in.
    web: Web,
    /// The originals and `ToolError` (see `intrinsics`); the same.
    originals: Originals,
    /// Owned for the evaluator's life; the context and the heap reach it
    /// themselves, and nothing here reads it since the heap sets its
    /// collections.
    _runtime: Runtime,
    context: Context,
    /// QuickJS's heap, which holds the run's memory limit and counts what
    /// QuickJS holds.
    heap: Heap,
    /// The run's stop, which the interrupt handler reads.
    stop: Rc<RefCell<Stop>>,
    used: bool,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("used", &self.used)
            .finish_non_exhaustive()
    }
}

impl Evaluator {
    /// A fresh runtime with the standard intrinsics.
    pub fn new() -> Result<Self, SetupError> {
        let stop = Rc::new(RefCell::new(Stop::new()));
        let heap = Heap::new(stop.clone());
        let runtime = Runtime::new_with_alloc(heap.allocator())?;
        limits::install_rejection_tracker(&runtime, &stop);
        limits::install_interrupt_handler(&runtime, &heap, &stop);
        let context = Context::full(&runtime)?;
        let (web, originals) = context.with(|ctx| {
            limits::configure_stack(&ctx).map_err(SetupError::Stack)?;
            heap.attach(&ctx);
            let web = Web::install(&ctx)?;
            let originals = Originals::install(&ctx)?;
            // The console and the timers find the run's session when they
            // are called, so they are made here, before the snapshot, and
            // not by every run (measured: a tenth of a run of `return 1`,
            // and 8 of the memory image's pages written by each execution).
            stack::install(&ctx, &web)?;
            console::install(&ctx, &web)?;
            timers::install(&ctx)?;
            Intrinsics::capture(&ctx, &originals, &web)?.adopt_timers(&ctx)?;
            Ok::<_, SetupError>((web, originals))
        })?;
        Ok(Evaluator {
            web,
            originals,
            _runtime: runtime,
            context,
            heap,
            stop,
            used: false,
        })
    }

    /// Runs `start`'s program to its end and returns the one Result for it.
    ///
    /// Tool calls go through `transport`; console output goes to `console`,
    /// one line per call. Never panics on anything the program or the
    /// transport does: every ending, including a protocol violation, is a
    /// Result. A second call on the same evaluator fails without running.
    /// The run holds the Start's wall clock natively ([`Stop::for_start`]).
    pub fn run<T, W>(&mut self, start: &Start, transport: &mut T, console: W) -> wire::Result
    where
        T: Transport + ?Sized,
        W: Write + 'static,
    {
        self.run_with(start, transport, console, &Stop::for_start(start))
    }

    /// [`run`](Evaluator::run), stopped by `stop`: its deadline, or a
    /// reason another thread gives it (the parent cancelling, say). Once
    /// stopped, the Result is the stop's ([`Reason`]), whatever the
    /// program does afterwards.
    pub fn run_with<T, W>(
        &mut self,
        start: &Start,
        transport: &mut T,
        console: W,
        stop: &Stop,
    ) -> wire::Result
    where
        T: Transport + ?Sized,
        W: Write + 'static,
    {
        let mut ending = if std::mem::replace(&mut self.used, true) {
            Ending::failed(
                FailureKind::Invalid,
                "this evaluator already ran a program; each run needs a fresh one",
            )
        } else {
            *self.stop.borrow_mut() = stop.clone();
            self.execute(start, transport, Box::new(console), stop)
        };
        // A run stopped from outside ends as the stop says: a program that
        // caught its calls' `cancelled` and returned was still cancelled,
        // and one that caught running out of memory still ran out. Where
        // the program was judged to have run out of memory (its error, and
        // where it was thrown) is said first, then the refusal's figures:
        // how much it asked for, and of how much.
        if let Some(reason) = stop.reason() {
            ending = ending.stopped_for(&reason);
        }
        let result = ending.into_result(
            &start.result_id,
            counted_calls(start, transport.calls()),
            transport.bytes(),
        );
        fit_in_frame(result)
    }

    fn execute<T: Transport + ?Sized>(
        &mut self,
        start: &Start,
        transport: &mut T,
        console: Box<dyn Write>,
        stop: &Stop,
    ) -> Ending {
        // What QuickJS holds when the run starts, by the heap's own count.
        let heap_in_use = u64::try_from(self.heap.used()).unwrap_or(u64::MAX);
        let memory_limit = match limits::quickjs_memory_limit(
            start.budget.max_memory,
            limits::linear_memory_in_use(),
            heap_in_use,
            u64::try_from(start.program.len()).unwrap_or(u64::MAX),
        ) {
            Ok(Some(limit)) => {
                self.heap.set_limit(limit);
                self.heap
                    .set_own_allowance(limits::own_allowance(start.budget.max_memory));
                Some(limit)
            }
            Ok(None) => None,
            Err(why) => return Ending::failed(FailureKind::Limit, format!("memory limit: {why}")),
        };
        self.heap
            .set_next_collection(limits::gc_threshold(heap_in_use, memory_limit));
        let heap = self.heap.clone();
        let web = &self.web;
        let originals = &self.originals;
        self.context.with(|ctx| {
            random::reseed(&ctx);
            let intrinsics = match Intrinsics::capture(&ctx, originals, web) {
                Ok(intrinsics) => intrinsics,
                Err(e) => {
                    // Only a heap too small for a few objects gets here.
                    let _ = ctx.catch();
                    return Ending::failed(
                        FailureKind::Limit,
                        format!("memory limit: no room to set up the program's globals ({e})"),
                    );
                }
            };
            let sent = Rc::new(Sent::new(&start.program, start.places.clone()));
            let session = Session::open(intrinsics.clone(), console, sent.clone(), heap.clone());
            heap.own_from_now();
            session.enter(&ctx);
            let judge = Judge {
                intrinsics: &intrinsics,
                session: &session,
                sent: &sent,
                tools: &start.bindings,
            };
            let ending = run_program(
                &ctx,
                &session,
                &judge,
                start,
                sent.source(),
                transport,
                &heap,
                stop,
            );
            // Every JS value held on the Rust side goes before the runtime
            // does; QuickJS aborts on objects still alive at teardown.
            Session::leave(&ctx);
            session.close();
            drop(intrinsics);
            ending
        })
    }
}

/// Console warnings for what the program left behind when it ended: each
/// promise rejected that nothing handled, the calls still running (they are
/// cancelled) or never sent (`waiting`: those the transport still holds
/// under its pace), and the timers that never ran. A failed call
/// nobody awaited (`fail(1); return "done"`) was lost without a word; Node
/// ends the process on an unhandled rejection, here the Result stands and
/// the console says so. Said whether the program ended well or failed
/// (`except`: the reason it failed with, not told again), since a failure
/// is often the symptom of a call that failed unseen before it.
fn warn_left_behind<'js>(
    session: &Session<'js>,
    judge: &Judge<'_, 'js>,
    except: Option<&rquickjs::Value<'js>>,
    waiting: usize,
) {
    // Taken before any reason is told. Telling one runs no code of the
    // program's (`Judge::told_quietly`): the program has ended, and a
    // getter there could call a tool or spin out the wall clock.
    let (tools, queued) = session
        .with_calls(|calls| calls.unanswered_tools())
        .unwrap_or_default();
    let timers = session
        .with_timers(|timers| timers.pending())
        .unwrap_or_default();
    let (reasons, more) = session.take_unhandled();
    for reason in reasons.iter().filter(|r| Some(*r) != except) {
        // One line, as every console line is.
        let shown = console::escape_line_breaks(&judge.told_quietly(reason));
        let line = format!("warn: a promise was rejected and nothing handled it: {shown}\n");
        session.write_console(line.as_bytes());
    }
    if more > 0 {
        session.write_console(
            format!("warn: and {more} more promises were rejected and nothing handled them\n")
                .as_bytes(),
        );
    }
    if tools.calls() > 0 {
        let count = tools.calls();
        // Calls the run ended before it could send (made in its last turn,
        // a timer's or a microtask's that threw) are not the cap's doing.
        let ended = queued.min(count);
        let held = waiting.min(count - ended);
        let sent = count - ended - held;
        let mut parts = Vec::new();
        if sent > 0 {
            parts.push(format!(
                "{sent} cancelled while running (work may be half done, answers dropped)"
            ));
        }
        if held > 0 {
            parts.push(format!("{held} never sent (held by the in-flight cap)"));
        }
        if ended > 0 {
            let them = if ended == 1 { "it" } else { "them" };
            parts.push(format!(
                "{ended} never sent (the run ended before it could send {them})"
            ));
        }
        session.write_console(
            format!(
                "warn: the program ended with {} unanswered ({}): {}; await a call to have it \
                 finish\n",
                plural(count, "tool call"),
                tool_names(&tools),
                parts.join("; ")
            )
            .as_bytes(),
        );
    }
    if timers.never_run > 0 {
        session.write_console(
            format!(
                "warn: the program ended with {} pending, never run (await what a timer \
                 settles to have it run)\n",
                plural(timers.never_run, "timer")
            )
            .as_bytes(),
        );
    }
    if timers.intervals_run > 0 {
        session.write_console(
            format!(
                "warn: the program ended with {} still set, stopped with it (clearInterval \
                 one when it is done)\n",
                plural(timers.intervals_run, "interval")
            )
            .as_bytes(),
        );
    }
}

/// The tools of the calls queued after the first `queued`: made after the
/// program ended, by code reading what it settled with. They are taken
/// from the queue, so that they are not told as calls the in-flight cap
/// held.
fn take_late_calls(session: &Session<'_>, queued: usize) -> ToolTally {
    session
        .with_calls(|calls| calls.take_queued_after(queued))
        .unwrap_or_default()
}

/// A console warning for the calls made after the program ended, while its
/// `what` (a `toJSON`, a getter), which are never sent.
fn warn_called_too_late(session: &Session<'_>, late: ToolTally, what: &str) {
    if late.calls() > 0 {
        session.write_console(
            format!(
                "warn: {} ({}) made after the program ended, while its {what}, never sent: \
                 a tool can be called only while the program runs\n",
                plural(late.calls(), "tool call"),
                tool_names(&late)
            )
            .as_bytes(),
        );
    }
}

/// "1 timer", "3 timers".
fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The distinct tool names, sorted, at most eight, on one line.
fn tool_names(tools: &ToolTally) -> String {
    console::escape_line_breaks(&tools.names())
}

/// Installs the surface, compiles and runs the program, and judges its end.
#[allow(clippy::too_many_arguments)] // one run's parts, each used once
fn run_program<'js, T: Transport + ?Sized>(
    ctx: &rquickjs::Ctx<'js>,
    session: &Session<'js>,
    judge: &Judge<'_, 'js>,
    start: &Start,
    source: &str,
    transport: &mut T,
    heap: &Heap,
    stop: &Stop,
) -> Ending {
    let bindings = match bindings::plan(&start.bindings) {
        Ok(bindings) => bindings,
        Err(why) => return Ending::failed(FailureKind::Invalid, format!("bad Start: {why}")),
    };
    transport.pace(start.max_in_flight());
    if let Err(e) = bindings::install(ctx, session, &bindings) {
        return judge.error(ctx, e);
    }
    if source.contains('\0') {
        return Ending::failed(FailureKind::Invalid, "the program contains a NUL character");
    }
    let function = match program::compile(ctx, source) {
        Ok(function) => function,
        Err(e) => return judge.error(ctx, e),
    };
    let Some(function) = function.into_function() else {
        return Ending::failed(
            FailureKind::Invalid,
            "the program is not a function body: it closes the function it is wrapped in",
        );
    };
    // Whatever set-up threw is no throw of the program's.
    throw_site::take(ctx, session);
    let returned = match function.call::<_, rquickjs::Value>(()) {
        Ok(returned) => returned,
        Err(e) => return judge.error(ctx, e),
    };
    let (settled, waiting) = match returned.into_promise() {
        Some(promise) => {
            event_loop::note_throw(ctx, session, &promise);
            let settled = event_loop::drive(
                ctx,
                session,
                &promise,
                transport,
                heap,
                stop,
                start.withdraw,
            );
            // What the transport still holds goes now: the Result counts it.
            transport.flush();
            (settled, transport.waiting())
        }
        // Only a program that broke out of its wrapper returns a non-promise.
        None => {
            return Ending::failed(
                FailureKind::Invalid,
                "the program is not a function body: it closes the function it is wrapped in",
            );
        }
    };
    // Reading what the program settled with runs its code (a `toJSON`, a
    // getter), which can still call tools: those calls are never sent,
    // and said so, not dropped without a word.
    let queued = session.with_calls(|calls| calls.queued()).unwrap_or(0);
    match settled {
        Settled::Fulfilled(value) => {
            let ending = judge.fulfilled(ctx, &value);
            let mut late = take_late_calls(session, queued);
            warn_left_behind(session, judge, None, waiting);
            late.extend(take_late_calls(session, queued));
            warn_called_too_late(session, late, "value was turned into JSON");
            ending
        }
        Settled::Rejected(reason) => {
            let ending = judge.rejected(&reason);
            let mut late = take_late_calls(session, queued);
            warn_left_behind(session, judge, Some(&reason), waiting);
            late.extend(take_late_calls(session, queued));
            warn_called_too_late(session, late, "error was read");
            ending
        }
        Settled::Stuck => {
            // What it left behind may be why nothing can settle (a call
            // that failed unseen).
            warn_left_behind(session, judge, None, waiting);
            let late = take_late_calls(session, queued);
            warn_called_too_late(session, late, "rejections left unhandled were read");
            Ending::failed(
                FailureKind::Invalid,
                "the program can never finish: it awaits a promise that nothing will settle \
                 (no tool call is in flight and no job is pending)",
            )
        }
        Settled::Protocol(why) => Ending::Protocol(why),
        Settled::Halted(reason) => reason.ending(),
    }
}

/// The calls to report as made, of the `sent`: the parent counts a call
/// when it accepts it, and it accepts the first `max_calls` and refuses the
/// rest, so counting the refused ones too would make every run that spent
/// its quota disagree with the parent.
fn counted_calls(start: &Start, sent: u64) -> u64 {
    match start.budget.max_calls {
        0 => sent,
        max => sent.min(max),
    }
}

/// A Result whose frame would exceed the protocol's maximum is replaced by
/// a `limit` failure: the parent must get exactly one Result, and it must
/// be one it can read.
fn fit_in_frame(result: wire::Result) -> wire::Result {
    // Escaping can grow JSON text at most sixfold (`\u0000`); below this the
    // frame always fits and the check costs nothing.
    if result.value.len() < wire::MAX_FRAME_BYTES / 8 {
        return result;
    }
    // Counted, not encoded: the frame is made once, by the runner.
    match wire::encoded_len(&result) {
        Ok(len) if len <= wire::MAX_FRAME_BYTES => result,
        _ => {
            let mut failure = wire::Result::failure(
                result.result_id.clone(),
                FailureKind::Limit,
                format!(
                    "the return value is {} bytes of JSON; the Result carries it as a string, \
                     its quotes and backslashes escaped, and so it does not fit in a frame \
                     ({} bytes at most)",
                    result.value.len(),
                    wire::MAX_FRAME_BYTES
                ),
            );
            failure.calls = result.calls;
            failure.bytes = result.bytes;
            failure
        }
    }
}

/// Runs `start` on a fresh [`Evaluator`]; set-up failure is a Result too.
pub fn evaluate<T, W>(start: &Start, transport: &mut T, console: W) -> wire::Result
where
    T: Transport + ?Sized,
    W: Write + 'static,
{
    match Evaluator::new() {
        Ok(mut evaluator) => evaluator.run(start, transport, console),
        Err(e) => {
            let mut result =
                wire::Result::failure(&start.result_id, FailureKind::Limit, e.to_string());
            result.calls = transport.calls();
            result.bytes = transport.bytes();
            result
        }
    }
}
