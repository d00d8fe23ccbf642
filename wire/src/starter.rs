//! The parent's side of the start channel: one Start out, one Result back.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::async_frame::{AsyncFrameReader, write_frame_async};
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
        exchange(self.reader, self.writer, start, cancel, timeout).await
    }
}

async fn exchange<R, W>(
    reader: R,
    mut writer: W,
    start: &Start,
    cancel: &CancellationToken,
    timeout: Option<Duration>,
) -> Result<ResultMsg, StarterError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let frame = encode(start).map_err(ProtocolError::from)?;
    let exchange = async {
        write_frame_async(&mut writer, &frame)
            .await
            .map_err(StarterError::Send)?;
        let mut reader = AsyncFrameReader::new(reader);
        let payload = reader
            .read_frame()
            .await
            .map_err(ProtocolError::from)?
            .ok_or(StarterError::NoResult)?;
        let result: ResultMsg = decode(&payload).map_err(ProtocolError::from)?;
        if result.result_id != start.result_id {
            return Err(ProtocolError::ResultIdMismatch {
                got: result.result_id,
                want: start.result_id.clone(),
            }
            .into());
        }
        if !result.ok && result.kind.is_none() && result.error.is_empty() {
            return Err(ProtocolError::MissingKind {
                message: "Result",
                id: result.result_id,
            }
            .into());
        }
        Ok(result)
    };
    let sleep = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(StarterError::Cancelled),
        () = sleep => Err(StarterError::TimedOut(timeout.unwrap_or_default())),
        result = exchange => result,
    }
}
