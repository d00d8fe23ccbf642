//! The epoch ticker: a thread that advances the engine's epoch every
//! [`TICK`] while at least one child runs.
//!
//! Epochs are how wasmtime interrupts guest code that never calls the host
//! (`for(;;){}`). Each tick, a running Store checks its own deadline and
//! yields to the executor (see `child.rs`). The ticker is a plain thread, not
//! a tokio task, so a busy executor cannot delay it, and it sleeps while no
//! child runs, so an idle parent costs nothing.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::Engine;

/// How often the epoch advances while a child runs. It bounds how late a
/// wall clock is noticed in a spinning child, and how long a child holds an
/// executor thread between yields.
pub const TICK: Duration = Duration::from_millis(5);

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Children running now.
    running: usize,
    /// Set when the ticker is dropped.
    stop: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Owns the ticker thread; stops and joins it when dropped.
#[derive(Debug)]
pub struct Ticker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts a ticker thread for `engine`.
    pub fn start(engine: Engine) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::default());
        let thread = std::thread::Builder::new()
            .name("wasmwire-epoch".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || tick(&engine, &shared)
            })?;
        Ok(Ticker {
            shared,
            thread: Some(thread),
        })
    }

    /// Keeps the ticker going until the returned guard is dropped.
    pub fn running(&self) -> Running {
        self.shared.lock().running += 1;
        self.shared.wake.notify_one();
        Running {
            shared: Arc::clone(&self.shared),
        }
    }
}

fn tick(engine: &Engine, shared: &Shared) {
    loop {
        {
            let mut state = shared.lock();
            while state.running == 0 && !state.stop {
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop {
                return;
            }
        }
        std::thread::sleep(TICK);
        engine.increment_epoch();
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            // The thread only sleeps and ticks; it cannot panic in a way worth
            // propagating from a destructor.
            let _ = thread.join();
        }
    }
}

/// One running child, as far as the ticker is concerned.
#[derive(Debug)]
pub struct Running {
    shared: Arc<Shared>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.running = state.running.saturating_sub(1);
    }
}
