//! The parent's side of the start channel: one Start out, one Result back.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::async_frame::{AsyncFrameReader, write_frame_async};
use crate::cancelled::Cancelled;
use crate::codec::{decode, encode};
use crate::error::ProtocolError;
use crate::message::{Result as ResultMsg, Start};

/// Why no Result came back.
#[derive(Debug, thiserror::Error)]
pub enum StarterError {
    /// The child broke the protocol on the start channel.
    #[error("protocol error on the start channel: {0}")]
    Protocol(#[from] ProtocolError),
    /// The Start could not be written: the child is gone.
    #[error("could not send the Start: {0}")]
    Send(#[source] std::io::Error),
    /// The child closed the start channel without a Result.
    #[error("the child closed the start channel without sending a Result")]
    NoResult,
    /// The cancel token fired first.
    #[error("cancelled before the child sent its Result")]
    Cancelled,
    /// The timeout passed first.
    #[error("no Result within {0:?}")]
    TimedOut(Duration),
}

/// The parent's start-channel role: one Start out, one Result back.
#[derive(Debug)]
pub struct Starter<R, W> {
    reader: R,
    writer: W,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Starter<R, W> {
    /// A starter writing the Start to `writer` and reading the Result from `reader`.
    pub fn new(reader: R, writer: W) -> Self {
        Starter { reader, writer }
    }

    /// Sends `start` and waits for the Result with the matching `result_id`.
    ///
    /// Returns on the Result, on cancel and on `timeout`, whichever comes
    /// first; a child that is alive but silent cannot hold it. Both streams
    /// are dropped (closing the connection) before it returns.
    pub async fn start(
        self,
        start: &Start,
        cancel: &CancellationToken,
        timeout: Option<Duration>,
    ) -> Result<ResultMsg, StarterError> {
        let frame = encode(start).map_err(ProtocolError::from)?;
        self.start_encoded(&frame, &start.result_id, cancel, timeout)
            .await
    }

    /// [`Starter::start`] for a Start already encoded as `frame` (a caller
    /// that must know the Start fits in a frame before it starts a child
    /// encodes it first, and only once).
    pub async fn start_encoded(
        self,
        frame: &[u8],
        result_id: &str,
        cancel: &CancellationToken,
        timeout: Option<Duration>,
    ) -> Result<ResultMsg, StarterError> {
        exchange(self.reader, self.writer, frame, result_id, cancel, timeout).await
    }
}

/// Checks what a child's Result claims before the parent passes it on: it
/// answers this Start, a failure has a kind (or is a protocol error with a
/// text), a success has no kind and a JSON value. An error text is cut to
/// [`MAX_ERROR_BYTES`](crate::MAX_ERROR_BYTES).
pub fn check_result(mut result: ResultMsg, result_id: &str) -> Result<ResultMsg, ProtocolError> {
    if result.result_id != result_id {
        return Err(ProtocolError::ResultIdMismatch {
            got: result.result_id,
            want: result_id.to_string(),
        });
    }
    if result.ok {
        if result.kind.is_some() {
            return Err(ProtocolError::KindOnSuccess {
                message: "Result",
                id: result.result_id,
            });
        }
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&result.value) {
            // An absent `value` (or `null`, read as absent) is no JSON text.
            let why = if result.value.trim().is_empty() {
                "it has none (a successful Result carries its value as JSON text: \"null\" \
                 for null)"
                    .to_owned()
            } else {
                e.to_string()
            };
            return Err(ProtocolError::ValueNotJson {
                id: result.result_id,
                why,
            });
        }
    } else if result.kind.is_none() && result.error.is_empty() {
        return Err(ProtocolError::MissingKind {
            message: "Result",
            id: result.result_id,
        });
    }
    result.error = crate::cap_error_text(std::mem::take(&mut result.error));
    Ok(result)
}

async fn exchange<R, W>(
    reader: R,
    mut writer: W,
    frame: &[u8],
    result_id: &str,
    cancel: &CancellationToken,
    timeout: Option<Duration>,
) -> Result<ResultMsg, StarterError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let exchange = async {
        write_frame_async(&mut writer, frame)
            .await
            .map_err(StarterError::Send)?;
        let mut reader = AsyncFrameReader::new(reader);
        let payload = reader
            .read_frame()
            .await
            .map_err(ProtocolError::from)?
            .ok_or(StarterError::NoResult)?;
        let result: ResultMsg = decode(&payload).map_err(ProtocolError::from)?;
        Ok(check_result(result, result_id)?)
    };
    let sleep = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        () = Cancelled::new(cancel) => Err(StarterError::Cancelled),
        () = sleep => Err(StarterError::TimedOut(timeout.unwrap_or_default())),
        result = exchange => result,
    }
}
