//! The child's call channel: Requests out, Responses in, and never one
//! without the other.
//!
//! [`wire::Client`] writes a Request with a blocking write and reads nothing
//! until it is asked for an answer. A parent that bounds what it holds for
//! the child (answers written but not yet read) stops reading Requests when
//! that backlog is full, and waits for the child to read; a child blocked in
//! its write then never reads, and both wait until the wall clock ends the
//! run. `Promise.allSettled` over a hundred 1 MiB echo calls did exactly
//! that after 32 calls.
//!
//! [`Channel`] keeps reading while it writes: whatever the parent sends
//! while a Request is on its way is decoded into frames and kept, matched
//! by id when the evaluator asks for answers. How the two directions are
//! served at once is a [`Link`]'s business: WASI preview-2 streams and
//! `poll` in the component (`WasiLink`, wasm only), a reader thread in a
//! native process child ([`ThreadLink`]).
//!
//! It paces as [`wire::InFlight`] does: at most the Start's `max_inflight`
//! calls on the wire, the rest waiting in order for a slot.
//!
//! Requests go out in batches: the frames of the calls sent, and of those
//! whose slot an answer freed, gather in one buffer, written with one
//! [`Link::send`] before the channel waits for the parent, once it has
//! handed out every answer it had already read, when the buffer reaches
//! [`OUT_BATCH`], and whenever the evaluator asks ([`Transport::flush`]:
//! before a timer fires, before it sleeps, and when the run ends). So a
//! call never waits for the program beyond the answers already in hand,
//! and `Promise.all` over a thousand calls costs a few writes, not a
//! thousand (in the component a write is one host call: see `WasiLink`).
//!
//! It can wait for an answer with a timeout ([`Transport::recv_within`]),
//! which the event loop needs while a timer is pending: in the component
//! the link polls a monotonic-clock pollable together with stdin.
//!
//! The rest is [`wire::Client`]'s contract, which [`Transport`] states: ids
//! unique within the run, answers in any order, and once the channel ends
//! every call still in flight is answered once as `cancelled`.
//!
//! A channel that ends (the parent closed it, or stopped reading it) is the
//! parent cancelling the run (docs/protocol.md, invariant 5): the channel
//! tells the run's [`Stop`], so the run ends `cancelled` even if the
//! program catches its calls' failures. A wait with a timeout
//! ([`Transport::recv_within`]) also ends when the run is stopped.

use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

use wire::{ClientError, FrameDecoder, FrameError, InFlight, ProtocolError, Reply};

use crate::stop::Stop;
use crate::transport::Transport;

/// Bytes asked of the parent's stream at a time: the most any frame reader
/// reads at once (wasmtime-wasi hands a guest at most 64 KiB per read).
const READ_CHUNK: usize = wire::ReadRoom::MOST;

/// Bytes of Requests gathered before they are written without waiting for
/// a flush: a frame this large or larger goes on its own.
pub const OUT_BATCH: usize = 64 * 1024;

/// What the parent has sent and the channel has not yet handed out: whole
/// frames, in order, and how the stream ended if it did.
#[derive(Debug)]
pub struct Inbox {
    /// Reserves each answer's whole length at its prefix: the parent's
    /// lengths are trusted, and a large answer then needs its own size once,
    /// not its size and the half it doubled from.
    decoder: FrameDecoder,
    frames: VecDeque<Result<Vec<u8>, FrameError>>,
    ended: Option<End>,
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox {
            decoder: FrameDecoder::new().reserving_whole(),
            frames: VecDeque::new(),
            ended: None,
        }
    }
}

/// How the parent's stream ended.
#[derive(Debug)]
enum End {
    /// A clean close at a frame boundary.
    Closed,
    /// A read failed; the text says why.
    Broken(String),
    /// The bytes broke the framing; the error is queued after the last frame.
    Framing,
}

impl Inbox {
    /// Takes bytes the parent sent.
    pub fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.ended.is_none() {
            let (used, done) = self.decoder.feed(bytes);
            bytes = &bytes[used..];
            match done {
                Some(Ok(frame)) => self.frames.push_back(Ok(frame)),
                // Read past whole: the stream goes on.
                Some(Err(unheld @ FrameError::Unheld { .. })) => self.frames.push_back(Err(unheld)),
                Some(Err(e)) => {
                    self.frames.push_back(Err(e));
                    self.ended = Some(End::Framing);
                }
                None => {}
            }
        }
    }

    /// The parent closed its stream.
    pub fn close(&mut self) {
        if self.ended.is_none() {
            match self.decoder.finish() {
                Ok(()) => self.ended = Some(End::Closed),
                Err(e) => {
                    self.frames.push_back(Err(e));
                    self.ended = Some(End::Framing);
                }
            }
        }
    }

    /// Reading the parent's stream failed.
    pub fn broken(&mut self, error: &io::Error) {
        if self.ended.is_none() {
            self.ended = Some(End::Broken(format!("the call channel broke: {error}")));
        }
    }

    /// Whether more may arrive: the stream has not ended.
    pub fn is_open(&self) -> bool {
        self.ended.is_none()
    }

    /// Whole frames waiting to be handed out.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }
}

/// Frames sent and not yet written to the link, in order.
#[derive(Debug, Default)]
struct Batch {
    bytes: Vec<u8>,
    /// Requests among them (the rest are Withdraws).
    requests: u64,
    /// Requests counted as sent whose batch could not be written.
    unwritten: u64,
}

impl Batch {
    /// Adds a frame; `request`: it is a Request (counted as a call).
    fn push(&mut self, frame: &[u8], request: bool) {
        self.bytes.extend_from_slice(frame);
        self.requests += u64::from(request);
    }

    /// Writes the batch to `link` and empties it. If the write fails, its
    /// Requests are not counted: the parent did not get them (or not all
    /// of them; a partial frame is nothing to it).
    fn write<L: Link>(&mut self, link: &mut L, inbox: &mut Inbox) -> io::Result<()> {
        if self.bytes.is_empty() {
            return Ok(());
        }
        let written = link.send(&self.bytes, inbox);
        if written.is_err() {
            self.unwritten += self.requests;
        }
        self.bytes.clear();
        self.requests = 0;
        written
    }
}

/// The two directions of the call channel, served so that neither waits on
/// the other.
pub trait Link {
    /// Writes all of `bytes` to the parent and flushes them.
    ///
    /// While the parent is not taking them, whatever it sends must be read
    /// into `inbox`: a parent may wait for its answers to be read before it
    /// reads more. (The channel therefore looks at `inbox` after a send
    /// before it waits: answers may be there.) An error means the parent
    /// cannot get Requests any more.
    fn send(&mut self, bytes: &[u8], inbox: &mut Inbox) -> io::Result<()>;

    /// Waits until the parent sends something, or its stream ends, and puts
    /// that into `inbox`; or, given a `timeout`, until it passes. Returns at
    /// once if the stream has already ended.
    fn receive(&mut self, inbox: &mut Inbox, timeout: Option<Duration>);

    /// Waits until everything [`send`](Link::send) wrote has reached the
    /// parent, or writing to it has failed. Called once the run is over,
    /// before the Result goes: a write is done when the child's stream
    /// took the bytes, not when the parent did, and a child that exits
    /// with bytes still on their way takes them with it, leaving the
    /// parent half a frame. What the parent sends meanwhile is read and
    /// dropped (the run wants no more answers), so a parent that waits for
    /// its answers to be read before it reads on is not kept waiting. A
    /// parent that closed the child's stdin but still reads its stdout is
    /// still waited for; one that does neither leaves the child to its
    /// wall clock, as any write would. By default every send has already
    /// arrived.
    fn deliver(&mut self) {}
}

impl<L: Link + ?Sized> Link for &mut L {
    fn send(&mut self, bytes: &[u8], inbox: &mut Inbox) -> io::Result<()> {
        (**self).send(bytes, inbox)
    }

    fn receive(&mut self, inbox: &mut Inbox, timeout: Option<Duration>) {
        (**self).receive(inbox, timeout);
    }

    fn deliver(&mut self) {
        (**self).deliver();
    }
}

/// The child's call channel over a [`Link`]: a [`Transport`] that reads
/// Responses while it writes Requests.
#[derive(Debug)]
pub struct Channel<L> {
    link: L,
    inbox: Inbox,
    calls: InFlight,
    /// Frames sent and not yet written to the link (see the module's doc).
    out: Batch,
    /// Set once a write failed: the parent gets no more Requests.
    broken: Option<String>,
    /// The run's stop: told when the channel ends, and read while waiting.
    stop: Stop,
}

impl<L: Link> Channel<L> {
    /// A channel over `link`, with a stop of its own.
    pub fn new(link: L) -> Self {
        Channel::stopped_by(link, Stop::new())
    }

    /// A channel over `link` that cancels `stop` when the parent ends the
    /// channel, and whose timed waits end when `stop` does.
    pub fn stopped_by(link: L, stop: Stop) -> Self {
        Channel {
            link,
            inbox: Inbox::default(),
            calls: InFlight::default(),
            out: Batch::default(),
            broken: None,
            stop,
        }
    }

    /// Calls made and not yet answered: on the wire, or waiting for a slot
    /// (see [`Transport::pace`]).
    pub fn in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Calls on the wire: sent and not yet answered.
    pub fn on_the_wire(&self) -> usize {
        self.calls.on_the_wire()
    }

    /// Answers read from the parent and not yet handed out.
    pub fn buffered(&self) -> usize {
        self.inbox.frames()
    }

    /// The link.
    pub fn link_mut(&mut self) -> &mut L {
        &mut self.link
    }

    /// Waits until what was written has reached the parent (see
    /// [`Link::deliver`]): the child calls it once the run is over, before
    /// it sends the Result. Answers that come meanwhile are dropped.
    pub fn deliver(&mut self) {
        if self.broken.is_none() {
            self.link.deliver();
        }
    }

    /// Why no more answers can come, once that is so.
    fn ended(&self) -> Option<String> {
        if let Some(why) = &self.broken {
            return Some(why.clone());
        }
        match &self.inbox.ended {
            None => None,
            Some(End::Closed | End::Framing) => Some("the parent closed the call channel".into()),
            Some(End::Broken(why)) => Some(why.clone()),
        }
    }
}

impl<L: Link> Channel<L> {
    /// Sends every waiting Request that has a slot on the wire, into the
    /// batch; none once the channel broke (those calls then fail,
    /// uncounted).
    fn write_ready(&mut self) {
        if self.broken.is_some() {
            return;
        }
        let (link, inbox, out) = (&mut self.link, &mut self.inbox, &mut self.out);
        let sent = self.calls.send_ready(|frame| {
            if out.bytes.len() + frame.len() > OUT_BATCH {
                out.write(link, inbox)?;
                if frame.len() >= OUT_BATCH {
                    // On its own, unbuffered; uncounted if it fails.
                    return link.send(frame, inbox);
                }
            }
            out.push(frame, true);
            Ok(())
        });
        self.note_broken(sent);
    }

    /// Writes the batch now (see the module's doc for when).
    fn write_out(&mut self) {
        if self.broken.is_none() {
            let written = self.out.write(&mut self.link, &mut self.inbox);
            self.note_broken(written);
        }
    }

    /// A failed write broke the channel: the parent gets no more Requests,
    /// and the run is cancelled.
    fn note_broken(&mut self, written: io::Result<()>) {
        if let Err(e) = written {
            let why = format!("the call channel broke: {e}");
            self.stop.cancel(why.clone());
            self.broken = Some(why);
        }
    }

    /// Tells the stop when the parent ended the channel (closed it, or
    /// reading it failed): that is the parent cancelling. A framing error
    /// is not: it is handed out as the protocol violation it is.
    fn note_end(&self) {
        if let Some(End::Closed | End::Broken(_)) = &self.inbox.ended
            && let Some(why) = self.ended()
        {
            self.stop.cancel(why);
        }
    }

    /// The next answer, waiting for it until `deadline` (`None`: for as
    /// long as it takes); `Ok(None)` once the deadline has passed, or, when
    /// `stoppable`, once the run's stop has been given a reason.
    fn next_reply(
        &mut self,
        deadline: Option<Instant>,
        stoppable: bool,
    ) -> Result<Option<Reply>, ClientError> {
        // Once the deadline has passed the link is still looked at once,
        // without waiting, for what the parent has already sent.
        let mut looked_late = false;
        loop {
            if self.calls.is_empty() {
                return Err(if self.ended().is_some() {
                    ClientError::Closed
                } else {
                    ClientError::Idle
                });
            }
            // Answers already read go first, even after the channel ended.
            let answered = match self.inbox.frames.pop_front() {
                Some(Ok(payload)) => Some(self.calls.answer(&payload)),
                // An answer there was no memory for fails its call.
                Some(Err(FrameError::Unheld { len, head })) => {
                    Some(self.calls.answer_unheld(&head, len))
                }
                Some(Err(FrameError::Io(e))) => {
                    self.inbox.broken(&e);
                    continue;
                }
                Some(Err(e)) => return Err(ProtocolError::from(e).into()),
                None => None,
            };
            if let Some(reply) = answered {
                let reply = reply?;
                // The answer freed a slot: the next waiting call takes it.
                self.write_ready();
                if self.inbox.frames.is_empty() {
                    // The last answer in hand: what the answers freed goes
                    // before the program runs on.
                    self.write_out();
                }
                return Ok(Some(reply));
            }
            self.note_end();
            if let Some(why) = self.ended()
                && let Some(reply) = self.calls.fail_one(&why)
            {
                return Ok(Some(reply));
            }
            if stoppable && self.stop.is_stopped() {
                return Ok(None);
            }
            if self.broken.is_none() && !self.out.bytes.is_empty() {
                // The batch goes before the wait. Writing it may have read
                // answers into the inbox (a link reads while it writes), and
                // those go before any wait: look again.
                self.write_out();
                continue;
            }
            let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if timeout == Some(Duration::ZERO) {
                if looked_late {
                    return Ok(None);
                }
                looked_late = true;
            }
            self.link.receive(&mut self.inbox, timeout);
        }
    }
}

impl<L: Link> Transport for Channel<L> {
    fn pace(&mut self, max_in_flight: usize) {
        self.calls.set_max_in_flight(max_in_flight);
        self.write_ready();
    }

    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError> {
        // A Request too large for a frame is refused before it takes an id.
        let id = self.calls.request(tool, args, deadline_ms)?;
        self.write_ready();
        Ok(id)
    }

    fn recv(&mut self) -> Result<Reply, ClientError> {
        loop {
            // Without a deadline only an answer or an error ends the wait.
            if let Some(reply) = self.next_reply(None, false)? {
                return Ok(reply);
            }
        }
    }

    fn recv_within(&mut self, timeout: Duration) -> Result<Option<Reply>, ClientError> {
        // A timeout past what an Instant can hold is no timeout, and
        // `Duration::MAX` is none without reading the clock (a host call in
        // the component).
        let deadline = if timeout == Duration::MAX {
            None
        } else {
            Instant::now().checked_add(timeout)
        };
        self.next_reply(deadline, true)
    }

    fn withdraw(&mut self, id: &str, tell_parent: bool) {
        if let Ok(wire::Withdrawal::OnTheWire(frame)) = self.calls.withdraw(id)
            && tell_parent
            && self.broken.is_none()
        {
            // In the batch, after the Request it withdraws.
            self.out.push(&frame, false);
            if self.out.bytes.len() >= OUT_BATCH {
                self.write_out();
            }
        }
    }

    fn flush(&mut self) {
        self.write_out();
    }

    fn reserve(&mut self, calls: usize) -> Result<(), std::collections::TryReserveError> {
        self.calls.try_reserve(calls)
    }

    fn waiting(&self) -> usize {
        self.calls.len().saturating_sub(self.calls.on_the_wire())
    }

    fn calls(&self) -> u64 {
        self.calls.calls().saturating_sub(self.out.unwritten)
    }

    fn bytes(&self) -> u64 {
        self.calls.bytes()
    }
}

/// What the reader thread of a [`ThreadLink`] hands over.
#[derive(Debug)]
enum Arrival {
    /// Bytes the parent sent.
    Bytes(Vec<u8>),
    /// Reading failed.
    Failed(io::Error),
    /// The parent closed its end.
    Closed,
    /// Nothing arrived: the run was stopped, and a wait should look again.
    Wake,
}

/// A [`Link`] for a native child: a thread reads the parent's stream into
/// memory for as long as it stays open, so a blocking write never keeps
/// answers unread.
///
/// The thread also watches for the parent cancelling: when the stream ends
/// it cancels the run's [`Stop`] at once, so a program that is computing,
/// not waiting on a call, is stopped by QuickJS's interrupt handler.
#[derive(Debug)]
pub struct ThreadLink<W> {
    writer: W,
    arrivals: std::sync::mpsc::Receiver<Arrival>,
}

impl<W: io::Write> ThreadLink<W> {
    /// Reads `reader` on a thread of its own and writes to `writer`.
    ///
    /// The thread ends when `reader` does, or when the link is dropped and
    /// its next read returns.
    pub fn new<R: io::Read + Send + 'static>(reader: R, writer: W) -> io::Result<Self> {
        ThreadLink::stopped_by(reader, writer, Stop::new())
    }

    /// [`ThreadLink::new`], cancelling `stop` when `reader` ends or fails,
    /// and woken by `stop` while it waits.
    pub fn stopped_by<R: io::Read + Send + 'static>(
        mut reader: R,
        writer: W,
        stop: Stop,
    ) -> io::Result<Self> {
        let (arrived, arrivals) = std::sync::mpsc::channel();
        let waker = arrived.clone();
        let stopping = stop.clone();
        std::thread::Builder::new()
            .name("call-channel reader".into())
            .spawn(move || {
                let mut buf = vec![0; READ_CHUNK];
                loop {
                    let arrival = match reader.read(&mut buf) {
                        Ok(0) => Arrival::Closed,
                        Ok(n) => Arrival::Bytes(buf[..n].to_vec()),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => Arrival::Failed(e),
                    };
                    let last = match &arrival {
                        Arrival::Closed => Some("the parent closed the call channel".to_owned()),
                        Arrival::Failed(e) => Some(format!("the call channel broke: {e}")),
                        _ => None,
                    };
                    // The end goes into the channel before the stop is
                    // told, so a wait the stop wakes finds it there.
                    let gone = arrived.send(arrival).is_err();
                    if let Some(why) = last {
                        stopping.cancel(why);
                        return;
                    }
                    if gone {
                        return;
                    }
                }
            })?;
        stop.on_stop(move || {
            let _ = waker.send(Arrival::Wake);
        });
        Ok(ThreadLink { writer, arrivals })
    }

    /// Moves one arrival into `inbox`.
    fn take(inbox: &mut Inbox, arrival: Arrival) {
        match arrival {
            Arrival::Bytes(bytes) => inbox.push(&bytes),
            Arrival::Failed(e) => inbox.broken(&e),
            Arrival::Closed => inbox.close(),
            Arrival::Wake => {}
        }
    }

    /// Moves everything that has already arrived into `inbox`.
    fn drain(&mut self, inbox: &mut Inbox) {
        while inbox.is_open() {
            match self.arrivals.try_recv() {
                Ok(arrival) => Self::take(inbox, arrival),
                Err(std::sync::mpsc::TryRecvError::Empty) => return,
                // Only if the reader thread died without a word.
                Err(std::sync::mpsc::TryRecvError::Disconnected) => inbox.close(),
            }
        }
    }
}

impl<W: io::Write> Link for ThreadLink<W> {
    fn send(&mut self, bytes: &[u8], inbox: &mut Inbox) -> io::Result<()> {
        // The reader thread keeps the parent's answers flowing meanwhile.
        self.writer.write_all(bytes)?;
        self.writer.flush()?;
        self.drain(inbox);
        Ok(())
    }

    fn receive(&mut self, inbox: &mut Inbox, timeout: Option<Duration>) {
        if !inbox.is_open() {
            return;
        }
        let arrival = match timeout {
            None => self.arrivals.recv().unwrap_or(Arrival::Closed),
            Some(timeout) => match self.arrivals.recv_timeout(timeout) {
                Ok(arrival) => arrival,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Arrival::Closed,
            },
        };
        Self::take(inbox, arrival);
        self.drain(inbox);
    }
}

#[cfg(target_arch = "wasm32")]
pub use wasi::WasiLink;

/// Blocks the child for `duration` with nothing to read: the event loop's
/// wait for a timer while no call is in flight. In the component, a
/// monotonic-clock pollable (a wait the host's wall clock ends); natively,
/// a plain sleep.
pub fn sleep(duration: Duration) {
    #[cfg(target_arch = "wasm32")]
    wasi::sleep(duration);
    #[cfg(not(target_arch = "wasm32"))]
    std::thread::sleep(duration);
}

#[cfg(target_arch = "wasm32")]
mod wasi {
    //! The component's call channel: its WASI stdin and stdout as
    //! preview-2 streams, written within `check-write`'s permit and read
    //! whenever `poll` says the parent sent something.
    //!
    //! A round trip is two host calls: the Request's `write` and the
    //! `blocking-read` of its answer. That rests on what the parent
    //! promises a child (the `child` world's doc):
    //! - a permit holds until it is written: `check-write` is asked again
    //!   only when what is left of the last one is too small for a frame;
    //! - what a write took goes to the parent without a `flush`;
    //! - while the child waits on its stdin (a `blocking-read`, or a `poll` of it),
    //!   the parent goes on taking what it wrote, so a read never keeps a
    //!   parent from the end of a Request it waits for.
    //!
    //! Each was a host call of every round trip before (`check-write`,
    //! `flush`, and a look at stdout's pollable before the read): 0.7 to
    //! 1.3 µs of a round trip of 7.4 to 8.1.

    use std::io;
    use std::time::Duration;

    use super::{Inbox, Link, READ_CHUNK};

    wit_bindgen::generate!({
        // Under src/ so that host/build.rs, which watches guest/src, rebuilds
        // the component when these change.
        path: "src/wit",
        world: "wasmwire:call-channel/call-channel",
        generate_all,
    });

    use wasi::cli::{stdin, stdout};
    use wasi::clocks::monotonic_clock;
    use wasi::io::poll::{Pollable, poll};
    use wasi::io::streams::{InputStream, OutputStream, StreamError};

    /// The call channel on the component's stdin and stdout.
    pub struct WasiLink {
        // The pollables are children of the streams: declared first, so
        // they are dropped first.
        readable: Pollable,
        writable: Pollable,
        input: InputStream,
        output: OutputStream,
        /// A Request was written and may not have reached the parent yet:
        /// the run's end waits for it (`deliver`).
        undelivered: bool,
        /// What is left of the last `check-write`'s permit.
        permit: u64,
    }

    impl std::fmt::Debug for WasiLink {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("WasiLink")
                .field("undelivered", &self.undelivered)
                .finish_non_exhaustive()
        }
    }

    fn io_error(e: StreamError) -> io::Error {
        match e {
            StreamError::Closed => io::ErrorKind::BrokenPipe.into(),
            StreamError::LastOperationFailed(e) => io::Error::other(e.to_debug_string()),
        }
    }

    impl WasiLink {
        /// The component's stdin and stdout.
        pub fn new() -> Self {
            let input = stdin::get_stdin();
            let output = stdout::get_stdout();
            WasiLink {
                readable: input.subscribe(),
                writable: output.subscribe(),
                input,
                output,
                undelivered: false,
                permit: 0,
            }
        }

        /// Puts what `read` returned into `inbox`; whether anything
        /// happened (bytes, or the end of the stream).
        fn arrived(inbox: &mut Inbox, read: Result<Vec<u8>, StreamError>) -> bool {
            match read {
                Ok(bytes) if bytes.is_empty() => false,
                Ok(bytes) => {
                    inbox.push(&bytes);
                    true
                }
                Err(StreamError::Closed) => {
                    inbox.close();
                    true
                }
                Err(e) => {
                    inbox.broken(&io_error(e));
                    true
                }
            }
        }

        /// Waits until the parent sent something or took what was written;
        /// reads what it sent.
        fn wait(&mut self, inbox: &mut Inbox) {
            if !inbox.is_open() {
                // A closed stream is always readable: only the write matters.
                self.writable.block();
                return;
            }
            let ready = poll(&[&self.readable, &self.writable]);
            if ready.contains(&0) {
                Self::arrived(inbox, self.input.read(READ_CHUNK as u64));
            }
        }
    }

    /// Blocks the component for `duration` on a monotonic-clock pollable:
    /// a wait the host sees, and ends with the wall clock.
    pub fn sleep(duration: Duration) {
        monotonic_clock::subscribe_duration(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX))
            .block();
    }

    impl Default for WasiLink {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Link for WasiLink {
        fn send(&mut self, mut bytes: &[u8], inbox: &mut Inbox) -> io::Result<()> {
            while !bytes.is_empty() {
                if self.permit < bytes.len() as u64 {
                    self.permit = self.output.check_write().map_err(io_error)?;
                }
                if self.permit == 0 {
                    self.wait(inbox);
                    continue;
                }
                let n = usize::try_from(self.permit)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                self.output.write(&bytes[..n]).map_err(io_error)?;
                self.permit -= n as u64;
                bytes = &bytes[n..];
            }
            // No flush, and no wait for the parent to take it: the parent
            // takes it while the child waits on its stdin (module doc).
            // Only the run's end waits for it (`deliver`).
            self.undelivered = true;
            Ok(())
        }

        fn deliver(&mut self) {
            // Skipping what the parent sends allocates nothing, so a run
            // that ended at its memory limit can still do it.
            let mut reading = true;
            while self.undelivered && !self.writable.ready() {
                if !reading {
                    self.writable.block();
                    break;
                }
                let ready = poll(&[&self.readable, &self.writable]);
                if ready.contains(&0) && self.input.skip(READ_CHUNK as u64).is_err() {
                    // The parent closed its stream: only the write is left.
                    reading = false;
                }
            }
            self.undelivered = false;
        }

        fn receive(&mut self, inbox: &mut Inbox, timeout: Option<Duration>) {
            let alarm = timeout.map(|t| {
                monotonic_clock::subscribe_duration(u64::try_from(t.as_nanos()).unwrap_or(u64::MAX))
            });
            while inbox.is_open() {
                if let Some(alarm) = &alarm {
                    // A timer is due at the alarm: wait for the parent or
                    // the alarm, whichever is first.
                    let ready = poll(&[&self.readable, alarm]);
                    if ready.contains(&0)
                        && Self::arrived(inbox, self.input.read(READ_CHUNK as u64))
                    {
                        return;
                    }
                    if ready.contains(&1) {
                        return;
                    }
                    continue;
                }
                // What was written reaches the parent meanwhile (module doc).
                let read = self.input.blocking_read(READ_CHUNK as u64);
                if Self::arrived(inbox, read) {
                    return;
                }
            }
        }
    }
}
