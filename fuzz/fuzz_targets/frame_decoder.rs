//! Arbitrary bytes, fed in arbitrary chunks, into `wire::FrameDecoder` and
//! `wire::FrameReader`.
//!
//! Input layout: byte 0 picks the maximum (< 0x80: `MAX_FRAME_BYTES`, else a
//! small maximum `b & 0x3f`, so that the refusal path is reached with short
//! inputs too), byte 1 seeds the chunk sizes, the rest is the stream.
//!
//! Checked, for every way of feeding the stream:
//! - nothing panics, and the decoder makes progress on every call;
//! - the outcome (payloads, then a clean end or the first error) equals that
//!   of a ten-line reference model of the framing rules (docs/protocol.md §1);
//! - every payload is non-empty and at most the maximum;
//! - after an error the decoder stays failed and consumes nothing;
//! - no single allocation is larger than about twice the bytes that arrived
//!   (plus the reader's 64 KiB scratch): a prefix that promises 16 MiB must
//!   not reserve 16 MiB.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;
use wire::{FrameDecoder, FrameError, FrameReader, MAX_FRAME_BYTES};

/// The system allocator, recording the largest single request while `TRACK` is on.
struct Tracking;

static TRACK: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if TRACK.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if TRACK.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if TRACK.load(Ordering::Relaxed) {
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Tracking = Tracking;

/// How a stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    Clean,
    TooLarge { len: u64 },
    Empty,
    TruncatedPrefix { got: usize },
    TruncatedPayload { got: usize, want: usize },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    frames: Vec<Vec<u8>>,
    end: End,
}

fn end_of(err: FrameError, max: usize) -> End {
    match err {
        FrameError::TooLarge { len, max: m } => {
            assert_eq!(m, max, "TooLarge names the maximum in force");
            End::TooLarge { len }
        }
        FrameError::Empty => End::Empty,
        FrameError::TruncatedPrefix { got } => End::TruncatedPrefix { got },
        FrameError::TruncatedPayload { got, want } => End::TruncatedPayload { got, want },
        FrameError::Io(e) => panic!("i/o error from an in-memory stream: {e}"),
        FrameError::Failed => panic!("Failed reported as the first error"),
        FrameError::Unheld { len, .. } => panic!("a frame of {len} unheld by a plain decoder"),
    }
}

/// The framing rules, written as plainly as possible.
fn reference(mut rest: &[u8], max: usize) -> Outcome {
    let mut frames = Vec::new();
    let end = loop {
        if rest.is_empty() {
            break End::Clean;
        }
        if rest.len() < 4 {
            break End::TruncatedPrefix { got: rest.len() };
        }
        let n = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let body = &rest[4..];
        if n == 0 {
            break End::Empty;
        }
        if n as u64 > max as u64 {
            break End::TooLarge { len: n.into() };
        }
        let n = n as usize;
        if body.len() < n {
            break End::TruncatedPayload {
                got: body.len(),
                want: n,
            };
        }
        frames.push(body[..n].to_vec());
        rest = &body[n..];
    };
    Outcome { frames, end }
}

/// Chunk sizes 1..=k from a tiny generator, so both tiny and larger pieces occur.
fn chunk_sizes(seed: u8) -> impl Iterator<Item = usize> {
    let mut x = u32::from(seed) | 0x100;
    let k = 1 + usize::from(seed % 37);
    std::iter::from_fn(move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        Some(1 + (x as usize) % k)
    })
}

fn split(mut stream: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut sizes = chunk_sizes(seed);
    while !stream.is_empty() {
        let n = sizes.next().unwrap_or(1).min(stream.len());
        out.push(&stream[..n]);
        stream = &stream[n..];
    }
    out
}

fn feed_all(chunks: &[&[u8]], max: usize) -> Outcome {
    let mut dec = FrameDecoder::with_max(max);
    let mut frames = Vec::new();
    for chunk in chunks {
        let mut rest: &[u8] = chunk;
        while !rest.is_empty() {
            let (used, done) = dec.feed(rest);
            assert!(used <= rest.len(), "consumed {used} of {} bytes", rest.len());
            rest = &rest[used..];
            match done {
                Some(Ok(payload)) => {
                    assert!(!payload.is_empty(), "an empty payload was handed out");
                    assert!(payload.len() <= max && payload.len() <= MAX_FRAME_BYTES);
                    frames.push(payload);
                }
                Some(Err(err)) => {
                    let end = end_of(err, max);
                    // The first error is final.
                    let (used, again) = dec.feed(b"\x00\x00\x00\x02{}");
                    assert_eq!(used, 0, "a failed decoder consumed input");
                    assert!(matches!(again, Some(Err(FrameError::Failed))), "{again:?}");
                    assert!(matches!(dec.finish(), Err(FrameError::Failed)));
                    return Outcome { frames, end };
                }
                None => assert!(rest.is_empty(), "feed stopped early without a result"),
            }
        }
    }
    let end = match dec.finish() {
        Ok(()) => End::Clean,
        Err(err) => end_of(err, max),
    };
    Outcome { frames, end }
}

/// A reader handing out the chunks one `read` at a time.
struct Chunks<'a> {
    chunks: Vec<&'a [u8]>,
    next: usize,
    offset: usize,
}

impl Read for Chunks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(chunk) = self.chunks.get(self.next) else {
            return Ok(0);
        };
        let n = (chunk.len() - self.offset).min(buf.len());
        buf[..n].copy_from_slice(&chunk[self.offset..self.offset + n]);
        self.offset += n;
        if self.offset == chunk.len() {
            self.next += 1;
            self.offset = 0;
        }
        Ok(n)
    }
}

fn read_all(chunks: Vec<&[u8]>, max: usize) -> Outcome {
    let mut reader = FrameReader::with_decoder(
        Chunks {
            chunks,
            next: 0,
            offset: 0,
        },
        FrameDecoder::with_max(max),
    );
    let mut frames = Vec::new();
    loop {
        match reader.read_frame() {
            Ok(Some(payload)) => {
                assert!(!payload.is_empty() && payload.len() <= max);
                frames.push(payload);
            }
            Ok(None) => {
                return Outcome {
                    frames,
                    end: End::Clean,
                };
            }
            Err(err) => {
                let end = end_of(err, max);
                assert!(matches!(reader.read_frame(), Err(FrameError::Failed)));
                return Outcome { frames, end };
            }
        }
    }
}

/// Bytes one allocation may take: twice what arrived (a Vec doubling), the
/// reader's 64 KiB scratch, and some slack for the outcome vectors.
fn allocation_bound(len: usize) -> usize {
    2 * len + 64 * 1024 + 4096
}

fuzz_target!(|data: &[u8]| {
    let [sel, seed, stream @ ..] = data else {
        return;
    };
    let max = if *sel < 0x80 {
        MAX_FRAME_BYTES
    } else {
        usize::from(sel & 0x3f)
    };
    let want = reference(stream, max);

    LARGEST.store(0, Ordering::Relaxed);
    TRACK.store(true, Ordering::Relaxed);
    let whole = feed_all(&[stream], max);
    let chunked = feed_all(&split(stream, *seed), max);
    let bytewise = feed_all(&split(stream, 0), max);
    let read = read_all(split(stream, seed.wrapping_add(1)), max);
    TRACK.store(false, Ordering::Relaxed);
    let largest = LARGEST.load(Ordering::Relaxed);

    assert_eq!(whole, want, "fed whole");
    assert_eq!(chunked, want, "fed in chunks (seed {seed})");
    assert_eq!(bytewise, want, "fed byte by byte");
    assert_eq!(read, want, "through FrameReader");
    assert!(
        largest <= allocation_bound(stream.len()),
        "an allocation of {largest} bytes for a stream of {} bytes",
        stream.len()
    );
});
