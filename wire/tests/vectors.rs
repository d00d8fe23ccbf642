//! Runs the shared protocol test vectors (`tests/vectors/frames.json`, see the
//! README beside it) against this crate.
//!
//! Decode cases: each stream is read with [`wire::FrameReader`] (whole, and
//! one byte per `read`), with [`wire::FrameDecoder`] split at every offset,
//! and with [`wire::AsyncFrameReader`] when the `tokio` feature is on; each
//! payload goes through [`wire::decode`]; the first error ends the stream.
//! The messages (every field written out) and the end (clean or an error
//! class, with its details) must be exactly those of the case.
//!
//! Encode cases: each value must encode, with [`wire::encode`], to exactly
//! the frame given, and that frame must decode back to the value.
//!
//! All failures are collected and reported together, one line per case.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use wire::{
    DecodeError, FAILURE_KINDS, FrameDecoder, FrameError, FrameReader, MAX_FRAME_BYTES, Message,
    Request, Response, Result as ResultMsg, Start, StartBinding, StartBudget, VERSION, decode,
    encode,
};

const VECTORS: &str = include_str!("vectors/frames.json");

/// Every error class a decode case may end with, as named in the file.
const CLASSES: [&str; 7] = [
    "too_large",
    "empty",
    "truncated_prefix",
    "truncated_payload",
    "not_object",
    "version",
    "malformed",
];

const MESSAGES: [&str; 4] = ["Request", "Response", "Start", "Result"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vectors {
    #[allow(dead_code)]
    format: String,
    protocol_version: u32,
    max_frame_bytes: usize,
    error_classes: BTreeMap<String, String>,
    decode: Vec<DecodeCase>,
    encode: Vec<EncodeCase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecodeCase {
    name: String,
    message: String,
    #[allow(dead_code)]
    note: Option<String>,
    stream: String,
    #[allow(dead_code)]
    text: String,
    messages: Vec<Value>,
    end: String,
    #[serde(default)]
    detail: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EncodeCase {
    name: String,
    message: String,
    #[allow(dead_code)]
    note: Option<String>,
    value: Value,
    payload: String,
    frame: String,
}

fn vectors() -> Vectors {
    serde_json::from_str(VECTORS).expect("tests/vectors/frames.json parses")
}

fn unhex(hex: &str) -> Vec<u8> {
    assert!(hex.len().is_multiple_of(2), "odd-length hex {hex:?}");
    assert!(
        hex.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
        "hex must be lowercase: {hex:?}"
    );
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn tohex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A message written out with every field, defaults applied: the shape the
/// vectors use for decoded messages. Destructured, so that a new field fails
/// to compile here until the vectors say what it decodes to.
trait Full: Message + std::fmt::Debug + PartialEq {
    fn full(&self) -> Value;
}

fn kind_json(kind: &Option<wire::FailureKind>) -> Value {
    kind.map_or(Value::Null, |k| Value::from(k.as_str()))
}

impl Full for Request {
    fn full(&self) -> Value {
        let Request {
            v,
            id,
            tool,
            args,
            deadline_ms,
        } = self;
        json!({"v": v, "id": id, "tool": tool, "args": args, "deadline_ms": deadline_ms})
    }
}

impl Full for Response {
    fn full(&self) -> Value {
        let Response {
            v,
            id,
            ok,
            value,
            kind,
            error,
        } = self;
        json!({"v": v, "id": id, "ok": ok, "value": value, "kind": kind_json(kind), "error": error})
    }
}

impl Full for Start {
    fn full(&self) -> Value {
        let Start {
            v,
            program,
            bindings,
            budget,
            max_inflight,
            withdraw,
            places,
            result_id,
        } = self;
        let bindings: Vec<Value> = bindings
            .iter()
            .map(|StartBinding { name, signature }| json!({"name": name, "signature": signature}))
            .collect();
        let StartBudget {
            wall_clock,
            max_calls,
            max_bytes,
            max_memory,
        } = budget;
        let wall_clock =
            u64::try_from(wall_clock.as_nanos()).expect("wall_clock fits u64 nanoseconds");
        json!({
            "v": v, "program": program, "bindings": bindings,
            "budget": {"wall_clock": wall_clock, "max_calls": max_calls, "max_bytes": max_bytes, "max_memory": max_memory},
            "max_inflight": max_inflight,
            "withdraw": withdraw,
            "places": serde_json::to_value(places).expect("places are JSON"),
            "result_id": result_id,
        })
    }
}

impl Full for ResultMsg {
    fn full(&self) -> Value {
        let ResultMsg {
            v,
            result_id,
            ok,
            value,
            kind,
            error,
            calls,
            bytes,
        } = self;
        json!({
            "v": v, "result_id": result_id, "ok": ok, "value": value, "kind": kind_json(kind),
            "error": error, "calls": calls, "bytes": bytes,
        })
    }
}

/// How a stream ended: "clean" or an error class, with the class's details.
#[derive(Debug, Clone, PartialEq)]
struct End {
    class: String,
    detail: Map<String, Value>,
}

impl End {
    fn new(class: &str, detail: Value) -> Self {
        let Value::Object(detail) = detail else {
            unreachable!()
        };
        End {
            class: class.into(),
            detail,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    messages: Vec<Value>,
    end: End,
}

fn frame_end(err: FrameError) -> End {
    match err {
        FrameError::TooLarge { len, max } => {
            assert_eq!(max, MAX_FRAME_BYTES, "TooLarge names the maximum in force");
            End::new("too_large", json!({"len": len}))
        }
        FrameError::Empty => End::new("empty", json!({})),
        FrameError::TruncatedPrefix { got } => End::new("truncated_prefix", json!({"got": got})),
        FrameError::TruncatedPayload { got, want } => {
            End::new("truncated_payload", json!({"got": got, "want": want}))
        }
        FrameError::Io(e) => panic!("i/o error from an in-memory stream: {e}"),
        FrameError::Failed => panic!("FrameError::Failed as the first error of a stream"),
        FrameError::Unheld { len, .. } => {
            panic!("a frame of {len} bytes unheld by a plain decoder")
        }
    }
}

fn decode_end<M: Message>(err: DecodeError) -> End {
    let text = err.to_string();
    match err {
        DecodeError::NotObject { message } => {
            assert_eq!(message, M::NAME);
            End::new("not_object", json!({}))
        }
        DecodeError::Version { message, got, want } => {
            assert_eq!((message, want), (M::NAME, VERSION));
            // Invariant 1: the error names both versions.
            assert!(text.contains(&format!("version {got}")), "{text}");
            assert!(text.contains(&format!("version {VERSION}")), "{text}");
            let v: Value = serde_json::from_str(&got)
                .unwrap_or_else(|_| panic!("version {got:?} is not JSON text"));
            End::new("version", json!({"v": v}))
        }
        DecodeError::Malformed { message, .. } => {
            assert_eq!(message, M::NAME);
            End::new("malformed", json!({}))
        }
    }
}

/// Decodes each payload as `M` until the first error.
fn outcome<M: Full>(mut next: impl FnMut() -> Result<Option<Vec<u8>>, FrameError>) -> Outcome {
    let mut messages = Vec::new();
    loop {
        let end = match next() {
            Ok(None) => End::new("clean", json!({})),
            Ok(Some(payload)) => match decode::<M>(&payload) {
                Ok(msg) => {
                    assert_eq!(msg.version(), VERSION);
                    messages.push(msg.full());
                    continue;
                }
                Err(e) => decode_end::<M>(e),
            },
            Err(e) => frame_end(e),
        };
        return Outcome { messages, end };
    }
}

/// A reader that hands out one byte per `read`.
struct OneByte<'a>(&'a [u8]);

impl Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.is_empty()) {
            (Some((b, rest)), false) => {
                buf[0] = *b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

/// Feeds `parts` to a [`FrameDecoder`] one after the other.
fn decoder_frames(parts: &[&[u8]]) -> impl FnMut() -> Result<Option<Vec<u8>>, FrameError> {
    let mut decoder = FrameDecoder::new();
    let mut parts: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
    parts.reverse();
    move || {
        while let Some(mut part) = parts.pop() {
            let (used, done) = decoder.feed(&part);
            assert!(used <= part.len());
            part.drain(..used);
            if let Some(done) = done {
                if !part.is_empty() {
                    parts.push(part);
                }
                return done.map(Some);
            }
            assert!(
                part.is_empty(),
                "feed returned early without a frame or an error"
            );
        }
        decoder.finish().map(|()| None)
    }
}

/// Every way of reading the stream, each with its outcome.
fn outcomes<M: Full>(stream: &[u8]) -> Vec<(String, Outcome)> {
    let mut all = Vec::new();
    let mut reader = FrameReader::new(stream);
    all.push((
        "FrameReader, whole".to_string(),
        outcome::<M>(|| reader.read_frame()),
    ));
    let mut reader = FrameReader::new(OneByte(stream));
    all.push((
        "FrameReader, one byte per read".to_string(),
        outcome::<M>(|| reader.read_frame()),
    ));
    for cut in 0..=stream.len() {
        let (a, b) = stream.split_at(cut);
        all.push((
            format!("FrameDecoder, split at {cut}"),
            outcome::<M>(decoder_frames(&[a, b])),
        ));
    }
    #[cfg(feature = "tokio")]
    {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let mut reader = wire::AsyncFrameReader::new(stream);
        all.push((
            "AsyncFrameReader".to_string(),
            outcome::<M>(|| rt.block_on(reader.read_frame())),
        ));
    }
    all
}

fn run_decode(case: &DecodeCase) -> Result<(), String> {
    let stream = unhex(&case.stream);
    let ways = match case.message.as_str() {
        "Request" => outcomes::<Request>(&stream),
        "Response" => outcomes::<Response>(&stream),
        "Start" => outcomes::<Start>(&stream),
        "Result" => outcomes::<ResultMsg>(&stream),
        other => return Err(format!("unknown message type {other:?}")),
    };
    let want = Outcome {
        messages: case.messages.clone(),
        end: End {
            class: case.end.clone(),
            detail: case.detail.clone(),
        },
    };
    for (way, got) in ways {
        if got != want {
            return Err(format!(
                "{way}:\n      got  {} then {} {}\n      want {} then {} {}",
                Value::from(got.messages),
                got.end.class,
                Value::from(got.end.detail),
                Value::from(want.messages.clone()),
                want.end.class,
                Value::from(want.end.detail.clone()),
            ));
        }
    }
    Ok(())
}

fn check_encode<M: Full>(case: &EncodeCase) -> Result<(), String> {
    let msg: M = serde_json::from_value(case.value.clone())
        .map_err(|e| format!("value does not build: {e}"))?;
    if msg.full() != case.value {
        return Err(format!(
            "value must list every field: read back as {}",
            msg.full()
        ));
    }
    let frame = encode(&msg).map_err(|e| format!("encode failed: {e}"))?;
    let payload = &frame[4..];
    if payload != case.payload.as_bytes() || tohex(&frame) != case.frame {
        return Err(format!(
            "encoded\n      got  {}\n      want {}",
            String::from_utf8_lossy(payload),
            case.payload
        ));
    }
    let back: M = decode(payload).map_err(|e| format!("its own encoding does not decode: {e}"))?;
    if back != msg {
        return Err(format!("decodes back as {back:?}"));
    }
    Ok(())
}

fn run_encode(case: &EncodeCase) -> Result<(), String> {
    let payload = case.payload.as_bytes();
    let mut framed = u32::try_from(payload.len())
        .expect("small")
        .to_be_bytes()
        .to_vec();
    framed.extend_from_slice(payload);
    if tohex(&framed) != case.frame {
        return Err("the case's frame is not its payload with a length prefix".into());
    }
    match case.message.as_str() {
        "Request" => check_encode::<Request>(case),
        "Response" => check_encode::<Response>(case),
        "Start" => check_encode::<Start>(case),
        "Result" => check_encode::<ResultMsg>(case),
        other => Err(format!("unknown message type {other:?}")),
    }
}

#[test]
fn every_decode_vector_holds() {
    let vectors = vectors();
    let failures: Vec<String> = vectors
        .decode
        .iter()
        .filter_map(|case| {
            run_decode(case)
                .err()
                .map(|e| format!("  {}: {e}", case.name))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} decode vectors failed:\n{}",
        failures.len(),
        vectors.decode.len(),
        failures.join("\n")
    );
}

#[test]
fn every_encode_vector_holds() {
    let vectors = vectors();
    let failures: Vec<String> = vectors
        .encode
        .iter()
        .filter_map(|case| {
            run_encode(case)
                .err()
                .map(|e| format!("  {}: {e}", case.name))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} encode vectors failed:\n{}",
        failures.len(),
        vectors.encode.len(),
        failures.join("\n")
    );
}

/// The vectors themselves: enough of them, and every class and message covered.
#[test]
fn the_vectors_cover_the_protocol() {
    let v = vectors();
    assert_eq!(v.protocol_version, VERSION);
    assert_eq!(v.max_frame_bytes, MAX_FRAME_BYTES);
    assert!(
        v.decode.len() >= 120,
        "only {} decode vectors",
        v.decode.len()
    );
    assert!(
        v.encode.len() >= 25,
        "only {} encode vectors",
        v.encode.len()
    );

    let names: Vec<&str> = v
        .decode
        .iter()
        .map(|c| c.name.as_str())
        .chain(v.encode.iter().map(|c| c.name.as_str()))
        .collect();
    let mut seen = BTreeSet::new();
    for (i, name) in names.iter().enumerate() {
        // Encode names may repeat decode names; within a section they may not.
        let section = if i < v.decode.len() {
            "decode"
        } else {
            "encode"
        };
        assert!(
            seen.insert((section, *name)),
            "duplicate {section} vector {name:?}"
        );
    }

    // The classes the file documents are exactly the ones this test maps.
    let documented: BTreeSet<&str> = v.error_classes.keys().map(String::as_str).collect();
    assert_eq!(documented, CLASSES.into_iter().collect::<BTreeSet<_>>());
    for case in &v.decode {
        assert!(
            case.end == "clean" || CLASSES.contains(&case.end.as_str()),
            "{}: unknown end {:?}",
            case.name,
            case.end
        );
        assert!(
            MESSAGES.contains(&case.message.as_str()),
            "{}: {:?}",
            case.name,
            case.message
        );
    }

    // Every class ends some stream, for more than one message type where it
    // is about the payload.
    for class in CLASSES {
        let by: BTreeSet<&str> = v
            .decode
            .iter()
            .filter(|c| c.end == class)
            .map(|c| c.message.as_str())
            .collect();
        assert!(!by.is_empty(), "no vector ends in {class}");
        if ["not_object", "version", "malformed"].contains(&class) {
            assert_eq!(by.len(), 4, "{class} is covered only for {by:?}");
        }
    }
    // Every message decodes cleanly somewhere, with several frames in one
    // stream somewhere, and is encoded somewhere.
    for message in MESSAGES {
        assert!(
            v.decode
                .iter()
                .any(|c| c.message == message && c.end == "clean" && !c.messages.is_empty()),
            "no {message} decodes"
        );
        assert!(
            v.encode.iter().any(|c| c.message == message),
            "no {message} is encoded"
        );
    }
    assert!(
        v.decode
            .iter()
            .any(|c| c.messages.len() >= 2 && c.end == "clean")
    );
    assert!(
        v.decode
            .iter()
            .any(|c| !c.messages.is_empty() && c.end != "clean")
    );

    // Every failure kind travels both ways.
    for row in FAILURE_KINDS {
        let kind = Value::from(row.name);
        assert!(
            v.decode
                .iter()
                .flat_map(|c| &c.messages)
                .any(|m| m.get("kind") == Some(&kind)),
            "kind {} is never decoded",
            row.name
        );
        assert!(
            v.encode.iter().any(|c| c.value.get("kind") == Some(&kind)),
            "kind {} is never encoded",
            row.name
        );
    }

    // The frame-size refusals are all there.
    for len in [
        0xFFFF_FFFF_u64,
        0x8000_0000,
        MAX_FRAME_BYTES as u64 + 1,
        u64::from(u32::from_be_bytes(*b"GET ")),
    ] {
        assert!(
            v.decode
                .iter()
                .any(|c| c.end == "too_large" && c.detail.get("len") == Some(&Value::from(len))),
            "no too_large vector for {len:#x}"
        );
    }
    assert!(
        v.decode.iter().any(|c| c.end == "truncated_payload"
            && c.detail.get("want") == Some(&Value::from(MAX_FRAME_BYTES))),
        "a prefix of exactly the maximum must be shown accepted"
    );
}

/// The harness itself can fail: a wrong expectation is caught.
#[test]
fn a_wrong_vector_is_caught() {
    let v = vectors();
    let mut case = v
        .decode
        .into_iter()
        .find(|c| c.name == "request_every_field")
        .expect("the case exists");
    assert!(run_decode(&case).is_ok());
    case.messages[0]["deadline_ms"] = json!(2501);
    assert!(run_decode(&case).is_err());
    case.messages.clear();
    case.end = "malformed".into();
    assert!(run_decode(&case).is_err());

    let mut case = v
        .encode
        .into_iter()
        .find(|c| c.name == "request_required_fields_only")
        .expect("the case exists");
    assert!(run_encode(&case).is_ok());
    case.payload = r#"{"v":1,"id":"1","tool":"t","args":""}"#.into();
    assert!(run_encode(&case).is_err());
}
