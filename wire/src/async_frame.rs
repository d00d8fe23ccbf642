//! Async framing over tokio streams, feeding the same [`FrameDecoder`].

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::frame::{FrameDecoder, FrameError, READ_CHUNK};

/// Reads frames from an async byte stream.
#[derive(Debug)]
pub struct AsyncFrameReader<R> {
    inner: R,
    decoder: FrameDecoder,
    buf: Vec<u8>,
    pos: usize,
}

impl<R: AsyncRead + Unpin> AsyncFrameReader<R> {
    /// Reads frames from `inner`, enforcing [`crate::MAX_FRAME_BYTES`].
    pub fn new(inner: R) -> Self {
        AsyncFrameReader {
            inner,
            decoder: FrameDecoder::new(),
            buf: Vec::new(),
            pos: 0,
        }
    }

    /// The next payload, or `None` on a clean close at a frame boundary.
    ///
    /// Cancel-safe: dropping the future loses no bytes already read.
    pub async fn read_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        loop {
            if self.pos < self.buf.len() {
                let (used, done) = self.decoder.feed(&self.buf[self.pos..]);
                self.pos += used;
                if let Some(done) = done {
                    return done.map(Some);
                }
            }
            self.buf.clear();
            self.pos = 0;
            self.buf.reserve(READ_CHUNK);
            // read_buf is cancel-safe: either it read into buf or nothing happened.
            let n = self.inner.read_buf(&mut self.buf).await?;
            if n == 0 {
                return self.decoder.finish().map(|()| None);
            }
        }
    }
}

/// Writes one already-encoded frame (see [`crate::encode`]) and flushes.
pub async fn write_frame_async<W: AsyncWrite + Unpin>(
    w: &mut W,
    frame: &[u8],
) -> std::io::Result<()> {
    w.write_all(frame).await?;
    w.flush().await
}
