//! The native Sandbox: runs executions for Python, sync or async.
//!
//! Every execution is [`wasmwire::Sandbox::run`] on the module's tokio
//! runtime, wrapped in [`EXECUTION`] so that its async tools find their
//! event loop and its sync tools its places for their threads. The outcome
//! goes back to Python as a plain tuple, which `wasmwire.Outcome` reads; an
//! execution that cannot start raises one of the exceptions of
//! `wasmwire/_errors.py`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use wasmwire::source::Language;
use wasmwire::{Budget, CancellationToken, Execution, Outcome, SandboxError, SandboxOptions};

use crate::runtime;
use crate::tools::{EXECUTION, ExecutionScope, Tools};

/// How often a sync `run` on the main thread looks for a pending signal
/// (Ctrl-C): the longest a KeyboardInterrupt waits before it cancels the
/// execution. Each look takes the GIL once.
pub(crate) const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A budget as the Python side passes it: wall clock in seconds, then
/// `max_calls`, `max_bytes`, `max_memory` (each 0 = none).
type BudgetArgs = (f64, u64, u64, u64);

/// An outcome as Python reads it: ok, value (JSON text, `None` when there is
/// none), kind, message, console, calls, bytes, elapsed seconds, whether
/// the child's counts disagreed, the most the parent held.
type OutcomeTuple = (
    bool,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    u64,
    u64,
    f64,
    bool,
    usize,
);

/// One execution's future, as both `run` and `spawn` drive it.
type ExecutionFuture = Pin<Box<dyn Future<Output = Result<Outcome, SandboxError>> + Send>>;

/// The engine, the compiled guest and its pre-instantiation, shared.
#[derive(Debug)]
#[pyclass(module = "wasmwire._native", frozen)]
pub struct Sandbox {
    built: Mutex<Built>,
    options: SandboxOptions,
}

/// A library Sandbox and the process it was built in.
///
/// Its epoch ticker (which stops a spinning child at its wall clock) is a
/// thread, and a forked child has none of its parent's threads: used there,
/// a Sandbox built before the fork would let a program spin for ever. So a
/// Sandbox first used in a forked child builds itself again, and leaks the
/// parent's copy (dropping it would join a thread that is not there).
#[derive(Debug)]
struct Built {
    pid: u32,
    inner: wasmwire::Sandbox,
    /// Executions started and not yet ended, in this process.
    running: Arc<AtomicUsize>,
}

impl Built {
    fn new(options: &SandboxOptions) -> PyResult<Self> {
        let rt = runtime()?;
        let _entered = rt.enter();
        Ok(Built {
            pid: std::process::id(),
            inner: wasmwire::Sandbox::new(options.clone())
                .map_err(|e| Python::attach(|py| start_error(py, e)))?,
            running: Arc::new(AtomicUsize::new(0)),
        })
    }
}

#[pymethods]
impl Sandbox {
    #[new]
    fn new(
        py: Python<'_>,
        max_in_flight: usize,
        max_call_deadline: Option<f64>,
        console_cap: usize,
        max_held: usize,
    ) -> PyResult<Self> {
        let max_call_deadline =
            match max_call_deadline {
                // Refused as `Tool(timeout=0)` is: 0 is "none" for a budget's
                // items and a call's `deadlineMs`, but here it would be a
                // deadline that every call misses.
                Some(0.0) => {
                    return Err(PyValueError::new_err(
                        "max_call_deadline of 0 would fail every call; \
                     leave it None for no sandbox-wide call deadline",
                    ));
                }
                Some(secs) => Some(crate::seconds(secs).map_err(|e| {
                    PyValueError::new_err(format!("max_call_deadline {secs:?}: {e}"))
                })?),
                None => None,
            };
        let options = SandboxOptions {
            max_in_flight,
            max_call_deadline,
            console_cap,
            max_held,
            ..SandboxOptions::default()
        };
        let built = py.detach(|| Built::new(&options))?;
        Ok(Sandbox {
            built: Mutex::new(built),
            options,
        })
    }

    /// Executions started and not yet ended (in this process).
    #[getter]
    fn running(&self) -> usize {
        let built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if built.pid == std::process::id() {
            built.running.load(Ordering::SeqCst)
        } else {
            0
        }
    }

    /// The prompt for a model: the sandbox's rules, `budget`'s limits and
    /// the tools' declarations.
    fn prompt(&self, tools: &Tools, budget: BudgetArgs) -> PyResult<String> {
        Ok(tools.inner.prompt(&budget_of(budget)?, &self.options))
    }

    /// Runs one execution, blocking this thread without the GIL. A pending
    /// signal (Ctrl-C) cancels the execution and is raised once it has ended.
    fn run(
        &self,
        py: Python<'_>,
        program: String,
        tools: &Tools,
        budget: BudgetArgs,
        language: Option<&str>,
    ) -> PyResult<OutcomeTuple> {
        let rt = runtime()?;
        let cancel = CancellationToken::new();
        let running = self.start(program, tools, budget, language, None, cancel.clone())?;
        // Driven by the runtime's workers, not by this thread: this thread
        // takes the GIL back between waits to look for a Ctrl-C, and while
        // another thread held the GIL nothing polled the execution, its
        // wall clock included (a 200 ms run took 444-572 ms beside a thread
        // in one long `json.dumps`).
        let mut running = rt.spawn(running);
        loop {
            let polled = py.detach(|| {
                rt.block_on(async { tokio::time::timeout(SIGNAL_POLL, &mut running).await })
            });
            match polled {
                Ok(Ok(ended)) => {
                    return ended.map(outcome_tuple).map_err(|e| start_error(py, e));
                }
                Ok(Err(failed)) => {
                    return Err(PyRuntimeError::new_err(format!(
                        "wasmwire: the execution's task failed: {failed}"
                    )));
                }
                Err(_) => {
                    if let Err(interrupt) = py.check_signals() {
                        cancel.cancel();
                        // Ends within a few ms of the cancel; nothing outlives the run.
                        let _ = py.detach(|| rt.block_on(&mut running));
                        return Err(interrupt);
                    }
                }
            }
        }
    }

    /// Starts one execution on the runtime and returns at once. When it
    /// ends, `deliver(True, outcome)` or `deliver(False, exception)` is
    /// called from a thread of the runtime's blocking pool (so that a
    /// worker never waits for the GIL; no tool runs there, so nothing a
    /// tool does delays it); `caller_loop` is where its async tools run.
    #[allow(clippy::too_many_arguments)]
    fn spawn(
        &self,
        program: String,
        tools: &Tools,
        budget: BudgetArgs,
        language: Option<&str>,
        caller_loop: Py<PyAny>,
        deliver: Py<PyAny>,
    ) -> PyResult<Running> {
        // Its outcome is delivered from a runtime thread, which may not
        // enter Python once the exit hook has run: it would never arrive.
        if crate::exiting() {
            return Err(PyRuntimeError::new_err(
                "the Python interpreter is exiting (wasmwire's atexit hook has run, so an \
                 outcome could not be delivered to a coroutine): run_async cannot be used \
                 from an atexit hook registered before wasmwire was imported; use run",
            ));
        }
        let rt = runtime()?;
        let cancel = CancellationToken::new();
        let running = self.start(
            program,
            tools,
            budget,
            language,
            Some(Arc::new(caller_loop)),
            cancel.clone(),
        )?;
        rt.spawn(async move {
            let ended = running.await;
            let delivered = tokio::task::spawn_blocking(move || {
                // At exit (`None`) the loop that awaited it is gone too.
                crate::attach(|py| {
                    let payload = match ended {
                        Ok(outcome) => (true, outcome_tuple(outcome)).into_pyobject(py)?,
                        Err(e) => (false, start_error(py, e).into_value(py)).into_pyobject(py)?,
                    };
                    // The loop may be closed: then nobody awaits the result.
                    deliver.bind(py).call1(payload).map(drop)
                })
            });
            let _ = delivered.await;
        });
        Ok(Running { cancel })
    }
}

impl Sandbox {
    /// The library Sandbox of this process, built again in a forked child.
    fn current(&self) -> PyResult<(wasmwire::Sandbox, Arc<AtomicUsize>)> {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if built.pid != std::process::id() {
            let parents = std::mem::replace(&mut *built, Built::new(&self.options)?);
            std::mem::forget(parents);
        }
        Ok((built.inner.clone(), built.running.clone()))
    }

    /// One execution's future, counted in `running` until it ends (or is dropped).
    fn start(
        &self,
        program: String,
        tools: &Tools,
        budget: BudgetArgs,
        language: Option<&str>,
        caller_loop: Option<Arc<Py<PyAny>>>,
        cancel: CancellationToken,
    ) -> PyResult<ExecutionFuture> {
        let mut execution = Execution::new(program).budget(budget_of(budget)?);
        execution.language = match language {
            None => None,
            Some("javascript" | "js") => Some(Language::JavaScript),
            Some("typescript" | "ts") => Some(Language::TypeScript),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "language {other:?}: say \"javascript\" or \"typescript\""
                )));
            }
        };
        let (sandbox, running) = self.current()?;
        let tools = tools.inner.clone();
        let counted = Counted::new(running);
        let scope = ExecutionScope::new(caller_loop, self.options.max_in_flight);
        Ok(Box::pin(EXECUTION.scope(scope, async move {
            let _counted = counted;
            sandbox.run(&execution, &tools, cancel).await
        })))
    }
}

/// One started execution of `run_async`: lets the caller cancel it.
#[derive(Debug)]
#[pyclass(module = "wasmwire._native", frozen)]
pub struct Running {
    cancel: CancellationToken,
}

#[pymethods]
impl Running {
    /// Cancels the execution: it ends `cancelled` within a few ms.
    fn cancel(&self) {
        self.cancel.cancel();
    }
}

/// Counts one execution in `running` while it lives.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(running: Arc<AtomicUsize>) -> Self {
        running.fetch_add(1, Ordering::SeqCst);
        Counted(running)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn budget_of((wall_clock, max_calls, max_bytes, max_memory): BudgetArgs) -> PyResult<Budget> {
    let wall_clock = crate::seconds(wall_clock)
        .map_err(|e| PyValueError::new_err(format!("wall_clock {wall_clock}: {e}")))?;
    Ok(Budget {
        wall_clock,
        max_calls,
        max_bytes,
        max_memory,
    })
}

fn outcome_tuple(outcome: Outcome) -> OutcomeTuple {
    let result = &outcome.result;
    let value = (result.ok && !result.value.is_empty()).then(|| result.value.clone());
    let kind = result.kind.map(|k| k.as_str().to_string());
    let message = (!result.ok).then(|| result.error.clone());
    (
        result.ok,
        value,
        kind,
        message,
        outcome.console.clone(),
        result.calls,
        result.bytes,
        outcome.elapsed.as_secs_f64(),
        outcome.counts_disagree,
        outcome.held_peak,
    )
}

/// Why an execution could not start, as one of the package's exceptions
/// (`wasmwire/_errors.py`).
pub(crate) fn start_error(py: Python<'_>, e: SandboxError) -> PyErr {
    let message = e.to_string();
    let made = (|| -> PyResult<PyErr> {
        let errors = py.import("wasmwire._errors")?;
        let kwargs = PyDict::new(py);
        let class = match &e {
            SandboxError::Unsupported { item, .. } => {
                kwargs.set_item("item", item)?;
                "BudgetError"
            }
            SandboxError::OverCeiling {
                item, asked, most, ..
            } => {
                kwargs.set_item("item", item)?;
                kwargs.set_item("asked", asked)?;
                kwargs.set_item("most", most)?;
                "BudgetError"
            }
            SandboxError::ProgramTooLarge { .. } => "ProgramError",
            SandboxError::ToolsTooLarge { .. } => "ToolDefinitionError",
            SandboxError::BadTool { name, .. } => {
                kwargs.set_item("tool", name)?;
                "ToolDefinitionError"
            }
            _ => "SandboxError",
        };
        let error = errors
            .getattr(class)?
            .call((message.clone(),), Some(&kwargs))?;
        Ok(PyErr::from_value(error))
    })();
    made.unwrap_or_else(|import_failed| import_failed)
}
