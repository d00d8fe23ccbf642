//! Async framing over tokio streams, feeding the same [`FrameDecoder`].

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::frame::{FrameDecoder, FrameError, ReadRoom};

/// Reads frames from an async byte stream.
#[derive(Debug)]
pub struct AsyncFrameReader<R> {
    inner: R,
    decoder: FrameDecoder,
    buf: Vec<u8>,
    pos: usize,
    /// Room made for the next read.
    room: ReadRoom,
}

impl<R: AsyncRead + Unpin> AsyncFrameReader<R> {
    /// Reads frames from `inner`, enforcing [`crate::MAX_FRAME_BYTES`].
    pub fn new(inner: R) -> Self {
        AsyncFrameReader {
            inner,
            decoder: FrameDecoder::new(),
            buf: Vec::new(),
            pos: 0,
            room: ReadRoom::new(),
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
            self.buf.reserve(self.room.size());
            // read_buf is cancel-safe: either it read into buf or nothing happened.
            let n = self.inner.read_buf(&mut self.buf).await?;
            if n == 0 {
                return self.decoder.finish().map(|()| None);
            }
            self.room.read(n);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payload: &[u8]) -> Vec<u8> {
        let mut v = u32::try_from(payload.len())
            .expect("a test frame fits")
            .to_be_bytes()
            .to_vec();
        v.extend_from_slice(payload);
        v
    }

    #[tokio::test]
    async fn a_reader_makes_room_for_large_reads_only() {
        let mut small = framed(b"{}");
        small.extend(framed(&[b'x'; 3000]));
        let mut r = AsyncFrameReader::new(&small[..]);
        assert_eq!(r.read_frame().await.unwrap().unwrap(), b"{}");
        assert_eq!(r.read_frame().await.unwrap().unwrap().len(), 3000);
        assert_eq!(r.read_frame().await.unwrap(), None);
        assert_eq!(r.room.size(), ReadRoom::FIRST);
        assert!(r.buf.capacity() < ReadRoom::MOST, "{}", r.buf.capacity());
        let big: Vec<u8> = (0..200 << 10).map(|i| (i % 251) as u8).collect();
        let stream = framed(&big);
        let mut r = AsyncFrameReader::new(&stream[..]);
        assert_eq!(r.read_frame().await.unwrap().unwrap(), big);
        assert_eq!(r.room.size(), ReadRoom::MOST);
    }
}
