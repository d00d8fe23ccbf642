//! The child's side of the start channel: one Start in, one Result out.
//!
//! A Start the child cannot take is answered whenever it can be: if the
//! frame is a JSON object whose `result_id` is a string, the parent is told
//! why in a Result for that id ([`RunnerError::result`]), never left to
//! guess from a closed channel. A Start of another protocol version gets a
//! protocol-error Result (no kind) naming both versions (invariant 1); any
//! other malformed Start gets kind `invalid`, naming the field at fault
//! (`budget.wall_clock is -1: ...`). Only a Start with no readable
//! `result_id` (not a frame, not JSON, not an object, no string
//! `result_id`) goes unanswered: there is no id to answer to.

use std::io::{Read, Write};

use serde_json::{Map, Value};

use crate::codec::{DecodeError, decode, encode, encode_sized};
use crate::error::ProtocolError;
use crate::frame::{FrameDecoder, FrameError, FrameReader};
use crate::message::{Result as ResultMsg, Start};
use crate::{FailureKind, VERSION};

/// Why the runner could not take its Start or deliver its Result.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The parent broke the protocol, and the Start named no `result_id`
    /// to answer to.
    #[error("protocol error on the start channel: {0}")]
    Protocol(#[from] ProtocolError),
    /// The Start was refused, but it named its `result_id`: the child
    /// answers with [`RunnerError::result`].
    #[error("the Start for {result_id:?} was refused: {why}")]
    Refused {
        /// The Start's `result_id`.
        result_id: String,
        /// `None` for another protocol version (a protocol error, no kind);
        /// else the failure class, `invalid`.
        kind: Option<FailureKind>,
        /// What is wrong with it, naming the field.
        why: String,
    },
    /// The start channel closed before a Start arrived.
    #[error("the start channel closed before a Start arrived")]
    NoStart,
    /// `start` was called twice: a runner takes exactly one Start.
    #[error("this runner already took its Start")]
    AlreadyStarted,
    /// The Result could not be written.
    #[error("could not write the Result: {0}")]
    Write(#[source] std::io::Error),
}

impl RunnerError {
    /// The Result that answers a refused Start, when it named its
    /// `result_id`; `None` when there is no one to answer.
    pub fn result(&self) -> Option<ResultMsg> {
        match self {
            RunnerError::Refused {
                result_id,
                kind: Some(kind),
                why,
            } => Some(ResultMsg::failure(result_id, *kind, why)),
            RunnerError::Refused {
                result_id,
                kind: None,
                why,
            } => Some(ResultMsg::protocol_error(result_id, why)),
            _ => None,
        }
    }
}

/// The child's blocking start-channel runner: exactly one Start, exactly one Result.
#[derive(Debug)]
pub struct Runner<R, W> {
    reader: FrameReader<R>,
    writer: W,
    started: bool,
}

impl<R: Read, W: Write> Runner<R, W> {
    /// A runner reading the Start from `reader` and writing the Result to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Runner {
            // The Start's whole length reserved when its prefix comes: a
            // program-sized frame grown by doubling held its half-size copy
            // too, and up to twice its size.
            reader: FrameReader::with_decoder(reader, FrameDecoder::new().reserving_whole()),
            writer,
            started: false,
        }
    }

    /// Waits for the one Start.
    ///
    /// A Start that is refused but names its `result_id` is
    /// [`RunnerError::Refused`]: answer it with [`RunnerError::result`]
    /// through [`finish`](Runner::finish).
    pub fn start(&mut self) -> Result<Start, RunnerError> {
        if self.started {
            return Err(RunnerError::AlreadyStarted);
        }
        self.started = true;
        let payload = self
            .reader
            .read_frame()
            .map_err(ProtocolError::from)?
            .ok_or(RunnerError::NoStart)?;
        decode(&payload).map_err(|e| refusal(&payload, e))
    }

    /// Bytes the parent sent after the Start that the runner already read
    /// (a runner reads its stream in chunks). A parent sends one Start and
    /// nothing more, so any is a protocol violation.
    pub fn unread(&self) -> usize {
        self.reader.buffered()
    }

    /// Sends the one Result; consuming the runner makes a second impossible.
    ///
    /// The frame is made at its size ([`encode_sized`]): a child that has
    /// no memory left for it sends, in its place, a `limit` failure of the
    /// same execution with the same counts, saying so, so that the parent
    /// still gets one Result it can read.
    pub fn finish(mut self, result: &ResultMsg) -> Result<(), RunnerError> {
        let frame = match encode_sized(result) {
            Err(FrameError::Io(e)) if e.kind() == std::io::ErrorKind::OutOfMemory => {
                let mut failure = ResultMsg::failure(
                    result.result_id.clone(),
                    FailureKind::Limit,
                    format!(
                        "memory limit: the Result could not be written ({e}; the program's \
                         value is {} bytes of JSON)",
                        result.value.len()
                    ),
                );
                failure.calls = result.calls;
                failure.bytes = result.bytes;
                encode(&failure)
            }
            sized => sized,
        }
        .map_err(ProtocolError::from)?;
        self.writer
            .write_all(&frame)
            .and_then(|()| self.writer.flush())
            .map_err(RunnerError::Write)
    }
}

/// What a Start that failed to decode becomes: [`RunnerError::Refused`]
/// when it names a string `result_id`, else the protocol error.
fn refusal(payload: &[u8], error: DecodeError) -> RunnerError {
    // Only a Start that failed gets here: reading it again costs nothing
    // the normal path pays.
    let Some((fields, half_pair)) = fields_of(payload) else {
        return ProtocolError::from(error).into();
    };
    let Some(Value::String(result_id)) = fields.get("result_id") else {
        return ProtocolError::from(error).into();
    };
    // An id read with U+FFFD for half a pair is no id the parent sent.
    if half_pair && result_id.contains('\u{fffd}') {
        return ProtocolError::from(error).into();
    }
    let result_id = result_id.clone();
    if matches!(error, DecodeError::Version { .. }) {
        return RunnerError::Refused {
            result_id,
            kind: None,
            why: error.to_string(),
        };
    }
    let why = match explain(&fields) {
        Some(why) => format!("invalid Start: {why}"),
        None if half_pair => "invalid Start: a string in it escapes half of a surrogate pair \
             (`\\ud800` to `\\udfff` alone), which is no Unicode character: send the whole \
             pair, or U+FFFD in its place"
            .to_owned(),
        None => error.to_string(),
    };
    RunnerError::Refused {
        result_id,
        kind: Some(FailureKind::Invalid),
        why,
    }
}

/// A refused Start's fields, to answer it: read as JSON, or, when a string
/// escapes half of a surrogate pair (`"\ud800"`, what JavaScript's
/// `JSON.stringify` writes of a string cut inside an emoji), read with
/// U+FFFD in the half's place. Such a Start is still malformed (the
/// protocol refuses an escape that is no Unicode scalar value), but its
/// `result_id` is there to answer: it was refused without a Result.
/// `true` beside the fields when they were read so.
fn fields_of(payload: &[u8]) -> Option<(Map<String, Value>, bool)> {
    match serde_json::from_slice::<Value>(payload) {
        Ok(Value::Object(fields)) => Some((fields, false)),
        Ok(_) => None,
        Err(_) => {
            let text = std::str::from_utf8(payload).ok()?;
            let replaced = crate::json::replace_lone_surrogates(text.to_owned());
            if replaced.as_bytes() == payload {
                return None;
            }
            match serde_json::from_slice::<Value>(replaced.as_bytes()) {
                Ok(Value::Object(fields)) => Some((fields, true)),
                _ => None,
            }
        }
    }
}

/// The first field of a Start that does not have its shape, named, with
/// what it should be; `None` when every field looks right (then serde's
/// own message is the best there is: a duplicate field, say).
fn explain(fields: &Map<String, Value>) -> Option<String> {
    match fields.get("v") {
        None => return Some("`v` is missing (it must be 1)".into()),
        Some(v) if v.as_u64() != Some(u64::from(VERSION)) => {
            return Some(format!("`v` is {v} (it must be {VERSION})"));
        }
        Some(_) => {}
    }
    match fields.get("program") {
        None => return Some("`program` is missing".into()),
        Some(Value::String(_)) => {}
        Some(other) => return Some(format!("`program` is {}, not a string", kind_of(other))),
    }
    match fields.get("bindings") {
        None | Some(Value::Null) => {}
        Some(Value::Array(bindings)) => {
            for (i, binding) in bindings.iter().enumerate() {
                let Value::Object(binding) = binding else {
                    return Some(format!(
                        "`bindings[{i}]` is {}, not an object",
                        kind_of(binding)
                    ));
                };
                match binding.get("name") {
                    Some(Value::String(_)) => {}
                    None => return Some(format!("`bindings[{i}].name` is missing")),
                    Some(other) => {
                        return Some(format!(
                            "`bindings[{i}].name` is {}, not a string",
                            kind_of(other)
                        ));
                    }
                }
                match binding.get("signature") {
                    None | Some(Value::Null | Value::String(_)) => {}
                    Some(other) => {
                        return Some(format!(
                            "`bindings[{i}].signature` is {}, not a string",
                            kind_of(other)
                        ));
                    }
                }
            }
        }
        Some(other) => return Some(format!("`bindings` is {}, not a list", kind_of(other))),
    }
    match fields.get("budget") {
        None | Some(Value::Null) => {}
        Some(Value::Object(budget)) => {
            for item in ["wall_clock", "max_calls", "max_bytes", "max_memory"] {
                if let Some(why) = count(budget.get(item), u64::MAX) {
                    return Some(format!("`budget.{item}` {why}"));
                }
            }
        }
        Some(other) => return Some(format!("`budget` is {}, not an object", kind_of(other))),
    }
    if let Some(why) = count(fields.get("max_inflight"), u64::from(u32::MAX)) {
        return Some(format!("`max_inflight` {why}"));
    }
    None
}

/// What is wrong with a count (absent, `null`, or an integer from 0 to
/// `max`), if anything.
fn count(value: Option<&Value>, max: u64) -> Option<String> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n <= max) => None,
        // 1.0, 1e3 and numbers past 64 bits: JSON numbers with no integer
        // form here, which a Go integer never marshals to.
        Some(Value::Number(n)) if n.is_f64() => Some(format!(
            "is {n}, not an integer (written without a fraction or an exponent)"
        )),
        Some(Value::Number(n)) if n.as_i64().is_some_and(|n| n < 0) => Some(format!(
            "is {n}: a budget or cap cannot be negative (0, or leaving it out, means none)"
        )),
        Some(Value::Number(n)) => Some(format!("is {n}, over the most it can be, {max}")),
        Some(other) => Some(format!("is {}, not a number", kind_of(other))),
    }
}

/// A JSON value's kind, for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
