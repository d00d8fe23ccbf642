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

/// The child's blocking call-channel client.
///
/// Single-threaded by design (a wasm child has one thread) yet with many
/// calls in flight: [`send`](Client::send) several, then [`recv`](Client::recv)
/// answers in whatever order the parent completes them.
#[derive(Debug)]
pub struct Client<R, W> {
    reader: FrameReader<R>,
    writer: W,
    next_id: u64,
    in_flight: HashSet<String>,
    /// Set once the connection is gone; in-flight calls are then drained as failures.
    closed: Option<String>,
    calls: u64,
    bytes: u64,
}

impl<R: Read, W: Write> Client<R, W> {
    /// A client reading Responses from `reader` and writing Requests to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Client {
            reader: FrameReader::new(reader),
            writer,
            next_id: 0,
            in_flight: HashSet::new(),
            closed: None,
            calls: 0,
            bytes: 0,
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
        self.next_id += 1;
        let id = self.next_id.to_string();
        let mut request = Request::new(id.clone(), tool, args);
        request.deadline_ms = deadline_ms;
        let frame = encode(&request).map_err(ProtocolError::from)?;
        self.in_flight.insert(id.clone());
        self.calls += 1;
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
        if self.in_flight.is_empty() {
            return Err(if self.closed.is_some() {
                ClientError::Closed
            } else {
                ClientError::Idle
            });
        }
        if let Some(why) = &self.closed {
            return Ok(self.fail_one(why.clone()));
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
        let response: Response = decode(&payload).map_err(ProtocolError::from)?;
        if !self.in_flight.remove(&response.id) {
            return Err(ProtocolError::UnknownId(response.id).into());
        }
        let (id, outcome) = response.into_outcome()?;
        if let Ok(value) = &outcome {
            self.bytes += value.len() as u64;
        }
        Ok(Reply { id, outcome })
    }

    fn fail_one(&mut self, why: String) -> Reply {
        // Lowest id first, so the order is deterministic.
        let id = self
            .in_flight
            .iter()
            .min_by_key(|id| (id.len(), id.as_str()))
            .cloned()
            .unwrap_or_default();
        self.in_flight.remove(&id);
        Reply {
            id,
            outcome: Err(ToolFailure::new(FailureKind::Cancelled, why)),
        }
    }

    /// Calls in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Requests sent so far (the child's count, for reconciliation).
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Bytes of successful values received so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
