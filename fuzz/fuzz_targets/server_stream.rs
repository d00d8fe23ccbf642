//! Arbitrary bytes as the child's side of the call channel, into
//! `wire::Server` with a trivial handler, on a current-thread tokio runtime
//! whose clock is paused (deadlines, sleeps and the time bound cost no real
//! time, and a hang shows up deterministically).
//!
//! Input layout: four bytes of options, then the stream.
//! - byte 0: max in flight = 1 + (b & 3); bit 2 sets a host call deadline of
//!   1 + (b >> 3) ms.
//! - byte 1: max_calls = b % 8 (0 = unlimited); max_bytes = 3 * (b >> 3).
//! - byte 2: the reader hands out at most 1 + b % 64 bytes per read.
//! - byte 3: bit 7 set: cancel after (b & 0x7f) ms; else bit 6 set: drain
//!   (`Server::drain_on`, as a host does when the Result comes) after
//!   (b & 0x3f) ms and cancel after an hour; else cancel after an hour.
//!
//! The handler answers by tool name: `sleep` sleeps 10 ms per byte of args,
//! `hang` never returns, `err` fails with a plain error, `fail` with a
//! `ToolFailure` of a kind picked by the args' length, anything else echoes
//! its args.
//!
//! Checked: nothing panics; `serve` returns within two hours of virtual time
//! (it is cancelled after at most one); every byte it writes is a valid
//! Response frame, each failed one carrying a kind, each answering an id the
//! child sent; the tally keeps to the quotas; a stream with a framing or
//! decoding error or an empty id ends in a protocol error; a protocol error
//! is one the stream really contains; a clean close answers every
//! request exactly once with the tally equal to the bytes sent; and a drain
//! reads the whole stream: it ends `Drained` only on a well-formed one, and
//! a broken one is still reported.
#![no_main]

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio_util::sync::CancellationToken;
use wire::{
    Call, Ending, FailureKind, FrameDecoder, HandlerError, ProtocolError, Request, Response, Server, ServerOptions,
    ToolFailure, decode,
};

/// Hands out the stream at most `chunk` bytes per read.
struct Chunked<'a> {
    rest: &'a [u8],
    chunk: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let n = self.chunk.min(self.rest.len()).min(buf.remaining());
        buf.put_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Poll::Ready(Ok(()))
    }
}

async fn handle(call: Call) -> Result<String, HandlerError> {
    match call.tool.as_str() {
        "sleep" => {
            tokio::time::sleep(Duration::from_millis(10 * call.args.len() as u64)).await;
            Ok(call.args)
        }
        "hang" => std::future::pending().await,
        "err" => Err(format!("plain error: {}", call.args).into()),
        "fail" => {
            let kind = FailureKind::ALL[call.args.len() % FailureKind::ALL.len()];
            Err(Box::new(ToolFailure::new(kind, call.args)))
        }
        _ => Ok(call.args),
    }
}

/// What the stream holds, read independently of the server.
struct Expected {
    /// Every Request before the first bad frame, in order.
    requests: Vec<Request>,
    /// The stream has a framing or decoding error or an empty id.
    broken: bool,
}

fn expected(stream: &[u8]) -> Expected {
    let mut dec = FrameDecoder::new();
    let mut rest = stream;
    let mut requests = Vec::new();
    loop {
        let (used, done) = dec.feed(rest);
        rest = &rest[used..];
        match done {
            Some(Ok(payload)) => match decode::<Request>(&payload) {
                Ok(r) if !r.id.is_empty() => requests.push(r),
                _ => return Expected { requests, broken: true },
            },
            Some(Err(_)) => return Expected { requests, broken: true },
            None => {
                let broken = dec.finish().is_err();
                return Expected { requests, broken };
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [b0, b1, b2, b3, stream @ ..] = data else {
        return;
    };
    let options = ServerOptions {
        max_in_flight: 1 + usize::from(b0 & 3),
        max_call_deadline: (b0 & 4 != 0).then(|| Duration::from_millis(1 + u64::from(b0 >> 3))),
        max_calls: u64::from(b1 % 8),
        max_bytes: 3 * u64::from(b1 >> 3),
        // max_held (64 MiB) and accept_until (none) as the defaults: no
        // input of libFuzzer's -max_len comes near the one, and the other
        // (the execution's wall clock) is not fuzzed here.
        ..ServerOptions::default()
    };
    let chunk = 1 + usize::from(b2 % 64);
    let cancel_after = if b3 & 0x80 != 0 {
        Duration::from_millis(u64::from(b3 & 0x7f))
    } else {
        Duration::from_secs(3600)
    };
    let drain_after = (b3 & 0xc0 == 0x40).then(|| Duration::from_millis(u64::from(b3 & 0x3f)));
    let want = expected(stream);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let drain = CancellationToken::new();
        let server = Server::new(options, Arc::new(handle)).drain_on(drain.clone());
        let tally = server.tally();
        let drainer = drain_after.map(|after| {
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                drain.cancel();
            })
        });
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let collector = tokio::spawn(async move {
            let mut out = Vec::new();
            let mut theirs = theirs;
            theirs.read_to_end(&mut out).await.map(|_| out)
        });
        let cancel = CancellationToken::new();
        let canceller = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(cancel_after).await;
                cancel.cancel();
            })
        };
        let reader = Chunked { rest: stream, chunk };
        let ending = tokio::time::timeout(Duration::from_secs(7200), server.serve(reader, ours, cancel))
            .await
            .expect("Server::serve did not return within two hours of virtual time, though cancelled after one");
        canceller.abort();
        if let Some(drainer) = drainer {
            drainer.abort();
        }
        let written = tokio::time::timeout(Duration::from_secs(60), collector)
            .await
            .expect("the server's writer was not closed after serve returned")
            .expect("collector task")
            .expect("reading the duplex");

        // Every byte written is a Response frame.
        let mut dec = FrameDecoder::new();
        let mut rest = &written[..];
        let mut responses = Vec::new();
        loop {
            let (used, done) = dec.feed(rest);
            rest = &rest[used..];
            match done {
                Some(Ok(payload)) => {
                    responses.push(decode::<Response>(&payload).expect("the server wrote a bad Response"))
                }
                Some(Err(e)) => panic!("the server wrote a bad frame: {e}"),
                None => break,
            }
        }
        dec.finish().expect("the server stopped writing inside a frame");

        let mut sent: HashMap<&str, usize> = HashMap::new();
        for r in &want.requests {
            *sent.entry(r.id.as_str()).or_default() += 1;
        }
        let mut answered: HashMap<&str, usize> = HashMap::new();
        let mut value_bytes = 0u64;
        for r in &responses {
            assert!(r.ok || r.kind.is_some(), "a failed Response without a kind: {r:?}");
            assert!(!r.ok || r.kind.is_none(), "a successful Response with a kind: {r:?}");
            let n = answered.entry(r.id.as_str()).or_default();
            *n += 1;
            assert!(
                *n <= sent.get(r.id.as_str()).copied().unwrap_or(0),
                "answered more often than asked: {r:?}"
            );
            if r.ok {
                value_bytes += r.value.len() as u64;
            }
        }
        if options.max_calls > 0 {
            assert!(
                tally.calls() <= options.max_calls,
                "{} calls over a quota of {}",
                tally.calls(),
                options.max_calls
            );
        }
        if options.max_bytes > 0 {
            assert!(
                tally.bytes() <= options.max_bytes,
                "{} bytes over a quota of {}",
                tally.bytes(),
                options.max_bytes
            );
        }
        assert!(tally.calls() as usize <= want.requests.len());
        assert!(
            tally.bytes() >= value_bytes,
            "sent {value_bytes} value bytes, counted {}",
            tally.bytes()
        );

        match &ending {
            Ok(Ending::Closed) => {
                assert!(!want.broken, "a broken stream ended as a clean close");
                assert_eq!(answered, sent, "a clean close must answer every request once");
                assert_eq!(tally.bytes(), value_bytes, "counted bytes that were not sent");
            }
            Ok(Ending::Drained) => {
                assert!(drain_after.is_some(), "drained with no drain");
                assert!(!want.broken, "a broken stream ended as a drain");
            }
            Ok(Ending::Cancelled) => {}
            Err(ProtocolError::DuplicateId(id)) => {
                assert!(
                    sent.get(id.as_str()).copied().unwrap_or(0) >= 2,
                    "duplicate id {id:?} sent once"
                );
            }
            Err(ProtocolError::Frame(_) | ProtocolError::Decode(_) | ProtocolError::EmptyId { .. }) => {
                assert!(want.broken, "a protocol error on a well-formed stream: {ending:?}");
            }
            Err(other) => panic!("the server reported a violation it cannot meet: {other:?}"),
        }
        if want.broken && !cancel_after.is_zero() {
            assert!(ending.is_err(), "a broken stream was not reported: {ending:?}");
        }
    });
});
