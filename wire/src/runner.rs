//! The child's side of the start channel: one Start in, one Result out.

use std::io::{Read, Write};

use crate::codec::{decode, encode};
use crate::error::ProtocolError;
use crate::frame::FrameReader;
use crate::message::{Result as ResultMsg, Start};

/// Why the runner could not take its Start or deliver its Result.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The parent broke the protocol.
    #[error("protocol error on the start channel: {0}")]
    Protocol(#[from] ProtocolError),
    /// The start channel closed before a Start arrived.
    #[error("the start channel closed before a Start arrived")]
    NoStart,
    /// `start` was called twice: a runner takes exactly one Start.
    #[error("this runner already took its Start")]
    AlreadyStarted,
    /// The Result could not be written.
    #[error("could not write the Result: {0}")]
    Write(#[source] std::io::Error),
}

/// The child's blocking start-channel runner: exactly one Start, exactly one Result.
#[derive(Debug)]
pub struct Runner<R, W> {
    reader: FrameReader<R>,
    writer: W,
    started: bool,
}

impl<R: Read, W: Write> Runner<R, W> {
    /// A runner reading the Start from `reader` and writing the Result to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Runner {
            reader: FrameReader::new(reader),
            writer,
            started: false,
        }
    }

    /// Waits for the one Start.
    pub fn start(&mut self) -> Result<Start, RunnerError> {
        if self.started {
            return Err(RunnerError::AlreadyStarted);
        }
        self.started = true;
        let payload = self
            .reader
            .read_frame()
            .map_err(ProtocolError::from)?
            .ok_or(RunnerError::NoStart)?;
        Ok(decode(&payload).map_err(ProtocolError::from)?)
    }

    /// Sends the one Result; consuming the runner makes a second impossible.
    pub fn finish(mut self, result: &ResultMsg) -> Result<(), RunnerError> {
        let frame = encode(result).map_err(ProtocolError::from)?;
        self.writer
            .write_all(&frame)
            .and_then(|()| self.writer.flush())
            .map_err(RunnerError::Write)
    }
}
