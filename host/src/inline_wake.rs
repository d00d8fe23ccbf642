//! [`InlineWakes`]: a future whose parts wake one another while it is being
//! polled is polled again in place, instead of through the scheduler.
//!
//! An execution on the wasm backend is one task: the child, the Server and
//! the Starter hand frames to one another through in-memory channels, and
//! each hand-off wakes the task from inside its own poll. Tokio answers a
//! task that woke itself while running as it answers `yield_now`: on a
//! multi-threaded runtime it puts the task at the back of the queue and
//! wakes an idle worker to come and steal it (`notify_parked`). That
//! wake-up of another core cost more than the rest of a `return 1`
//! execution: on the benchmark's two-worker runtime, one write to the
//! parked worker's eventfd per execution, and 82 µs a run against 44 µs on
//! a current-thread runtime, where a self-wake costs nothing.
//!
//! [`InlineWakes`] gives its future a waker of its own. A wake that comes
//! while the future is being polled is noted, and the future is polled again
//! at once; a wake at any other time (a tool's handler finishing on another
//! thread, a timer) goes to the task's waker as usual. Polling again in place
//! is bounded so that the task still gives way: never past tokio's
//! cooperative budget, and never for longer than [`IN_PLACE_FOR`] in one
//! poll (a spinning child yields at every epoch tick, and must still let
//! other tasks run).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// Longest one poll may go on polling again in place before the wake goes to
/// the scheduler like any other.
pub(crate) const IN_PLACE_FOR: Duration = Duration::from_millis(1);

/// Wraps `future` (see the module's documentation).
pub(crate) fn inline_wakes<F: Future>(future: F) -> InlineWakes<F> {
    let wakes = Arc::new(Wakes::default());
    InlineWakes {
        future: Box::pin(future),
        waker: Waker::from(Arc::clone(&wakes)),
        wakes,
    }
}

/// The future returned by [`inline_wakes`].
#[must_use = "futures do nothing unless polled"]
pub(crate) struct InlineWakes<F> {
    future: Pin<Box<F>>,
    wakes: Arc<Wakes>,
    /// `wakes` as a [`Waker`], made once so that the wrapped future sees the
    /// same waker on every poll (`Waker::will_wake`).
    waker: Waker,
}

impl<F> std::fmt::Debug for InlineWakes<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineWakes")
            .field("wakes", &self.wakes)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Wakes {
    /// Set while the wrapped future is being polled.
    polling: AtomicBool,
    /// Set by a wake; read and cleared by the poll.
    woken: AtomicBool,
    /// The waker of the task polling us, for wakes between polls.
    task: Mutex<Option<Waker>>,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // SeqCst on both flags, here and in `poll`: either this wake sees
        // the poll still running (and the poll sees `woken` after it stops),
        // or it sees the poll over and wakes the task. Never neither.
        self.woken.store(true, Ordering::SeqCst);
        if !self.polling.load(Ordering::SeqCst) {
            let task = self.task.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(task) = task.as_ref() {
                task.wake_by_ref();
            }
        }
    }
}

impl<F: Future> Future for InlineWakes<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        {
            let mut task = this
                .wakes
                .task
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match task.as_mut() {
                Some(task) if task.will_wake(cx.waker()) => {}
                _ => *task = Some(cx.waker().clone()),
            }
        }
        let mut inner = Context::from_waker(&this.waker);
        let started = Instant::now();
        loop {
            this.wakes.woken.store(false, Ordering::SeqCst);
            this.wakes.polling.store(true, Ordering::SeqCst);
            let polled = this.future.as_mut().poll(&mut inner);
            this.wakes.polling.store(false, Ordering::SeqCst);
            if polled.is_ready() {
                return polled;
            }
            if !this.wakes.woken.swap(false, Ordering::SeqCst) {
                return Poll::Pending;
            }
            if !tokio::task::coop::has_budget_remaining() || started.elapsed() >= IN_PLACE_FOR {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    use crate::test_waker::counting_waker as task;

    /// Wakes itself `times` times, returning Pending each time, then is ready.
    fn waking_itself(times: usize) -> impl Future<Output = usize> {
        let mut polls = 0;
        std::future::poll_fn(move |cx| {
            polls += 1;
            if polls > times {
                Poll::Ready(polls)
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
    }

    #[test]
    fn wakes_from_inside_the_poll_are_answered_in_place() {
        let (count, waker) = task();
        let mut future = inline_wakes(waking_itself(10));
        let polled = Pin::new(&mut future).poll(&mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Ready(11), "ten self-wakes, one poll");
        assert_eq!(count.get(), 0, "the task was not woken");
    }

    #[test]
    fn a_future_that_keeps_waking_itself_still_gives_way() {
        let (count, waker) = task();
        let mut future = inline_wakes(waking_itself(usize::MAX));
        let started = Instant::now();
        let polled = Pin::new(&mut future).poll(&mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Pending);
        assert!(started.elapsed() >= IN_PLACE_FOR);
        assert_eq!(count.get(), 1, "the wake went to the task");
    }

    /// Never ready; keeps the waker of its latest poll where the test can
    /// take it.
    fn keeping_its_waker() -> (Arc<Mutex<Option<Waker>>>, impl Future<Output = ()>) {
        let kept = Arc::new(Mutex::new(None::<Waker>));
        let future = std::future::poll_fn({
            let kept = Arc::clone(&kept);
            move |cx| {
                *kept.lock().unwrap() = Some(cx.waker().clone());
                Poll::Pending
            }
        });
        (kept, future)
    }

    #[test]
    fn a_wake_between_polls_goes_to_the_task() {
        let (count, waker) = task();
        let (stored, future) = keeping_its_waker();
        let mut future = inline_wakes(future);
        let polled = Pin::new(&mut future).poll(&mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Pending);
        assert_eq!(count.get(), 0);
        let inner = stored
            .lock()
            .unwrap()
            .take()
            .expect("the future kept its waker");
        std::thread::spawn(move || inner.wake()).join().unwrap();
        assert_eq!(count.get(), 1);
    }

    #[test]
    fn the_newest_task_waker_is_the_one_woken() {
        let (first, first_waker) = task();
        let (second, second_waker) = task();
        let (stored, future) = keeping_its_waker();
        let mut future = inline_wakes(future);
        let _ = Pin::new(&mut future).poll(&mut Context::from_waker(&first_waker));
        let _ = Pin::new(&mut future).poll(&mut Context::from_waker(&second_waker));
        stored.lock().unwrap().take().unwrap().wake();
        assert_eq!(first.get(), 0);
        assert_eq!(second.get(), 1);
    }

    /// Counts the polls of the future it wraps.
    struct Polls<F> {
        future: Pin<Box<F>>,
        polls: Arc<AtomicUsize>,
    }

    impl<F: Future> Future for Polls<F> {
        type Output = F::Output;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            self.future.as_mut().poll(cx)
        }
    }

    #[tokio::test]
    async fn a_spent_cooperative_budget_gives_way_at_once() {
        // Once the task has spent tokio's budget (128 units a poll), a wake
        // from inside goes to the scheduler even within `IN_PLACE_FOR`.
        let polls = Arc::new(AtomicUsize::new(0));
        Polls {
            future: Box::pin(inline_wakes(async {
                while tokio::task::coop::has_budget_remaining() {
                    tokio::task::consume_budget().await;
                }
                waking_itself(1).await
            })),
            polls: Arc::clone(&polls),
        }
        .await;
        assert_eq!(polls.load(Ordering::SeqCst), 2);
    }
}
