//! The call channel as the child's WASI stdin and stdout, with no helper task.
//!
//! wasmtime-wasi's own adapters (`AsyncStdinStream`, `AsyncStdoutStream`)
//! move bytes through a background task each, so every tool call would
//! cross two more tasks (and often two threads) on its way. These streams
//! instead read and write the parent's byte streams directly from the
//! child's own task: a write goes straight into the stream, and a blocked
//! read waits on the stream itself.
//!
//! Every handle the child opens on its stdin (or stdout) shares one state,
//! as WASI requires. A stream is only ever used from the child's Store, so
//! the lock is never contended; it exists because the traits require `Sync`.
//! It is a plain mutex, taken for one call or one poll and never held
//! across a wait (an async mutex cost every host call a semaphore's
//! acquire and release).
//!
//! What these streams promise a child, beyond WASI's letter (the `child`
//! world's doc states it), so that a tool call's round trip is two host
//! calls, a `write` and a `blocking-read`:
//! - a `check-write` permit holds until it is written, across writes;
//! - a write goes to the parent as far as the parent's stream takes it,
//!   without a `flush` (which only reports a stream that ended);
//! - while the child waits on its stdin (stdin's pollable: a blocking read
//!   or a `poll`), the rest of what it wrote keeps going to the parent
//!   ([`pair`]: stdin's waits drive stdout), so a child that reads its
//!   answer straight after its Request cannot keep the parent from the
//!   Request's end. A non-blocking `read` is not a wait and moves nothing.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use wasmtime_wasi::cli::{IsTerminal, StdinStream, StdoutStream};
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};
use wire::ReadRoom;

/// Bytes the child may have written and the parent not yet taken before
/// its writes wait: one write permit.
pub const WRITE_BUDGET: usize = 64 * 1024;

type Reader = Box<dyn AsyncRead + Send + Sync + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Sync + Unpin>;

/// How a direction of the channel ended, if it did.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    Open,
    Closed,
    Failed(String),
}

impl End {
    /// A write error: a parent that stopped reading has closed the channel.
    fn from_write(e: &std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            End::Closed
        } else {
            End::Failed(e.to_string())
        }
    }

    fn error(&self) -> Option<StreamError> {
        match self {
            End::Open => None,
            End::Closed => Some(StreamError::Closed),
            End::Failed(why) => Some(StreamError::LastOperationFailed(wasmtime::format_err!(
                "{why}"
            ))),
        }
    }
}

struct Inbound {
    reader: Reader,
    /// Read from the parent, not yet taken by the child.
    ready: BytesMut,
    /// Room made for the next read (an execution whose answers are small
    /// never allocates 64 KiB for them).
    room: ReadRoom,
    end: End,
}

impl Inbound {
    /// Reads what the parent has sent into `ready`; `Ready` once there is
    /// something to hand out or the stream has ended.
    fn fill(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.ready.is_empty() || self.end != End::Open {
            return Poll::Ready(());
        }
        // Straight into `ready`'s spare room, which is not zeroed first: an
        // execution touches only the pages its Responses fill (a zeroed
        // 64 KiB scratch was 16 pages of every execution that made a call).
        // `ready` is empty here, so once the child has taken (and dropped)
        // what it read, this reuses the same allocation.
        self.ready.reserve(self.room.size());
        match tokio_util::io::poll_read_buf(Pin::new(&mut self.reader), cx, &mut self.ready) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(0)) => self.end = End::Closed,
            Poll::Ready(Ok(n)) => self.room.read(n),
            Poll::Ready(Err(e)) => self.end = End::Failed(e.to_string()),
        }
        Poll::Ready(())
    }

    fn take(&mut self, size: usize) -> StreamResult<Bytes> {
        if size == 0 {
            return Ok(Bytes::new());
        }
        // Without waiting: whatever is there already.
        let _ = self.fill(&mut Context::from_waker(Waker::noop()));
        if !self.ready.is_empty() {
            let n = size.min(self.ready.len());
            return Ok(self.ready.split_to(n).freeze());
        }
        match self.end.error() {
            Some(error) => Err(error),
            None => Ok(Bytes::new()),
        }
    }
}

/// The child's stdin and stdout: it reads the parent's Responses from
/// `reader` and writes its Requests to `writer`. Whenever the child waits
/// on its stdin, what it wrote and the parent has not yet taken keeps
/// moving to `writer`.
pub fn pair(reader: Reader, writer: Writer) -> (CallIn, CallOut) {
    let out = CallOut::new(writer);
    let inbound = Inbound {
        reader,
        ready: BytesMut::new(),
        room: ReadRoom::new(),
        end: End::Open,
    };
    (
        CallIn {
            inbound: Arc::new(Mutex::new(inbound)),
            out: out.clone(),
        },
        out,
    )
}

/// The child's stdin: the parent's Responses.
#[derive(Clone)]
pub struct CallIn {
    inbound: Arc<Mutex<Inbound>>,
    /// The child's stdout, moved on while the child waits here.
    out: CallOut,
}

impl CallIn {
    fn lock(&self) -> MutexGuard<'_, Inbound> {
        // Nothing panics while holding it; a poisoned lock's state is whole.
        self.inbound.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads what the parent sent (see [`Inbound::fill`]), first moving on
    /// what the child wrote: the parent may wait for the end of a Request
    /// before it answers. Each lock is taken alone.
    fn fill(&self, cx: &mut Context<'_>) -> Poll<()> {
        {
            let mut out = self.out.lock();
            if !out.pending.is_empty() {
                let _ = out.drain(cx);
            }
        }
        self.lock().fill(cx)
    }
}

impl IsTerminal for CallIn {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for CallIn {
    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncRead + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl InputStream for CallIn {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        self.lock().take(size)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CallIn {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.fill(cx)).await;
    }
}

impl AsyncRead for CallIn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.fill(cx).is_pending() {
            return Poll::Pending;
        }
        let mut inbound = self.lock();
        if !inbound.ready.is_empty() {
            let n = buf.remaining().min(inbound.ready.len());
            buf.put_slice(&inbound.ready.split_to(n));
            return Poll::Ready(Ok(()));
        }
        Poll::Ready(match &inbound.end {
            End::Failed(why) => Err(std::io::Error::other(why.clone())),
            End::Open | End::Closed => Ok(()),
        })
    }
}

struct Outbound {
    writer: Writer,
    /// Written by the child, not yet taken by the parent's stream.
    pending: BytesMut,
    end: End,
}

impl Outbound {
    /// Writes `bytes` into the parent's stream as far as it takes them now,
    /// and keeps the rest.
    fn push(&mut self, mut bytes: Bytes) {
        if self.pending.is_empty() {
            let mut cx = Context::from_waker(Waker::noop());
            while !bytes.is_empty() {
                match Pin::new(&mut self.writer).poll_write(&mut cx, &bytes) {
                    Poll::Ready(Ok(0)) => {
                        self.end = End::Closed;
                        return;
                    }
                    Poll::Ready(Ok(n)) => drop(bytes.split_to(n)),
                    Poll::Ready(Err(e)) => {
                        self.end = End::from_write(&e);
                        return;
                    }
                    Poll::Pending => break,
                }
            }
        }
        self.pending.extend_from_slice(&bytes);
    }

    /// Moves what is pending into the parent's stream; `Ready` once all of
    /// it is there (or the stream has ended).
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        while !self.pending.is_empty() && self.end == End::Open {
            match Pin::new(&mut self.writer).poll_write(cx, &self.pending) {
                Poll::Ready(Ok(0)) => self.end = End::Closed,
                Poll::Ready(Ok(n)) => drop(self.pending.split_to(n)),
                Poll::Ready(Err(e)) => self.end = End::from_write(&e),
                Poll::Pending => return Poll::Pending,
            }
        }
        if self.end == End::Open {
            return match Pin::new(&mut self.writer).poll_flush(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(())) => Poll::Ready(()),
                Poll::Ready(Err(e)) => {
                    self.end = End::from_write(&e);
                    Poll::Ready(())
                }
            };
        }
        Poll::Ready(())
    }

    fn permit(&mut self) -> StreamResult<usize> {
        let _ = self.drain(&mut Context::from_waker(Waker::noop()));
        match self.end.error() {
            Some(error) => Err(error),
            None => Ok(WRITE_BUDGET.saturating_sub(self.pending.len())),
        }
    }
}

/// The child's stdout: its Requests.
#[derive(Clone)]
pub struct CallOut(Arc<Mutex<Outbound>>);

impl CallOut {
    fn lock(&self) -> MutexGuard<'_, Outbound> {
        // Nothing panics while holding it; a poisoned lock's state is whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A stdout writing to `writer`.
    pub fn new(writer: Writer) -> Self {
        CallOut(Arc::new(Mutex::new(Outbound {
            writer,
            pending: BytesMut::new(),
            end: End::Open,
        })))
    }
}

impl IsTerminal for CallOut {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CallOut {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for CallOut {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let mut outbound = self.lock();
        let permit = outbound.permit()?;
        if bytes.len() > permit {
            return Err(StreamError::trap(
                "a write larger than its check-write permit",
            ));
        }
        outbound.push(bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        // Flushing completes in `ready`; only an ended stream fails here.
        self.lock().permit().map(drop)
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.lock().permit()
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CallOut {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.lock().drain(cx)).await;
    }
}

impl AsyncWrite for CallOut {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut outbound = self.lock();
        if outbound.drain(cx).is_pending() {
            return Poll::Pending;
        }
        match &outbound.end {
            End::Open => {
                outbound.push(Bytes::copy_from_slice(buf));
                Poll::Ready(Ok(buf.len()))
            }
            End::Closed => Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into())),
            End::Failed(why) => Poll::Ready(Err(std::io::Error::other(why.clone()))),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.lock().drain(cx).map(Ok)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(f)
    }

    #[test]
    fn bytes_written_arrive_and_eof_reads_as_closed() {
        block_on(async {
            let (parent, child) = tokio::io::duplex(1024);
            let (parent_read, mut parent_write) = tokio::io::split(parent);
            let (child_read, child_write) = tokio::io::split(child);
            let (mut stdin, mut stdout) = pair(Box::new(child_read), Box::new(child_write));

            assert_eq!(stdout.check_write().expect("open"), WRITE_BUDGET);
            stdout
                .write(Bytes::from_static(b"request"))
                .expect("written");
            stdout.ready().await;
            let mut got = vec![0; 7];
            let mut parent_read = parent_read;
            tokio::io::AsyncReadExt::read_exact(&mut parent_read, &mut got)
                .await
                .expect("the parent reads it");
            assert_eq!(got, b"request");

            assert!(stdin.read(16).expect("open").is_empty(), "nothing yet");
            tokio::io::AsyncWriteExt::write_all(&mut parent_write, b"answer")
                .await
                .expect("the parent writes");
            stdin.ready().await;
            assert_eq!(stdin.read(3).expect("open"), Bytes::from_static(b"ans"));
            assert_eq!(stdin.read(16).expect("open"), Bytes::from_static(b"wer"));
            // The parent closes the channel: both of its halves go.
            drop((parent_read, parent_write));
            stdin.ready().await;
            assert!(matches!(stdin.read(16), Err(StreamError::Closed)));
        });
    }

    #[test]
    fn answers_are_read_into_room_that_grows_only_when_filled() {
        block_on(async {
            let (parent, child) = tokio::io::duplex(256 << 10);
            let (_parent_read, mut parent_write) = tokio::io::split(parent);
            let (child_read, child_write) = tokio::io::split(child);
            let (mut stdin, _stdout) = pair(Box::new(child_read), Box::new(child_write));
            let room = |stdin: &CallIn| stdin.lock().room.size();
            tokio::io::AsyncWriteExt::write_all(&mut parent_write, b"small")
                .await
                .expect("the parent writes");
            stdin.ready().await;
            assert_eq!(stdin.read(64).expect("open"), Bytes::from_static(b"small"));
            assert_eq!(room(&stdin), ReadRoom::FIRST);
            // 200 KiB waiting: each read fills its room, which doubles up
            // to ReadRoom::MOST, and every byte arrives in order.
            let big: Vec<u8> = (0..200 << 10).map(|i| (i % 251) as u8).collect();
            tokio::io::AsyncWriteExt::write_all(&mut parent_write, &big)
                .await
                .expect("the parent writes");
            let mut got = Vec::new();
            while got.len() < big.len() {
                stdin.ready().await;
                got.extend_from_slice(&stdin.read(ReadRoom::MOST).expect("open"));
            }
            assert_eq!(got, big);
            assert_eq!(room(&stdin), ReadRoom::MOST);
        });
    }

    /// The child's side of a round trip in two host calls: a write, and a
    /// read that waits for the answer. The parent's stream takes 16 bytes
    /// at a time and the parent answers only once it has the whole
    /// Request, so the Request's rest must go on while the child waits.
    #[test]
    fn a_request_goes_on_while_the_child_waits_for_its_answer() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let (parent, child) = tokio::io::duplex(16);
            let (mut parent_read, mut parent_write) = tokio::io::split(parent);
            let (child_read, child_write) = tokio::io::split(child);
            let (mut stdin, mut stdout) = pair(Box::new(child_read), Box::new(child_write));
            let request: Vec<u8> = (0..1000).map(|i| (i % 251) as u8).collect();
            let permit = stdout.check_write().expect("open");
            // One permit, two writes: it holds until it is written.
            let (first, rest) = request.split_at(request.len() / 2);
            stdout.write(Bytes::copy_from_slice(first)).expect("within");
            stdout.write(Bytes::copy_from_slice(rest)).expect("within");
            assert!(request.len() <= permit);
            let parent = async {
                let mut got = vec![0; request.len()];
                tokio::io::AsyncReadExt::read_exact(&mut parent_read, &mut got)
                    .await
                    .expect("the parent reads the Request");
                assert_eq!(got, request);
                tokio::io::AsyncWriteExt::write_all(&mut parent_write, b"answer")
                    .await
                    .expect("the parent answers");
            };
            let child = async {
                stdin.ready().await;
                stdin.read(64).expect("open")
            };
            // A bound, not a pace: without the rest of the Request both
            // sides wait for ever.
            let ((), answer) = tokio::time::timeout(Duration::from_secs(30), async {
                tokio::join!(parent, child)
            })
            .await
            .expect("the parent got the Request's end while the child waited");
            assert_eq!(answer, Bytes::from_static(b"answer"));
        });
    }

    #[test]
    fn a_write_past_the_permit_traps_and_a_closed_parent_is_closed() {
        block_on(async {
            let (parent, child) = tokio::io::duplex(16);
            let mut stdout = CallOut::new(Box::new(child));
            let too_big = Bytes::from(vec![1; WRITE_BUDGET + 1]);
            assert!(matches!(stdout.write(too_big), Err(StreamError::Trap(_))));
            drop(parent);
            stdout.write(Bytes::from_static(b"x")).expect("accepted");
            assert!(matches!(stdout.check_write(), Err(StreamError::Closed)));
        });
    }
}
