//! The child's side of the call channel: send Requests, match Responses by id.

use std::collections::HashSet;
use std::io::{Read, Write};

use crate::codec::{decode, encode};
use crate::error::ProtocolError;
use crate::frame::{FrameError, FrameReader};
use crate::message::{Request, Response};
use crate::{FailureKind, ToolFailure};

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

/// A child's book of its calls: the ids it gave, the calls still in flight,
/// and what it counted. [`Client`] keeps one; so does any other child
/// transport (the guest's, which reads while it writes), so that ids, the
/// matching of answers and the counts are written once.
#[derive(Debug, Default)]
pub struct InFlight {
    next_id: u64,
    ids: HashSet<String>,
    calls: u64,
    bytes: u64,
}

impl InFlight {
    /// The framed Request for a new call, and its id. A Request too large
    /// for a frame is refused before it takes an id or counts as sent.
    pub fn request(
        &mut self,
        tool: &str,
        args: &str,
        deadline_ms: u64,
    ) -> Result<(String, Vec<u8>), ProtocolError> {
        let id = (self.next_id + 1).to_string();
        let mut request = Request::new(id, tool, args);
        request.deadline_ms = deadline_ms;
        let frame = encode(&request)?;
        self.next_id += 1;
        self.calls += 1;
        self.ids.insert(request.id.clone());
        Ok((request.id, frame))
    }

    /// The Reply a Response frame makes: it must answer a call in flight.
    pub fn answer(&mut self, payload: &[u8]) -> Result<Reply, ProtocolError> {
        let response: Response = decode(payload)?;
        if !self.ids.remove(&response.id) {
            return Err(ProtocolError::UnknownId(response.id));
        }
        let (id, outcome) = response.into_outcome()?;
        if let Ok(value) = &outcome {
            self.bytes += value.len() as u64;
        }
        Ok(Reply { id, outcome })
    }

    /// Hands out one call still in flight as `cancelled`, lowest id first
    /// (so the order is deterministic); `None` when none is.
    pub fn fail_one(&mut self, why: &str) -> Option<Reply> {
        let id = self
            .ids
            .iter()
            .min_by_key(|id| (id.len(), id.as_str()))
            .cloned()?;
        self.ids.remove(&id);
        Some(Reply {
            id,
            outcome: Err(ToolFailure::new(FailureKind::Cancelled, why)),
        })
    }

    /// Calls in flight.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no call is in flight.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Requests made so far (the child's count, for reconciliation).
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Bytes of successful values received so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
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

    /// Sends one Request and returns its id (unique within this client).
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
        let (id, frame) = self.calls.request(tool, args, deadline_ms)?;
        if self.closed.is_none() {
            let sent = self
                .writer
                .write_all(&frame)
                .and_then(|()| self.writer.flush());
            if let Err(e) = sent {
                self.closed = Some(format!("the call channel broke: {e}"));
            }
        }
        Ok(id)
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
        Ok(self.calls.answer(&payload)?)
    }

    /// Calls in flight.
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
