//! The parent's side of the call channel: answer Requests.
//!
//! The server is where the parent holds its budget (invariant 3): it counts a
//! call when it accepts it and a value's bytes when it sends it. It answers
//! over the in-flight cap at once with kind `limit` (invariant 4), runs each
//! accepted call in its own task under `min(child's wish, host maximum)`,
//! answers `transient` itself when that deadline passes, and writes each
//! Response as soon as its call completes, whatever the request order
//! (invariant 6).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::async_frame::{AsyncFrameReader, write_frame_async};
use crate::codec::{decode, encode};
use crate::error::ProtocolError;
use crate::message::{Request, Response};
use crate::{DEFAULT_MAX_INFLIGHT, FailureKind, MAX_FRAME_BYTES, ToolFailure};

/// What a handler may fail with. A [`ToolFailure`] keeps its kind; any other
/// error becomes kind `unknown` with the error's text.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// The future a [`Handler`] returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<String, HandlerError>> + Send>>;

/// One accepted call, as a handler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// Answers calls. Dropping the returned future cancels the call.
pub trait Handler: Send + Sync + 'static {
    /// Runs one call to completion: the value's raw text, or why it failed.
    fn call(&self, call: Call) -> HandlerFuture;
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
    /// Calls in flight at once; one more is answered `limit` at once.
    pub max_in_flight: usize,
    /// The host's maximum per-call deadline; `None` leaves only the child's wish.
    pub max_call_deadline: Option<Duration>,
    /// Calls accepted in all; 0 = unlimited.
    pub max_calls: u64,
    /// Bytes of values sent in all; 0 = unlimited.
    pub max_bytes: u64,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_in_flight: DEFAULT_MAX_INFLIGHT,
            max_call_deadline: None,
            max_calls: 0,
            max_bytes: 0,
        }
    }
}

impl ServerOptions {
    /// The deadline a call gets: `min(wish, host maximum)`, where a wish of 0
    /// is no wish and no host maximum leaves only the wish.
    pub fn deadline_for(&self, deadline_ms: u64) -> Option<Duration> {
        let wish = (deadline_ms > 0).then(|| Duration::from_millis(deadline_ms));
        match (wish, self.max_call_deadline) {
            (Some(w), Some(m)) => Some(w.min(m)),
            (w, m) => w.or(m),
        }
    }
}

/// What the parent counted. Shared, so the host can read it at any moment,
/// including after a cancel.
#[derive(Debug, Default)]
pub struct Tally {
    calls: AtomicU64,
    bytes: AtomicU64,
}

impl Tally {
    /// Calls accepted.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Acquire)
    }

    /// Bytes of values sent.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Acquire)
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
        self.bytes
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
}

/// Responses waiting to be written past this many bytes make the server stop
/// reading Requests until the child reads its answers.
const MAX_UNWRITTEN_BYTES: usize = 2 * MAX_FRAME_BYTES;

/// The parent's call-channel server.
pub struct Server {
    options: ServerOptions,
    handler: Arc<dyn Handler>,
    tally: Arc<Tally>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("options", &self.options)
            .field("tally", &self.tally)
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
        }
    }

    /// The counts, readable while and after the server runs.
    pub fn tally(&self) -> Arc<Tally> {
        self.tally.clone()
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
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let outbox = Outbox::default();
        let (tx, rx) = mpsc::unbounded_channel();
        let mut write_task = tokio::spawn(write_responses(writer, rx, outbox.clone()));
        let mut conn = Connection {
            options: self.options,
            handler: self.handler,
            tally: self.tally,
            reader: AsyncFrameReader::new(reader),
            in_flight: HashSet::new(),
            calls: JoinSet::new(),
            tasks: HashMap::new(),
            tx,
            outbox,
        };
        let ending = tokio::select! {
            biased;
            () = cancel.cancelled() => Ok(Ending::Cancelled),
            ending = conn.run() => ending,
        };
        // Every handler still running is aborted and dropped before serve
        // returns; dropping the sender lets the writer drain what is queued.
        conn.calls.shutdown().await;
        drop(conn);
        if matches!(ending, Ok(Ending::Closed)) {
            tokio::select! {
                _ = &mut write_task => {}
                () = cancel.cancelled() => write_task.abort(),
            }
        } else {
            write_task.abort();
        }
        ending
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
    in_flight: HashSet<String>,
    calls: JoinSet<Response>,
    /// Which request each running task answers, so that even a panicking
    /// handler's call gets its Response.
    tasks: HashMap<tokio::task::Id, String>,
    tx: mpsc::UnboundedSender<Vec<u8>>,
    outbox: Outbox,
}

impl<R: AsyncRead + Unpin + Send> Connection<R> {
    async fn run(&mut self) -> Result<Ending, ProtocolError> {
        let mut reading = true;
        loop {
            let backlog = self.outbox.unwritten.load(Ordering::Acquire) > MAX_UNWRITTEN_BYTES;
            tokio::select! {
                Some(done) = self.calls.join_next_with_id(), if !self.calls.is_empty() => {
                    let (task, response) = match done {
                        Ok((task, response)) => (task, response),
                        Err(e) => {
                            let id = self.tasks.get(&e.id()).cloned().unwrap_or_default();
                            (e.id(), handler_panicked(id))
                        }
                    };
                    if let Some(id) = self.tasks.remove(&task) {
                        self.in_flight.remove(&id);
                    }
                    self.send(&response);
                }
                () = self.outbox.drained.notified(), if reading && backlog => {}
                frame = self.reader.read_frame(), if reading && !backlog => {
                    match frame? {
                        Some(payload) => {
                            self.accept(&payload)?;
                            // Each frame costs a unit of tokio's cooperative
                            // budget, as a socket read does: frames already in
                            // the reader's buffer cost nothing else, and a
                            // flooding child must not keep this task from
                            // yielding to the handlers and timers on its thread.
                            tokio::task::consume_budget().await;
                        }
                        None => reading = false,
                    }
                }
                else => return Ok(Ending::Closed),
            }
        }
    }

    fn accept(&mut self, payload: &[u8]) -> Result<(), ProtocolError> {
        let request: Request = decode(payload)?;
        if request.id.is_empty() {
            return Err(ProtocolError::EmptyId { tool: request.tool });
        }
        if self.in_flight.contains(&request.id) {
            return Err(ProtocolError::DuplicateId(request.id));
        }
        if self.in_flight.len() >= self.options.max_in_flight {
            let why = format!(
                "in-flight cap of {} calls reached; the call was not queued",
                self.options.max_in_flight
            );
            self.send(&Response::failure(request.id, FailureKind::Limit, why));
            return Ok(());
        }
        if !self.tally.accept_call(self.options.max_calls) {
            let why = format!("call quota of {} calls is spent", self.options.max_calls);
            self.send(&Response::failure(request.id, FailureKind::Limit, why));
            return Ok(());
        }
        let deadline = self.options.deadline_for(request.deadline_ms);
        let call = Call {
            id: request.id.clone(),
            tool: request.tool,
            args: request.args,
            deadline,
        };
        let handler = self.handler.clone();
        let tally = self.tally.clone();
        let max_bytes = self.options.max_bytes;
        let mut answering =
            Box::pin(async move { answer(&*handler, call, &tally, max_bytes).await });
        // Fast path: a handler that is ready at once (a lookup, a cache hit)
        // is answered here, without a task and its cross-thread hand-off.
        // A future must re-register its waker each time it is polled, so one
        // polled here with a no-op waker and then spawned loses nothing.
        let mut cx = Context::from_waker(Waker::noop());
        match catch_unwind(AssertUnwindSafe(|| answering.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(response)) => self.send(&response),
            Ok(Poll::Pending) => {
                let task = self.calls.spawn(answering);
                self.tasks.insert(task.id(), request.id.clone());
                self.in_flight.insert(request.id);
            }
            Err(_) => self.send(&handler_panicked(request.id)),
        }
        Ok(())
    }

    fn send(&self, response: &Response) {
        let frame = match encode(response) {
            Ok(frame) => frame,
            // Only a value over the frame maximum fails to encode.
            Err(e) => match encode(&Response::failure(
                response.id.clone(),
                FailureKind::Limit,
                format!("the tool's value does not fit in a frame: {e}"),
            )) {
                Ok(frame) => frame,
                Err(_) => return,
            },
        };
        self.outbox
            .unwritten
            .fetch_add(frame.len(), Ordering::AcqRel);
        // A closed receiver means the writer already failed; the connection
        // is going away and the read side will see it.
        let _ = self.tx.send(frame);
    }
}

/// The answer to a call whose handler panicked: the handler's bug, reported
/// to the program as an unclassified failure instead of taking the server down.
fn handler_panicked(id: String) -> Response {
    Response::failure(id, FailureKind::Unknown, "the tool's handler panicked")
}

/// Runs one call under its deadline and turns its outcome into a Response.
async fn answer(handler: &dyn Handler, call: Call, tally: &Tally, max_bytes: u64) -> Response {
    let id = call.id.clone();
    let deadline = call.deadline;
    let fut = handler.call(call);
    let outcome = match deadline {
        Some(d) => match tokio::time::timeout(d, fut).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let why = format!("call deadline of {} ms passed", d.as_millis());
                return Response::failure(id, FailureKind::Transient, why);
            }
        },
        None => fut.await,
    };
    match outcome {
        Ok(value) => {
            // Leave room for the rest of the Response in the frame.
            if value.len() > MAX_FRAME_BYTES - 256 {
                let why = format!(
                    "the tool's value of {} bytes does not fit in a frame",
                    value.len()
                );
                return Response::failure(id, FailureKind::Limit, why);
            }
            if !tally.spend_bytes(value.len() as u64, max_bytes) {
                let why = format!(
                    "byte quota of {max_bytes} bytes would be exceeded by a value of {} bytes",
                    value.len()
                );
                return Response::failure(id, FailureKind::Limit, why);
            }
            Response::success(id, value)
        }
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
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    outbox: Outbox,
) {
    while let Some(frame) = rx.recv().await {
        if write_frame_async(&mut writer, &frame).await.is_err() {
            return;
        }
        outbox.unwritten.fetch_sub(frame.len(), Ordering::AcqRel);
        outbox.drained.notify_one();
    }
    let _ = writer.shutdown().await;
}
