//! Framing: a 4-byte big-endian length, then that many bytes of JSON.
//!
//! [`FrameDecoder`] is the one state machine (`Head` -> `Data`); the blocking
//! [`FrameReader`] and the async [`crate::AsyncFrameReader`] only feed it
//! bytes. The length is checked against [`MAX_FRAME_BYTES`] before a single
//! payload byte is reserved, and the payload buffer grows only as bytes
//! actually arrive, so a prefix that promises 16 MiB and then stalls costs
//! nothing. The first error is final: the decoder does not resynchronise
//! (but for [`FrameError::Unheld`], a whole frame read past, which is not a
//! framing error).

use std::io::{self, Read, Write};

use crate::MAX_FRAME_BYTES;

/// Bytes in a frame's length prefix.
pub const PREFIX_BYTES: usize = 4;

/// A framing failure. Any of them ends the stream, but
/// [`FrameError::Unheld`].
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The prefix announced (or the writer was given) more than the maximum.
    #[error("frame of {len} bytes is over the maximum of {max} bytes")]
    TooLarge {
        /// The announced or attempted length.
        len: u64,
        /// The maximum in force.
        max: usize,
    },
    /// A zero-length frame; a frame carries exactly one JSON object.
    #[error("zero-length frame")]
    Empty,
    /// The stream ended inside a length prefix.
    #[error("stream ended inside a length prefix ({got} of 4 bytes)")]
    TruncatedPrefix {
        /// Prefix bytes received.
        got: usize,
    },
    /// The stream ended inside a payload.
    #[error("stream ended inside a frame ({got} of {want} bytes)")]
    TruncatedPayload {
        /// Payload bytes received.
        got: usize,
        /// Payload bytes announced.
        want: usize,
    },
    /// Reading or writing the underlying stream failed.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// An earlier error already ended this stream.
    #[error("the stream already failed; nothing after an error is read")]
    Failed,
    /// A frame there was no memory to hold, read past whole: the only
    /// error after which the stream goes on, with the next frame. Only a
    /// decoder [`reserving_whole`](FrameDecoder::reserving_whole) frames
    /// gives it, when that reservation fails.
    #[error("a frame of {len} bytes could not be held: no memory left for it")]
    Unheld {
        /// The frame's length.
        len: usize,
        /// Its first bytes (up to [`UNHELD_HEAD`]), to tell what it was.
        head: Vec<u8>,
    },
}

/// Bytes kept of a frame there was no memory to hold
/// ([`FrameError::Unheld`]): enough for a Response's `id`, which a parent
/// writes before its value.
pub const UNHELD_HEAD: usize = 1024;

#[derive(Debug)]
enum State {
    /// Collecting the 4-byte prefix.
    Head {
        prefix: [u8; PREFIX_BYTES],
        got: usize,
    },
    /// Collecting `want` payload bytes.
    Data { payload: Vec<u8>, want: usize },
    /// Reading past a frame of `want` bytes there was no memory for,
    /// keeping its first bytes; `seen` of them have come.
    Skip {
        head: Vec<u8>,
        want: usize,
        seen: usize,
    },
    /// An error ended the stream.
    Failed,
}

/// The frame decoder: push bytes in, take whole payloads out.
#[derive(Debug)]
pub struct FrameDecoder {
    state: State,
    max: usize,
    /// Reserve a frame's whole length when its prefix arrives.
    whole: bool,
    /// The largest frame a reservation is tried for (tests only lower it).
    hold_at_most: usize,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameDecoder {
    /// A decoder enforcing [`MAX_FRAME_BYTES`].
    pub fn new() -> Self {
        Self::with_max(MAX_FRAME_BYTES)
    }

    /// A decoder enforcing a smaller (or larger) maximum payload.
    pub fn with_max(max: usize) -> Self {
        FrameDecoder {
            state: State::Head {
                prefix: [0; PREFIX_BYTES],
                got: 0,
            },
            max,
            whole: false,
            hold_at_most: usize::MAX,
        }
    }

    /// A decoder that reserves each frame's whole length as soon as its
    /// prefix says it, when it can (else it grows as the bytes arrive):
    /// for a reader that trusts its writer's lengths, a child reading its
    /// parent. A frame then needs its own length of memory and no more,
    /// where growing by doubling also held the half-size copy it grew
    /// from (a 15 MB answer needed 22 MB at once).
    ///
    /// When even that reservation fails, the frame is read past whole and
    /// handed out as [`FrameError::Unheld`] with its first bytes, and the
    /// stream goes on: a child short of memory for one answer fails that
    /// call, not the run.
    pub fn reserving_whole(mut self) -> Self {
        self.whole = true;
        self
    }

    /// Treats a reservation for a frame over `bytes` as failed, as a child
    /// out of memory sees it.
    #[cfg(test)]
    fn holding_at_most(mut self, bytes: usize) -> Self {
        self.hold_at_most = bytes;
        self
    }

    /// Consumes bytes from `input` up to the end of at most one frame.
    ///
    /// Returns how many bytes were consumed and, when a frame completed (or
    /// failed), its payload (or the error). Bytes after a completed frame are
    /// left unconsumed for the next call.
    pub fn feed(&mut self, input: &[u8]) -> (usize, Option<Result<Vec<u8>, FrameError>>) {
        let mut used = 0;
        loop {
            match &mut self.state {
                State::Failed => return (used, Some(Err(FrameError::Failed))),
                State::Head { prefix, got } => {
                    let take = (PREFIX_BYTES - *got).min(input.len() - used);
                    prefix[*got..*got + take].copy_from_slice(&input[used..used + take]);
                    *got += take;
                    used += take;
                    if *got < PREFIX_BYTES {
                        return (used, None);
                    }
                    let len = u32::from_be_bytes(*prefix);
                    // Checked before anything is reserved.
                    let want = match usize::try_from(len) {
                        Ok(0) => return (used, Some(Err(self.fail(FrameError::Empty)))),
                        Ok(want) if want <= self.max => want,
                        _ => {
                            let err = FrameError::TooLarge {
                                len: len.into(),
                                max: self.max,
                            };
                            return (used, Some(Err(self.fail(err))));
                        }
                    };
                    let mut payload = Vec::new();
                    // A decoder reserving whole frames skips one it cannot
                    // hold; a plain one grows the payload as it arrives.
                    let held = !self.whole
                        || (want <= self.hold_at_most && payload.try_reserve_exact(want).is_ok());
                    self.state = if held {
                        State::Data { payload, want }
                    } else {
                        // With no room even for the head, none is kept
                        // (and no id found: the run is out of memory).
                        let mut head = Vec::new();
                        let _ = head.try_reserve_exact(want.min(UNHELD_HEAD));
                        State::Skip {
                            head,
                            want,
                            seen: 0,
                        }
                    };
                }
                State::Skip { head, want, seen } => {
                    let take = (*want - *seen).min(input.len() - used);
                    let keep = take.min(head.capacity() - head.len());
                    head.extend_from_slice(&input[used..used + keep]);
                    *seen += take;
                    used += take;
                    if *seen < *want {
                        return (used, None);
                    }
                    let len = *want;
                    let head = std::mem::take(head);
                    self.state = State::Head {
                        prefix: [0; PREFIX_BYTES],
                        got: 0,
                    };
                    return (used, Some(Err(FrameError::Unheld { len, head })));
                }
                State::Data { payload, want } => {
                    let take = (*want - payload.len()).min(input.len() - used);
                    // Grows only by what has arrived, doubling as a Vec
                    // does but never past the frame's length: left to the
                    // Vec, a 15 MB frame held 16 MiB, and one just past a
                    // power of two nearly twice its length.
                    if payload.capacity() - payload.len() < take {
                        let room = payload
                            .capacity()
                            .saturating_mul(2)
                            .max(payload.len() + take)
                            .min(*want);
                        payload.reserve_exact(room - payload.len());
                    }
                    payload.extend_from_slice(&input[used..used + take]);
                    used += take;
                    if payload.len() < *want {
                        return (used, None);
                    }
                    let done = std::mem::replace(
                        &mut self.state,
                        State::Head {
                            prefix: [0; PREFIX_BYTES],
                            got: 0,
                        },
                    );
                    let State::Data { payload, .. } = done else {
                        unreachable!("state was Data")
                    };
                    return (used, Some(Ok(payload)));
                }
            }
        }
    }

    /// Tells the decoder the stream ended: `Ok(())` at a frame boundary (a
    /// clean close), a truncation error inside a frame.
    pub fn finish(&mut self) -> Result<(), FrameError> {
        let err = match &self.state {
            State::Head { got: 0, .. } => return Ok(()),
            State::Head { got, .. } => FrameError::TruncatedPrefix { got: *got },
            State::Data { payload, want } => FrameError::TruncatedPayload {
                got: payload.len(),
                want: *want,
            },
            State::Skip { want, seen, .. } => FrameError::TruncatedPayload {
                got: *seen,
                want: *want,
            },
            State::Failed => FrameError::Failed,
        };
        Err(self.fail(err))
    }

    fn fail(&mut self, err: FrameError) -> FrameError {
        self.state = State::Failed;
        err
    }
}

/// How much room to make for the next read from a stream: [`Self::FIRST`]
/// (4 KiB) at first, doubled each time a read fills it, up to
/// [`Self::MOST`] (64 KiB, the most wasmtime-wasi hands a guest at once).
///
/// Most frames (a Start, a Result, a call) are a few hundred bytes. A fixed
/// 64 KiB per reader cost every short execution: in the wasm guest, 16
/// pages of its memory zeroed, faulted in and reset afterwards; in the
/// parent, a fresh allocation at the top of the heap that glibc gave back
/// to the kernel when it was freed (two `brk` calls, and the page faults of
/// the next one's first bytes). Used by [`FrameReader`], the async frame
/// reader and the host's call channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRoom(usize);

impl ReadRoom {
    /// The room the first read gets.
    pub const FIRST: usize = 4 * 1024;
    /// The most room a read gets.
    pub const MOST: usize = 64 * 1024;

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

/// Reads frames from a blocking byte stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    decoder: FrameDecoder,
    /// Scratch space, zeroed, as large as `room` says.
    buf: Vec<u8>,
    room: ReadRoom,
    /// `buf[pos..filled]` is read but not yet fed to the decoder.
    pos: usize,
    filled: usize,
}

impl<R: Read> FrameReader<R> {
    /// Reads frames from `inner`, enforcing [`MAX_FRAME_BYTES`].
    pub fn new(inner: R) -> Self {
        Self::with_decoder(inner, FrameDecoder::new())
    }

    /// Reads frames from `inner` with a custom decoder.
    pub fn with_decoder(inner: R, decoder: FrameDecoder) -> Self {
        FrameReader {
            inner,
            decoder,
            buf: Vec::new(),
            room: ReadRoom::new(),
            pos: 0,
            filled: 0,
        }
    }

    /// The next payload, or `None` on a clean close at a frame boundary.
    pub fn read_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        loop {
            if self.pos < self.filled {
                let (used, done) = self.decoder.feed(&self.buf[self.pos..self.filled]);
                self.pos += used;
                if let Some(done) = done {
                    return done.map(Some);
                }
            }
            // Everything read before has been fed to the decoder by now.
            if self.buf.len() < self.room.size() {
                self.buf.resize(self.room.size(), 0);
            }
            let n = loop {
                match self.inner.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        self.decoder.fail(FrameError::Failed);
                        return Err(e.into());
                    }
                }
            };
            self.room.read(n);
            self.filled = n;
            self.pos = 0;
            if n == 0 {
                return self.decoder.finish().map(|()| None);
            }
        }
    }

    /// Bytes read from the stream and not yet handed out as frames.
    pub fn buffered(&self) -> usize {
        self.filled - self.pos
    }

    /// The underlying reader.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }
}

/// Prepends the length prefix to `payload`'s place in `frame`.
///
/// `frame` must start with [`PREFIX_BYTES`] placeholder bytes followed by the
/// payload; this is how [`crate::encode`] builds frames without a copy.
pub(crate) fn seal(frame: &mut [u8], max: usize) -> Result<(), FrameError> {
    let len = frame.len() - PREFIX_BYTES;
    if len > max {
        return Err(FrameError::TooLarge {
            len: len as u64,
            max,
        });
    }
    if len == 0 {
        return Err(FrameError::Empty);
    }
    // len <= max <= u32::MAX is checked above for any sane max.
    let prefix = u32::try_from(len).map_err(|_| FrameError::TooLarge {
        len: len as u64,
        max,
    })?;
    frame[..PREFIX_BYTES].copy_from_slice(&prefix.to_be_bytes());
    Ok(())
}

/// Frames `payload` and writes it to a blocking stream, then flushes.
/// A payload over [`MAX_FRAME_BYTES`] is refused before anything is written.
pub fn write_frame<W: Write>(w: &mut W, payload: &[u8]) -> Result<(), FrameError> {
    let mut frame = Vec::with_capacity(PREFIX_BYTES + payload.len());
    frame.extend_from_slice(&[0; PREFIX_BYTES]);
    frame.extend_from_slice(payload);
    seal(&mut frame, MAX_FRAME_BYTES)?;
    w.write_all(&frame)?;
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn a_reader_starts_small_and_grows_only_for_large_reads() {
        // Small frames: the first scratch is never outgrown.
        let mut small = framed(b"{\"v\":1}");
        small.extend(framed(&[b'x'; 3000]));
        let mut r = FrameReader::new(&small[..]);
        assert_eq!(r.read_frame().unwrap().unwrap(), b"{\"v\":1}");
        assert_eq!(r.read_frame().unwrap().unwrap().len(), 3000);
        assert_eq!(r.read_frame().unwrap(), None);
        assert_eq!(r.buf.len(), ReadRoom::FIRST);
        // A frame of 200 KiB arrives whole, through reads that each fill
        // the scratch, which doubles up to its most and no further.
        let big: Vec<u8> = (0..200 << 10).map(|i| (i % 251) as u8).collect();
        let stream = framed(&big);
        let mut r = FrameReader::new(&stream[..]);
        assert_eq!(r.read_frame().unwrap().unwrap(), big);
        assert_eq!(r.buf.len(), ReadRoom::MOST);
    }

    #[test]
    fn a_frame_fed_in_pieces_holds_no_more_than_its_length() {
        // 64 KiB at a time, as a child reads its stdin: the payload doubles
        // as it grows but stops at the frame's length.
        for len in [1, 65_536, 65_537, 1 << 20, (1 << 20) + 1, 3_000_001] {
            let stream = framed(&vec![b'x'; len]);
            let mut decoder = FrameDecoder::new();
            let mut done = None;
            for piece in stream.chunks(64 << 10) {
                let (used, frame) = decoder.feed(piece);
                assert_eq!(used, piece.len());
                if frame.is_some() {
                    done = frame;
                }
            }
            let frame = done.expect("a whole frame").expect("a good frame");
            assert_eq!((frame.len(), frame.capacity()), (len, len));
        }
    }

    #[test]
    fn a_decoder_reserving_whole_frames_takes_a_frames_length_at_its_prefix() {
        let mut decoder = FrameDecoder::new().reserving_whole();
        assert!(matches!(
            decoder.feed(&1_000_000u32.to_be_bytes()),
            (4, None)
        ));
        let State::Data { payload, .. } = &decoder.state else {
            panic!("collecting the payload");
        };
        assert_eq!((payload.len(), payload.capacity()), (0, 1_000_000));
        let mut plain = FrameDecoder::new();
        plain.feed(&1_000_000u32.to_be_bytes());
        let State::Data { payload, .. } = &plain.state else {
            panic!("collecting the payload");
        };
        assert_eq!(payload.capacity(), 0);
    }

    #[test]
    fn a_frame_there_is_no_memory_for_is_read_past_and_the_stream_goes_on() {
        let big = vec![b'x'; 5000];
        let mut stream = Vec::new();
        for payload in [&b"first"[..], &big, b"after"] {
            stream.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            stream.extend_from_slice(payload);
        }
        // In pieces of every size from one byte: the same frames.
        for piece in [1, 3, 4, 5, 1000, stream.len()] {
            let mut decoder = FrameDecoder::new().reserving_whole().holding_at_most(4096);
            let mut out = Vec::new();
            for bytes in stream.chunks(piece) {
                let mut at = 0;
                while at < bytes.len() {
                    let (used, done) = decoder.feed(&bytes[at..]);
                    at += used;
                    out.extend(done);
                }
            }
            assert!(decoder.finish().is_ok(), "pieces of {piece}");
            let [Ok(first), Err(FrameError::Unheld { len, head }), Ok(after)] = &out[..] else {
                panic!("pieces of {piece}: {out:?}");
            };
            assert_eq!((&first[..], &after[..]), (&b"first"[..], &b"after"[..]));
            assert_eq!((*len, &head[..]), (5000, &big[..UNHELD_HEAD]));
            assert!(head.capacity() <= UNHELD_HEAD);
        }
        // Cut inside it: the stream ended inside a frame, as ever.
        let mut decoder = FrameDecoder::new().reserving_whole().holding_at_most(10);
        decoder.feed(&stream[9..9 + 4 + 100]);
        assert!(matches!(
            decoder.finish(),
            Err(FrameError::TruncatedPayload {
                got: 100,
                want: 5000
            })
        ));
        // A decoder that does not reserve frames whole never skips one.
        let mut plain = FrameDecoder::new().holding_at_most(10);
        let (_, done) = plain.feed(&stream[9..]);
        assert_eq!(done.expect("a frame").expect("held").len(), 5000);
    }

    fn read_all(bytes: &[u8]) -> (Vec<Vec<u8>>, Option<FrameError>) {
        let mut r = FrameReader::new(bytes);
        let mut out = Vec::new();
        loop {
            match r.read_frame() {
                Ok(Some(f)) => out.push(f),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn eof_at_a_boundary_is_a_clean_close() {
        let mut bytes = framed(b"{}");
        bytes.extend(framed(b"{\"a\":1}"));
        let (frames, err) = read_all(&bytes);
        assert_eq!(frames, vec![b"{}".to_vec(), b"{\"a\":1}".to_vec()]);
        assert!(err.is_none());
        assert!(read_all(&[]).1.is_none());
    }

    #[test]
    fn truncated_prefix_is_an_error() {
        let (frames, err) = read_all(&[0, 0]);
        assert!(frames.is_empty());
        assert!(matches!(err, Some(FrameError::TruncatedPrefix { got: 2 })));
    }

    #[test]
    fn truncated_payload_is_an_error() {
        let bytes = framed(b"{\"abc\":1}");
        let (_, err) = read_all(&bytes[..bytes.len() - 1]);
        assert!(matches!(
            err,
            Some(FrameError::TruncatedPayload { got: 8, want: 9 })
        ));
    }

    #[test]
    fn zero_length_frame_is_refused() {
        let (_, err) = read_all(&[0, 0, 0, 0]);
        assert!(matches!(err, Some(FrameError::Empty)));
    }

    #[test]
    fn oversized_prefixes_are_refused_before_allocation() {
        for prefix in [[0xFF; 4], [0x80, 0, 0, 0], *b"GET ", [0x01, 0, 0, 1]] {
            let mut d = FrameDecoder::new();
            let (used, done) = d.feed(&prefix);
            assert_eq!(used, 4);
            match done {
                Some(Err(FrameError::TooLarge { len, max })) => {
                    assert_eq!(len, u32::from_be_bytes(prefix) as u64);
                    assert_eq!(max, MAX_FRAME_BYTES);
                }
                other => panic!("{prefix:?}: {other:?}"),
            }
            // Nothing was reserved for the payload.
            assert!(matches!(d.state, State::Failed));
        }
    }

    #[test]
    fn the_first_error_is_final() {
        let mut d = FrameDecoder::new();
        assert!(matches!(
            d.feed(&[0, 0, 0, 0]).1,
            Some(Err(FrameError::Empty))
        ));
        let (used, done) = d.feed(&framed(b"{}"));
        assert_eq!(used, 0);
        assert!(matches!(done, Some(Err(FrameError::Failed))));
        assert!(matches!(d.finish(), Err(FrameError::Failed)));
    }

    #[test]
    fn a_promised_frame_reserves_only_what_arrived() {
        let mut d = FrameDecoder::new();
        let (_, done) = d.feed(&(MAX_FRAME_BYTES as u32).to_be_bytes());
        assert!(done.is_none());
        let (_, done) = d.feed(b"{");
        assert!(done.is_none());
        match &d.state {
            State::Data { payload, want } => {
                assert_eq!(*want, MAX_FRAME_BYTES);
                assert!(payload.capacity() < 1024, "reserved {}", payload.capacity());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn writer_refuses_a_frame_over_the_maximum() {
        let mut out = Vec::new();
        let big = vec![b' '; MAX_FRAME_BYTES + 1];
        let err = write_frame(&mut out, &big).unwrap_err();
        assert!(
            matches!(err, FrameError::TooLarge { len, .. } if len == MAX_FRAME_BYTES as u64 + 1)
        );
        assert!(out.is_empty(), "nothing may be written");
    }

    #[test]
    fn a_frame_of_exactly_the_maximum_passes_both_ways() {
        let mut payload = vec![b' '; MAX_FRAME_BYTES];
        payload[0] = b'{';
        payload[MAX_FRAME_BYTES - 1] = b'}';
        let mut out = Vec::new();
        write_frame(&mut out, &payload).unwrap();
        assert_eq!(out.len(), MAX_FRAME_BYTES + 4);
        let (frames, err) = read_all(&out);
        assert!(err.is_none());
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].len(), MAX_FRAME_BYTES);
    }

    #[test]
    fn one_over_the_maximum_is_refused_on_read() {
        let (_, err) = read_all(&((MAX_FRAME_BYTES as u32) + 1).to_be_bytes());
        assert!(
            matches!(err, Some(FrameError::TooLarge { len, .. }) if len == MAX_FRAME_BYTES as u64 + 1)
        );
    }

    /// A reader that first fails once with `kind`, then hands out `bytes`.
    struct FailsOnce<'a> {
        kind: Option<io::ErrorKind>,
        bytes: &'a [u8],
    }

    impl Read for FailsOnce<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if let Some(kind) = self.kind.take() {
                return Err(kind.into());
            }
            self.bytes.read(buf)
        }
    }

    #[test]
    fn an_interrupted_read_is_retried() {
        let bytes = framed(b"{}");
        let mut r = FrameReader::new(FailsOnce {
            kind: Some(io::ErrorKind::Interrupted),
            bytes: &bytes,
        });
        assert_eq!(r.read_frame().unwrap(), Some(b"{}".to_vec()));
        assert!(r.read_frame().unwrap().is_none());
    }

    #[test]
    fn any_other_read_error_ends_the_stream() {
        let bytes = framed(b"{}");
        let mut r = FrameReader::new(FailsOnce {
            kind: Some(io::ErrorKind::ConnectionReset),
            bytes: &bytes,
        });
        match r.read_frame() {
            Err(FrameError::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset),
            other => panic!("{other:?}"),
        }
        // The bytes that could now be read are not: the stream is over.
        assert!(matches!(r.read_frame(), Err(FrameError::Failed)));
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        /// A reader that hands out the bytes in the given chunk sizes.
        struct Chunked<'a> {
            bytes: &'a [u8],
            sizes: Vec<usize>,
            i: usize,
        }

        impl Read for Chunked<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let size = self.sizes.get(self.i).copied().unwrap_or(1).max(1);
                self.i += 1;
                let n = size.min(buf.len()).min(self.bytes.len());
                buf[..n].copy_from_slice(&self.bytes[..n]);
                self.bytes = &self.bytes[n..];
                Ok(n)
            }
        }

        proptest! {
            #[test]
            fn any_split_of_a_valid_stream_yields_the_same_frames(
                payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..300), 0..8),
                sizes in proptest::collection::vec(1usize..40, 0..200),
            ) {
                let bytes: Vec<u8> = payloads.iter().flat_map(|p| framed(p)).collect();
                let mut r = FrameReader::new(Chunked { bytes: &bytes, sizes, i: 0 });
                let mut got = Vec::new();
                while let Some(f) = r.read_frame().unwrap() {
                    got.push(f);
                }
                prop_assert_eq!(got, payloads);
            }
        }

        #[test]
        fn a_valid_stream_split_at_every_offset_decodes_the_same() {
            let payloads: Vec<Vec<u8>> =
                vec![b"{\"a\":1}".to_vec(), b"{}".to_vec(), vec![b'x'; 70_000]];
            let bytes: Vec<u8> = payloads.iter().flat_map(|p| framed(p)).collect();
            for cut in 0..=bytes.len().min(300) {
                let mut d = FrameDecoder::new();
                let mut got = Vec::new();
                for part in [&bytes[..cut], &bytes[cut..]] {
                    let mut rest = part;
                    while !rest.is_empty() {
                        let (used, done) = d.feed(rest);
                        rest = &rest[used..];
                        if let Some(done) = done {
                            got.push(done.unwrap());
                        }
                    }
                }
                d.finish().unwrap();
                assert_eq!(got, payloads, "cut at {cut}");
            }
            // One byte at a time.
            let mut r = FrameReader::new(Chunked {
                bytes: &bytes,
                sizes: vec![],
                i: 0,
            });
            let mut got = Vec::new();
            while let Some(f) = r.read_frame().unwrap() {
                got.push(f);
            }
            assert_eq!(got, payloads);
        }
    }
}
