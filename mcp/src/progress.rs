//! A run's console lines, sent to its client as `notifications/progress`
//! while it runs, when the request asked for progress.
//!
//! One notification per line let a program that logs short lines in a loop
//! make the server send hundreds of thousands of them (about 120 bytes of
//! JSON-RPC each for one byte of console), and its answer, sent after them,
//! came 50 s after its 1 s wall clock, its place among the executions
//! running held all the while. So the lines are gathered: the console sink
//! appends each to a buffer, and a task sends what has gathered as one
//! notification (the lines joined by `\n`) at most every [`TICK`], or as
//! soon as [`MAX_BATCH`] bytes wait. What is sent is at most the console
//! (capped) and a notification per tick, whatever the program writes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The least time between two notifications while the program runs (the
/// lines written meanwhile go out together).
pub(crate) const TICK: Duration = Duration::from_millis(50);

/// The most console text one notification carries; a batch ends at a line's
/// end (a longer line goes alone).
pub(crate) const MAX_BATCH: usize = 256 << 10;

/// How long, once the run has ended, its answer waits for the lines still
/// to be sent; past it they are dropped (the answer's `console` has every
/// one), and stderr says how many. The run's place among those running is
/// given back before this wait.
pub(crate) const DRAIN: Duration = Duration::from_secs(2);

/// The lines written and not yet sent.
#[derive(Debug, Default)]
struct Pending {
    /// Each line followed by `\n`.
    text: String,
    /// How many lines were written.
    lines: u64,
    /// How many of them went out.
    sent: u64,
    /// The run has ended: no more lines come.
    ended: bool,
}

#[derive(Debug, Default)]
struct Shared {
    pending: Mutex<Pending>,
    /// Woken for each line, and once the run has ended.
    changed: Notify,
}

impl Shared {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The lines of one run, to send as they gather: [`Progress::line`] is the
/// console sink (it never blocks), [`Progress::finish`] waits, bounded, for
/// the rest to go.
#[derive(Debug)]
pub(crate) struct Progress {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Progress {
    /// Starts sending the run's lines to `peer` under `token`.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let shared = Arc::new(Shared::default());
        let task = tokio::spawn(send(shared.clone(), move |message, lines| {
            let peer = peer.clone();
            let mut note = ProgressNotificationParam::new(token.clone(), lines as f64);
            note.message = Some(message);
            async move { peer.notify_progress(note).await.is_ok() }
        }));
        Progress { shared, task }
    }

    /// The console sink: `line` is sent with the next batch.
    pub(crate) fn sink(&self) -> impl Fn(&str) + Send + Sync + 'static {
        let shared = self.shared.clone();
        move |line| {
            let mut pending = shared.pending();
            pending.text.push_str(line);
            pending.text.push('\n');
            pending.lines += 1;
            drop(pending);
            shared.changed.notify_one();
        }
    }

    /// The run has ended: what is left goes out at once, and this waits for
    /// it at most `within`. How many lines were not sent.
    pub(crate) async fn finish(self, within: Duration) -> u64 {
        self.shared.pending().ended = true;
        self.shared.changed.notify_one();
        let mut task = self.task;
        if tokio::time::timeout(within, &mut task).await.is_err() {
            task.abort();
        }
        let pending = self.shared.pending();
        pending.lines - pending.sent
    }
}

/// Sends the lines of `shared` as they gather, with `notify` (the batch's
/// text, without its last newline, and how many lines have been written
/// up to its end; false when the client is gone), until the run has ended
/// and every line is out, or a send fails.
async fn send<F, Fut>(shared: Arc<Shared>, notify: F)
where
    F: Fn(String, u64) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut taken = 0u64;
    let mut next = Instant::now();
    loop {
        // Until a line is there (or the run is over).
        loop {
            let there = {
                let pending = shared.pending();
                !pending.text.is_empty() || pending.ended
            };
            if there {
                break;
            }
            shared.changed.notified().await;
        }
        // Then until the tick, unless a whole batch waits or the run has
        // ended (the rest goes at once).
        loop {
            let ready = {
                let pending = shared.pending();
                pending.ended || pending.text.len() >= MAX_BATCH
            };
            if ready || Instant::now() >= next {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep_until(next) => {}
                () = shared.changed.notified() => {}
            }
        }
        let (batch, lines) = {
            let mut pending = shared.pending();
            if pending.text.is_empty() {
                // Ended, and nothing is left.
                return;
            }
            let batch = take_batch(&mut pending.text, MAX_BATCH);
            let lines = batch.matches('\n').count() as u64;
            (batch, lines)
        };
        taken += lines;
        let mut message = batch;
        message.pop();
        if !notify(message, taken).await {
            return;
        }
        shared.pending().sent = taken;
        next = Instant::now() + TICK;
    }
}

/// The first lines of `text` (each ending in `\n`), at most `max` bytes of
/// them, or the first line alone when it is longer; taken out of `text`.
fn take_batch(text: &mut String, max: usize) -> String {
    let cut = if text.len() <= max {
        text.len()
    } else {
        match text.as_bytes()[..max].iter().rposition(|&b| b == b'\n') {
            Some(at) => at + 1,
            None => text.find('\n').map_or(text.len(), |at| at + 1),
        }
    };
    let rest = text.split_off(cut);
    std::mem::replace(text, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_ends_at_a_line_end_within_its_bytes_or_is_one_long_line() {
        let mut text = "ab\ncd\nef\n".to_owned();
        assert_eq!(take_batch(&mut text, 6), "ab\ncd\n");
        assert_eq!(text, "ef\n");
        let mut text = "ab\ncd\n".to_owned();
        assert_eq!(take_batch(&mut text, 5), "ab\n");
        let mut text = "abcdefgh\nx\n".to_owned();
        assert_eq!(take_batch(&mut text, 3), "abcdefgh\n");
        assert_eq!(take_batch(&mut text, 3), "x\n");
        assert_eq!(text, "");
    }

    /// A program that wrote 20,000 lines made 20,000 notifications, and its
    /// answer waited for all of them; now they go out in batches, every
    /// line once and in order, the count of lines as the progress.
    #[tokio::test(start_paused = true)]
    async fn lines_written_in_a_burst_go_out_in_few_batches_every_one_in_order() {
        let shared = Arc::new(Shared::default());
        let sent = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(send(shared.clone(), {
            let sent = sent.clone();
            move |message: String, lines: u64| {
                sent.lock().unwrap().push((message, lines));
                // A send takes a while, as one to a client does.
                async {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    true
                }
            }
        }));
        let progress = Progress { shared, task };
        let sink = progress.sink();
        let written = 200_000u64;
        for i in 0..written {
            sink(&format!("line {i}"));
            if i % 1000 == 0 {
                tokio::task::yield_now().await;
            }
        }
        assert_eq!(progress.finish(DRAIN).await, 0);
        let sent = sent.lock().unwrap();
        let bytes: usize = (0..written).map(|i| format!("line {i}\n").len()).sum();
        assert!(
            sent.len() as u64 <= 2 + (bytes / (MAX_BATCH / 2)) as u64,
            "{} notifications for {written} lines",
            sent.len()
        );
        let lines: Vec<String> = sent
            .iter()
            .flat_map(|(m, _)| m.split('\n').map(str::to_owned))
            .collect();
        assert_eq!(
            lines,
            (0..written)
                .map(|i| format!("line {i}"))
                .collect::<Vec<_>>()
        );
        assert_eq!(sent.last().unwrap().1, written);
        assert!(sent.windows(2).all(|w| w[0].1 < w[1].1));
    }

    /// A first line goes out at once (progress is for watching a run), and
    /// while a program keeps writing, a notification per tick at most.
    #[tokio::test(start_paused = true)]
    async fn a_program_that_keeps_writing_gets_a_notification_per_tick_at_most() {
        let shared = Arc::new(Shared::default());
        let sent = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(send(shared.clone(), {
            let sent = sent.clone();
            move |message: String, _| {
                sent.lock().unwrap().push((Instant::now(), message));
                async { true }
            }
        }));
        let progress = Progress { shared, task };
        let sink = progress.sink();
        let start = Instant::now();
        sink("first");
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        assert_eq!(sent.lock().unwrap().len(), 1, "the first line waited");
        // A line every millisecond for a second.
        for _ in 0..1000 {
            tokio::time::sleep(Duration::from_millis(1)).await;
            sink("");
        }
        let elapsed = start.elapsed();
        assert_eq!(progress.finish(DRAIN).await, 0);
        let sent = sent.lock().unwrap();
        let most = 3 + (elapsed.as_millis() / TICK.as_millis()) as usize;
        assert!(
            sent.len() <= most,
            "{} notifications in {elapsed:?}",
            sent.len()
        );
        let lines: usize = sent.iter().map(|(_, m)| m.split('\n').count()).sum();
        assert_eq!(lines, 1001);
    }

    /// A client that takes no notification does not hold the answer past
    /// the bound, and what was not sent is counted.
    #[tokio::test(start_paused = true)]
    async fn a_send_that_never_ends_holds_the_answer_only_for_the_bound() {
        let shared = Arc::new(Shared::default());
        let task = tokio::spawn(send(shared.clone(), |_, _| std::future::pending::<bool>()));
        let progress = Progress { shared, task };
        let sink = progress.sink();
        for _ in 0..10 {
            sink("x");
        }
        let start = Instant::now();
        assert_eq!(progress.finish(DRAIN).await, 10);
        assert_eq!(start.elapsed(), DRAIN);
    }
}
