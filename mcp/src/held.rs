//! What the server holds for a client that does not read its answers.
//!
//! An execution's place ([`Limits::max_running`](crate::config::Limits))
//! was given back when the execution ended, while its answer still had to
//! be written: a client that sent many programs and read nothing made the
//! server queue every finished answer (1.7 GB for 100 answers of 8 MB).
//! Now each client (the stdio client; a streamable-HTTP session) has
//! `max_running` places for answers not yet out, and a call takes one
//! before it starts and gives it back once its answer has left the
//! process: the server holds at most `max_running` answers a client has
//! not read, and the client's later calls wait, holding only their
//! request. (Executions, of all clients, still run `max_running` at once,
//! each place given back when it ends.)
//!
//! The place goes, when the call's handler ends ([`Hold`]), to what sees
//! its answer leave:
//!
//! - on stdio, the transport's [`Ledger`], which gives it back at the one
//!   moment rmcp decides the answer's fate, in rmcp's order. rmcp sends
//!   the answer (a result or an error under its id): the place comes back
//!   once the answer's last byte is written to stdout ([`Answers::send`]).
//!   rmcp drops the answer, because the client cancelled the request
//!   (`notifications/cancelled`) before it was sent: the place comes back
//!   at once. rmcp drops an answer whose request it no longer knows, and
//!   forgets a request only when it sends its answer or reads its
//!   cancellation, both through the transport, so the ledger keeps the same
//!   set of requests (`open`): a place deposited under an id that is not
//!   open comes back at once, and a cancellation gives back what is held
//!   under its id. Answers may go out in any order: each is matched by its
//!   id. A client that reuses the id of a request not yet answered breaks
//!   JSON-RPC (rmcp then sends one answer for the id and drops the other):
//!   the first answer sent gives back every place held under the id, and a
//!   place deposited after it comes back at once, so no place is lost.
//! - on streamable HTTP, the [`Slot`] of the HTTP request that carried the
//!   call, which its response's body gives back once the body has ended
//!   and the connection has written out what it had ([`HeldBody`]); a
//!   cancelled call's stream ends without its answer, and a connection
//!   that ends gives everything back.
//!
//! On stdio the transport also reads no more of the client's messages
//! while [`max_unanswered`] of its requests have no answer out (written to
//! stdout) or cancelled: rmcp reads every line it gets and starts a task
//! for each request, whatever becomes of the answers, so a client that
//! sent thousands of calls and read nothing made the server hold every
//! request, or every refusal, it had not written (20,000 small calls: 168
//! MB). Each request holds a place among them from when it is read until
//! its answer has left, as an answer's place does; a client that reads
//! its answers never meets the bound (its calls run, wait or are refused
//! well within it), and one that does not finds its writes to stdin
//! blocked, as with any pipe.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use rmcp::RoleServer;

use crate::config::Limits;
use rmcp::model::{ClientNotification, GetExtensions, JsonRpcMessage, RequestId};
use rmcp::service::{RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use wasmwire::CancellationToken;

/// The requests of one transport rmcp has not yet answered or seen
/// cancelled, and the places held for their answers.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The requests rmcp would still send an answer for (its own pool).
    open: HashSet<RequestId>,
    /// The places of answers made and not yet sent, by request.
    held: HashMap<RequestId, Vec<OwnedSemaphorePermit>>,
    /// The transport is closed: nothing more is sent.
    closed: bool,
}

/// A request's way to its transport's [`Ledger`], in its extensions.
#[derive(Debug, Clone)]
pub(crate) struct Answering(Arc<Ledger>);

impl Ledger {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A message from the client, just before rmcp reads it; a
    /// request's `place` among the requests read and not yet answered is
    /// held with its answer's.
    pub(crate) fn received(
        self: &Arc<Self>,
        message: &mut RxJsonRpcMessage<RoleServer>,
        place: Option<OwnedSemaphorePermit>,
    ) {
        let given_back = match message {
            JsonRpcMessage::Request(request) => {
                let mut state = self.state();
                state.open.insert(request.id.clone());
                if let Some(place) = place {
                    state
                        .held
                        .entry(request.id.clone())
                        .or_default()
                        .push(place);
                }
                drop(state);
                request
                    .request
                    .extensions_mut()
                    .insert(Answering(self.clone()));
                None
            }
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ClientNotification::CancelledNotification(cancelled) => {
                    cancelled.params.request_id.as_ref().and_then(|id| {
                        let mut state = self.state();
                        state.open.remove(id);
                        state.held.remove(id)
                    })
                }
                _ => None,
            },
            _ => None,
        };
        drop(given_back);
    }

    /// A message rmcp sends: an answer's places, to give back once it is out.
    pub(crate) fn sending(
        &self,
        message: &TxJsonRpcMessage<RoleServer>,
    ) -> Vec<OwnedSemaphorePermit> {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let mut state = self.state();
        state.open.remove(id);
        state.held.remove(id).unwrap_or_default()
    }

    /// The place of the answer to `id`, whose handler has ended: held until
    /// the answer is sent, or given back now when rmcp will not send it.
    fn deposit(&self, id: &RequestId, place: OwnedSemaphorePermit) {
        let mut state = self.state();
        if !state.closed && state.open.contains(id) {
            state.held.entry(id.clone()).or_default().push(place);
            return;
        }
        drop(state);
        drop(place);
    }

    /// Nothing more is sent: every place is given back, now and later.
    pub(crate) fn close(&self) {
        let held = {
            let mut state = self.state();
            state.closed = true;
            std::mem::take(&mut state.held)
        };
        drop(held);
    }
}

/// A place an answer holds: given, when the handler ends (dropped), to
/// what gives it back once the answer is out: the stdio transport's
/// [`Ledger`], or the [`Slot`] of the HTTP request that carries the call;
/// given back at once when there is neither.
#[derive(Debug)]
pub(crate) struct Hold {
    place: Option<OwnedSemaphorePermit>,
    id: RequestId,
    keeper: Option<Keeper>,
}

#[derive(Debug)]
enum Keeper {
    Ledger(Arc<Ledger>),
    Slot(Slot),
}

impl Hold {
    /// Holds `place` for the answer to the request of `context`.
    pub(crate) fn new(place: OwnedSemaphorePermit, context: &RequestContext<RoleServer>) -> Self {
        let extensions = &context.extensions;
        let keeper = match extensions.get::<Answering>() {
            Some(answering) => Some(Keeper::Ledger(answering.0.clone())),
            // rmcp's streamable-HTTP transport puts the HTTP request's
            // parts there, with the slot `serve_connection` put in them.
            None => extensions
                .get::<hyper::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Slot>())
                .map(|slot| Keeper::Slot(slot.clone())),
        };
        Hold {
            place: Some(place),
            id: context.id.clone(),
            keeper,
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let Some(place) = self.place.take() else {
            return;
        };
        match &self.keeper {
            Some(Keeper::Ledger(ledger)) => ledger.deposit(&self.id, place),
            Some(Keeper::Slot(slot)) => slot.deposit(place),
            None => drop(place),
        }
    }
}

/// What a [`Counted`] stream has done.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Count {
    /// Bytes written.
    pub(crate) written: u64,
    /// Flushes done.
    pub(crate) flushes: u64,
}

/// A stream whose writes and flushes are counted (a flush is waited for;
/// a write only read).
#[derive(Debug)]
pub(crate) struct Counted<S> {
    inner: S,
    count: watch::Sender<Count>,
}

impl<S> Counted<S> {
    pub(crate) fn new(inner: S) -> Self {
        Counted {
            inner,
            count: watch::Sender::default(),
        }
    }

    /// The count, as it grows (closed when the stream is dropped).
    pub(crate) fn count(&self) -> watch::Receiver<Count> {
        self.count.subscribe()
    }

    /// Counts what a write wrote, waking no one (a flush does).
    fn wrote(&self, polled: &Poll<std::io::Result<usize>>) {
        if let Poll::Ready(Ok(n)) = polled {
            self.count.send_if_modified(|count| {
                count.written += *n as u64;
                false
            });
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(&polled);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        if let Poll::Ready(Ok(())) = polled {
            self.count.send_modify(|count| count.flushes += 1);
        }
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

/// rmcp's transport with a [`Ledger`]: `inner` writes into a [`Counted`]
/// stream (its count `counted`), whose bytes a writer copies out,
/// reporting on `out` how many of them have left.
pub(crate) struct Answers<T> {
    inner: T,
    ledger: Arc<Ledger>,
    counted: watch::Receiver<Count>,
    out: watch::Receiver<u64>,
    /// The places of requests read and not yet answered
    /// ([`max_unanswered`]).
    unanswered: Arc<Semaphore>,
    /// A place taken for a message that was no request, for the next.
    spare: Option<OwnedSemaphorePermit>,
}

/// How many of a stdio client's requests the server holds read and not
/// yet answered before it reads no more: room for every call that can run
/// (`max_running`), have its answer unread (`max_running` of each tool's),
/// or wait (`max_waiting`), and 64 more (refusals on their way out,
/// `tools/list`, pings), so that a client that reads its answers never
/// waits on it.
pub(crate) fn max_unanswered(limits: &Limits) -> usize {
    limits
        .max_running
        .saturating_mul(3)
        .saturating_add(limits.max_waiting)
        .saturating_add(64)
        .min(Semaphore::MAX_PERMITS)
}

impl<T> Answers<T> {
    pub(crate) fn new(
        inner: T,
        counted: watch::Receiver<Count>,
        out: watch::Receiver<u64>,
        max_unanswered: usize,
    ) -> Self {
        Answers {
            inner,
            ledger: Arc::default(),
            counted,
            out,
            unanswered: Arc::new(Semaphore::new(max_unanswered)),
            spare: None,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Answers<T> {
    type Error = T::Error;

    /// Sends `item`; an answer's places are given back once its last byte
    /// has left (or can no longer leave: the writer has ended).
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Now, in rmcp's order, not when the future first runs.
        let places = self.ledger.sending(&item);
        let sent = self.inner.send(item);
        let counted = self.counted.clone();
        let mut out = self.out.clone();
        async move {
            let sent = sent.await;
            if sent.is_ok() && !places.is_empty() {
                // Every byte of the answer is counted: the count may run
                // past its end (another message's first bytes), never
                // short of it.
                let end = counted.borrow().written;
                let _ = out.wait_for(|&out| out >= end).await;
            }
            drop(places);
            sent
        }
    }

    /// The client's next message, read once a request could take a place
    /// among the unanswered ([`max_unanswered`]). Cancel-safe as rmcp's
    /// loop needs (it drops this future when another event comes first):
    /// the place is waited for before anything is read.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let place = match self.spare.take() {
            Some(place) => place,
            // Never closed.
            None => self.unanswered.clone().acquire_owned().await.ok()?,
        };
        self.spare = Some(place);
        let mut message = self.inner.receive().await?;
        // No await from here: rmcp reads the message next.
        let place = match &message {
            JsonRpcMessage::Request(_) => self.spare.take(),
            _ => None,
        };
        self.ledger.received(&mut message, place);
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.ledger.close();
        self.inner.close().await
    }
}

impl<T> Drop for Answers<T> {
    fn drop(&mut self) {
        self.ledger.close();
    }
}

/// The places of the answer an HTTP request carries (in its extensions):
/// its response's body gives them back once the body has ended and the
/// connection has written out what it had ([`HeldBody`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Slot(Arc<Mutex<SlotState>>);

#[derive(Debug, Default)]
struct SlotState {
    places: Vec<OwnedSemaphorePermit>,
    /// The response's body is gone: what comes now is given back at once.
    done: bool,
    /// Cancelled once the response's body is gone: a call still waiting
    /// for a place then has no stream to answer on ([`stream_gone`]).
    gone: CancellationToken,
}

impl Slot {
    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn deposit(&self, place: OwnedSemaphorePermit) {
        let mut state = self.state();
        if !state.done {
            state.places.push(place);
            return;
        }
        drop(state);
        drop(place);
    }

    /// The body is gone: its places, to give back once they are out.
    fn finish(&self) -> Vec<OwnedSemaphorePermit> {
        let mut state = self.state();
        state.done = true;
        state.gone.cancel();
        std::mem::take(&mut state.places)
    }
}

/// Over streamable HTTP, what is cancelled once the response stream of
/// `context`'s request is gone (its body ended or dropped: the connection
/// closed, or the answer went out); `None` on stdio.
pub(crate) fn stream_gone(context: &RequestContext<RoleServer>) -> Option<CancellationToken> {
    context
        .extensions
        .get::<hyper::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Slot>())
        .map(|slot| slot.state().gone.clone())
}

/// An HTTP response's body that gives its request's [`Slot`] back once
/// the answer has left: rmcp ends a call's event stream after its answer,
/// and hyper drops the body then, before it writes and flushes the
/// response's last bytes, so the connection's next flush (`count` of the
/// connection's stream) follows the answer's last byte out. A connection
/// that ends gives everything back (its count closes).
pub(crate) struct HeldBody<B> {
    inner: B,
    slot: Slot,
    count: watch::Receiver<Count>,
}

impl<B> HeldBody<B> {
    pub(crate) fn new(inner: B, slot: Slot, count: watch::Receiver<Count>) -> Self {
        HeldBody { inner, slot, count }
    }
}

impl<B: hyper::body::Body + Unpin> hyper::body::Body for HeldBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for HeldBody<B> {
    fn drop(&mut self) {
        let places = self.slot.finish();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if places.is_empty() {
            return;
        }
        let mut count = self.count.clone();
        let after = count.borrow_and_update().flushes;
        runtime.spawn(async move {
            let _ = count.wait_for(|count| count.flushes > after).await;
            drop(places);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type DuplexAnswers = Answers<
        rmcp::transport::async_rw::AsyncRwTransport<
            RoleServer,
            tokio::io::DuplexStream,
            Counted<tokio::io::DuplexStream>,
        >,
    >;

    /// `Answers` over in-memory pipes: the client's end (`client`, its
    /// buffer `client_buffer` bytes), what rmcp writes (`from_rmcp`), the
    /// count of it, and the sender of the bytes gone out.
    struct Duplex {
        answers: DuplexAnswers,
        client: tokio::io::DuplexStream,
        from_rmcp: tokio::io::DuplexStream,
        count: watch::Receiver<Count>,
        left: watch::Sender<u64>,
    }

    fn duplex(client_buffer: usize, max_unanswered: usize) -> Duplex {
        let (rmcp_reads, client) = tokio::io::duplex(client_buffer);
        let (from_rmcp, rmcp_writes) = tokio::io::duplex(1 << 16);
        let counted = Counted::new(rmcp_writes);
        let count = counted.count();
        let (left, out) = watch::channel(0);
        let answers = Answers::new(
            rmcp::transport::async_rw::AsyncRwTransport::new(rmcp_reads, counted),
            count.clone(),
            out,
            max_unanswered,
        );
        Duplex {
            answers,
            client,
            from_rmcp,
            count,
            left,
        }
    }
    use rmcp::model::{
        CancelledNotification, CancelledNotificationParam, ClientRequest, ErrorData,
        JsonRpcNotification, JsonRpcRequest, JsonRpcVersion2_0, PingRequest, ServerResult,
    };
    use tokio::sync::Semaphore;

    fn request(id: i64) -> RxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Request(JsonRpcRequest::new(
            RequestId::Number(id),
            ClientRequest::PingRequest(PingRequest::default()),
        ))
    }

    fn cancel(id: i64) -> RxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Notification(JsonRpcNotification {
            jsonrpc: JsonRpcVersion2_0,
            notification: ClientNotification::CancelledNotification(CancelledNotification::new(
                CancelledNotificationParam::new(Some(RequestId::Number(id)), None),
            )),
        })
    }

    fn answer(id: i64) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(id))
    }

    fn error(id: i64) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::error(
            ErrorData::internal_error("no", None),
            Some(RequestId::Number(id)),
        )
    }

    /// The ledger and a semaphore of `n` places.
    fn setup(n: usize) -> (Arc<Ledger>, Arc<Semaphore>) {
        (Arc::default(), Arc::new(Semaphore::new(n)))
    }

    fn place(semaphore: &Arc<Semaphore>) -> OwnedSemaphorePermit {
        semaphore.clone().try_acquire_owned().expect("a free place")
    }

    fn deposit(ledger: &Ledger, id: i64, semaphore: &Arc<Semaphore>) {
        ledger.deposit(&RequestId::Number(id), place(semaphore));
    }

    #[test]
    fn a_place_is_held_until_its_answer_is_sent_in_any_order() {
        let (ledger, places) = setup(3);
        for id in 1..=3 {
            let mut message = request(id);
            ledger.received(&mut message, None);
            let JsonRpcMessage::Request(request) = message else {
                unreachable!()
            };
            assert!(request.request.extensions().get::<Answering>().is_some());
        }
        deposit(&ledger, 1, &places);
        deposit(&ledger, 2, &places);
        deposit(&ledger, 3, &places);
        assert_eq!(places.available_permits(), 0);
        // Out of order, an error answer too: each gives back its own.
        let sent = ledger.sending(&error(3));
        assert_eq!(sent.len(), 1);
        drop(sent);
        assert_eq!(places.available_permits(), 1);
        let sent = ledger.sending(&answer(1));
        assert_eq!(sent.len(), 1);
        drop(sent);
        assert_eq!(places.available_permits(), 2);
        // Sent already: nothing more to give back under that id.
        assert!(ledger.sending(&answer(1)).is_empty());
        drop(ledger.sending(&answer(2)));
        assert_eq!(places.available_permits(), 3);
        assert!(ledger.state().open.is_empty() && ledger.state().held.is_empty());
    }

    #[test]
    fn a_cancelled_request_gives_its_place_back_whenever_the_cancellation_comes() {
        let (ledger, places) = setup(2);
        // Cancelled while its answer is held: given back at the cancellation.
        ledger.received(&mut request(1), None);
        deposit(&ledger, 1, &places);
        ledger.received(&mut cancel(1), None);
        assert_eq!(places.available_permits(), 2);
        // Cancelled while it runs: given back when the handler ends.
        ledger.received(&mut request(2), None);
        ledger.received(&mut cancel(2), None);
        deposit(&ledger, 2, &places);
        assert_eq!(places.available_permits(), 2);
        // Cancelled once its answer is under way: the answer goes out, and
        // the place comes back with it.
        ledger.received(&mut request(3), None);
        deposit(&ledger, 3, &places);
        let sent = ledger.sending(&answer(3));
        ledger.received(&mut cancel(3), None);
        assert_eq!(places.available_permits(), 1);
        drop(sent);
        assert_eq!(places.available_permits(), 2);
        // A cancellation of nothing known is nothing.
        ledger.received(&mut cancel(99), None);
        assert!(ledger.state().open.is_empty() && ledger.state().held.is_empty());
    }

    #[test]
    fn a_reused_id_loses_no_place() {
        let (ledger, places) = setup(3);
        ledger.received(&mut request(7), None);
        ledger.received(&mut request(7), None);
        deposit(&ledger, 7, &places);
        deposit(&ledger, 7, &places);
        // rmcp sends one answer for the id, and drops the other.
        let sent = ledger.sending(&answer(7));
        assert_eq!(sent.len(), 2);
        drop(sent);
        deposit(&ledger, 7, &places);
        assert_eq!(places.available_permits(), 3);
    }

    #[test]
    fn a_place_of_no_open_request_or_a_closed_ledger_comes_back_at_once() {
        let (ledger, places) = setup(1);
        deposit(&ledger, 5, &places);
        assert_eq!(places.available_permits(), 1);
        ledger.received(&mut request(5), None);
        deposit(&ledger, 5, &places);
        assert_eq!(places.available_permits(), 0);
        ledger.close();
        assert_eq!(places.available_permits(), 1);
        deposit(&ledger, 5, &places);
        assert_eq!(places.available_permits(), 1);
    }

    /// The place comes back when the answer's last byte has left, as the
    /// writer reports, not when rmcp has handed it over.
    #[tokio::test]
    async fn a_place_comes_back_once_the_answer_has_left() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let places = Arc::new(Semaphore::new(1));
        let Duplex {
            mut answers,
            mut client,
            mut from_rmcp,
            count,
            left,
        } = duplex(1 << 10, 16);
        let written = || count.borrow().written;
        client
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        let Some(JsonRpcMessage::Request(request)) = answers.receive().await else {
            panic!("no request")
        };
        let answering = request.request.extensions().get::<Answering>();
        answering
            .expect("the ledger")
            .0
            .deposit(&request.id, place(&places));
        let sending = tokio::spawn(answers.send(answer(1)));
        // Handed over whole (the pipe holds it), and not yet out.
        while written() == 0 {
            tokio::task::yield_now().await;
        }
        let mut line = vec![0; written() as usize];
        from_rmcp.read_exact(&mut line).await.unwrap();
        assert!(line.ends_with(b"\n"));
        assert_eq!(places.available_permits(), 0);
        left.send_replace(line.len() as u64 - 1);
        tokio::task::yield_now().await;
        assert!(!sending.is_finished());
        assert_eq!(places.available_permits(), 0);
        left.send_replace(line.len() as u64);
        sending.await.unwrap().unwrap();
        assert_eq!(places.available_permits(), 1);
        // A writer that has ended gives back what waits on it: nothing
        // more leaves.
        client
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        let Some(JsonRpcMessage::Request(request)) = answers.receive().await else {
            panic!("no request")
        };
        answers.ledger.deposit(&request.id, place(&places));
        let sending = tokio::spawn(answers.send(answer(2)));
        drop(left);
        sending.await.unwrap().unwrap();
        assert_eq!(places.available_permits(), 1);
    }

    /// Past `max_unanswered` requests read and not answered, nothing more
    /// is read (a notification neither) until an answer has left or a
    /// request is cancelled.
    #[tokio::test]
    async fn past_max_unanswered_requests_nothing_more_is_read_until_one_is_answered() {
        use tokio::io::AsyncWriteExt;

        let Duplex {
            mut answers,
            mut client,
            from_rmcp: _from_rmcp,
            left,
            ..
        } = duplex(1 << 12, 2);
        for id in 1..=3 {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
            client.write_all(line.as_bytes()).await.unwrap();
        }
        let cancel = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}\n";
        client.write_all(cancel.as_bytes()).await.unwrap();
        for id in 1..=2 {
            let Some(JsonRpcMessage::Request(request)) = answers.receive().await else {
                panic!("no request")
            };
            assert_eq!(request.id, RequestId::Number(id));
        }
        let blocked = |answers: &mut Answers<_>| {
            let mut receive = std::pin::pin!(answers.receive());
            let waker = std::task::Waker::noop();
            receive
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending()
        };
        assert!(blocked(&mut answers));
        // Answered and out: one more is read.
        let sending = answers.send(answer(1));
        left.send_replace(u64::MAX);
        sending.await.unwrap();
        let Some(JsonRpcMessage::Request(request)) = answers.receive().await else {
            panic!("no request")
        };
        assert_eq!(request.id, RequestId::Number(3));
        // Two unanswered again: the cancellation waits too, then frees 2's.
        assert!(blocked(&mut answers));
        let sending = answers.send(answer(3));
        sending.await.unwrap();
        let Some(JsonRpcMessage::Notification(_)) = answers.receive().await else {
            panic!("no cancellation")
        };
        assert!(answers.ledger.state().held.is_empty());
        assert_eq!(answers.unanswered.available_permits() + 1, 2);
    }

    /// Over HTTP, the place comes back after the response's body is gone
    /// and the connection has flushed what it had; at once when the body
    /// went first (a cancelled call, a connection gone).
    #[tokio::test]
    async fn an_http_answers_place_comes_back_once_its_connection_has_flushed() {
        let places = Arc::new(Semaphore::new(2));
        let (flushed, count) = watch::channel(Count::default());
        let slot = Slot::default();
        let body = HeldBody::new(hyper::body::Bytes::new(), slot.clone(), count.clone());
        slot.deposit(place(&places));
        drop(body);
        tokio::task::yield_now().await;
        assert_eq!(places.available_permits(), 1);
        flushed.send_modify(|count| count.flushes += 1);
        while places.available_permits() == 1 {
            tokio::task::yield_now().await;
        }
        // The body went first: nothing to wait for.
        let slot = Slot::default();
        drop(HeldBody::new(
            hyper::body::Bytes::new(),
            slot.clone(),
            count,
        ));
        slot.deposit(place(&places));
        assert_eq!(places.available_permits(), 2);
        // A connection gone gives back what waits on it.
        let slot = Slot::default();
        let body = HeldBody::new(hyper::body::Bytes::new(), slot.clone(), flushed.subscribe());
        slot.deposit(place(&places));
        drop(body);
        drop(flushed);
        while places.available_permits() == 1 {
            tokio::task::yield_now().await;
        }
    }
}
