//! Why a run must end before its program does, whoever notices it first.
//!
//! Four things end a run from outside the program's control: the wall clock
//! of the Start running out, the parent cancelling (closing the call
//! channel, or, in a process child, the start channel), the parent breaking
//! the protocol on the start channel (sending more after its Start), and
//! QuickJS's heap refusing an allocation (see `heap`). Each is
//! noticed where it happens (a reader thread, the channel, the clock) and
//! recorded here once, first reason wins; QuickJS's interrupt handler and
//! the event loop read it, so a program that computes is stopped as surely
//! as one that waits on a call. Once a run is stopped its Result is the
//! stop's, whatever the program did afterwards: a program that catches the
//! `cancelled` ToolError and returns still ends `cancelled`.
//!
//! **The wall clock.** A process child holds the Start's `wall_clock`
//! itself (docs/protocol.md, "The native child"): the deadline is taken
//! when the Start is read and checked by the interrupt handler (every
//! 10,000 QuickJS ticks: one atomic load and one `Instant::now`) and by
//! every wait of the event loop. The component does not: in wasm the
//! host's epoch interruption and its own deadline already hold it, and a
//! clock read there is a host call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use wire::{FailureKind, Start};

use crate::outcome::Ending;

/// Why a run was stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The Start's wall clock ran out.
    WallClock(Duration),
    /// The parent cancelled the run; the text says how it was seen.
    Cancelled(String),
    /// The parent broke the protocol on the start channel.
    Protocol(String),
    /// A tool's answer of this many bytes could not be held, and names no
    /// call where it could be read (its `id` past its first bytes).
    UnheldAnswer(usize),
    /// QuickJS's heap refused an allocation: the first refusal stops the
    /// run, so that a program cannot catch running out of memory and go on.
    Memory {
        /// Bytes asked for.
        requested: usize,
        /// Bytes the heap held then.
        used: usize,
        /// The heap's limit, or `None` when linear memory itself was full.
        limit: Option<usize>,
        /// Bytes of `used` the guest held for the program outside QuickJS's
        /// heap (its calls and timers), counted with it where the program
        /// added to them; 0 for a refusal of QuickJS's own.
        outside: usize,
    },
}

impl Reason {
    /// The ending a run stopped for this reason has.
    pub(crate) fn ending(&self) -> Ending {
        match self {
            Reason::WallClock(wall_clock) => Ending::failed(
                FailureKind::Limit,
                format!("wall clock of {wall_clock:?} ran out"),
            ),
            Reason::Cancelled(why) => {
                Ending::failed(FailureKind::Cancelled, format!("cancelled: {why}"))
            }
            Reason::Protocol(why) => Ending::Protocol(why.clone()),
            Reason::UnheldAnswer(len) => Ending::failed(
                FailureKind::Limit,
                format!(
                    "memory limit: a tool's answer of {len} bytes could not be held, and the \
                     call it answers could not be told (its id was not in its first {} bytes)",
                    wire::UNHELD_HEAD
                ),
            ),
            Reason::Memory {
                requested,
                used,
                limit: Some(limit),
                outside,
            } => Ending::failed(
                FailureKind::Limit,
                format!(
                    "memory limit: the program's heap could not grow by {requested} bytes: \
                     {used} of the {limit} that max_memory leaves it were in use{}; keep less \
                     in memory at once",
                    held_for_calls(*outside)
                ),
            ),
            Reason::Memory {
                requested,
                used,
                limit: None,
                ..
            } => Ending::failed(
                FailureKind::Limit,
                format!(
                    "memory limit: the program's heap could not grow by {requested} bytes: \
                     the child's memory is full ({used} bytes of heap in use)"
                ),
            ),
        }
    }
}

/// What a memory refusal says of the bytes held for the program's calls
/// and timers: nothing when there were none to speak of.
fn held_for_calls(outside: usize) -> String {
    if outside < OUTSIDE_TOLD {
        return String::new();
    }
    format!(
        ", {outside} of them held for its calls and timers (their args, and the tables of both)"
    )
}

/// Bytes held for calls and timers below which a refusal does not mention
/// them: what any run holds, not what a program piled up.
const OUTSIDE_TOLD: usize = 64 << 10;

/// A wake-up for a thread that waits elsewhere than on the stop itself
/// (the call channel's reader, say).
type Waker = Box<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct State {
    reason: Option<Reason>,
    wakers: Vec<Waker>,
}

#[derive(Default)]
struct Inner {
    /// Set once `reason` is; what the interrupt handler reads.
    stopped: AtomicBool,
    /// The Start's wall clock and when it runs out.
    deadline: Option<(Instant, Duration)>,
    state: Mutex<State>,
    changed: Condvar,
}

/// A run's stop: shared by the threads that may notice a reason and the
/// evaluator that obeys it. Clones share it.
#[derive(Clone, Default)]
pub struct Stop {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stop")
            .field("deadline", &self.inner.deadline)
            .field("stopped", &self.inner.stopped.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Stop {
    /// A stop with no deadline: only a reason given to it stops the run.
    pub fn new() -> Self {
        Stop::default()
    }

    /// A stop whose deadline is `wall_clock` from now (0: none).
    pub fn within(wall_clock: Duration) -> Self {
        let deadline = (!wall_clock.is_zero())
            .then(|| Instant::now().checked_add(wall_clock))
            .flatten()
            .map(|at| (at, wall_clock));
        Stop {
            inner: Arc::new(Inner {
                deadline,
                ..Inner::default()
            }),
        }
    }

    /// The stop for a run of `start`: natively its wall clock from now,
    /// in the component none (the host holds it).
    pub fn for_start(start: &Start) -> Self {
        if cfg!(target_arch = "wasm32") {
            Stop::new()
        } else {
            Stop::within(start.budget.wall_clock)
        }
    }

    /// When the wall clock runs out, if there is one.
    pub fn deadline(&self) -> Option<Instant> {
        self.inner.deadline.map(|(at, _)| at)
    }

    /// Stops the run for `reason`, unless it already stopped: the first
    /// reason wins. Wakes every wait.
    pub fn request(&self, reason: Reason) {
        let wakers = {
            let mut state = self.lock();
            if state.reason.is_some() {
                return;
            }
            state.reason = Some(reason);
            self.inner.stopped.store(true, Ordering::Release);
            std::mem::take(&mut state.wakers)
        };
        self.inner.changed.notify_all();
        for wake in wakers {
            wake();
        }
    }

    /// The parent cancelled the run; `why` says how that was seen.
    pub fn cancel(&self, why: impl Into<String>) {
        self.request(Reason::Cancelled(why.into()));
    }

    /// Whether the run must stop: a reason was given, or the deadline
    /// passed (which is then the reason). Cheap enough for QuickJS's
    /// interrupt handler.
    pub fn is_stopped(&self) -> bool {
        if self.inner.stopped.load(Ordering::Acquire) {
            return true;
        }
        match self.inner.deadline {
            Some((at, wall_clock)) if Instant::now() >= at => {
                self.request(Reason::WallClock(wall_clock));
                true
            }
            _ => false,
        }
    }

    /// Why the run must stop, if it must.
    pub fn reason(&self) -> Option<Reason> {
        if !self.is_stopped() {
            return None;
        }
        self.lock().reason.clone()
    }

    /// Calls `wake` once when the run stops (at once if it already has).
    pub fn on_stop(&self, wake: impl Fn() + Send + Sync + 'static) {
        {
            let mut state = self.lock();
            if state.reason.is_none() {
                state.wakers.push(Box::new(wake));
                return;
            }
        }
        wake();
    }

    /// Blocks for `duration`, or until the run stops or its deadline
    /// passes, whichever is first. The event loop's wait for a timer while
    /// no call is in flight.
    pub fn sleep(&self, duration: Duration) {
        #[cfg(target_arch = "wasm32")]
        {
            // No other thread can stop the component, and it has no
            // deadline of its own: a plain wait the host can end.
            crate::channel::sleep(duration);
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let mut until = Instant::now().checked_add(duration);
            if let Some(deadline) = self.deadline() {
                until = Some(until.map_or(deadline, |u| u.min(deadline)));
            }
            let mut state = self.lock();
            while state.reason.is_none() {
                let left = until.map(|u| u.saturating_duration_since(Instant::now()));
                if left == Some(Duration::ZERO) {
                    return;
                }
                state = match left {
                    Some(left) => {
                        self.inner
                            .changed
                            .wait_timeout(state, left)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0
                    }
                    None => self
                        .inner
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner),
                };
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A waker that panicked cannot leave the state half-changed.
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_wins_and_wakes_every_waker_once() {
        let stop = Stop::new();
        let woken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = woken.clone();
        stop.on_stop(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert!(!stop.is_stopped());
        stop.cancel("the parent closed the call channel");
        stop.request(Reason::Protocol("later".into()));
        assert_eq!(
            stop.reason(),
            Some(Reason::Cancelled(
                "the parent closed the call channel".into()
            ))
        );
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        // A waker registered after the stop runs at once.
        let counter = woken.clone();
        stop.on_stop(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(woken.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_deadline_becomes_the_reason_once_it_passes() {
        let stop = Stop::within(Duration::from_millis(20));
        assert_eq!(stop.reason(), None);
        let started = Instant::now();
        // Sleeping far past the deadline returns at it.
        stop.sleep(Duration::from_secs(30));
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(
            stop.reason(),
            Some(Reason::WallClock(Duration::from_millis(20)))
        );
    }

    #[test]
    fn a_sleep_ends_when_another_thread_stops_the_run() {
        let stop = Stop::new();
        let other = stop.clone();
        let thread = std::thread::spawn(move || other.cancel("closed"));
        // No deadline and no timeout worth waiting for: only the cancel
        // can end this wait.
        stop.sleep(Duration::from_secs(3600));
        thread.join().unwrap();
        assert!(stop.is_stopped());
    }

    #[test]
    fn no_wall_clock_is_no_deadline() {
        assert_eq!(Stop::within(Duration::ZERO).deadline(), None);
    }
}
