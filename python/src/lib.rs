//! wasmwire for Python: the extension module `wasmwire._native`.
//!
//! This crate adds one thing to the `wasmwire` library: a way for Python to
//! drive it. It does not hold a limit, speak the protocol or run a child
//! itself; every execution is [`wasmwire::Sandbox::run`], unchanged. What it
//! owns is the boundary:
//!
//! - **Threads.** One tokio runtime per process runs every execution. A
//!   synchronous `run` blocks its Python thread without the GIL (and wakes
//!   every 50 ms to let a Ctrl-C cancel the execution);
//!   `run_async` spawns the execution and hands its result to the caller's
//!   asyncio loop with `call_soon_threadsafe`.
//! - **Tools.** A Python tool is a [`wasmwire::Tool`] whose handler never
//!   takes the GIL on a tokio worker: a sync callable runs on a blocking
//!   pool of its own (`ToolPool`), an async one is scheduled on the
//!   caller's event loop (`asyncio.run_coroutine_threadsafe`) and its
//!   answer comes back through a oneshot channel. A call that is dropped
//!   (deadline, cancel) cancels its coroutine; a sync tool cannot be
//!   stopped and runs to its end on its thread.
//! - **The bound on those threads.** A sync call holds its thread, and one
//!   of its execution's `max_in_flight` places for sync calls, until its
//!   tool returns, even after the call was given up on; at most
//!   `SYNC_TOOL_THREADS` (512) such threads exist in the process. A call
//!   that finds its execution's places all held fails `limit` at once, one
//!   that finds the process's threads all held fails `transient` at once:
//!   neither waits. So the calls a program abandons cost its own execution
//!   at most `max_in_flight` threads, and nothing else waits behind them:
//!   the runtime's own blocking pool, which schedules async tools and
//!   delivers `run_async`'s outcomes, runs no tool.
//!
//! The Python package (`python/wasmwire`) wraps this module: budgets,
//! outcomes, tool declarations and the exceptions are Python classes there,
//! and the invocation of a Python callable (argument binding, JSON, mapping
//! an exception to a failure class) is Python code there too, so that this
//! crate only moves text and completion across threads.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::runtime::Runtime;
use tokio::sync::Semaphore;

mod sandbox;
mod tools;

/// The tokio runtime every execution of this process runs on, built on
/// first use (again in a forked child: see [`per_process`]).
///
/// Its blocking pool runs no tool: only the short jobs that take the GIL
/// for a moment (scheduling an async tool on its loop, cancelling one,
/// delivering `run_async`'s outcome), so a tool, however slow, never
/// delays them.
fn runtime() -> PyResult<&'static Runtime> {
    static BUILT: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);
    per_process(&BUILT, || {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("wasmwire")
            .build()
            .map_err(|e| format!("wasmwire: no tokio runtime: {e}"))
    })
    .map_err(PyRuntimeError::new_err)
}

/// The most threads sync tools hold at once in this process, over every
/// execution and Sandbox: tokio's default for its blocking pool.
pub(crate) const SYNC_TOOL_THREADS: usize = 512;

/// Where sync tools run: a blocking pool of their own, apart from the
/// runtime's, of at most [`SYNC_TOOL_THREADS`] threads (an idle one exits
/// after 10 s, as in any tokio blocking pool).
///
/// A sync tool cannot be interrupted: a call given up on (its deadline
/// passed, its execution ended) leaves its tool running on its thread to
/// its end. So a call takes a thread only with a permit of `threads`, and
/// its closure holds the permit until the tool returns; a call that finds
/// none fails at once (`Target::run_sync` in `tools.rs`), and the pool
/// never queues work behind a sleeping tool.
pub(crate) struct ToolPool {
    /// A runtime that is never driven: only its blocking pool is used.
    runtime: Runtime,
    /// One permit per thread a sync tool may hold.
    pub(crate) threads: Arc<Semaphore>,
}

impl ToolPool {
    /// Runs `f` on a thread of the pool. The caller holds a permit of
    /// [`ToolPool::threads`], which `f` keeps until it returns.
    pub(crate) fn spawn<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> tokio::task::JoinHandle<R> {
        self.runtime.spawn_blocking(f)
    }
}

/// The pool sync tools run on in this process, built on first use.
pub(crate) fn tool_pool() -> Result<&'static ToolPool, String> {
    static BUILT: Mutex<Option<(u32, &'static ToolPool)>> = Mutex::new(None);
    per_process(&BUILT, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(SYNC_TOOL_THREADS)
            .thread_name("wasmwire-tool")
            .build()
            .map_err(|e| format!("wasmwire: no thread pool for sync tools: {e}"))?;
        Ok(ToolPool {
            runtime,
            threads: Arc::new(Semaphore::new(SYNC_TOOL_THREADS)),
        })
    })
}

/// The one `T` of this process, built on first use.
///
/// A process forked from one that built it (`multiprocessing`'s default
/// start method on Linux) builds its own: the parent's threads are not in
/// the child, so the parent's runtime would never fire a timer there, and
/// its pool would hand work to threads that are not there. The parent's is
/// leaked in the child, not dropped: dropping it would wait for threads
/// that are not there.
fn per_process<T: Sync + 'static>(
    built: &Mutex<Option<(u32, &'static T)>>,
    build: impl FnOnce() -> Result<T, String>,
) -> Result<&'static T, String> {
    let pid = std::process::id();
    let mut built = built.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, made)) = *built
        && owner == pid
    {
        return Ok(made);
    }
    let made: &'static T = Box::leak(Box::new(build()?));
    *built = Some((pid, made));
    Ok(made)
}

/// Whether runtime threads may still enter Python, and how many are in it.
///
/// A sync tool runs on a thread of the [`ToolPool`], not a Python thread,
/// and nothing stops it when the interpreter exits: a sync tool whose call
/// gave up (its deadline passed) runs to its end, and one still running
/// when the interpreter finalizes takes its thread state down with it
/// ("Fatal Python error: PyGILState_Release", SIGABRT). So every entry into
/// Python from a runtime thread goes through [`attach`], and [`shutdown`]
/// (an `atexit` hook the package registers) closes the gate and waits for
/// those inside to leave.
struct Gate {
    /// The process the counts are of: a forked child has none of its
    /// parent's threads, so none of them is in Python there.
    pid: u32,
    /// Set at exit: no runtime thread enters Python again.
    closed: bool,
    /// Runtime threads inside [`attach`] now.
    inside: usize,
}

static GATE: Mutex<Gate> = Mutex::new(Gate {
    pid: 0,
    closed: false,
    inside: 0,
});
/// Notified when the last runtime thread leaves Python.
static LEFT: Condvar = Condvar::new();

/// The gate of this process (reset in a forked child).
fn gate() -> std::sync::MutexGuard<'static, Gate> {
    let mut gate = GATE.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if gate.pid != pid {
        *gate = Gate {
            pid,
            closed: false,
            inside: 0,
        };
    }
    gate
}

/// Whether the package's `atexit` hook has run: no runtime thread enters
/// Python from then on.
pub(crate) fn exiting() -> bool {
    gate().closed
}

/// Runs `f` with the GIL on a runtime thread, counted as inside Python;
/// `None`, without entering Python, once the interpreter is exiting.
pub(crate) fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    {
        let mut gate = gate();
        if gate.closed {
            return None;
        }
        gate.inside += 1;
    }
    /// Leaves the count even if `f` panics, so that exit never waits for
    /// a thread that has gone.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let mut gate = gate();
            gate.inside = gate.inside.saturating_sub(1);
            if gate.inside == 0 {
                LEFT.notify_all();
            }
        }
    }
    let _leave = Leave;
    // The GIL is released (and the thread state gone) before `_leave` drops.
    Some(Python::attach(f))
}

/// The package's `atexit` hook: no runtime thread enters Python from now
/// on (a sync tool called later is answered `unknown` without running),
/// and this waits, without the GIL, for those inside to return.
///
/// It waits as long as they run, as the interpreter waits for its
/// non-daemon threads at exit (which it does before `atexit` hooks run): a
/// sync tool cannot be interrupted, and finalizing under it aborts the
/// process. A Ctrl-C during the wait (or pending when the hook starts)
/// leaves them running, so the process exits at once instead, 130 as a
/// shell reports SIGINT, after flushing `sys.stdout` and `sys.stderr`. This
/// is native so that no Python frame of its own can take the interrupt
/// before it does.
#[pyfunction]
fn shutdown(py: Python<'_>) -> PyResult<()> {
    gate().closed = true;
    loop {
        let empty = py.detach(|| {
            let gate = gate();
            let (gate, _) = LEFT
                .wait_timeout_while(gate, sandbox::SIGNAL_POLL, |g| g.inside > 0)
                .unwrap_or_else(PoisonError::into_inner);
            gate.inside == 0
        });
        if empty {
            return Ok(());
        }
        if py.check_signals().is_err() {
            if let Ok(sys) = py.import("sys") {
                for stream in ["stdout", "stderr"] {
                    let _ = sys
                        .getattr(stream)
                        .and_then(|s| s.call_method0("flush").map(drop));
                }
            }
            // SAFETY: `_exit` ends the process at once; nothing after it runs.
            unsafe { libc::_exit(130) }
        }
    }
}

/// A duration given in seconds by the Python side. A positive one too
/// short for a nanosecond is a nanosecond, not zero: zero means no limit.
fn seconds(secs: f64) -> Result<Duration, String> {
    let duration = Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())?;
    Ok(if secs > 0.0 && duration.is_zero() {
        Duration::from_nanos(1)
    } else {
        duration
    })
}

/// The module: the native Sandbox, Tools and Running, the failure-class
/// table and the default budget.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<sandbox::Sandbox>()?;
    m.add_class::<sandbox::Running>()?;
    m.add_class::<tools::Tools>()?;
    m.add_class::<tools::Answer>()?;
    m.add_function(wrap_pyfunction!(shutdown, m)?)?;
    // wire's table, the one definition of the failure classes.
    let kinds: Vec<(&str, bool, &str)> = wasmwire::wire::FAILURE_KINDS
        .iter()
        .map(|k| (k.name, k.retryable, k.description))
        .collect();
    m.add("KINDS", kinds)?;
    m.add(
        "DEFAULT_WALL_CLOCK",
        wasmwire::DEFAULT_WALL_CLOCK.as_secs_f64(),
    )?;
    m.add("DEFAULT_MAX_MEMORY", wasmwire::DEFAULT_MAX_MEMORY)?;
    // The words a signature's parameter may not be, for `_tools.py`.
    m.add("RESERVED_WORDS", wasmwire::tools::RESERVED_WORDS.to_vec())?;
    Ok(())
}
