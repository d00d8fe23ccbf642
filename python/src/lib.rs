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
//!   takes the GIL on a tokio worker: a sync callable runs on tokio's
//!   blocking pool, an async one is scheduled on the caller's event loop
//!   (`asyncio.run_coroutine_threadsafe`) and its answer comes back through
//!   a oneshot channel. A call that is dropped (deadline, cancel) cancels
//!   its coroutine.
//!
//! The Python package (`python/wasmwire`) wraps this module: budgets,
//! outcomes, tool declarations and the exceptions are Python classes there,
//! and the invocation of a Python callable (argument binding, JSON, mapping
//! an exception to a failure class) is Python code there too, so that this
//! crate only moves text and completion across threads.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::runtime::Runtime;

mod sandbox;
mod tools;

/// The tokio runtime every execution of this process runs on, built on
/// first use.
///
/// A process forked from one that built it (`multiprocessing`'s default
/// start method on Linux) gets a runtime of its own: the parent's worker
/// threads are not in the child, so the parent's runtime would never fire
/// a timer there. The parent's is leaked in the child, not dropped:
/// dropping it would wait for threads that are not there.
fn runtime() -> PyResult<&'static Runtime> {
    static BUILT: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, runtime)) = *built
        && owner == pid
    {
        return Ok(runtime);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("wasmwire")
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("wasmwire: no tokio runtime: {e}")))?;
    let runtime: &'static Runtime = Box::leak(Box::new(runtime));
    *built = Some((pid, runtime));
    Ok(runtime)
}

/// Whether runtime threads may still enter Python, and how many are in it.
///
/// A tool runs on a thread of tokio's blocking pool, not a Python thread,
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
