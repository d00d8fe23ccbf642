//! [`pipe`]: the in-memory byte streams between a wasm child and the roles
//! that serve it (the Server and the Starter), one direction each.
//!
//! The child and the roles run in one task (`Backend::spawn`), so every
//! frame crosses a pipe inside one poll, and a tool call's round trip
//! crosses two. `tokio::io::duplex` did this job, and cost what a stream
//! for any two tasks costs: a cooperative-budget check on every poll, and
//! a clone of the waiting side's waker on every wait, dropped when it was
//! woken. Here a side that waits keeps its waker across waits (replaced
//! only when a different task polls it) and is woken once per wait.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A pipe that holds at most `capacity` bytes written and not yet read.
pub(crate) fn pipe(capacity: usize) -> (PipeWriter, PipeReader) {
    let shared = Arc::new(Mutex::new(Pipe {
        bytes: BytesMut::new(),
        capacity: capacity.max(1),
        writer_gone: false,
        reader_gone: false,
        reader: Waiting::default(),
        writer: Waiting::default(),
    }));
    (
        PipeWriter {
            pipe: Arc::clone(&shared),
        },
        PipeReader { pipe: shared },
    )
}

/// The writing end; dropped or shut down, the reader reads to the end of
/// what was written and then sees the end of the stream.
#[derive(Debug)]
pub(crate) struct PipeWriter {
    pipe: Arc<Mutex<Pipe>>,
}

/// The reading end; dropped, a write fails with `BrokenPipe`.
#[derive(Debug)]
pub(crate) struct PipeReader {
    pipe: Arc<Mutex<Pipe>>,
}

#[derive(Debug)]
struct Pipe {
    /// Written, not yet read.
    bytes: BytesMut,
    capacity: usize,
    writer_gone: bool,
    reader_gone: bool,
    reader: Waiting,
    writer: Waiting,
}

/// One side's wait: its waker, kept between waits, and whether it waits now.
#[derive(Debug, Default)]
struct Waiting {
    waker: Option<Waker>,
    now: bool,
}

impl Waiting {
    fn wait(&mut self, cx: &Context<'_>) {
        match &self.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => self.waker = Some(cx.waker().clone()),
        }
        self.now = true;
    }

    fn wake(&mut self) {
        if std::mem::take(&mut self.now)
            && let Some(waker) = &self.waker
        {
            waker.wake_by_ref();
        }
    }
}

fn lock(pipe: &Mutex<Pipe>) -> MutexGuard<'_, Pipe> {
    // Never poisoned: nothing panics while holding it.
    pipe.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let mut pipe = lock(&self.pipe);
        if !pipe.bytes.is_empty() {
            let n = buf.remaining().min(pipe.bytes.len());
            buf.put_slice(&pipe.bytes[..n]);
            pipe.bytes.advance(n);
            pipe.writer.wake();
            return Poll::Ready(Ok(()));
        }
        if pipe.writer_gone {
            return Poll::Ready(Ok(()));
        }
        pipe.reader.wait(cx);
        Poll::Pending
    }
}

impl AsyncWrite for PipeWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut pipe = lock(&self.pipe);
        if pipe.reader_gone || pipe.writer_gone {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let room = pipe.capacity.saturating_sub(pipe.bytes.len());
        if room == 0 {
            pipe.writer.wait(cx);
            return Poll::Pending;
        }
        let n = room.min(data.len());
        pipe.bytes.extend_from_slice(&data[..n]);
        pipe.reader.wake();
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut pipe = lock(&self.pipe);
        pipe.writer_gone = true;
        pipe.reader.wake();
        Poll::Ready(Ok(()))
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        let mut pipe = lock(&self.pipe);
        pipe.writer_gone = true;
        pipe.reader.wake();
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let mut pipe = lock(&self.pipe);
        pipe.reader_gone = true;
        // What was written and never read goes with the reader.
        pipe.bytes = BytesMut::new();
        pipe.writer.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_waker::counting_waker as counted;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn read(reader: &mut PipeReader, waker: &Waker, room: usize) -> Poll<Vec<u8>> {
        let mut space = vec![0; room];
        let mut buf = ReadBuf::new(&mut space);
        match Pin::new(reader).poll_read(&mut Context::from_waker(waker), &mut buf) {
            Poll::Ready(Ok(())) => Poll::Ready(buf.filled().to_vec()),
            Poll::Ready(Err(e)) => panic!("{e}"),
            Poll::Pending => Poll::Pending,
        }
    }

    fn write(writer: &mut PipeWriter, waker: &Waker, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(writer).poll_write(&mut Context::from_waker(waker), data)
    }

    #[test]
    fn a_waiting_reader_is_woken_once_by_the_write_that_ends_its_wait() {
        let (mut writer, mut reader) = pipe(16);
        let (count, waker) = counted();
        assert_eq!(read(&mut reader, &waker, 8), Poll::Pending);
        assert_eq!(read(&mut reader, &waker, 8), Poll::Pending);
        let noop = Waker::noop();
        assert!(matches!(
            write(&mut writer, noop, b"abc"),
            Poll::Ready(Ok(3))
        ));
        assert!(matches!(
            write(&mut writer, noop, b"de"),
            Poll::Ready(Ok(2))
        ));
        assert_eq!(count.get(), 1, "one wake for one wait");
        assert_eq!(read(&mut reader, &waker, 4), Poll::Ready(b"abcd".to_vec()));
        assert_eq!(read(&mut reader, &waker, 4), Poll::Ready(b"e".to_vec()));
        assert_eq!(read(&mut reader, &waker, 4), Poll::Pending);
        drop(writer);
        assert_eq!(count.get(), 2, "the writer's end wakes it");
        assert_eq!(
            read(&mut reader, &waker, 4),
            Poll::Ready(Vec::new()),
            "end of stream"
        );
    }

    #[test]
    fn a_full_pipe_holds_the_writer_until_the_reader_makes_room() {
        let (mut writer, mut reader) = pipe(4);
        let (count, waker) = counted();
        assert!(matches!(
            write(&mut writer, &waker, b"abcdef"),
            Poll::Ready(Ok(4))
        ));
        assert!(write(&mut writer, &waker, b"ef").is_pending());
        assert_eq!(count.get(), 0);
        assert_eq!(
            read(&mut reader, Waker::noop(), 3),
            Poll::Ready(b"abc".to_vec())
        );
        assert_eq!(count.get(), 1, "room made wakes the writer");
        assert!(matches!(
            write(&mut writer, &waker, b"ef"),
            Poll::Ready(Ok(2))
        ));
        assert_eq!(
            read(&mut reader, Waker::noop(), 8),
            Poll::Ready(b"def".to_vec())
        );
    }

    #[test]
    fn a_write_after_the_reader_is_gone_is_a_broken_pipe_and_wakes_a_waiting_writer() {
        let (mut writer, reader) = pipe(2);
        let (count, waker) = counted();
        assert!(matches!(
            write(&mut writer, &waker, b"ab"),
            Poll::Ready(Ok(2))
        ));
        assert!(write(&mut writer, &waker, b"c").is_pending());
        drop(reader);
        assert_eq!(count.get(), 1);
        match write(&mut writer, &waker, b"c") {
            Poll::Ready(Err(e)) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_task_that_waits_last_is_the_one_woken() {
        let (mut writer, mut reader) = pipe(8);
        let ((first, first_waker), (second, second_waker)) = (counted(), counted());
        assert_eq!(read(&mut reader, &first_waker, 1), Poll::Pending);
        assert_eq!(read(&mut reader, &second_waker, 1), Poll::Pending);
        assert!(write(&mut writer, Waker::noop(), b"x").is_ready());
        assert_eq!(first.get(), 0);
        assert_eq!(second.get(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_megabyte_crosses_a_small_pipe_between_two_tasks_intact() {
        let (mut writer, mut reader) = pipe(1000);
        let sent: Vec<u8> = (0..1 << 20).map(|i: u32| (i * 7 % 251) as u8).collect();
        let writing = tokio::spawn({
            let sent = sent.clone();
            async move {
                for chunk in sent.chunks(4093) {
                    writer.write_all(chunk).await.unwrap();
                }
                writer.shutdown().await.unwrap();
            }
        });
        let mut got = Vec::new();
        reader.read_to_end(&mut got).await.unwrap();
        writing.await.unwrap();
        assert!(got == sent, "{} bytes of {}", got.len(), sent.len());
    }
}
