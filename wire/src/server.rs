//! The parent's side of the call channel: answer Requests.
//!
//! The server is where the parent holds its budget (docs/protocol.md, invariant 3): it counts a
//! call when it accepts it, spends a value's bytes against the quota when it
//! queues the answer, and reports as `bytes` only what it has written to the
//! child. It answers over the in-flight cap at once with kind `limit`
//! (invariant 4 there), runs each accepted call under `min(child's wish, host
//! maximum)`, answers `transient` itself when that deadline passes, and
//! writes each Response as soon as its call completes, whatever the request
//! order (invariant 6 there). Every accepted call gets exactly one Response, or
//! the connection ends.
//!
//! What the server keeps on the child's behalf is bounded by one cap, its
//! [`Holdings`]: a call's args while its handler runs, every answer until it
//! is written, and whatever a handler holds there itself (a tool's output
//! being read). A call whose args or value do not fit is answered `limit` at
//! once. Failure answers are always sent (their text is cut to
//! [`MAX_ERROR_BYTES`](crate::MAX_ERROR_BYTES)); reading pauses while more than
//! [`MAX_UNWRITTEN_BYTES`] of answers wait for a child that does not read.
//!
//! A child may withdraw a call it no longer wants ([`Withdraw`], sent only
//! when the Start said `withdraw`): the server aborts that call's handler
//! and answers the call `cancelled` itself, so the call still gets its one
//! Response and leaves the calls in flight at once. A Withdraw for an id
//! not in flight is ignored: the answer may have crossed it on the wire.

use std::collections::HashMap;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::{AbortHandle, Abortable, Aborted, Either};
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::async_frame::{AsyncFrameReader, write_frame_async};
use crate::cancelled::Cancelled;
use crate::codec::DecodeError;
use crate::codec::{decode, encode};
use crate::error::ProtocolError;
use crate::frame::FrameError;
use crate::holdings::{DEFAULT_MAX_HELD, Held, Holdings};
use crate::message::{MAX_ID_BYTES, Request, Response, Withdraw, cap_error_text};
use crate::{DEFAULT_MAX_INFLIGHT, FailureKind, MAX_FRAME_BYTES, ToolFailure};

/// What a handler may fail with. A [`ToolFailure`] keeps its kind; any other
/// error becomes kind `unknown` with the error's text.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// The future a [`Handler`] returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<String, HandlerError>> + Send>>;

/// One accepted call, as a handler sees it.
#[derive(Debug, Clone)]
pub struct Call {
    /// The Request's id.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// The raw args text.
    pub args: String,
    /// The deadline in force for this call, if any. The server enforces it;
    /// a handler may use it to pass a deadline on.
    pub deadline: Option<Duration>,
    /// The execution's cap on what the parent holds for the child. A handler
    /// that gathers something large on the child's behalf (a tool's output)
    /// holds it here as it reads, and fails the call `limit` when it does
    /// not fit.
    pub holdings: Holdings,
}

impl Call {
    /// A call with no deadline, holding against `holdings`.
    pub fn new(
        id: impl Into<String>,
        tool: impl Into<String>,
        args: impl Into<String>,
        holdings: Holdings,
    ) -> Self {
        Call {
            id: id.into(),
            tool: tool.into(),
            args: args.into(),
            deadline: None,
            holdings,
        }
    }
}

/// Answers calls. Dropping the returned future cancels the call.
///
/// The server polls each call's future in its own task, beside the reading
/// and writing of the connection, rather than spawning a task per call
/// (with the wasm backend, that task is the execution's). Like any future on
/// tokio, it must not block or spin: a call that computes for long, or calls
/// blocking code, belongs on [`tokio::task::spawn_blocking`] or a task of its
/// own, which the future then awaits.
pub trait Handler: Send + Sync + 'static {
    /// Runs one call to completion: the value's raw text, or why it failed.
    fn call(&self, call: Call) -> HandlerFuture;

    /// The longest a call to `tool` may take, set where the tool was
    /// registered; `None` (the default) sets none. The server takes the
    /// shortest of this, the program's wish and its own maximum, and
    /// answers `transient` itself when that deadline passes.
    fn timeout(&self, tool: &str) -> Option<Duration> {
        let _ = tool;
        None
    }
}

impl<F, Fut> Handler for F
where
    F: Fn(Call) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, HandlerError>> + Send + 'static,
{
    fn call(&self, call: Call) -> HandlerFuture {
        Box::pin(self(call))
    }
}

/// The server's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerOptions {
    /// Bytes the parent holds for the child at most (see [`Holdings`]).
    pub max_held: usize,
    /// From this instant on (the execution's wall clock) no call is accepted:
    /// each is answered `limit` at once.
    pub accept_until: Option<tokio::time::Instant>,
    /// Calls in flight at once; one more is answered `limit` at once.
    pub max_in_flight: usize,
    /// The host's maximum per-call deadline; `None` leaves only the child's wish.
    pub max_call_deadline: Option<Duration>,
    /// Calls accepted in all; 0 = unlimited.
    pub max_calls: u64,
    /// Bytes of values sent in all; 0 = unlimited. Spent when an answer is
    /// queued, so the quota holds even for a child that never reads.
    pub max_bytes: u64,
    /// Whether the server's own reads and writes spend tokio's cooperative
    /// budget, a frame read costing a unit of it, as a socket read does
    /// (the default). That is what makes a child flooding the channel give
    /// the thread back to the handlers and timers beside it. A child polled
    /// in the server's own task cannot flood it (it runs only when the task
    /// does), and for one the budget only makes the task yield every few
    /// dozen calls, which a multi-threaded runtime answers by waking another
    /// worker to steal it: `false` runs the server's own work outside the
    /// budget. Handlers spend the task's budget either way, so a handler
    /// whose every await is ready still yields, and its timeout can fire.
    pub frames_spend_budget: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_held: DEFAULT_MAX_HELD,
            accept_until: None,
            max_in_flight: DEFAULT_MAX_INFLIGHT,
            max_call_deadline: None,
            max_calls: 0,
            max_bytes: 0,
            frames_spend_budget: true,
        }
    }
}

impl ServerOptions {
    /// The deadline a call gets: `min(wish, host maximum)`, where a wish of 0
    /// is no wish and no host maximum leaves only the wish.
    pub fn deadline_for(&self, deadline_ms: u64) -> Option<Duration> {
        Deadline::shortest(deadline_ms, self.max_call_deadline, None).map(|d| d.after)
    }
}

/// What the parent counted. Shared, so the host can read it at any moment,
/// including after a cancel.
///
/// `bytes` is defined once, here: the sum of the lengths of the `value`
/// texts of the successful Responses written to the child. An answer that
/// was refused, or queued but never written, is not in it.
#[derive(Debug, Default)]
pub struct Tally {
    calls: AtomicU64,
    /// Calls accepted whose handler is still running.
    in_flight: AtomicUsize,
    /// Spent against `max_bytes` when an answer is queued.
    spent: AtomicU64,
    /// Written to the child.
    bytes: AtomicU64,
    /// The calls still running when serving stopped; `None` until it has.
    unfinished: Mutex<Option<Vec<Unfinished>>>,
    /// Bytes of answers not yet written to the child when serving stopped.
    unwritten: AtomicUsize,
}

/// A call whose handler was still running when the server stopped (a
/// cancel, the wall clock): what a host can tell the program's author the
/// execution was waiting on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    /// The tool called.
    pub tool: String,
    /// How long its handler had been running.
    pub running_for: Duration,
}

impl Tally {
    /// Calls accepted.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Acquire)
    }

    /// Accepted calls whose handler is still running (a handler that
    /// answered at once is never counted here).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Bytes of values written to the child.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Acquire)
    }

    /// The calls whose handlers were dropped unfinished when serving
    /// stopped, longest-running first; `None` while the server still runs
    /// (or never ran). Empty when every accepted call was answered.
    pub fn unfinished(&self) -> Option<Vec<Unfinished>> {
        self.unfinished
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Bytes of answers made and not yet written to the child when serving
    /// stopped (a frame whose write failed among them); 0 until it has.
    /// With no call running, what a child that ran out of time had not
    /// read.
    pub fn unwritten(&self) -> usize {
        self.unwritten.load(Ordering::Acquire)
    }

    /// Counts a call at acceptance unless the quota is spent.
    fn accept_call(&self, max: u64) -> bool {
        self.calls
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (max == 0 || n < max).then_some(n + 1)
            })
            .is_ok()
    }

    /// Counts a value's bytes unless they would go over the quota; all or nothing.
    fn spend_bytes(&self, len: u64, max: u64) -> bool {
        self.spent
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                let total = n.checked_add(len)?;
                (max == 0 || total <= max).then_some(total)
            })
            .is_ok()
    }
}

/// How a serve ended without a protocol violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The child closed its side; every accepted call was answered.
    Closed,
    /// The cancel token fired; handlers were dropped and the connection closed.
    Cancelled,
    /// The drain token fired ([`Server::drain_on`]) and the child's side
    /// ended: every Request it wrote was read, and the handlers still
    /// running were dropped.
    Drained,
}

/// Answers waiting to be written past this many bytes make the server stop
/// reading Requests until the child reads its answers: one frame at the
/// largest size. A child that keeps reading (as the protocol asks) never
/// meets it; one that floods Requests and reads nothing is held here instead
/// of making the parent queue a failure answer for each.
pub const MAX_UNWRITTEN_BYTES: usize = MAX_FRAME_BYTES;

/// The parent's call-channel server.
pub struct Server {
    options: ServerOptions,
    handler: Arc<dyn Handler>,
    tally: Arc<Tally>,
    holdings: Holdings,
    drain: CancellationToken,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("options", &self.options)
            .field("tally", &self.tally)
            .field("holdings", &self.holdings)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server answering calls with `handler`.
    pub fn new(options: ServerOptions, handler: Arc<dyn Handler>) -> Self {
        Server {
            options,
            handler,
            tally: Arc::default(),
            holdings: Holdings::new(options.max_held),
            drain: CancellationToken::new(),
        }
    }

    /// Once `drain` fires, the server reads on to the end of the child's
    /// side, accepting what it finds as ever, and then stops as on a
    /// cancel, without waiting for the handlers still running. For a child
    /// whose Result came on another channel: the Requests it wrote before
    /// the Result may still be in the call channel, and a cancel there
    /// lost them (a call made and not awaited went uncounted).
    #[must_use]
    pub fn drain_on(mut self, drain: CancellationToken) -> Self {
        self.drain = drain;
        self
    }

    /// The counts, readable while and after the server runs.
    pub fn tally(&self) -> Arc<Tally> {
        self.tally.clone()
    }

    /// What the server holds for the child, readable while and after it runs.
    pub fn holdings(&self) -> Holdings {
        self.holdings.clone()
    }

    /// Serves one connection until the child closes it, `cancel` fires, or
    /// the child breaks the protocol. In every case the handlers still
    /// running are dropped and `writer` is shut down before this returns.
    pub async fn serve<R, W>(
        self,
        reader: R,
        writer: W,
        cancel: CancellationToken,
    ) -> Result<Ending, ProtocolError>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send,
    {
        let outbox = Outbox::default();
        let (tx, rx) = mpsc::unbounded_channel();
        // The writer runs in this task, beside the reader, not as a task of
        // its own: spawning one per connection woke a second worker thread
        // of a multi-threaded runtime for every execution, and each answer
        // crossed threads to be written (measured on two cores, two workers:
        // a whole `return 1` execution 113-119 µs with a spawned writer,
        // 92-94 µs without; a call's round trip 14.1-14.8 against 11.7-12.0
        // µs). Dropping it between polls stops it at an await, as aborting
        // the task did.
        let writing = write_responses(writer, rx, outbox.clone(), self.tally.clone());
        let writing = if self.options.frames_spend_budget {
            Either::Left(writing)
        } else {
            Either::Right(tokio::task::coop::unconstrained(writing))
        };
        tokio::pin!(writing);
        let mut writer_ended = false;
        let mut conn = Connection {
            options: self.options,
            handler: self.handler,
            tally: self.tally,
            holdings: self.holdings,
            reader: AsyncFrameReader::new(reader),
            calls: FuturesUnordered::new(),
            running: HashMap::new(),
            tx,
            outbox,
        };
        let ending = {
            let running = conn.run(&self.drain);
            tokio::pin!(running);
            let mut cancelled = Cancelled::new(&cancel);
            loop {
                tokio::select! {
                    biased;
                    () = &mut cancelled => break Ok(Ending::Cancelled),
                    ending = &mut running => break ending,
                    // The writer ends early only when a write failed: the
                    // reader goes on until the child's side ends too.
                    () = &mut writing, if !writer_ended => writer_ended = true,
                }
            }
        };
        // Every handler still running is dropped before serve returns;
        // dropping the sender lets the writer drain what is queued.
        let stopped = Instant::now();
        let mut unfinished: Vec<Unfinished> = conn
            .running
            .drain()
            .map(|(_, call)| Unfinished {
                tool: call.tool,
                running_for: stopped.saturating_duration_since(call.since),
            })
            .collect();
        unfinished.sort_by_key(|call| std::cmp::Reverse(call.running_for));
        *conn
            .tally
            .unfinished
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(unfinished);
        conn.tally.unwritten.store(
            conn.outbox.unwritten.load(Ordering::Acquire),
            Ordering::Release,
        );
        conn.calls.clear();
        conn.tally.in_flight.store(0, Ordering::Release);
        drop(conn);
        if matches!(ending, Ok(Ending::Closed)) && !writer_ended {
            tokio::select! {
                () = &mut writing => {}
                () = cancel.cancelled() => {}
            }
        }
        // Otherwise the writer is dropped here, between two of its awaits:
        // a frame it has written is counted (`Tally::bytes`) by then, so the
        // count is final when serve returns.
        ending
    }
}

/// A handler's future whose drop cannot unwind into the Server: a value
/// the handler holds across an await may panic in its `Drop` (a nested
/// runtime dropped in async code does), when the call is withdrawn or the
/// connection ends, and that took the whole execution down, where a panic
/// while polling is caught and answered `unknown`.
struct DropsQuietly<F: Future + Unpin>(Option<F>);

impl<F: Future + Unpin> Future for DropsQuietly<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.0.as_mut() {
            Some(future) => Pin::new(future).poll(cx),
            None => Poll::Pending,
        }
    }
}

impl<F: Future + Unpin> Drop for DropsQuietly<F> {
    fn drop(&mut self) {
        if let Some(future) = self.0.take() {
            let _ = catch_unwind(AssertUnwindSafe(move || drop(future)));
        }
    }
}

/// Bytes queued for the writer, and a wake-up when they drain.
#[derive(Debug, Clone, Default)]
struct Outbox {
    unwritten: Arc<AtomicUsize>,
    drained: Arc<Notify>,
}

struct Connection<R> {
    options: ServerOptions,
    handler: Arc<dyn Handler>,
    tally: Arc<Tally>,
    reader: AsyncFrameReader<R>,
    /// The handlers not ready at their first poll, polled here, in serve's
    /// own task, each with its call's id.
    calls: FuturesUnordered<Running>,
    /// The calls in `calls`, by request id, with how to abort each (for
    /// [`Withdraw`]): a Request with one of these ids is a duplicate, and
    /// their number is held to the in-flight cap.
    running: HashMap<String, InFlight>,
    tx: mpsc::UnboundedSender<Outgoing>,
    outbox: Outbox,
    holdings: Holdings,
}

/// A call in [`Connection::calls`]: how to abort it, and what to say of it
/// if it is still running when serving stops.
struct InFlight {
    abort: AbortHandle,
    tool: String,
    since: Instant,
}

/// A call's handler still running: it ends with the call's id and its
/// Response, or the handler's panic, or [`Aborted`] when the call was
/// withdrawn.
type Running = Pin<Box<dyn Future<Output = (String, Ended)> + Send>>;

/// How a running handler ended.
type Ended = Result<std::thread::Result<Response>, Aborted>;

/// One encoded answer on its way to the child, held until it is written.
struct Outgoing {
    frame: Vec<u8>,
    /// The frame's bytes, held against the execution's cap.
    _held: Held,
    /// The value's length, counted as `bytes` once written (0 for a failure).
    value_len: u64,
}

impl<R: AsyncRead + Unpin + Send> Connection<R> {
    async fn run(&mut self, drain: &CancellationToken) -> Result<Ending, ProtocolError> {
        let mut reading = true;
        let mut draining = false;
        // Made once: a fresh one each turn joined and left the token's
        // waiters (a lock each way) for every frame and answer.
        let mut drained = Cancelled::new(drain);
        loop {
            if draining && !reading {
                return Ok(Ending::Drained);
            }
            // A child that has ended reads no answers: the backlog's pause
            // would only stop the drain.
            let backlog =
                !draining && self.outbox.unwritten.load(Ordering::Acquire) > MAX_UNWRITTEN_BYTES;
            tokio::select! {
                () = &mut drained, if !draining && (reading || !self.calls.is_empty()) => {
                    draining = true;
                }
                Some((id, ended)) = self.calls.next(), if !self.calls.is_empty() => {
                    let response = match ended {
                        Ok(Ok(response)) => response,
                        Ok(Err(_panic)) => handler_panicked(id.clone()),
                        Err(Aborted) => withdrawn(id.clone()),
                    };
                    self.running.remove(&id);
                    self.tally.in_flight.fetch_sub(1, Ordering::AcqRel);
                    self.send(response)?;
                }
                () = self.outbox.drained.notified(), if reading && backlog => {}
                frame = read_frame(&mut self.reader, self.options.frames_spend_budget), if reading && !backlog => {
                    match frame? {
                        Some(payload) => {
                            self.accept(&payload)?;
                            // Each frame costs a unit of tokio's cooperative
                            // budget, as a socket read does: frames already in
                            // the reader's buffer cost nothing else, and a
                            // flooding child must not keep this task from
                            // yielding to the handlers and timers on its thread.
                            if self.options.frames_spend_budget {
                                tokio::task::coop::consume_budget().await;
                            }
                        }
                        None => reading = false,
                    }
                }
                else => return Ok(Ending::Closed),
            }
        }
    }

    fn accept(&mut self, payload: &[u8]) -> Result<(), ProtocolError> {
        let request: Request = match decode(payload) {
            Ok(request) => request,
            // Not a Request: a Withdraw is the only other thing a child sends.
            Err(e @ DecodeError::Malformed { .. }) => match decode::<Withdraw>(payload) {
                Ok(withdraw) => {
                    self.withdraw(&withdraw.withdraw);
                    return Ok(());
                }
                // Told as what it tried to be: a Withdraw whose id is no
                // string is no "Request without an `id`".
                Err(not_withdraw) if names_withdraw(payload) => return Err(not_withdraw.into()),
                Err(_) => return Err(e.into()),
            },
            Err(e) => return Err(e.into()),
        };
        if request.id.is_empty() {
            return Err(ProtocolError::EmptyId { tool: request.tool });
        }
        if request.id.len() > MAX_ID_BYTES {
            return Err(ProtocolError::IdTooLong {
                len: request.id.len(),
                max: MAX_ID_BYTES,
            });
        }
        if self.running.contains_key(&request.id) {
            return Err(ProtocolError::DuplicateId(request.id));
        }
        if self
            .options
            .accept_until
            .is_some_and(|until| tokio::time::Instant::now() >= until)
        {
            let why = "the execution's wall clock ran out; no call is accepted after it";
            return self.send(Response::failure(request.id, FailureKind::Limit, why));
        }
        if self.running.len() >= self.options.max_in_flight {
            let why = format!(
                "in-flight cap of {} calls reached; the call was not queued",
                self.options.max_in_flight
            );
            return self.send(Response::failure(request.id, FailureKind::Limit, why));
        }
        let args_held = match self.holdings.try_hold(request.args.len()) {
            Ok(held) => held,
            Err(over) => {
                let why = format!(
                    "the call's args of {} bytes cannot be held: {over}",
                    request.args.len()
                );
                return self.send(Response::failure(request.id, FailureKind::Limit, why));
            }
        };
        if !self.tally.accept_call(self.options.max_calls) {
            let why = format!("call quota of {} calls is spent", self.options.max_calls);
            return self.send(Response::failure(request.id, FailureKind::Limit, why));
        }
        let deadline = Deadline::shortest(
            request.deadline_ms,
            self.options.max_call_deadline,
            self.handler.timeout(&request.tool),
        );
        let tool = request.tool;
        let call = Call {
            id: request.id.clone(),
            tool: tool.clone(),
            args: crate::json::well_formed_args(request.args),
            deadline: deadline.map(|d| d.after),
            holdings: self.holdings.clone(),
        };
        let handler = self.handler.clone();
        let mut answering = DropsQuietly(Some(Box::pin(async move {
            // The args stay held until the handler is done with the call.
            let _args = args_held;
            answer(&*handler, call, deadline).await
        })));
        // Fast path: a handler that is ready at once (a lookup, a cache hit)
        // is answered here, and one that is not joins the calls this task
        // polls. A future must re-register its waker each time it is
        // polled, so one polled here with a no-op waker and then polled by
        // `calls` loses nothing.
        let mut cx = Context::from_waker(Waker::noop());
        match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut answering).poll(&mut cx))) {
            Ok(Poll::Ready(response)) => self.send(response),
            Ok(Poll::Pending) => {
                // Polled in this task rather than spawned as one of its own:
                // on a multi-threaded runtime a spawn woke another worker,
                // which took the handler, and its answer came back across
                // threads (a handler that awaits once: 13.1-13.7 µs a round
                // trip spawned, 7.6-7.7 µs here, on two workers).
                let (abort, registration) = AbortHandle::new_pair();
                let id = request.id.clone();
                let polled =
                    Abortable::new(AssertUnwindSafe(answering).catch_unwind(), registration)
                        .map(move |ended| (id, ended));
                self.calls.push(Box::pin(polled));
                let in_flight = InFlight {
                    abort,
                    tool,
                    since: Instant::now(),
                };
                self.running.insert(request.id, in_flight);
                self.tally.in_flight.fetch_add(1, Ordering::AcqRel);
                Ok(())
            }
            Err(_) => self.send(handler_panicked(request.id)),
        }
    }

    /// Aborts the handler of call `id`, if it is still running: it is
    /// dropped at its next turn in `calls`, and the call answered by
    /// [`withdrawn`].
    fn withdraw(&mut self, id: &str) {
        if let Some(call) = self.running.get(id) {
            call.abort.abort();
        }
    }

    /// Queues `response` for the writer. A value that cannot be encoded in a
    /// frame, held, or paid for from the byte quota is replaced by a `limit`
    /// failure: the call still gets its one answer.
    fn send(&self, response: Response) -> Result<(), ProtocolError> {
        let outgoing = if response.ok {
            match self.admit(&response) {
                Ok(outgoing) => outgoing,
                Err(why) => {
                    self.failure(Response::failure(response.id, FailureKind::Limit, why))?
                }
            }
        } else {
            self.failure(response)?
        };
        self.outbox
            .unwritten
            .fetch_add(outgoing.frame.len(), Ordering::AcqRel);
        // A closed receiver means the writer already failed; the connection
        // is going away and the read side will see it.
        let _ = self.tx.send(outgoing);
        Ok(())
    }

    /// A successful answer, encoded, held and paid for; or why it cannot be.
    fn admit(&self, response: &Response) -> Result<Outgoing, String> {
        let value_len = response.value.len();
        let does_not_fit =
            |e| format!("the tool's value of {value_len} bytes does not fit in a frame: {e}");
        // The frame holds the value as it is: one larger than a frame is
        // refused before a frame of it is made (encoding grows its buffer
        // by doubling, to twice the value).
        if value_len > MAX_FRAME_BYTES {
            return Err(does_not_fit(FrameError::TooLarge {
                len: value_len as u64,
                max: MAX_FRAME_BYTES,
            }));
        }
        let frame = encode(response).map_err(does_not_fit)?;
        let held = self.holdings.try_hold(frame.len()).map_err(|over| {
            format!("the tool's value of {value_len} bytes cannot be held: {over}")
        })?;
        let len = value_len as u64;
        if !self.tally.spend_bytes(len, self.options.max_bytes) {
            return Err(format!(
                "byte quota of {} bytes would be exceeded by a value of {value_len} bytes",
                self.options.max_bytes
            ));
        }
        Ok(Outgoing {
            frame,
            _held: held,
            value_len: len,
        })
    }

    /// A failure answer, its text cut to [`MAX_ERROR_BYTES`](crate::MAX_ERROR_BYTES). Its id is at
    /// most [`MAX_ID_BYTES`](crate::MAX_ID_BYTES), so it always fits in a frame; it is held even
    /// over the cap, since its size and number are bounded.
    fn failure(&self, mut response: Response) -> Result<Outgoing, ProtocolError> {
        response.error = cap_error_text(std::mem::take(&mut response.error));
        let frame = encode(&response)?;
        Ok(Outgoing {
            _held: self.holdings.hold_anyway(frame.len()),
            frame,
            value_len: 0,
        })
    }
}

/// Whether `payload`, a message the child sent that is no Request, has a
/// `withdraw` member (read only on that failure).
fn names_withdraw(payload: &[u8]) -> bool {
    serde_json::from_slice::<HashMap<String, serde::de::IgnoredAny>>(payload)
        .is_ok_and(|members| members.contains_key("withdraw"))
}

/// The answer to a call whose handler panicked: the handler's bug, reported
/// to the program as an unclassified failure instead of taking the server down.
fn handler_panicked(id: String) -> Response {
    Response::failure(id, FailureKind::Unknown, "the tool's handler panicked")
}

/// The answer to a call the child withdrew: its handler was aborted.
fn withdrawn(id: String) -> Response {
    Response::failure(
        id,
        FailureKind::Cancelled,
        "the child withdrew the call; its handler was cancelled",
    )
}

/// The next frame, read inside tokio's cooperative budget or outside it
/// (see [`ServerOptions::frames_spend_budget`]).
async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut AsyncFrameReader<R>,
    spend_budget: bool,
) -> Result<Option<Vec<u8>>, FrameError> {
    if spend_budget {
        reader.read_frame().await
    } else {
        tokio::task::coop::unconstrained(reader.read_frame()).await
    }
}

/// The deadline a call runs under: the shortest of the three that may be
/// set, and which one it is, so that the answer says whose it was.
#[derive(Debug, Clone, Copy)]
struct Deadline {
    after: Duration,
    /// Who set it, as the failure names it.
    set_by: &'static str,
}

impl Deadline {
    /// The shortest of the child's wish (`deadline_ms`, 0 for none), the
    /// host's maximum and the tool's timeout; on a tie the child's wish,
    /// then the tool's, is named.
    fn shortest(
        deadline_ms: u64,
        host_max: Option<Duration>,
        tool: Option<Duration>,
    ) -> Option<Deadline> {
        let wish = (deadline_ms > 0).then(|| Duration::from_millis(deadline_ms));
        [
            (wish, "the call's deadline"),
            (tool, "the tool's timeout"),
            (host_max, "the host's per-call deadline"),
        ]
        .into_iter()
        .filter_map(|(after, set_by)| after.map(|after| Deadline { after, set_by }))
        .min_by_key(|deadline| deadline.after)
    }
}

/// Runs one call under its deadline and turns its outcome into a Response.
async fn answer(handler: &dyn Handler, call: Call, deadline: Option<Deadline>) -> Response {
    let id = call.id.clone();
    let fut = handler.call(call);
    let outcome = match deadline {
        Some(d) => match tokio::time::timeout(d.after, fut).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let why = format!("{} of {} ms passed", d.set_by, d.after.as_millis());
                return Response::failure(id, FailureKind::Transient, why);
            }
        },
        None => fut.await,
    };
    match outcome {
        Ok(value) => Response::success(id, value),
        Err(err) => {
            let failure = match err.downcast::<ToolFailure>() {
                Ok(failure) => *failure,
                Err(other) => ToolFailure::new(FailureKind::Unknown, other.to_string()),
            };
            Response::failure(id, failure.kind, failure.message)
        }
    }
}

async fn write_responses<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    outbox: Outbox,
    tally: Arc<Tally>,
) {
    while let Some(outgoing) = rx.recv().await {
        if write_frame_async(&mut writer, &outgoing.frame)
            .await
            .is_err()
        {
            return;
        }
        tally.bytes.fetch_add(outgoing.value_len, Ordering::AcqRel);
        outbox
            .unwritten
            .fetch_sub(outgoing.frame.len(), Ordering::AcqRel);
        drop(outgoing);
        outbox.drained.notify_one();
    }
    let _ = writer.shutdown().await;
}
