//! The protocol violations every role can meet.

use crate::codec::DecodeError;
use crate::frame::FrameError;

/// The peer broke the protocol. Any of these ends the execution; none travels
/// as a normal Response.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// A frame could not be read or written.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// A frame's payload is not a valid message (including a version mismatch).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A Request with an empty `id`.
    #[error("request for tool {tool:?} has an empty id")]
    EmptyId {
        /// The tool it named.
        tool: String,
    },
    /// A Request reused the `id` of a call still in flight.
    #[error("request id {0:?} is already in flight")]
    DuplicateId(String),
    /// A Response answered an `id` that is not in flight.
    #[error("response for unknown id {0:?}")]
    UnknownId(String),
    /// A failed Response or Result without a failure kind.
    #[error("failed {message} {id:?} carries no failure kind")]
    MissingKind {
        /// "Response" or "Result".
        message: &'static str,
        /// Its id.
        id: String,
    },
    /// A Request whose `id` is longer than [`crate::MAX_ID_BYTES`].
    #[error("request id of {len} bytes is longer than the {max} bytes allowed")]
    IdTooLong {
        /// Its length.
        len: usize,
        /// The most allowed.
        max: usize,
    },
    /// A successful Response or Result that carries a failure kind.
    #[error("successful {message} {id:?} carries a failure kind")]
    KindOnSuccess {
        /// "Response" or "Result".
        message: &'static str,
        /// Its id.
        id: String,
    },
    /// A successful Result whose value is not JSON text.
    #[error("the value of successful Result {id:?} is not JSON: {why}")]
    ValueNotJson {
        /// Its result_id.
        id: String,
        /// What the JSON parser said.
        why: String,
    },
    /// A Result answered another Start.
    #[error("result_id {got:?} does not match the Start's {want:?}")]
    ResultIdMismatch {
        /// What the child sent.
        got: String,
        /// What the Start carried.
        want: String,
    },
}

impl ProtocolError {
    /// Whether this is a version mismatch (docs/protocol.md, invariant 1).
    pub fn is_version_mismatch(&self) -> bool {
        matches!(self, ProtocolError::Decode(DecodeError::Version { .. }))
    }

    /// Whether the stream ended part-way through a frame: what a peer
    /// leaves that was stopped, or stopped itself, while it wrote one. A
    /// parent that sees this should ask first how its child ended.
    pub fn is_cut_short(&self) -> bool {
        matches!(
            self,
            ProtocolError::Frame(
                FrameError::TruncatedPrefix { .. } | FrameError::TruncatedPayload { .. }
            )
        )
    }
}
