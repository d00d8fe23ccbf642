//! Async framing over tokio streams, feeding the same [`FrameDecoder`].

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::frame::{FIRST_CHUNK, FrameDecoder, FrameError, READ_CHUNK};

/// How much room to make for the next read from a stream: [`Self::FIRST`]
/// (4 KiB) at first, doubled each time a read fills it, up to
/// [`Self::MOST`] (64 KiB, the most wasmtime-wasi hands a guest at once).
///
/// A fixed 64 KiB per reader was, for every short execution, a fresh
/// allocation at the top of the heap that glibc gave back to the kernel
/// when it was freed (two `brk` calls, and the page faults of the next
/// one's first bytes); most frames (a Start, a Result, a call) are a few
/// hundred bytes. Shared by [`AsyncFrameReader`] and the host's call
/// channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRoom(usize);

impl ReadRoom {
    /// The room the first read gets.
    pub const FIRST: usize = FIRST_CHUNK;
    /// The most room a read gets.
    pub const MOST: usize = READ_CHUNK;

    /// Room for a stream not read yet.
    pub fn new() -> Self {
        ReadRoom(Self::FIRST)
    }

    /// Bytes to make room for before the next read.
    pub fn size(self) -> usize {
        self.0
    }

    /// Takes note of a read of `n` bytes: one that filled the room doubles it.
    pub fn read(&mut self, n: usize) {
        if n >= self.0 {
            self.0 = (self.0 * 2).min(Self::MOST);
        }
    }
}

impl Default for ReadRoom {
    fn default() -> Self {
        Self::new()
    }
}

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
