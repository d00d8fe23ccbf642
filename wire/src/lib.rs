//! The `wire` protocol of wasmwire, written once.
//!
//! A parent runs untrusted JavaScript in a child and answers the child's
//! tool calls. The two talk over two connections, each a pair of byte
//! streams carrying frames:
//!
//! ```text
//! +----------------------+---------------------------+
//! | 4-byte big-endian N  | N bytes of JSON (one obj) |
//! +----------------------+---------------------------+
//! ```
//!
//! * the **call channel** (the child's stdin/stdout) carries [`Request`]s from
//!   the child and [`Response`]s from the parent, matched by `id`;
//! * the **start channel** carries one [`Start`] to the child and one
//!   [`Result`] back.
//!
//! `N` is at most [`MAX_FRAME_BYTES`] and is checked before anything is
//! reserved; EOF at a frame boundary is a clean close, EOF inside a frame is
//! an error; every message carries `"v": 1` ([`VERSION`]) and any other
//! version is refused loudly. Failures are classified by the closed set
//! [`FailureKind`].
//!
//! # The four roles
//!
//! | role       | side   | does |
//! |------------|--------|------|
//! | [`Server`] | parent | answers Requests: validation, quota, in-flight cap, deadline, handler, Response |
//! | [`Starter`]| parent | sends one Start, awaits one Result; returns on cancel and timeout |
//! | [`Client`] | child  | sends Requests paced to the in-flight cap, matches Responses by id; EOF fails every call in flight |
//! | [`Runner`] | child  | awaits one Start, sends one Result |
//!
//! The parent's roles are async (tokio, behind the `tokio` feature); the
//! child's are blocking, which is what a single-threaded wasm child needs.
//!
//! A child, over any `Read`/`Write` pair:
//!
//! ```
//! # fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
//! use wire::{Client, Response, Runner, Start, StartBudget};
//! // What a parent would send: one Start, and the answer to call "1".
//! let start = Start { v: 1, program: "return 1".into(), bindings: vec![],
//!                     budget: StartBudget::default(), max_inflight: None, withdraw: false,
//!                     places: vec![], result_id: "r1".into() };
//! let start_in = wire::encode(&start)?;
//! let calls_in = wire::encode(&Response::success("1", "42"))?;
//!
//! let (mut result_out, mut calls_out) = (Vec::new(), Vec::new());
//! let mut runner = Runner::new(&start_in[..], &mut result_out);
//! let start = runner.start()?;
//!
//! let mut client = Client::new(&calls_in[..], &mut calls_out);
//! let id = client.send("answer", "{}", 0)?;
//! let reply = client.recv()?;
//! assert_eq!((reply.id, reply.outcome), (id, Ok("42".to_string())));
//!
//! runner.finish(&wire::Result::success(start.result_id, "42"))?;
//! # Ok(()) }
//! ```
//!
//! A parent (async):
//!
//! ```
//! # #[cfg(feature = "tokio")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use wire::{Call, HandlerError, Request, Server, ServerOptions};
//! use tokio_util::sync::CancellationToken;
//!
//! let handler = |call: Call| async move { Ok::<_, HandlerError>(call.args.to_uppercase()) };
//! let server = Server::new(ServerOptions::default(), Arc::new(handler));
//! let tally = server.tally();
//!
//! let requests = wire::encode(&Request::new("1", "shout", "hi"))?;
//! let ending = server.serve(&requests[..], tokio::io::sink(), CancellationToken::new()).await?;
//! assert_eq!((ending, tally.calls()), (wire::Ending::Closed, 1));
//! # Ok(()) }
//! # #[cfg(not(feature = "tokio"))]
//! # fn main() {}
//! ```
#![warn(missing_docs)]

mod client;
mod codec;
mod error;
pub mod frame;
mod holdings;
pub mod json;
mod kind;
mod message;
pub mod names;
pub mod places;
mod response;
mod runner;

#[cfg(feature = "tokio")]
mod async_frame;
#[cfg(feature = "tokio")]
mod cancelled;
#[cfg(feature = "tokio")]
mod server;
#[cfg(feature = "tokio")]
mod starter;

pub use client::{Client, ClientError, InFlight, Reply, Withdrawal};
pub use codec::{DecodeError, decode, encode, encode_sized, encoded_len};
pub use error::ProtocolError;
pub use frame::{FrameDecoder, FrameError, FrameReader, ReadRoom, UNHELD_HEAD, write_frame};
pub use holdings::{DEFAULT_MAX_HELD, Held, Holdings, OverHoldings};
pub use kind::{FAILURE_KINDS, FailureKind, KindInfo, UnknownKind};
pub use message::{
    MAX_ERROR_BYTES, MAX_ID_BYTES, MAX_TOOL_NAME_BYTES, Message, Request, Response, Result, Start,
    StartBinding, StartBudget, Withdraw, cap_error_text,
};
pub use runner::{Runner, RunnerError};

#[cfg(feature = "tokio")]
pub use async_frame::{AsyncFrameReader, write_frame_async};
#[cfg(feature = "tokio")]
pub use cancelled::Cancelled;
#[cfg(feature = "tokio")]
pub use server::{
    Call, Ending, Handler, HandlerError, HandlerFuture, MAX_UNWRITTEN_BYTES, Server, ServerOptions,
    Tally, Unfinished,
};
#[cfg(feature = "tokio")]
pub use starter::{Starter, StarterError, check_result};

/// The protocol version every message carries as `"v"`.
pub const VERSION: u32 = 1;

/// The largest frame payload, in bytes (16 MiB).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// The default cap on calls in flight in one execution (docs/protocol.md,
/// invariant 4): the parent's when it is not told otherwise, and the one a
/// child paces to when the Start has no `max_inflight`.
pub const DEFAULT_MAX_INFLIGHT: usize = 64;

/// A failed tool call: its class and what went wrong.
///
/// A [`Server`] handler returns it to choose the kind; the [`Client`] hands
/// it to the child for a failed Response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolFailure {
    /// The failure class.
    pub kind: FailureKind,
    /// What went wrong.
    pub message: String,
}

impl ToolFailure {
    /// A failure of class `kind`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        ToolFailure {
            kind,
            message: message.into(),
        }
    }
}
