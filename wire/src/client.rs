//! The child's side of the call channel: send Requests, match Responses by id.

use std::collections::{TryReserveError, VecDeque};

use rustc_hash::FxHashSet;
use std::io::{Read, Write};

use crate::codec::{encode, encode_sized};
use crate::error::ProtocolError;
use crate::frame::{FrameError, FrameReader};
use crate::message::{RequestOut, Withdraw};
use crate::response::{Decoded, decode_response, id_in_head};
use crate::{DEFAULT_MAX_INFLIGHT, FailureKind, ToolFailure};

/// Args and a tool name (together) from this size on are framed by
/// [`encode_sized`]: counted first, then written into a frame allocated
/// once, fallibly.
const SIZED_ARGS: usize = 64 << 10;

/// Why the client cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The parent broke the protocol.
    #[error("protocol error on the call channel: {0}")]
    Protocol(#[from] ProtocolError),
    /// The connection is closed and every call it had in flight was failed.
    #[error("the call channel is closed")]
    Closed,
    /// `recv` was called with no call in flight: it would wait forever.
    #[error("no call is in flight")]
    Idle,
}

/// The answer to one call, as [`Client::recv`] hands it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The id [`Client::send`] returned for the call.
    pub id: String,
    /// The value's raw text, or why the call failed.
    pub outcome: Result<String, ToolFailure>,
}

/// A child's book of its calls: the ids it gave, the calls on the wire and
/// those waiting for a slot, and what it counted. [`Client`] keeps one; so
/// does any other child transport (the guest's, which reads while it
/// writes), so that ids, pacing, the matching of answers and the counts are
/// written once.
///
/// **Pacing.** At most [`max_in_flight`](InFlight::max_in_flight) calls are
/// on the wire at once, the parent's cap (the Start's `max_inflight`).
/// A call made while they are all taken waits here, in order, and
/// [`send_ready`](InFlight::send_ready) writes it once an answer frees a
/// slot: a program that makes a thousand calls at once sees them paced, not
/// refused. A call is counted in [`calls`](InFlight::calls) only once its
/// Request was written, as the parent counts only the calls it gets.
///
/// ```
/// use wire::{InFlight, Response};
///
/// let mut calls = InFlight::new(1);
/// let mut wire = Vec::new();
/// let first = calls.request("t", "", 0)?;
/// let second = calls.request("t", "", 0)?;
/// calls.send_ready(|frame| Ok::<_, ()>(wire.push(frame.to_vec()))).unwrap();
/// assert_eq!(wire.len(), 1); // the first went out; the second waits for its slot
/// calls.answer(&wire::encode(&Response::success(&first, "1"))?[4..])?;
/// calls.send_ready(|frame| Ok::<_, ()>(wire.push(frame.to_vec()))).unwrap();
/// assert_eq!(wire.len(), 2); // ... which the answer freed
/// assert_eq!((calls.calls(), calls.len()), (2, 1));
/// // A write that fails leaves its call uncounted, waiting to be failed.
/// calls.request("t", "", 0)?;
/// calls.answer(&wire::encode(&Response::success(&second, "2"))?[4..])?;
/// assert_eq!(calls.send_ready(|_| Err("broken")), Err("broken"));
/// assert_eq!((calls.calls(), calls.len()), (2, 1));
/// # Ok::<(), wire::ProtocolError>(())
/// ```
#[derive(Debug)]
pub struct InFlight {
    next_id: u64,
    max_in_flight: usize,
    /// Calls on the wire, by id.
    sent: FxHashSet<String>,
    /// Calls waiting for a slot, oldest first: id and framed Request.
    waiting: VecDeque<(String, Vec<u8>)>,
    calls: u64,
    bytes: u64,
}

impl Default for InFlight {
    /// A book paced to [`DEFAULT_MAX_INFLIGHT`].
    fn default() -> Self {
        InFlight::new(DEFAULT_MAX_INFLIGHT)
    }
}

/// A call's failure for a tool's answer the child had no memory for: `what`
/// of it could not be held. `limit`, as any budget that ran out.
fn not_held(what: &str) -> ToolFailure {
    ToolFailure::new(FailureKind::Limit, format!("the tool's {what}"))
}

impl InFlight {
    /// A book that keeps at most `max_in_flight` calls on the wire (0 is
    /// taken as 1: see [`Start::max_in_flight`](crate::Start::max_in_flight)).
    pub fn new(max_in_flight: usize) -> Self {
        InFlight {
            next_id: 0,
            max_in_flight: max_in_flight.max(1),
            sent: FxHashSet::default(),
            waiting: VecDeque::new(),
            calls: 0,
            bytes: 0,
        }
    }

    /// Sets the cap on calls on the wire. Calls already sent stay sent; a
    /// lower cap holds back new ones until enough are answered.
    pub fn set_max_in_flight(&mut self, max_in_flight: usize) {
        self.max_in_flight = max_in_flight.max(1);
    }

    /// The cap on calls on the wire.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// Makes a new call and returns its id; its framed Request waits for
    /// [`send_ready`](InFlight::send_ready). A Request too large for a
    /// frame is refused before it takes an id.
    pub fn request(
        &mut self,
        tool: &str,
        args: &str,
        deadline_ms: u64,
    ) -> Result<String, ProtocolError> {
        let id = (self.next_id + 1).to_string();
        let request = RequestOut {
            v: crate::VERSION,
            id: &id,
            tool,
            args,
            deadline_ms,
        };
        // Large args (or a large name) are framed at their size, once, and
        // a child out of memory for them gets an error it can answer the
        // call with; one too large for a frame is refused before any of it
        // is written.
        let frame = if args.len().saturating_add(tool.len()) < SIZED_ARGS {
            request.frame()?
        } else {
            encode_sized(&request)?
        };
        self.next_id += 1;
        self.waiting.push_back((id.clone(), frame));
        Ok(id)
    }

    /// Makes room for `additional` more calls waiting for a slot, so that
    /// making them does not grow the table (a table that doubles holds its
    /// old and new storage at once): a child under a memory cap can take
    /// that room fallibly, before the program's calls need it.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.waiting.try_reserve(additional)
    }

    /// Writes the waiting Requests, oldest first, for as long as a slot is
    /// free, with `write`. A call is on the wire, and counted, once `write`
    /// took its frame. The first error stops it and is returned: that call
    /// stays waiting, uncounted (its frame may be half written, so the
    /// connection is done for), and [`fail_one`](InFlight::fail_one) hands
    /// it out with the rest. Call it after every
    /// [`request`](InFlight::request) and every [`answer`](InFlight::answer).
    pub fn send_ready<E>(
        &mut self,
        mut write: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        while self.sent.len() < self.max_in_flight {
            let Some((id, frame)) = self.waiting.pop_front() else {
                break;
            };
            if let Err(e) = write(&frame) {
                self.waiting.push_front((id, frame));
                return Err(e);
            }
            self.sent.insert(id);
            self.calls += 1;
        }
        Ok(())
    }

    /// The Reply a Response frame makes: it must answer a call on the wire.
    /// Its slot is free from now on.
    pub fn answer(&mut self, payload: &[u8]) -> Result<Reply, ProtocolError> {
        let Decoded { response, unheld } = decode_response(payload)?;
        if !self.sent.remove(&response.id) {
            return Err(ProtocolError::UnknownId(response.id));
        }
        let (id, mut outcome) = response.into_outcome()?;
        if let (Ok(_), Some(bytes)) = (&outcome, unheld) {
            outcome = Err(not_held(&format!(
                "value could not be held: no memory left for its text ({bytes} bytes as the \
                 answer carries it, escaped)"
            )));
        }
        if let Ok(value) = &outcome {
            self.bytes += value.len() as u64;
        }
        Ok(Reply { id, outcome })
    }

    /// The Reply to a Response frame of `len` bytes there was no memory to
    /// hold ([`FrameError::Unheld`]), of which `head` was kept: its call
    /// fails `limit`. The frame must name a call on the wire before its
    /// first [`UNHELD_HEAD`](crate::UNHELD_HEAD) bytes end.
    pub fn answer_unheld(&mut self, head: &[u8], len: usize) -> Result<Reply, ProtocolError> {
        let Some(id) = id_in_head(head) else {
            return Err(ProtocolError::Frame(FrameError::Unheld {
                len,
                head: Vec::new(),
            }));
        };
        if !self.sent.remove(&id) {
            return Err(ProtocolError::UnknownId(id));
        }
        Ok(Reply {
            id,
            outcome: Err(not_held(&format!(
                "answer could not be held: no memory left for its {len} bytes (max_memory)"
            ))),
        })
    }

    /// Hands out one call still in flight as `cancelled`, lowest id first
    /// (so the order is deterministic): the calls on the wire, then those
    /// that never got a slot. `None` when none is left.
    pub fn fail_one(&mut self, why: &str) -> Option<Reply> {
        let id = match self
            .sent
            .iter()
            .min_by_key(|id| (id.len(), id.as_str()))
            .cloned()
        {
            Some(id) => {
                self.sent.remove(&id);
                id
            }
            None => self.waiting.pop_front()?.0,
        };
        Some(Reply {
            id,
            outcome: Err(ToolFailure::new(FailureKind::Cancelled, why)),
        })
    }

    /// The child no longer wants the answer to call `id`.
    ///
    /// A call still waiting for a slot is dropped here: it was never sent,
    /// is not counted, and [`Withdrawal::Unsent`] says so. A call on the
    /// wire keeps its slot until its answer comes (which the caller then
    /// ignores); [`Withdrawal::OnTheWire`] carries the framed [`Withdraw`]
    /// to send to a parent that takes it (the Start's `withdraw`).
    pub fn withdraw(&mut self, id: &str) -> Result<Withdrawal, ProtocolError> {
        if let Some(at) = self.waiting.iter().position(|(waiting, _)| waiting == id) {
            self.waiting.remove(at);
            return Ok(Withdrawal::Unsent);
        }
        if !self.sent.contains(id) {
            return Ok(Withdrawal::Unknown);
        }
        Ok(Withdrawal::OnTheWire(encode(&Withdraw::new(id))?))
    }

    /// Calls made and not yet answered: on the wire or waiting for a slot.
    pub fn len(&self) -> usize {
        self.sent.len() + self.waiting.len()
    }

    /// Whether no call is in flight.
    pub fn is_empty(&self) -> bool {
        self.sent.is_empty() && self.waiting.is_empty()
    }

    /// Calls on the wire: sent and not yet answered.
    pub fn on_the_wire(&self) -> usize {
        self.sent.len()
    }

    /// Requests written so far (the child's count, for reconciliation; a
    /// call still waiting for a slot, or whose write failed, is not
    /// counted).
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Bytes of successful values received so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// What [`InFlight::withdraw`] did with a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withdrawal {
    /// It was waiting for a slot and is gone: nothing was ever sent.
    Unsent,
    /// It is on the wire: here is the framed [`Withdraw`] for the parent.
    /// Its slot stays taken until the parent's answer comes.
    OnTheWire(Vec<u8>),
    /// No such call is in flight (answered already, or never made).
    Unknown,
}

/// The child's blocking call-channel client.
///
/// Single-threaded by design (a wasm child has one thread) yet with many
/// calls in flight: [`send`](Client::send) several, then [`recv`](Client::recv)
/// answers in whatever order the parent completes them.
#[derive(Debug)]
pub struct Client<R, W> {
    reader: FrameReader<R>,
    writer: W,
    calls: InFlight,
    /// Set once the connection is gone; in-flight calls are then drained as failures.
    closed: Option<String>,
}

impl<R: Read, W: Write> Client<R, W> {
    /// A client reading Responses from `reader` and writing Requests to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Client {
            reader: FrameReader::new(reader),
            writer,
            calls: InFlight::default(),
            closed: None,
        }
    }

    /// A client that keeps at most `max_in_flight` calls on the wire (the
    /// Start's [`max_in_flight`](crate::Start::max_in_flight)); the rest
    /// wait in order and go as answers free their slots. [`Client::new`]
    /// paces to [`DEFAULT_MAX_INFLIGHT`].
    pub fn paced(reader: R, writer: W, max_in_flight: usize) -> Self {
        let mut client = Client::new(reader, writer);
        client.calls.set_max_in_flight(max_in_flight);
        client
    }

    /// Sets the cap on calls on the wire (see [`Client::paced`]).
    pub fn set_max_in_flight(&mut self, max_in_flight: usize) {
        self.calls.set_max_in_flight(max_in_flight);
    }

    /// Makes one call and returns its id (unique within this client). The
    /// Request is written now if a slot is free, else when an answer frees
    /// one (inside [`recv`](Client::recv)).
    ///
    /// A send on a closed connection still returns an id; the call then fails
    /// through [`recv`](Client::recv) like every other call in flight, so a
    /// program sees one consistent failure path.
    pub fn send(
        &mut self,
        tool: &str,
        args: &str,
        deadline_ms: u64,
    ) -> Result<String, ClientError> {
        let id = self.calls.request(tool, args, deadline_ms)?;
        self.write_ready();
        Ok(id)
    }

    /// Writes every waiting Request that has a slot; none once the
    /// connection is gone (those calls then fail, uncounted).
    fn write_ready(&mut self) {
        if self.closed.is_some() {
            return;
        }
        let writer = &mut self.writer;
        let sent = self
            .calls
            .send_ready(|frame| writer.write_all(frame).and_then(|()| writer.flush()));
        if let Err(e) = sent {
            self.closed = Some(format!("the call channel broke: {e}"));
        }
    }

    /// Blocks for the next answer to a call in flight.
    ///
    /// After EOF or a broken connection, each call still in flight is handed
    /// out once as a [`FailureKind::Cancelled`] failure; then `Closed`.
    pub fn recv(&mut self) -> Result<Reply, ClientError> {
        if self.calls.is_empty() {
            return Err(if self.closed.is_some() {
                ClientError::Closed
            } else {
                ClientError::Idle
            });
        }
        if let Some(why) = &self.closed
            && let Some(reply) = self.calls.fail_one(why)
        {
            return Ok(reply);
        }
        let payload = match self.reader.read_frame() {
            Ok(Some(payload)) => payload,
            Ok(None) => {
                self.closed = Some("the parent closed the call channel".into());
                return self.recv();
            }
            Err(FrameError::Io(e)) => {
                self.closed = Some(format!("the call channel broke: {e}"));
                return self.recv();
            }
            Err(e) => return Err(ProtocolError::from(e).into()),
        };
        let reply = self.calls.answer(&payload)?;
        self.write_ready();
        Ok(reply)
    }

    /// Withdraws call `id` (see [`InFlight::withdraw`]); with `tell_parent`
    /// (the Start's `withdraw`), a call on the wire is withdrawn from the
    /// parent too. Its answer still comes, and is handed out by
    /// [`recv`](Client::recv) like any other.
    pub fn withdraw(&mut self, id: &str, tell_parent: bool) -> Result<(), ClientError> {
        if let Withdrawal::OnTheWire(frame) = self.calls.withdraw(id)?
            && tell_parent
            && self.closed.is_none()
        {
            let writer = &mut self.writer;
            if let Err(e) = writer.write_all(&frame).and_then(|()| writer.flush()) {
                self.closed = Some(format!("the call channel broke: {e}"));
            }
        }
        Ok(())
    }

    /// Calls made and not yet answered (on the wire or waiting for a slot).
    pub fn in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Requests sent so far (the child's count, for reconciliation).
    pub fn calls(&self) -> u64 {
        self.calls.calls()
    }

    /// Bytes of successful values received so far.
    pub fn bytes(&self) -> u64 {
        self.calls.bytes()
    }
}
