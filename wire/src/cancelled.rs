//! [`Cancelled`]: waiting for a [`CancellationToken`], looked at again only
//! when the token may have been cancelled.
//!
//! `CancellationToken::cancelled()` takes the token's lock, and then the
//! lock of the token's waiters, every time it is polled. The roles poll it
//! first in every `select!` they run, and an execution on the wasm backend
//! polls those `select!`s at every hand-off between the child, the Server
//! and the Starter, all in one task: five waits on tokens, each polled a few
//! times in every tool call's round trip.
//!
//! [`Cancelled`] gives the token's future a waker of its own. Once the
//! future waits, it is polled again only after that waker fired (the token
//! woke its waiters); a poll in between, from the same task, is an atomic
//! load and a comparison of wakers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Ready once its token is cancelled, as `token.cancelled()` is, but cheap
/// to poll while it waits (see the module's documentation).
#[must_use = "futures do nothing unless polled"]
pub struct Cancelled {
    waiting: Pin<Box<WaitForCancellationFutureOwned>>,
    wakes: Arc<Wakes>,
    /// `wakes` as a [`Waker`], the one `waiting` is always polled with.
    waker: Waker,
    /// The task's waker `wakes` holds, once `waiting` was polled (until
    /// then it is not registered with the token, and nothing wakes
    /// `wakes`). Only a wake takes it from `wakes`, and a wake sets
    /// `woken` first: while `woken` is clear, `wakes` holds it still.
    task: Option<Waker>,
}

impl std::fmt::Debug for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancelled")
            .field("polled", &self.task.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Wakes {
    /// Set by a wake from the token; taken by the next poll.
    woken: AtomicBool,
    /// The task polling us, woken in turn.
    task: AtomicWaker,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl Cancelled {
    /// Waits for `token` (or any of its parents) to be cancelled.
    pub fn new(token: &CancellationToken) -> Self {
        let wakes = Arc::new(Wakes::default());
        Cancelled {
            waiting: Box::pin(token.clone().cancelled_owned()),
            waker: Waker::from(Arc::clone(&wakes)),
            wakes,
            task: None,
        }
    }
}

impl Future for Cancelled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let same_task = this
            .task
            .as_ref()
            .is_some_and(|task| task.will_wake(cx.waker()));
        if same_task && !this.wakes.woken.load(Ordering::Acquire) {
            // Not woken since the last poll, and `wakes` still holds this
            // task's waker for the wake to come.
            return Poll::Pending;
        }
        // Cleared before the task's waker is registered and `waiting`
        // polled: a wake from here on is seen by the next poll.
        this.wakes.woken.store(false, Ordering::Release);
        this.wakes.task.register(cx.waker());
        if !same_task {
            this.task = Some(cx.waker().clone());
        }
        this.waiting
            .as_mut()
            .poll(&mut Context::from_waker(&this.waker))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A task's waker that counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll(cancelled: &mut Cancelled, waker: &Waker) -> Poll<()> {
        Pin::new(cancelled).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn a_cancel_while_waiting_wakes_the_task_and_the_next_poll_is_ready() {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let token = CancellationToken::new();
        let mut cancelled = Cancelled::new(&token);
        assert_eq!(poll(&mut cancelled, &waker), Poll::Pending);
        assert_eq!(poll(&mut cancelled, &waker), Poll::Pending);
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        token.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the task was woken");
        assert_eq!(poll(&mut cancelled, &waker), Poll::Ready(()));
    }

    #[test]
    fn a_parent_cancelled_before_the_first_poll_is_ready_at_once() {
        let parent = CancellationToken::new();
        let mut cancelled = Cancelled::new(&parent.child_token());
        parent.cancel();
        assert_eq!(poll(&mut cancelled, Waker::noop()), Poll::Ready(()));
    }

    #[test]
    fn the_task_polling_last_is_the_one_woken() {
        let (first, second) = (Arc::new(Count::default()), Arc::new(Count::default()));
        let token = CancellationToken::new();
        let mut cancelled = Cancelled::new(&token);
        assert_eq!(
            poll(&mut cancelled, &Waker::from(Arc::clone(&first))),
            Poll::Pending
        );
        assert_eq!(
            poll(&mut cancelled, &Waker::from(Arc::clone(&second))),
            Poll::Pending
        );
        token.cancel();
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(second.0.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancel_from_another_thread_ends_the_wait() {
        let token = CancellationToken::new();
        let waiting = tokio::spawn(Cancelled::new(&token));
        tokio::task::yield_now().await;
        let cancelling = token.clone();
        std::thread::spawn(move || cancelling.cancel())
            .join()
            .unwrap();
        waiting.await.unwrap();
    }
}
