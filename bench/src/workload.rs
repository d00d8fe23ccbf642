//! The programs every contender runs, and the tools they call.
//!
//! Three tools, the same for everyone: `echo(x)` answers with its args text
//! at once, `echo_later(x)` answers the same after awaiting once
//! (`tokio::task::yield_now`), and `hold()` answers only once the benchmark
//! opens its [`Gate`] (it keeps executions in flight while memory is
//! measured).
//!
//! `echo` is ready the first time it is polled, so wasmwire's `Server`
//! answers it inline, in the connection's task; `echo_later` is not, so each
//! call takes the path of any handler that does I/O: a task of its own, and
//! the answer handed back to the connection.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use tokio::sync::watch;
use wasmwire::{JsonText, Tool, Tools};

/// `return 1`: the per-execution overhead.
pub const TRIVIAL: &str = "return 1";

/// Calls in the round-trip and fan-out programs.
pub const CALLS: u32 = 1000;

/// One call after another: the tool-call round trip.
pub const SEQUENTIAL: &str = "for (let i = 0; i < 1000; i++) await echo(i); return 1";

/// One call after another to a handler that awaits once: the round trip of
/// a call that is not answered inline.
pub const SEQUENTIAL_AWAITING: &str =
    "for (let i = 0; i < 1000; i++) await echo_later(i); return 1";

/// All calls at once: the fan-out.
pub const FAN_OUT: &str =
    "const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => echo(i))); return r.length";

/// Held in flight until the gate opens: the memory figure.
pub const HELD: &str = "await hold(); return 1";

/// CPU-bound: recursion and arithmetic.
pub const FIB: &str =
    "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } return fib(27)";

/// CPU-bound: JSON text to objects and back.
pub const JSON_ROUND_TRIPS: &str = r#"
let o = { id: 1, name: "wasmwire", tags: ["a", "b", "c"], nested: { ok: true, n: null, x: 1.5, list: [1, 2, 3, 4, 5] } };
let text = "";
for (let i = 0; i < 20000; i++) { text = JSON.stringify(o); o = JSON.parse(text); o.id = i; }
return text.length"#;

/// The answer each program must give, so a broken run is never timed.
pub fn expected(program: &str) -> &'static str {
    match program {
        FAN_OUT => "1000",
        FIB => "196418",
        JSON_ROUND_TRIPS => "108",
        _ => "1",
    }
}

/// Where `hold()` waits, and how many have arrived there.
#[derive(Debug, Default)]
pub struct Gate {
    arrived: AtomicUsize,
    /// Wakes async waiters (the sandboxed contenders' tool).
    open_async: Mutex<Option<watch::Sender<bool>>>,
    /// Wakes blocking waiters (the in-process floor's threads).
    open_blocking: (Mutex<bool>, Condvar),
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Arc<Self> {
        let (tx, _) = watch::channel(false);
        let gate = Gate::default();
        *gate
            .open_async
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(tx);
        Arc::new(gate)
    }

    /// How many `hold()` calls are waiting.
    pub fn arrived(&self) -> usize {
        self.arrived.load(Ordering::Acquire)
    }

    /// Lets every waiter through, now and later.
    pub fn open(&self) {
        if let Some(tx) = &*self
            .open_async
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
        {
            tx.send_replace(true);
        }
        let (open, wake) = &self.open_blocking;
        *open.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
    }

    /// Waits, in a task, until the gate opens.
    pub async fn hold(&self) {
        let rx = self
            .open_async
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(watch::Sender::subscribe);
        self.arrived.fetch_add(1, Ordering::AcqRel);
        if let Some(mut rx) = rx {
            let _ = rx.wait_for(|open| *open).await;
        }
    }

    /// Waits, on a thread, until the gate opens.
    pub fn hold_blocking(&self) {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        let (open, wake) = &self.open_blocking;
        let mut open = open.lock().unwrap_or_else(PoisonError::into_inner);
        while !*open {
            open = wake.wait(open).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The tools for the sandboxed contenders.
pub fn tools(gate: &Arc<Gate>) -> anyhow::Result<Tools> {
    let mut tools = Tools::new();
    tools.register(Tool::new("echo", |call: wire::Call| async move {
        Ok(JsonText::new(call.args)?)
    }))?;
    tools.register(Tool::new("echo_later", |call: wire::Call| async move {
        tokio::task::yield_now().await;
        Ok(JsonText::new(call.args)?)
    }))?;
    let gate = Arc::clone(gate);
    tools.register(
        Tool::new("hold", move |_call: wire::Call| {
            let gate = Arc::clone(&gate);
            async move {
                gate.hold().await;
                Ok(wasmwire::Json(1))
            }
        })
        .signature("hold()"),
    )?;
    Ok(tools)
}
