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

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when a child starts and when the ticker is dropped.
    wake: Condvar,
    /// How often the epoch advances: [`TICK`], but for tests.
    tick: Duration,
}

#[derive(Debug, Default)]
struct State {
    /// Children running now.
    running: usize,
    /// Set while the thread waits for a child to start (none runs), the
    /// only wait a start has to end.
    parked: bool,
    /// Set when the ticker is dropped.
    stop: bool,
    /// Epochs advanced so far (for tests: that an idle ticker is idle).
    #[cfg(test)]
    ticks: u64,
    /// Set once the thread has begun a tick's pause (for tests).
    #[cfg(test)]
    pausing: bool,
    /// Times a start woke the thread (for tests).
    #[cfg(test)]
    woken: u64,
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
        Self::start_with(engine, TICK)
    }

    fn start_with(engine: Engine, tick: Duration) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            wake: Condvar::new(),
            tick,
        });
        let thread = std::thread::Builder::new()
            .name("wasmwire-epoch".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || run(&engine, &shared)
            })?;
        Ok(Ticker {
            shared,
            thread: Some(thread),
        })
    }

    /// Keeps the ticker going until the returned guard is dropped.
    pub fn running(&self) -> Running {
        let mut state = self.shared.lock();
        state.running += 1;
        // Only a thread parked for want of a child is woken. One in a
        // tick's pause ticks at its end anyway; woken there, it would only
        // wait again. Executions one after another each take `running`
        // from 0 to 1, so waking on that (as before) cost a futex call and
        // a thread switch per execution while the ticker was not parked.
        if state.parked {
            state.parked = false;
            #[cfg(test)]
            {
                state.woken += 1;
            }
            self.shared.wake.notify_one();
        }
        drop(state);
        Running {
            shared: Arc::clone(&self.shared),
        }
    }
}

fn run(engine: &Engine, shared: &Shared) {
    loop {
        {
            let mut state = shared.lock();
            while state.running == 0 && !state.stop {
                // Set again before every wait: a start clears it as it
                // wakes the thread, and the child it counted may have
                // ended before the thread looked, leaving none running.
                state.parked = true;
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            state.parked = false;
            #[cfg(test)]
            {
                state.pausing = true;
            }
            // The tick's pause is a wait on the same condition, not a
            // sleep, so that dropping the ticker ends it at once: a sleep
            // made every drop (the CLI's exit, a Sandbox dropped on an
            // async executor's thread) wait out the tick under way, up to
            // 5 ms.
            let (state, _) = shared
                .wake
                .wait_timeout_while(state, shared.tick, |s| !s.stop)
                .unwrap_or_else(PoisonError::into_inner);
            if state.stop {
                return;
            }
        }
        engine.increment_epoch();
        #[cfg(test)]
        {
            shared.lock().ticks += 1;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn ticker() -> Ticker {
        Ticker::start(Engine::default()).expect("a thread")
    }

    /// Runs `f` on a thread of its own; false if it has not returned
    /// within `within`.
    fn returns_within(within: Duration, f: impl FnOnce() + Send + 'static) -> bool {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            f();
            let _ = done.send(());
        });
        finished.recv_timeout(within).is_ok()
    }

    fn ticks(ticker: &Ticker) -> u64 {
        ticker.shared.lock().ticks
    }

    /// Waits (at most 10 s) until `ticker` has ticked `n` times in all.
    fn wait_for_ticks(ticker: &Ticker, n: u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while ticks(ticker) < n {
            assert!(
                Instant::now() < deadline,
                "the ticker never ticked {n} times"
            );
            std::thread::sleep(TICK);
        }
    }

    #[test]
    fn each_running_child_is_counted_until_its_guard_drops() {
        let ticker = ticker();
        let first = ticker.running();
        let second = ticker.running();
        assert_eq!(ticker.shared.lock().running, 2);
        drop(first);
        assert_eq!(ticker.shared.lock().running, 1);
        drop(second);
        assert_eq!(ticker.shared.lock().running, 0);
    }

    #[test]
    fn it_ticks_only_while_a_child_runs() {
        let ticker = ticker();
        // Idle: ten ticks' worth of time passes without one (a ticker that
        // ticked while idle would have ticked about ten times).
        std::thread::sleep(TICK * 10);
        assert_eq!(ticks(&ticker), 0, "an idle ticker ticked");
        let started = Instant::now();
        let running = ticker.running();
        wait_for_ticks(&ticker, 3);
        // Each tick comes after a sleep of TICK that began after `started`:
        // no faster than that. Counted first, then timed, so a tick landing
        // in between cannot be counted without its time.
        let counted = ticks(&ticker);
        let elapsed = started.elapsed();
        let most = u64::try_from(elapsed.as_nanos() / TICK.as_nanos()).unwrap_or(u64::MAX);
        assert!(counted <= most, "{counted} ticks in {elapsed:?}");
        drop(running);
        // The tick under way when the guard dropped may still land.
        std::thread::sleep(TICK * 2);
        let after = ticks(&ticker);
        std::thread::sleep(TICK * 10);
        assert_eq!(
            ticks(&ticker),
            after,
            "the ticker went on after the last child"
        );
    }

    /// Waits (at most 10 s) until `ticker`'s thread is parked, waiting
    /// for a child.
    fn wait_until_parked(ticker: &Ticker) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ticker.shared.lock().parked {
            assert!(Instant::now() < deadline, "the ticker never parked");
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_start_wakes_the_thread_only_when_it_is_parked() {
        // A tick of an hour: once woken, the thread is in the tick's pause
        // for the rest of the test.
        let ticker =
            Ticker::start_with(Engine::default(), Duration::from_secs(3600)).expect("a thread");
        wait_until_parked(&ticker);
        let first = ticker.running();
        assert_eq!(ticker.shared.lock().woken, 1, "the first start woke it");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ticker.shared.lock().pausing {
            assert!(Instant::now() < deadline, "the ticker never began a tick");
            std::thread::yield_now();
        }
        // Executions one after another: each takes `running` from 0 to 1
        // while the thread pauses, and none may wake it.
        drop(first);
        for _ in 0..100 {
            drop(ticker.running());
        }
        assert_eq!(ticker.shared.lock().woken, 1, "a start woke it mid-tick");
    }

    #[test]
    fn a_child_that_ends_before_the_thread_wakes_leaves_it_parked_for_the_next() {
        let ticker = ticker();
        // Each start wakes the parked thread and ends at once, before the
        // thread looks (nearly always): the thread must park again, not
        // wait unparked where no later start wakes it.
        for _ in 0..100 {
            wait_until_parked(&ticker);
            drop(ticker.running());
        }
        wait_until_parked(&ticker);
        let before = ticks(&ticker);
        let _running = ticker.running();
        wait_for_ticks(&ticker, before + 1);
    }

    #[test]
    fn a_thread_parked_again_is_woken_by_the_next_start() {
        let ticker = ticker();
        for _ in 0..3 {
            wait_until_parked(&ticker);
            let before = ticks(&ticker);
            let running = ticker.running();
            wait_for_ticks(&ticker, before + 1);
            drop(running);
        }
        assert_eq!(ticker.shared.lock().woken, 3);
    }

    #[test]
    fn dropping_it_ends_its_thread() {
        let ticker = ticker();
        let running = ticker.running();
        wait_for_ticks(&ticker, 1);
        drop(running);
        let shared = Arc::clone(&ticker.shared);
        drop(ticker);
        // The thread held the other reference; joined, it holds none.
        assert_eq!(Arc::strong_count(&shared), 1);
    }

    #[test]
    fn dropping_it_mid_tick_does_not_wait_out_the_tick() {
        // A tick of an hour: a drop that waited for it would not return in
        // the ten seconds allowed.
        let ticker =
            Ticker::start_with(Engine::default(), Duration::from_secs(3600)).expect("a thread");
        let running = ticker.running();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ticker.shared.lock().pausing {
            assert!(Instant::now() < deadline, "the ticker never began a tick");
            std::thread::yield_now();
        }
        assert!(
            returns_within(Duration::from_secs(10), move || {
                drop(running);
                drop(ticker);
            }),
            "dropping the ticker waited out its tick"
        );
    }
}
