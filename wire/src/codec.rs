//! Messages to frames and back, with the version check (docs/protocol.md, invariant 1) in one place.

use serde::Deserialize;

use crate::frame::{self, FrameError, PREFIX_BYTES};
use crate::message::Message;
use crate::{MAX_FRAME_BYTES, VERSION};

/// A payload that is not a valid message.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The payload is not one JSON object.
    #[error("{message} frame is not a JSON object")]
    NotObject {
        /// The message expected.
        message: &'static str,
    },
    /// The payload carries a different protocol version.
    #[error("{message} has protocol version {got}, this side speaks version {want}")]
    Version {
        /// The message expected.
        message: &'static str,
        /// The `v` the peer sent, as its JSON text. (A missing or `null` `v`
        /// is [`DecodeError::Malformed`], not a version mismatch.)
        got: String,
        /// [`VERSION`].
        want: u32,
    },
    /// The object does not have the message's shape (missing field, wrong type, ...).
    #[error("malformed {message}: {source}")]
    Malformed {
        /// The message expected.
        message: &'static str,
        /// What serde_json said.
        source: serde_json::Error,
    },
}

/// Encodes `msg` as one whole frame (prefix included), refusing a payload
/// over [`MAX_FRAME_BYTES`].
pub fn encode<M: Message>(msg: &M) -> Result<Vec<u8>, FrameError> {
    let mut buf = Vec::with_capacity(128);
    buf.extend_from_slice(&[0; PREFIX_BYTES]);
    serde_json::to_writer(&mut buf, msg).map_err(|e| FrameError::Io(e.into()))?;
    frame::seal(&mut buf, MAX_FRAME_BYTES)?;
    Ok(buf)
}

/// Decodes one frame's payload as `M`, checking that it is an object at [`VERSION`].
pub fn decode<M: Message>(payload: &[u8]) -> Result<M, DecodeError> {
    // JSON's whitespace only: form feed is not among it.
    let first = payload
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if first != Some(&b'{') {
        return Err(DecodeError::NotObject { message: M::NAME });
    }
    match serde_json::from_slice::<M>(payload) {
        Ok(msg) if msg.version() == VERSION => Ok(msg),
        Ok(msg) => Err(DecodeError::Version {
            message: M::NAME,
            got: msg.version().to_string(),
            want: VERSION,
        }),
        Err(source) => {
            // A message of another version may have another shape: name the
            // version rather than the first field that did not fit.
            #[derive(Deserialize)]
            struct Probe {
                v: Option<serde_json::Value>,
            }
            match serde_json::from_slice::<Probe>(payload) {
                Ok(Probe { v: Some(v) }) if v != serde_json::json!(VERSION) => {
                    Err(DecodeError::Version {
                        message: M::NAME,
                        got: v.to_string(),
                        want: VERSION,
                    })
                }
                _ => Err(DecodeError::Malformed {
                    message: M::NAME,
                    source,
                }),
            }
        }
    }
}
