//! Python callables as wasmwire tools.
//!
//! A tool's handler never takes the GIL on a tokio worker, so a slow tool or
//! a busy Python thread cannot stall an execution's task (which also holds
//! its wall clock):
//!
//! - a **sync** callable runs on the sync tools' own pool
//!   ([`ToolPool`](crate::ToolPool)), taking the GIL only while it runs
//!   (`Tool._invoke` in `wasmwire/_tools.py`). It cannot be interrupted: a
//!   call dropped while its tool runs leaves the tool running to its end,
//!   so the call's thread, and its place among its execution's, are held
//!   until then ([`Target::run_sync`] says how they are bounded);
//! - an **async** callable is scheduled from the runtime's blocking pool
//!   onto the event loop of the `run_async` that started the execution (a
//!   sync `run` uses the package's background loop); its answer comes back
//!   through a oneshot channel ([`Answer`]). When the call is dropped (its
//!   deadline passed, the execution ended) the coroutine is cancelled.
//!
//! Either way the Python side answers with `(ok, text, kind)`: the value's
//! JSON text, or a failure's message and class. Text that is not one JSON
//! value, a kind outside the closed set, or an exception that escaped the
//! Python side all become `unknown`: nothing a tool does reaches the host as
//! anything but one answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use wasmwire::{Call, FailureKind, HandlerError, JsonText, SandboxError, ToolFailure};

use crate::sandbox::start_error;

tokio::task_local! {
    /// What the current execution's calls need to know of it. Set around
    /// the whole execution and read when a call is accepted, which the
    /// Server does in the execution's own task.
    pub(crate) static EXECUTION: ExecutionScope;
}

/// One execution, as its tools' calls see it.
#[derive(Clone)]
pub(crate) struct ExecutionScope {
    /// The asyncio loop of the `run_async` the execution belongs to; `None`
    /// in a sync `run`.
    pub(crate) caller_loop: Option<Arc<Py<PyAny>>>,
    /// Its places for sync calls holding a thread: `places` of them, its
    /// `max_in_flight`.
    sync_places: Arc<Semaphore>,
    places: usize,
}

impl ExecutionScope {
    pub(crate) fn new(caller_loop: Option<Arc<Py<PyAny>>>, max_in_flight: usize) -> Self {
        let places = max_in_flight.min(Semaphore::MAX_PERMITS);
        ExecutionScope {
            caller_loop,
            sync_places: Arc::new(Semaphore::new(places)),
            places,
        }
    }
}

/// What the Python side answers: `(ok, text, kind)`.
type Answered = (bool, String, String);

/// One tool as the Python package describes it (`Tool._native_spec()`):
/// name, signature, description, params and result schemas as JSON text,
/// timeout in seconds, call-only, async, and the `Tool` object itself.
#[derive(FromPyObject)]
struct Spec(
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<f64>,
    bool,
    bool,
    Py<PyAny>,
);

/// A registered set of Python tools: built once, used by many executions.
#[derive(Debug)]
#[pyclass(module = "wasmwire._native", frozen)]
pub struct Tools {
    pub(crate) inner: wasmwire::Tools,
}

#[pymethods]
impl Tools {
    #[new]
    fn new(py: Python<'_>, specs: Vec<Spec>) -> PyResult<Self> {
        let mut inner = wasmwire::Tools::new();
        for Spec(
            name,
            signature,
            description,
            params,
            result,
            timeout,
            call_only,
            is_async,
            tool,
        ) in specs
        {
            let target = Arc::new(Target { tool, is_async });
            let mut built = wasmwire::Tool::new(name.clone(), move |call: Call| {
                let target = target.clone();
                // Read now, in the execution's task; the answer may be
                // awaited in a task of its own, where the scope is not set.
                let scope = EXECUTION.try_with(Clone::clone).ok();
                // The args become Python objects for the tool: held, at
                // what they take as a tree of JSON, until it has answered.
                let tree = wasmwire::json::hold_tree(&call.holdings, &call.args);
                async move {
                    let _tree = tree.map_err(|e| {
                        let why = format!("{}: the args cannot be read: {e}", call.tool);
                        ToolFailure::new(FailureKind::Limit, why)
                    })?;
                    target.answer(&call.tool, call.args, scope).await
                }
            });
            if let Some(signature) = signature {
                built = built.signature(signature);
            }
            if let Some(description) = description {
                built = built.description(description);
            }
            let bad = |why: String| {
                let e = SandboxError::BadTool {
                    name: name.clone(),
                    why,
                };
                start_error(py, e)
            };
            if let Some(params) = params {
                built = built.params(schema("params", &params).map_err(bad)?);
            }
            if let Some(result) = result {
                built = built.result(schema("result", &result).map_err(bad)?);
            }
            if let Some(timeout) = timeout {
                let timeout = crate::seconds(timeout)
                    .map_err(|e| bad(format!("its timeout of {timeout:?} s: {e}")))?;
                built = built.timeout(timeout);
            }
            if call_only {
                built = built.call_only();
            }
            inner
                .register(built)
                .map_err(|e| start_error(py, in_python_words(e)))?;
        }
        Ok(Tools { inner })
    }

    /// The tools' TypeScript declarations, for the program's author.
    fn typescript(&self) -> String {
        self.inner.typescript()
    }

    /// The tools' names, in name order.
    fn names(&self) -> Vec<String> {
        self.inner.iter().map(|t| t.name().to_string()).collect()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// The library's refusal of a tool, its advice spelt as Python spells it:
/// the library names its Rust builder and the CLI's flag.
fn in_python_words(e: SandboxError) -> SandboxError {
    match e {
        SandboxError::BadTool { name, why } => SandboxError::BadTool {
            name,
            why: why.replace("(Tool::call_only, or --call-only)", "(call_only=True)"),
        },
        other => other,
    }
}

/// A schema given as JSON text by the Python side.
fn schema(which: &str, text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| format!("the {which} schema is not JSON: {e}"))
}

/// The Python `Tool` a handler calls.
struct Target {
    tool: Py<PyAny>,
    is_async: bool,
}

impl Target {
    /// Runs the call to its answer: a sync tool on the tools' pool, an
    /// async one on its loop. `scope` is `None` only for a call made
    /// outside an execution of this crate's Sandbox (none is).
    async fn answer(
        self: Arc<Self>,
        tool: &str,
        args: String,
        scope: Option<ExecutionScope>,
    ) -> Result<JsonText, HandlerError> {
        if !self.is_async {
            return self.run_sync(tool, args, scope).await;
        }
        let caller_loop = scope.and_then(|s| s.caller_loop);
        let (sender, receiver) = oneshot::channel();
        let scheduled = Scheduled::default();
        let slot = scheduled.slot.clone();
        let target = self.clone();
        tokio::task::spawn_blocking(move || {
            // At exit the sender is dropped unused: the call fails `unknown`.
            crate::attach(|py| target.schedule(py, &args, caller_loop, sender, &slot))
        });
        let answered = receiver.await;
        scheduled.done();
        match answered {
            Ok(answered) => finish(answered),
            Err(_) => Err(unknown("the tool's coroutine ended without an answer")),
        }
    }

    /// Runs a sync tool on a thread of the tools' pool.
    ///
    /// The thread is taken with two permits, which the closure holds until
    /// the tool returns, even when this future was dropped long before:
    /// one of the execution's `max_in_flight` places, so that the calls a
    /// program gives up on cost its own execution at most that many
    /// threads, and one of the process's [`SYNC_TOOL_THREADS`]. A call that
    /// finds either taken fails at once, `limit` or `transient`: waiting
    /// would only hold the program (or another's) past its wall clock
    /// behind tools no one reads.
    ///
    /// [`SYNC_TOOL_THREADS`]: crate::SYNC_TOOL_THREADS
    async fn run_sync(
        self: Arc<Self>,
        tool: &str,
        args: String,
        scope: Option<ExecutionScope>,
    ) -> Result<JsonText, HandlerError> {
        let pool = crate::tool_pool().map_err(|e| unknown(&e))?;
        let place = match &scope {
            Some(scope) => Some(
                scope
                    .sync_places
                    .clone()
                    .try_acquire_owned()
                    .map_err(|_| no_place(tool, scope.places))?,
            ),
            None => None,
        };
        let thread = pool
            .threads
            .clone()
            .try_acquire_owned()
            .map_err(|_| no_thread(tool))?;
        let held: (Option<OwnedSemaphorePermit>, OwnedSemaphorePermit) = (place, thread);
        // Set when this future is dropped: the call was abandoned (its
        // deadline passed, its execution ended) and nobody will read an
        // answer. A thread that gets to it only then does not run the
        // tool, and gives its permits back at once.
        let abandoned = Abandoned::default();
        let flag = abandoned.0.clone();
        let target = self.clone();
        let answered = pool
            .spawn(move || {
                let _held = held;
                if flag.load(Ordering::SeqCst) {
                    return None;
                }
                crate::attach(|py| {
                    // Asked again with the GIL: the wait for it may be long.
                    (!flag.load(Ordering::SeqCst)).then(|| target.invoke(py, &args))
                })
                .unwrap_or_else(|| Some(exiting()))
            })
            .await;
        drop(abandoned);
        match answered {
            Ok(Some(answered)) => finish(answered),
            // Only when the call was abandoned, which nobody reads.
            Ok(None) => Err(unknown("the call was abandoned before its tool ran")),
            Err(_) => Err(unknown("the tool's thread panicked")),
        }
    }

    /// Runs a sync tool here (a thread of the tools' pool), with the GIL.
    fn invoke(&self, py: Python<'_>, args: &str) -> Answered {
        self.tool
            .bind(py)
            .call_method1("_invoke", (args,))
            .and_then(|answer| answer.extract::<Answered>())
            .unwrap_or_else(|e| escaped(py, &e))
    }

    /// Schedules an async tool on its loop; `sender` gets its answer.
    fn schedule(
        &self,
        py: Python<'_>,
        args: &str,
        caller_loop: Option<Arc<Py<PyAny>>>,
        sender: oneshot::Sender<Answered>,
        slot: &Arc<Mutex<Slot>>,
    ) {
        if slot.lock().unwrap_or_else(PoisonError::into_inner).dropped {
            return; // The call ended before its coroutine was made.
        }
        let answer = Answer {
            sender: Mutex::new(Some(sender)),
        };
        let caller_loop = caller_loop.map(|l| l.clone_ref(py));
        let answer = match Py::new(py, answer) {
            Ok(answer) => answer,
            Err(_) => return, // Dropping the sender answers `unknown`.
        };
        match self
            .tool
            .bind(py)
            .call_method1("_schedule", (args, caller_loop, answer.clone_ref(py)))
        {
            Ok(future) => {
                let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
                if slot.dropped {
                    let _ = future.call_method0("cancel");
                } else {
                    slot.future = Some(future.unbind());
                }
            }
            Err(e) => answer.get().send(escaped(py, &e)),
        }
    }
}

/// Marks a sync call abandoned when dropped (see [`Target::answer`]).
#[derive(Default)]
struct Abandoned(Arc<AtomicBool>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The answer of a tool called while the interpreter exits: it is not run.
fn exiting() -> Answered {
    (
        false,
        "the Python interpreter is exiting: the tool was not run".into(),
        "unknown".into(),
    )
}

/// An async call's coroutine, once scheduled: cancelled if the call is
/// dropped before it answers.
#[derive(Default)]
struct Scheduled {
    slot: Arc<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    /// The `concurrent.futures.Future` of the scheduled coroutine.
    future: Option<Py<PyAny>>,
    /// Whether the call has ended (answered or dropped).
    dropped: bool,
}

impl Scheduled {
    /// The call was answered: nothing to cancel.
    fn done(&self) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        slot.dropped = true;
        slot.future = None;
    }
}

impl Drop for Scheduled {
    fn drop(&mut self) {
        let future = {
            let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
            slot.dropped = true;
            slot.future.take()
        };
        // Cancelled from the blocking pool: a tokio worker never waits for the GIL.
        if let (Some(future), Ok(handle)) = (future, tokio::runtime::Handle::try_current()) {
            handle.spawn_blocking(move || {
                // At exit nothing is cancelled: the loop is going too.
                let _ = crate::attach(|py| {
                    let _ = future.bind(py).call_method0("cancel");
                });
            });
        }
    }
}

/// Where an async tool's answer goes: called once, from the loop's thread,
/// with `(ok, text, kind)`.
#[derive(Debug)]
#[pyclass(module = "wasmwire._native", frozen)]
pub struct Answer {
    sender: Mutex<Option<oneshot::Sender<Answered>>>,
}

impl Answer {
    fn send(&self, answered: Answered) {
        let sender = self
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            // The call may have been dropped already: nobody is listening.
            let _ = sender.send(answered);
        }
    }
}

#[pymethods]
impl Answer {
    fn __call__(&self, answered: Answered) {
        self.send(answered);
    }
}

/// The answer for an exception that escaped the Python side.
fn escaped(py: Python<'_>, e: &PyErr) -> Answered {
    let kind = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "exception".into());
    (false, format!("{kind}: {}", e.value(py)), "unknown".into())
}

/// A Python answer as a handler's.
fn finish((ok, text, kind): Answered) -> Result<JsonText, HandlerError> {
    if ok {
        return JsonText::new(text)
            .map_err(|e| unknown(&format!("the tool's value is not one JSON value: {e}")));
    }
    let kind = kind.parse().unwrap_or(FailureKind::Unknown);
    Err(ToolFailure::new(kind, text).into())
}

/// A sync call's failure when its execution's places are all held.
fn no_place(tool: &str, places: usize) -> HandlerError {
    let why = format!(
        "{tool}: no thread for this sync tool call: this execution's sync calls already hold \
         {places} threads, as many as it may have calls in flight (max_in_flight), counting \
         the calls it gave up on (past their deadline) whose tool has not returned yet: a sync \
         tool cannot be stopped, so its thread is the execution's until it returns"
    );
    ToolFailure::new(FailureKind::Limit, why).into()
}

/// A sync call's failure when the process's threads for sync tools are all held.
fn no_thread(tool: &str) -> HandlerError {
    let why = format!(
        "{tool}: no thread for this sync tool call: all {} of the process's threads for sync \
         tools are held, by the sync calls of this and other executions (some given up on, \
         whose tool has not returned yet); try again later",
        crate::SYNC_TOOL_THREADS
    );
    ToolFailure::new(FailureKind::Transient, why).into()
}

fn unknown(why: &str) -> HandlerError {
    ToolFailure::new(FailureKind::Unknown, why).into()
}
