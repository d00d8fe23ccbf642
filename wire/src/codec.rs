//! Messages to frames and back, with the version check (docs/protocol.md, invariant 1) in one place.

use serde::{Deserialize, Serialize};

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
pub fn encode<M: Serialize + ?Sized>(msg: &M) -> Result<Vec<u8>, FrameError> {
    let mut buf = Vec::with_capacity(128);
    buf.extend_from_slice(&[0; PREFIX_BYTES]);
    serde_json::to_writer(&mut buf, msg).map_err(|e| FrameError::Io(e.into()))?;
    frame::seal(&mut buf, MAX_FRAME_BYTES)?;
    Ok(buf)
}

/// [`encode`] for a message that may be large (a Result carrying a
/// program's value): the payload is counted first, so one over
/// [`MAX_FRAME_BYTES`] is refused before any of it is written, and the
/// frame is allocated once, at its size, and fallibly. [`encode`] grows
/// its buffer by doubling, which for a 10 MiB payload holds 24 MiB at
/// once; a child under a memory cap cannot spare that, and an allocation
/// that fails there ends it (Rust aborts) where this returns
/// [`FrameError::Io`] of kind `OutOfMemory`, so that it can still answer.
pub fn encode_sized<M: Serialize + ?Sized>(msg: &M) -> Result<Vec<u8>, FrameError> {
    let len = encoded_len(msg)?;
    if len > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge {
            len: len as u64,
            max: MAX_FRAME_BYTES,
        });
    }
    let mut buf = Vec::new();
    buf.try_reserve_exact(PREFIX_BYTES + len).map_err(|_| {
        FrameError::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("no memory left for a frame of {len} bytes"),
        ))
    })?;
    buf.extend_from_slice(&[0; PREFIX_BYTES]);
    serde_json::to_writer(&mut buf, msg).map_err(|e| FrameError::Io(e.into()))?;
    frame::seal(&mut buf, MAX_FRAME_BYTES)?;
    Ok(buf)
}

/// The length of `msg`'s payload, counted as it is serialized, without
/// keeping any of it.
pub fn encoded_len<M: Serialize + ?Sized>(msg: &M) -> Result<usize, FrameError> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, msg).map_err(|e| FrameError::Io(e.into()))?;
    Ok(count.0)
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
