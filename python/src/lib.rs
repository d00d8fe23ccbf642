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

use std::sync::OnceLock;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

mod sandbox;
mod tools;

/// The tokio runtime every execution of this process runs on, built on first use.
fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("wasmwire")
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(format!("wasmwire: no tokio runtime: {e}")))
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
    Ok(())
}
