//! Messages rmcp cannot read, answered instead of lost.
//!
//! rmcp reads each message (one line of JSON) with serde_json into values,
//! and drops a line it cannot read without a word, as the other official
//! SDKs drop unparsable input. serde_json stops at 128 levels of nesting,
//! and refuses JSON text that others write: the escape of a lone
//! surrogate (what `JSON.stringify` and Python's `json.dumps` make of a
//! string cut through an emoji), Python's `NaN`, a number past a double's
//! range. Such a request would never be answered, and such an upstream
//! answer would leave the program's call waiting until its deadline. So
//! the stdio streams go through a filter first, line by line, each read
//! as rmcp reads it but kept nowhere:
//!
//! - from the client ([`stdio`]): a request that cannot be read is
//!   answered here, with a JSON-RPC error under its id, written between
//!   two of rmcp's own lines;
//! - from an upstream server ([`ChildTransport`]): an answer that cannot
//!   be read is replaced by an error answer under the same id, which rmcp
//!   hands to the call waiting for it.
//!
//! A line longer than rmcp reads (16 MiB) is dropped by rmcp the same way,
//! so the filter handles it alike, without holding it: a client's request
//! gets an error answer under its id, and an upstream's answer is replaced
//! by one ([`TOO_LONG`]), so the call fails at once instead of at its
//! deadline. The id is found in the line's first or last [`KEPT`] bytes,
//! where every SDK writes it (the Python SDK first, the TypeScript SDK
//! last).
//!
//! Every other line passes as it came. An unreadable or long line without
//! an id (a notification, or no JSON at all) is dropped, as rmcp would
//! drop it.

use std::future::Future;
use std::process::Stdio;
use std::time::Duration;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH as MAX_LINE_LENGTH};
use rmcp::{RoleClient, RoleServer};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use wasmwire::containment::{Containment, Limits};

use wasmwire::CancellationToken;

use crate::held::{Answers, Counted};

/// Of a line too long for rmcp, the bytes kept at each end to find its id.
const KEPT: usize = 64 << 10;

/// The JSON-RPC error code of an upstream answer too long to read, which
/// [`crate::values`] reads as a `limit` failure (a code of the range
/// JSON-RPC leaves to servers, with the message's words checked too).
pub(crate) const TOO_LONG: i32 = -32099;

/// The words every [`TOO_LONG`] message starts with.
pub(crate) const TOO_LONG_WORDS: &str = "the server's answer of ";

/// How much a pump holds between its two ends.
const PIPE: usize = 64 << 10;

/// Refusals the stdio filter may have made and not yet written: past them it
/// reads no more of stdin until stdout takes some (a client that sends bad
/// lines and reads nothing holds this many, not one per line it sent).
const REFUSALS_QUEUED: usize = 64;

/// How long a closed upstream may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A line rmcp cannot read: why, its id (raw JSON text, when it is a
/// string or a number that can be read), whether it has an `id` member at
/// all, and whether it is a request (it has a method) or an answer (it has
/// a result or an error).
#[derive(Debug, PartialEq, Eq)]
struct Unreadable {
    why: Why,
    id: Option<String>,
    has_id: bool,
    request: bool,
    answer: bool,
}

/// Why rmcp cannot read a line.
#[derive(Debug, PartialEq, Eq)]
enum Why {
    /// It nests this many levels, past serde_json's 128.
    Deep(usize),
    /// What serde_json says of it: JSON text serde_json does not read into
    /// values (a lone surrogate's escape, as JavaScript's and Python's
    /// writers make of a cut emoji; `NaN`, as Python writes it; a number
    /// past a double's range), or no JSON at all.
    Refused(String),
    /// JSON values, but not of a shape rmcp reads as a message: what does
    /// not fit (a `method` that is no string, `params` that are no object,
    /// an id that is neither a string nor an integer, ...). rmcp answered
    /// such a request "Invalid request" under no id, which no client can
    /// match to its call, and answered such a notification, which JSON-RPC
    /// forbids.
    Shape(String),
}

/// Whether rmcp would drop `line`, and what it is. rmcp reads each line
/// into values with serde_json; so does [`Readable`], keeping none.
fn unreadable(line: &[u8]) -> Option<Unreadable> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    if text.trim().is_empty() {
        return None;
    }
    let method = value_at(&text, "method").is_some();
    let answer = value_at(&text, "result").is_some() || value_at(&text, "error").is_some();
    let why = match std::str::from_utf8(line) {
        Err(e) => Why::Refused(format!("it is not UTF-8 ({e})")),
        // Read once: a request (or a notification) into values and its
        // shape, an answer into values and its shape.
        Ok(text) => match if method {
            request_fault(text).map(|fault| fault.map(Why::Shape))
        } else if !answer {
            // Neither a request nor an answer (`{"jsonrpc":"2.0","id":1}`):
            // said so when its values can be read.
            serde_json::from_str::<Readable>(text).map(|Readable| {
                Some(Why::Shape(
                    "it has no method (as a request has) and no result or error (as an answer has)"
                        .to_owned(),
                ))
            })
        } else {
            answer_fault(text).map(|fault| {
                fault.map(|fault| Why::Refused(format!("it is no JSON-RPC answer: {fault}")))
            })
        } {
            Ok(None) => return None,
            Ok(Some(why)) => why,
            Err(e) if e.to_string().contains("recursion limit exceeded") => {
                Why::Deep(wasmwire::json::depth(text))
            }
            Err(e) => {
                let mut why = e.to_string();
                if why.contains("hex escape") {
                    why.push_str(
                        " (half of a surrogate pair alone, as in a string cut through an \
                         emoji, is no Unicode text: send the whole pair, or U+FFFD)",
                    );
                }
                Why::Refused(why)
            }
        },
    };
    Some(Unreadable {
        why,
        id: member(&text, "id")
            .filter(|id| is_id(id) && !replaced(id, line))
            .map(str::to_owned),
        has_id: value_at(&text, "id").is_some(),
        request: method,
        answer,
    })
}

/// What a value is, as far as a message's shape goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    /// A number rmcp reads as an id: an integer within i64 (`1.0` too).
    Integer,
    /// Any other number.
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn said(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Integer => "an integer",
            Kind::Number => "a number that is no integer within 64 bits",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// Any JSON value read as [`Readable`] reads it, and what it is; an
/// object's `_meta` member too, when it has one (a request's params).
struct KindOf(Kind, Option<Kind>);

impl<'de> serde::Deserialize<'de> for KindOf {
    fn deserialize<D: serde::Deserializer<'de>>(from: D) -> Result<Self, D::Error> {
        from.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> serde::de::Visitor<'de> for KindVisitor {
    type Value = KindOf;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<KindOf, E> {
        Ok(KindOf(Kind::Bool, None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<KindOf, E> {
        Ok(KindOf(Kind::Integer, None))
    }
    fn visit_u64<E>(self, n: u64) -> Result<KindOf, E> {
        let kind = match i64::try_from(n) {
            Ok(_) => Kind::Integer,
            Err(_) => Kind::Number,
        };
        Ok(KindOf(kind, None))
    }
    fn visit_f64<E>(self, n: f64) -> Result<KindOf, E> {
        // As rmcp reads an id: `1.0` and `1e2` are integers.
        let integral = n.fract() == 0.0 && n >= i64::MIN as f64 && n < i64::MAX as f64;
        let kind = if integral {
            Kind::Integer
        } else {
            Kind::Number
        };
        Ok(KindOf(kind, None))
    }
    fn visit_str<E>(self, _: &str) -> Result<KindOf, E> {
        Ok(KindOf(Kind::String, None))
    }
    fn visit_unit<E>(self) -> Result<KindOf, E> {
        Ok(KindOf(Kind::Null, None))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, items: A) -> Result<KindOf, A::Error> {
        Readable
            .visit_seq(items)
            .map(|Readable| KindOf(Kind::Array, None))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut members: A) -> Result<KindOf, A::Error> {
        let mut meta = None;
        while let Some(key) = members.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "_meta" {
                meta = Some(members.next_value::<KindOf>()?.0);
            } else {
                members.next_value::<Readable>()?;
            }
        }
        Ok(KindOf(Kind::Object, meta))
    }
}

/// A request or notification (a line with a method) read as rmcp reads
/// it: its values as [`Readable`] reads them, then its shape, of which
/// what rmcp refuses (and would answer "Invalid request" under no id) is
/// said: a `method` that is no string, a result or an error beside it, an
/// `id` neither a string nor an integer within 64 bits, `params` neither
/// an object nor null, a `_meta` in them neither.
fn request_fault(text: &str) -> Result<Option<String>, serde_json::Error> {
    use serde::de::{MapAccess, Visitor};
    #[derive(Default)]
    struct Shape {
        method: Option<Kind>,
        id: Option<Kind>,
        params: Option<(Kind, Option<Kind>)>,
        answer: bool,
    }
    impl<'de> Visitor<'de> for Shape {
        type Value = Shape;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON-RPC request")
        }
        fn visit_map<A: MapAccess<'de>>(mut self, mut members: A) -> Result<Shape, A::Error> {
            while let Some(key) = members.next_key::<std::borrow::Cow<'de, str>>()? {
                match &*key {
                    "method" => self.method = Some(members.next_value::<KindOf>()?.0),
                    "id" => self.id = Some(members.next_value::<KindOf>()?.0),
                    "params" => {
                        let KindOf(kind, meta) = members.next_value()?;
                        self.params = Some((kind, meta));
                    }
                    "result" | "error" => {
                        members.next_value::<Readable>()?;
                        self.answer = true;
                    }
                    _ => {
                        members.next_value::<Readable>()?;
                    }
                }
            }
            Ok(self)
        }
    }
    let object = |kind: Kind| matches!(kind, Kind::Object | Kind::Null);
    let mut read = serde_json::Deserializer::from_str(text);
    let shape = serde::Deserializer::deserialize_map(&mut read, Shape::default())?;
    read.end()?;
    Ok(match shape {
        Shape {
            method: Some(kind), ..
        } if kind != Kind::String => Some(format!("its method is {}, not a string", kind.said())),
        Shape { answer: true, .. } => Some(
            "it has a method and a result or an error: it is neither a request nor an answer"
                .to_owned(),
        ),
        Shape { id: Some(kind), .. } if !matches!(kind, Kind::String | Kind::Integer) => {
            Some(format!(
                "its id is {}; an id is a string or an integer within 64 bits",
                kind.said()
            ))
        }
        Shape {
            params: Some((kind, _)),
            ..
        } if !object(kind) => Some(format!("its params are {}, not an object", kind.said())),
        Shape {
            params: Some((_, Some(kind))),
            ..
        } if !object(kind) => Some(format!(
            "its params' _meta is {}, not an object",
            kind.said()
        )),
        _ => None,
    })
}

/// An answer (a line without a method) read as rmcp reads it: its values
/// as [`Readable`] reads them (so a line too deep is said to be, whatever
/// its shape), then its shape, of which what rmcp refuses is said: a
/// `jsonrpc` that is not "2.0", both a `result` and an `error` or neither,
/// a `result` that is no object, an `error` that is no JSON-RPC error
/// object (an integer `code`, a string `message`).
fn answer_fault(text: &str) -> Result<Option<String>, serde_json::Error> {
    use serde::de::{MapAccess, SeqAccess, Visitor};
    /// What an answer has: a `result` (whether an object), an `error`,
    /// and `"jsonrpc": "2.0"`.
    #[derive(Default)]
    struct Shape {
        result: Option<bool>,
        error: bool,
        version: bool,
    }
    impl<'de> Visitor<'de> for Shape {
        type Value = Shape;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON-RPC answer")
        }
        fn visit_map<A: MapAccess<'de>>(mut self, mut members: A) -> Result<Shape, A::Error> {
            while let Some(key) = members.next_key::<std::borrow::Cow<'de, str>>()? {
                match &*key {
                    "result" => self.result = Some(members.next_value::<IsObject>()?.0),
                    "error" => {
                        members
                            .next_value::<rmcp::model::ErrorData>()
                            .map_err(|e| {
                                serde::de::Error::custom(format!(
                                    "it is no JSON-RPC answer: its error is no error object: {e}"
                                ))
                            })?;
                        self.error = true;
                    }
                    "jsonrpc" => {
                        let said = members.next_value::<std::borrow::Cow<'de, str>>()?;
                        self.version = said == "2.0";
                    }
                    _ => {
                        members.next_value::<Readable>()?;
                    }
                }
            }
            Ok(self)
        }
    }
    /// Any JSON value read as [`Readable`] reads it, and whether it is an
    /// object.
    struct IsObject(bool);
    impl<'de> serde::Deserialize<'de> for IsObject {
        fn deserialize<D: serde::Deserializer<'de>>(from: D) -> Result<Self, D::Error> {
            from.deserialize_any(IsObject(false))
        }
    }
    impl<'de> Visitor<'de> for IsObject {
        type Value = IsObject;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, members: A) -> Result<IsObject, A::Error> {
            Readable.visit_map(members).map(|Readable| IsObject(true))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, items: A) -> Result<IsObject, A::Error> {
            Readable.visit_seq(items).map(|Readable| self)
        }
        fn visit_bool<E>(self, _: bool) -> Result<IsObject, E> {
            Ok(self)
        }
        fn visit_i64<E>(self, _: i64) -> Result<IsObject, E> {
            Ok(self)
        }
        fn visit_u64<E>(self, _: u64) -> Result<IsObject, E> {
            Ok(self)
        }
        fn visit_f64<E>(self, _: f64) -> Result<IsObject, E> {
            Ok(self)
        }
        fn visit_str<E>(self, _: &str) -> Result<IsObject, E> {
            Ok(self)
        }
        fn visit_unit<E>(self) -> Result<IsObject, E> {
            Ok(self)
        }
    }
    let mut read = serde_json::Deserializer::from_str(text);
    let shape = serde::Deserializer::deserialize_map(&mut read, Shape::default())?;
    read.end()?;
    Ok(match shape {
        Shape { version: false, .. } => Some("it has no \"jsonrpc\": \"2.0\"".to_owned()),
        Shape {
            result: Some(false),
            ..
        } => Some("its result is no object".to_owned()),
        Shape {
            result: Some(_),
            error: true,
            ..
        } => Some("it has both a result and an error".to_owned()),
        Shape {
            result: None,
            error: false,
            ..
        } => Some("it has neither a result nor an error".to_owned()),
        _ => None,
    })
}

/// A JSON value read as serde_json reads one into a `serde_json::Value`
/// (every string's escapes decoded, every number converted, the nesting
/// counted), and kept nowhere.
struct Readable;

impl<'de> serde::Deserialize<'de> for Readable {
    fn deserialize<D: serde::Deserializer<'de>>(from: D) -> Result<Self, D::Error> {
        from.deserialize_any(Readable)
    }
}

impl<'de> serde::de::Visitor<'de> for Readable {
    type Value = Readable;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_str<E>(self, _: &str) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_unit<E>(self) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<Readable, A::Error> {
        while items.next_element::<Readable>()?.is_some() {}
        Ok(Readable)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut members: A) -> Result<Readable, A::Error> {
        while members.next_entry::<Readable, Readable>()?.is_some() {}
        Ok(Readable)
    }
}

/// What rmcp reads as no JSON-RPC 2.0 request and answers "Invalid
/// request" under no id, which no client can match to its call, so that
/// the call would wait for ever: a batch (MCP has had none since
/// 2025-06-18) and a request whose `jsonrpc` is not "2.0". Each request in
/// such a line, by its id (raw JSON text), and the line's fault.
/// `None` for any other line; a line holding `"2.0"` is passed unread.
fn not_json_rpc_2(line: &[u8]) -> Option<(Vec<String>, String)> {
    let text = std::str::from_utf8(line).ok()?;
    let text = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let batch = text.starts_with('[');
    if !batch && line.windows(5).any(|w| w == b"\"2.0\"") {
        return None;
    }
    let id_of = |message: &serde_json::Value| {
        let id = message.get("id")?;
        (message.get("method").is_some() && (id.is_string() || id.is_number()))
            .then(|| id.to_string())
    };
    match serde_json::from_str::<serde_json::Value>(text).ok()? {
        serde_json::Value::Array(messages) if batch => Some((
            messages.iter().filter_map(id_of).collect(),
            "a JSON-RPC batch is not read here (MCP has had none since 2025-06-18): send each \
             message on a line of its own"
                .to_owned(),
        )),
        message @ serde_json::Value::Object(_) => {
            let id = id_of(&message)?;
            let version = message
                .get("jsonrpc")
                .map_or_else(|| "none".to_owned(), ToString::to_string);
            Some((
                vec![id],
                format!("\"jsonrpc\" must be \"2.0\" (got {version})"),
            ))
        }
        _ => None,
    }
}

/// The id of the JSON-RPC message `text`, when it has one (a string or a
/// number), found without reading the rest of the message.
pub(crate) fn id_of(text: &str) -> Option<serde_json::Value> {
    member(text, "id")
        .filter(|id| is_id(id))
        .and_then(|id| serde_json::from_str(id).ok())
}

/// Whether `id`, read from text made lossily from `bytes`, may hold a
/// U+FFFD that stands for bytes that were no UTF-8: an id the client never
/// sent, so none is read (the answer goes under `null`).
fn replaced(id: &str, bytes: &[u8]) -> bool {
    id.contains('\u{FFFD}') && std::str::from_utf8(bytes).is_err()
}

/// Whether `text` is a JSON-RPC id: a string or a number.
fn is_id(text: &str) -> bool {
    matches!(
        serde_json::from_str::<serde_json::Value>(text),
        Ok(serde_json::Value::String(_) | serde_json::Value::Number(_))
    )
}

/// The raw text of the value of `key` in the object `text` is, when that
/// value is a string or a scalar (found without reading the rest, which
/// may nest without end).
fn member<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let bytes = text.as_bytes();
    let start = value_at(text, key)?;
    let stop = match bytes.get(start)? {
        b'"' => string_end(bytes, start)?,
        b'{' | b'[' => return None,
        _ => {
            start
                + bytes[start..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}') || b.is_ascii_whitespace())
                    .unwrap_or(bytes.len() - start)
        }
    };
    Some(&text[start..stop])
}

/// Where the value of `key`, a member of the object `text` is (or begins
/// to be, in a line cut short), starts.
fn value_at(text: &str, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                let end = string_end(bytes, at)?;
                if depth == 1 && &text[at + 1..end - 1] == key {
                    let colon = skip_space(bytes, end);
                    if bytes.get(colon) == Some(&b':') {
                        return Some(skip_space(bytes, colon + 1));
                    }
                }
                at = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    None
}

/// The index just past the string that starts at `bytes[start]` (a `"`);
/// `None` when it does not close.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let end = wasmwire::wire::json::skip_string(bytes, start);
    (end > start + 1 && bytes[end - 1] == b'"').then_some(end)
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// A JSON-RPC error answer to `id`, as one line.
fn error_line(id: &str, code: i32, message: &str) -> Vec<u8> {
    let error = serde_json::json!({"code": code, "message": message});
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}\n").into_bytes()
}

/// What a client's request that cannot be read is answered with: an
/// invalid request (too deep), or a parse error.
fn request_refused(why: &Why, id: &str) -> Vec<u8> {
    match why {
        Why::Deep(depth) => error_line(
            id,
            -32600,
            &format!(
                "the request nests {depth} levels deep; this server reads messages nested at most 127 levels (serde_json's limit)"
            ),
        ),
        Why::Refused(e) => error_line(
            id,
            -32700,
            &format!("the request cannot be read as JSON values: {e}"),
        ),
        Why::Shape(e) => error_line(id, -32600, &format!("Invalid request: {e}")),
    }
}

/// What an upstream's answer that cannot be read is replaced with.
fn answer_unread(why: &Why, id: &str) -> Vec<u8> {
    let why = match why {
        Why::Deep(depth) => format!(
            "the server's answer nests {depth} levels deep; answers nested past 127 levels cannot be read"
        ),
        Why::Refused(e) => format!("the server's answer cannot be read as JSON values: {e}"),
        Why::Shape(e) => format!("the server's answer cannot be read: {e}"),
    };
    error_line(id, -32603, &why)
}

/// What a client's request too long to read is answered with.
fn request_too_long(len: usize, id: &str) -> Vec<u8> {
    error_line(
        id,
        -32600,
        &format!(
            "the request is {len} bytes long; this server reads messages of at most {MAX_LINE_LENGTH} bytes"
        ),
    )
}

/// What an upstream's answer too long to read is replaced with.
fn answer_too_long(len: usize, id: &str) -> Vec<u8> {
    error_line(
        id,
        TOO_LONG,
        &format!(
            "{TOO_LONG_WORDS}{len} bytes is longer than the {MAX_LINE_LENGTH} bytes an answer may be"
        ),
    )
}

/// A line longer than rmcp reads: its length so far, and its first and
/// last [`KEPT`] bytes.
#[derive(Debug, Default)]
struct Long {
    len: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Long {
    fn take(&mut self, bytes: &[u8]) {
        self.len += bytes.len();
        let room = KEPT.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * KEPT {
            self.tail.drain(..self.tail.len() - KEPT);
        }
    }

    /// The line's id, if one of its ends has it at the top level.
    fn id(&self) -> Option<String> {
        let head = String::from_utf8_lossy(&self.head);
        member(&head, "id")
            .filter(|id| is_id(id) && !replaced(id, &self.head))
            .map(str::to_owned)
            .or_else(|| trailing_id(&self.tail))
    }

    /// Whether the line's head has `key` at the top level.
    fn has(&self, key: &str) -> bool {
        value_at(&String::from_utf8_lossy(&self.head), key).is_some()
    }

    /// Whether the line is an answer (a result or an error), as far as its
    /// head says: every SDK writes `result` or `error` before what it
    /// carries, and member order is free, so a `method` may be anywhere.
    fn is_answer(&self) -> bool {
        self.has("result") || self.has("error")
    }
}

/// The id among the last members of the object whose end `tail` is, read
/// backwards from its final brace (what comes last there is at the top
/// level, whatever came before it); `None` when the tail ends before one
/// is found, or is not such an end.
fn trailing_id(tail: &[u8]) -> Option<String> {
    // Bytes, not text: the tail may begin inside a character.
    let bytes = tail.trim_ascii_end().strip_suffix(b"}")?;
    let mut at = bytes.len();
    loop {
        // A member, from its end: the value, a colon, the key.
        let value_end = back_over_space(bytes, at);
        let value_start = back_over_value(bytes, value_end)?;
        let colon = back_over_space(bytes, value_start);
        if colon == 0 || bytes[colon - 1] != b':' {
            return None;
        }
        let key_end = back_over_space(bytes, colon - 1);
        if key_end == 0 || bytes[key_end - 1] != b'"' {
            return None;
        }
        let key_start = string_start(bytes, key_end - 1)?;
        if &bytes[key_start + 1..key_end - 1] == b"id" {
            let id = std::str::from_utf8(&bytes[value_start..value_end]).ok()?;
            return is_id(id).then(|| id.to_owned());
        }
        let before = back_over_space(bytes, key_start);
        match before.checked_sub(1).map(|b| bytes[b]) {
            Some(b',') => at = before - 1,
            _ => return None,
        }
    }
}

/// `at` moved back over whitespace.
fn back_over_space(bytes: &[u8], mut at: usize) -> usize {
    while at > 0 && bytes[at - 1].is_ascii_whitespace() {
        at -= 1;
    }
    at
}

/// Where the JSON value that ends just before `end` starts.
fn back_over_value(bytes: &[u8], end: usize) -> Option<usize> {
    let last = *bytes.get(end.checked_sub(1)?)?;
    match last {
        b'"' => string_start(bytes, end - 1),
        b'}' | b']' => {
            let mut depth = 0usize;
            let mut at = end;
            while at > 0 {
                at -= 1;
                match bytes[at] {
                    b'"' => at = string_start(bytes, at)?,
                    b'}' | b']' => depth += 1,
                    b'{' | b'[' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at);
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        _ => {
            let scalar = bytes[..end]
                .iter()
                .rposition(|b| !(b.is_ascii_alphanumeric() || b"+-.".contains(b)))
                .map_or(0, |b| b + 1);
            (scalar < end).then_some(scalar)
        }
    }
}

/// The quote that opens the string whose closing quote is at `close`: the
/// one before it not escaped (an even number of backslashes before it).
fn string_start(bytes: &[u8], close: usize) -> Option<usize> {
    let mut at = close;
    loop {
        at = bytes[..at].iter().rposition(|&b| b == b'"')?;
        let slashes = bytes[..at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if slashes % 2 == 0 {
            return Some(at);
        }
    }
}

/// rmcp's transport on stdio: what it reads and writes goes through the
/// filter, and an answer's place ([`crate::held`]) is given back once the
/// answer's last byte is written to stdout.
pub(crate) type ServerStdio =
    Answers<AsyncRwTransport<RoleServer, DuplexStream, Counted<DuplexStream>>>;

/// The server's stdio for rmcp; the task that copies its lines to stdout,
/// which ends once rmcp has dropped its end and every line is out (await
/// it before exiting); and what is cancelled once the client's lines have
/// ended (stdin closed or failed, or rmcp gone).
pub(crate) fn stdio(max_unanswered: usize) -> (ServerStdio, JoinHandle<()>, CancellationToken) {
    let (rmcp_reads, to_rmcp) = tokio::io::duplex(PIPE);
    let (from_rmcp, rmcp_writes) = tokio::io::duplex(PIPE);
    let rmcp_writes = Counted::new(rmcp_writes);
    let written = rmcp_writes.count();
    let (left, out) = watch::channel(0);
    let (answers, answered) = mpsc::channel(REFUSALS_QUEUED);
    let closed = CancellationToken::new();
    let reading = closed.clone().drop_guard();
    tokio::spawn(async move {
        let _reading = reading;
        requests(tokio::io::stdin(), to_rmcp, answers).await;
    });
    let out_task = tokio::spawn(answers_out(from_rmcp, tokio::io::stdout(), answered, left));
    let transport = Answers::new(
        AsyncRwTransport::new_server(rmcp_reads, rmcp_writes),
        written,
        out,
        max_unanswered,
    );
    (transport, out_task, closed)
}

/// Copies the client's lines to rmcp, but for a request too deep to read,
/// which is answered (through `answers`) instead. No line is read while
/// [`REFUSALS_QUEUED`] refusals wait to be written.
async fn requests(
    from: impl AsyncRead + Unpin,
    to: impl AsyncWrite + Unpin,
    answers: mpsc::Sender<Vec<u8>>,
) {
    filter_lines(
        from,
        to,
        |line, refusals| {
            if let Some((ids, why)) = not_json_rpc_2(line) {
                refusals.extend(ids.iter().map(|id| error_line(id, -32600, &why)));
                return Some(Vec::new());
            }
            let unread = unreadable(line)?;
            // Every request is answered: under its id when that can be
            // read, under `null` when not (as JSON-RPC 2.0 asks); a
            // notification (no id) never is, nor a client's answer to a
            // request of ours, nor a line that is no JSON (there is no id
            // to answer: as every official SDK, it gets nothing).
            let request = unread.request || (!unread.answer && matches!(unread.why, Why::Shape(_)));
            if request && unread.has_id {
                let id = unread.id.as_deref().unwrap_or("null");
                refusals.push(request_refused(&unread.why, id));
            }
            Some(Vec::new())
        },
        |long, refusals| {
            // A request whose `method` comes after its head is one too:
            // what has an id and is no answer is answered.
            if let (false, Some(id)) = (long.is_answer(), long.id()) {
                refusals.push(request_too_long(long.len, &id));
            }
            Vec::new()
        },
        Some(&answers),
        Unended::Ended,
    )
    .await;
}

/// Copies an upstream's lines to rmcp, an answer too deep to read replaced
/// by an error answer under its id.
async fn answers_in(from: impl AsyncRead + Unpin, to: impl AsyncWrite + Unpin) {
    filter_lines(
        from,
        to,
        |line, _| {
            let unread = unreadable(line)?;
            Some(match (&unread.id, unread.request) {
                (Some(id), false) => answer_unread(&unread.why, id),
                _ => Vec::new(),
            })
        },
        // Only what is surely an answer: an id of the upstream's own
        // requests is of another space, and must fail no call of ours.
        |long, _| match (long.is_answer(), long.id()) {
            (true, Some(id)) => answer_too_long(long.len, &id),
            _ => Vec::new(),
        },
        None,
        Unended::Whole,
    )
    .await;
}

/// What [`filter_lines`] makes of a last line its sender never ended.
#[derive(Clone, Copy, Debug)]
enum Unended {
    /// Read as a line that ended, so that a request there is answered:
    /// rmcp drops a line that never ends, and a client that closed its
    /// input right after a request without its newline would wait on its
    /// id for ever.
    Ended,
    /// Read as a line that ended only if it is not JSON cut short: a
    /// server that died while writing an answer fails its call as its
    /// exit does (`transient`, and it is started again for the next
    /// call), not as an answer that cannot be read. A whole answer
    /// without its newline still reaches its call.
    Whole,
}

impl Unended {
    /// Whether a last line is passed on (`long`: one too long to hold, of
    /// which only the ends were kept; `line` otherwise); a blank one never
    /// is.
    fn passes(self, long: Option<&Long>, line: &[u8]) -> bool {
        let blank = |bytes: &[u8]| bytes.iter().all(u8::is_ascii_whitespace);
        match (self, long) {
            (Unended::Ended, Some(_)) => true,
            (Unended::Ended, None) => !blank(line),
            // Too long to hold whole, so only its ends can tell: whether
            // it ends as a message does. A guess (a line cut just after a
            // nested object closed passes, and its call is answered too
            // long rather than failing as the exit fails it).
            (Unended::Whole, Some(long)) => long.tail.trim_ascii_end().ends_with(b"}"),
            (Unended::Whole, None) => !blank(line) && !cut_short(line),
        }
    }
}

/// Whether `line` is JSON text cut short: it ends inside a string, or with
/// an object or array still open. Counted, not read, so at any depth (a
/// reader's nesting limit would call an answer cut 200 levels deep
/// unreadable instead).
fn cut_short(line: &[u8]) -> bool {
    let (mut open, mut in_string, mut escaped) = (0usize, false, false);
    for &b in line {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => open += 1,
            b'}' | b']' => open = open.saturating_sub(1),
            _ => {}
        }
    }
    in_string || open > 0
}

/// Copies `from` to `to` line by line, each line as `judge` says: `None`
/// passes it as it came, `Some(text)` puts `text` in its place (nothing,
/// to drop it). A line longer than rmcp reads is not held: it is dropped
/// (rmcp would drop it), and what `too_long` makes of its ends and length
/// goes in its place once it has ended. What either pushes to its second
/// argument goes to `back` (answers to the sender of the lines) before the
/// next line is read, waiting while `back` is full. A last line without its
/// newline is read as `unended` says.
async fn filter_lines(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    mut judge: impl FnMut(&[u8], &mut Vec<Vec<u8>>) -> Option<Vec<u8>>,
    mut too_long: impl FnMut(&Long, &mut Vec<Vec<u8>>) -> Vec<u8>,
    back: Option<&mpsc::Sender<Vec<u8>>>,
    unended: Unended,
) {
    let mut answers = Vec::new();
    let mut from = BufReader::new(from);
    let mut line = Vec::new();
    // Inside a line too long to hold: only its ends are kept.
    let mut long: Option<Long> = None;
    let mut ended = false;
    while !ended {
        match from.fill_buf().await {
            Ok(chunk) if !chunk.is_empty() => {
                let newline = chunk.iter().position(|&b| b == b'\n');
                let take = newline.map_or(chunk.len(), |at| at + 1);
                let part = &chunk[..take];
                if let Some(long) = &mut long {
                    long.take(part);
                } else if line.len() + take > MAX_LINE_LENGTH {
                    let mut started = Long::default();
                    started.take(&line);
                    started.take(part);
                    long = Some(started);
                    line.clear();
                } else {
                    line.extend_from_slice(part);
                }
                from.consume(take);
                if newline.is_none() {
                    continue;
                }
            }
            // The input ended (or failed) inside a line: its sender closed
            // it right after a message without its newline, or died while
            // writing one.
            _ if unended.passes(long.as_ref(), &line) => {
                ended = true;
                if long.is_none() && line.len() < MAX_LINE_LENGTH {
                    line.push(b'\n');
                } else if long.is_none() {
                    let mut whole = Long::default();
                    whole.take(&line);
                    long = Some(whole);
                }
            }
            _ => break,
        }
        let written = if let Some(long) = long.take() {
            to.write_all(&too_long(&long, &mut answers)).await
        } else {
            let written = match judge(&line, &mut answers) {
                None => to.write_all(&line).await,
                Some(instead) => to.write_all(&instead).await,
            };
            line.clear();
            written
        };
        if written.is_err() {
            return;
        }
        for answer in answers.drain(..) {
            // Nobody left to write it: the answers are dropped, the lines
            // still go through.
            if let Some(back) = back {
                let _ = back.send(answer).await;
            }
        }
    }
}

/// Writes rmcp's lines and the filter's answers to `to`, an answer only
/// between two of rmcp's lines. rmcp's bytes go out as they come; `left`
/// counts those written (a line's last ones once flushed).
async fn answers_out(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    mut answers: mpsc::Receiver<Vec<u8>>,
    left: watch::Sender<u64>,
) {
    let mut from = BufReader::new(from);
    let mut mid_line = false;
    let mut out = 0u64;
    let mut answering = true;
    loop {
        tokio::select! {
            // Cancel-safe: when the other branch wins, nothing was read.
            chunk = from.fill_buf() => {
                let chunk = match chunk {
                    Ok(chunk) if !chunk.is_empty() => chunk,
                    _ => break,
                };
                let take = chunk.iter().position(|&b| b == b'\n').map_or(chunk.len(), |at| at + 1);
                mid_line = chunk[take - 1] != b'\n';
                let written = to.write_all(&chunk[..take]).await;
                from.consume(take);
                if written.is_err() || (!mid_line && to.flush().await.is_err()) {
                    return;
                }
                out += take as u64;
                left.send_replace(out);
            }
            answer = answers.recv(), if answering && !mid_line => match answer {
                Some(answer) => {
                    if to.write_all(&answer).await.is_err() || to.flush().await.is_err() {
                        return;
                    }
                }
                None => answering = false,
            },
        }
    }
    // rmcp is done; answers made before it ended still go out (`select!`
    // may have seen its end first).
    if !mid_line {
        while let Ok(answer) = answers.try_recv() {
            if to.write_all(&answer).await.is_err() {
                break;
            }
        }
    }
    let _ = to.flush().await;
}

/// An upstream server's process as rmcp's transport, its answers through
/// the filter. Closing it closes the server's stdin and waits
/// [`EXIT_GRACE`] for it to exit before killing it; dropping it kills it.
pub(crate) struct ChildTransport {
    child: Child,
    inner: AsyncRwTransport<RoleClient, DuplexStream, ChildStdin>,
    /// The server's process tree: what it started goes with it (only its
    /// own pid was killed, and a wrapper's real server, or a tool it ran,
    /// outlived `wasmwire mcp`).
    _tree: Containment,
    /// Cancelled when the server's output has ended, before rmcp reads
    /// that end.
    ended: CancellationToken,
}

impl ChildTransport {
    /// Starts `command` in a containment of its own, its stdin and stdout
    /// piped, its stderr passed on as the console shows text.
    pub(crate) fn spawn(mut command: Command) -> std::io::Result<Self> {
        let tree = Containment::new(Limits::default())?;
        tree.apply(&mut command);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = tree.spawn(&mut command)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the child's stdio was not piped"));
        };
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(stderr_out(stderr));
        }
        let (rmcp_reads, mut to_rmcp) = tokio::io::duplex(PIPE);
        let ended = CancellationToken::new();
        let told = ended.clone();
        tokio::spawn(async move {
            answers_in(stdout, &mut to_rmcp).await;
            // Told before rmcp can read the end (`to_rmcp` goes after
            // this): rmcp fails the calls in flight when it reads it, and
            // a call made as soon as one of them has failed must find the
            // connection ended, not go out on it to fail too.
            told.cancel();
        });
        Ok(ChildTransport {
            child,
            inner: AsyncRwTransport::new_client(rmcp_reads, stdin),
            _tree: tree,
            ended,
        })
    }

    /// Cancelled when the server's output has ended (it exited, or closed
    /// its stdout): the connection is over, though rmcp may not have read
    /// that yet.
    pub(crate) fn ended(&self) -> CancellationToken {
        self.ended.clone()
    }
}

/// An upstream server's stderr, passed on to ours as it comes, its control
/// characters shown as the console shows them (it was inherited, and an
/// upstream's escape sequences reached the operator's terminal and could
/// forge `wasmwire mcp:` lines with a `\r`). Read in pieces of a bounded
/// size: a line is never held whole.
async fn stderr_out(mut from: impl AsyncRead + Unpin) {
    use tokio::io::AsyncReadExt;
    let mut piece = vec![0u8; 8 << 10];
    loop {
        match from.read(&mut piece).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let text = wasmwire::console::neutralise(&String::from_utf8_lossy(&piece[..n]));
                let mut stderr = tokio::io::stderr();
                if stderr.write_all(text.as_bytes()).await.is_err() {
                    return;
                }
            }
        }
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await?;
        if tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::not_json_rpc_2;

    #[test]
    fn a_batch_or_another_version_is_refused_by_each_requests_id() {
        let (ids, why) = not_json_rpc_2(
            br#"[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"ping"},{"id":9,"result":{}}]"#,
        )
        .expect("a batch");
        assert_eq!(ids, ["7", "\"b\""]);
        assert!(why.contains("batch"), "{why}");
        let (ids, why) =
            not_json_rpc_2(br#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#).unwrap();
        assert_eq!(
            (ids, why.as_str()),
            (
                vec!["3".to_owned()],
                r#""jsonrpc" must be "2.0" (got "1.0")"#
            )
        );
        let (_, why) = not_json_rpc_2(b"{\"id\":4,\"method\":\"x\"}\n").unwrap();
        assert!(why.ends_with("(got none)"), "{why}");
        // What rmcp reads, a notification and an answer are left alone.
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#[..],
            br#"{"jsonrpc" : "2.0", "id":1,"method":"tools/list"}"#,
            br#"{"jsonrpc":"1.0","method":"notifications/x"}"#,
            br#"{"id":5,"result":{}}"#,
            b"not json",
        ] {
            assert_eq!(
                not_json_rpc_2(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    use super::*;

    fn nested(levels: usize, inner: &str) -> String {
        "[".repeat(levels) + inner + &"]".repeat(levels)
    }

    /// Each line of `out` read as JSON.
    fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
        let out = std::str::from_utf8(out).unwrap();
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(!lines.is_empty(), "no lines in {out:?}");
        lines
    }

    #[test]
    fn a_line_is_too_deep_only_where_serde_json_stops() {
        let request = |levels| {
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"arguments":{{"v":{}}}}}}}"#,
                nested(levels, "1")
            )
        };
        // Three levels of envelope: 125 inside makes 128.
        assert_eq!(unreadable(request(124).as_bytes()), None);
        let deep = unreadable(request(125).as_bytes()).expect("too deep");
        assert_eq!(
            (deep.why, deep.id.as_deref(), deep.request),
            (Why::Deep(128), Some("7"), true)
        );
        // Any depth, without reading it: the id comes first or last.
        let answer = format!(
            r#"{{"result":{},"id":"a\"b","jsonrpc":"2.0"}}"#,
            nested(1 << 20, "")
        );
        let deep = unreadable(answer.as_bytes()).expect("too deep");
        assert_eq!(
            (deep.id.as_deref(), deep.request),
            (Some(r#""a\"b""#), false)
        );
        // An id that is an object, or a string only in a nested object, is none.
        let odd = format!(
            r#"{{"params":{{"id":1}},"id":{{"x":1}},"method":"m","v":{}}}"#,
            nested(200, "")
        );
        assert_eq!(unreadable(odd.as_bytes()).unwrap().id, None);
    }

    #[test]
    fn json_text_serde_json_does_not_read_into_values_is_unreadable_under_its_id() {
        let refused = |value: &str| {
            let line = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"v":{value}}}}}"#);
            let unread = unreadable(line.as_bytes())?;
            assert_eq!((unread.id.as_deref(), unread.request), (Some("3"), false));
            match unread.why {
                Why::Refused(why) => Some(why),
                other => panic!("{value}: {other:?}"),
            }
        };
        let lone = refused(r#""caf\ud83d""#).expect("a lone surrogate");
        assert!(
            lone.contains("surrogate") || lone.contains("hex escape"),
            "{lone}"
        );
        assert!(
            refused(r#""\udc00x""#).is_some(),
            "a lone trailing surrogate"
        );
        assert!(refused("NaN").is_some());
        let huge = refused("1e400").expect("past a double");
        assert!(huge.contains("number out of range"), "{huge}");
        // What serde_json reads passes, a pair of surrogates too.
        for fine in [
            r#""caf\ud83d\ude00""#,
            "1e300",
            "123456789012345678901234567890",
            r#"[{"a":[]}]"#,
        ] {
            assert_eq!(refused(fine), None, "{fine}");
        }
        // Not JSON at all, or not UTF-8: no id to answer, as rmcp drops it.
        let not_json = unreadable(b"{not json").expect("no JSON");
        assert_eq!((not_json.id, not_json.request), (None, false));
        let not_utf8 =
            unreadable(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"m\",\"x\":\"\xff\"}")
                .expect("not UTF-8");
        assert_eq!(
            (not_utf8.id.as_deref(), not_utf8.request),
            (Some("4"), true)
        );
        // An id whose own bytes are no UTF-8 is none the client sent: it
        // read as "\u{FFFD}", answered under an id nobody waits on.
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":\"a\xc3\",\"method\":\"ping\"}",
        ] {
            let unread = unreadable(line).expect("not UTF-8");
            assert_eq!((unread.id, unread.has_id), (None, true));
        }
        // A U+FFFD the client sent is its id.
        let sent = unreadable("{\"jsonrpc\":\"2.0\",\"id\":\"\u{FFFD}\",\"method\":5}".as_bytes())
            .expect("a method that is no string");
        assert_eq!(sent.id.as_deref(), Some("\"\u{FFFD}\""));
        // An empty line is no message.
        assert_eq!(unreadable(b"\r\n"), None);
        // JSON, but no answer rmcp reads: it would drop it as well.
        for answer in [
            r#"{"jsonrpc":"2.0","id":5,"result":7}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":"x","message":5}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":5}"#,
            r#"{"id":5,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":5,"result":{}}"#,
        ] {
            let unread = unreadable(answer.as_bytes()).expect(answer);
            assert_eq!(unread.id.as_deref(), Some("5"));
            assert!(
                matches!(&unread.why, Why::Refused(why) if why.contains("no JSON-RPC answer"))
                    || matches!(&unread.why, Why::Shape(why) if why.contains("no result or error")),
                "{unread:?}"
            );
        }
        for fine in [
            r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"m","data":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
        ] {
            assert_eq!(unreadable(fine.as_bytes()), None, "{fine}");
        }
    }

    /// rmcp answered these "Invalid request" under no id (a client waited
    /// for ever), answered a notification (JSON-RPC forbids it), or said
    /// nothing at all; each is now answered here under its id, `null`
    /// when that cannot be read, and a notification not at all.
    #[tokio::test]
    async fn requests_rmcp_cannot_read_are_answered_under_their_id_and_notifications_never() {
        let call = r#""name":"run_javascript","arguments":{"code":"1"}"#;
        let cases: Vec<(String, &str, &str)> = vec![
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{{{call},"_meta":"s"}}}}"#
                ),
                r#""a1""#,
                "_meta is a string",
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":"a2","method":"tools/call","params":{{{call},"_meta":[]}}}}"#
                ),
                r#""a2""#,
                "_meta is an array",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a3","method":"tools/call","params":[1]}"#.into(),
                r#""a3""#,
                "params are an array",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a4","method":"tools/list","params":"x"}"#.into(),
                r#""a4""#,
                "params are a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a5","method":"tools/list","params":{"_meta":5}}"#.into(),
                r#""a5""#,
                "_meta is an integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a6","method":"ping","params":5}"#.into(),
                r#""a6""#,
                "params are an integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a7","method":5}"#.into(),
                r#""a7""#,
                "method is an integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a8"}"#.into(),
                r#""a8""#,
                "no method",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a9","method":"ping","result":{}}"#.into(),
                r#""a9""#,
                "a method and a result",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.into(),
                "1.5",
                "id is a number that is no integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#.into(),
                "9223372036854775808",
                "no integer within 64 bits",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1180591620717411303424,"method":"ping"}"#.into(),
                "1180591620717411303424",
                "no integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.into(),
                "null",
                "id is a boolean",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.into(),
                "null",
                "id is null",
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#.into(),
                "null",
                "id is an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#.into(),
                "null",
                "id is an array",
            ),
            (
                r#"{"jsonrpc":"2.0","method":"ping","id":"\ud800"}"#.into(),
                "null",
                "surrogate",
            ),
        ];
        let notifications = [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":"x"}"#,
            r#"{"jsonrpc":"2.0","method":5}"#,
        ];
        // What rmcp reads passes, odd but valid ids among them.
        let fine = [
            r#"{"jsonrpc":"2.0","id":1e2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-1,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":"p","method":"ping","params":{"_meta":null}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":5,"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":[1]}}}"#,
            r#"{"jsonrpc":"2.0","id":"r","result":{}}"#,
        ];
        let mut input = String::new();
        for line in cases
            .iter()
            .map(|(l, _, _)| l.as_str())
            .chain(notifications)
            .chain(fine)
        {
            input.push_str(line);
            input.push('\n');
        }
        let (answers, mut answered) = mpsc::channel(REFUSALS_QUEUED);
        let mut to_rmcp = Vec::new();
        requests(input.as_bytes(), &mut to_rmcp, answers).await;
        let passed: Vec<&str> = std::str::from_utf8(&to_rmcp).unwrap().lines().collect();
        assert_eq!(passed, fine);
        let mut refused = Vec::new();
        while let Ok(line) = answered.try_recv() {
            refused.push(String::from_utf8(line).unwrap());
        }
        assert_eq!(refused.len(), cases.len(), "{refused:#?}");
        for (refusal, (line, id, why)) in refused.iter().zip(&cases) {
            assert!(
                refusal.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"#)),
                "{line}: {refusal}"
            );
            let refusal: serde_json::Value = serde_json::from_str(refusal).unwrap();
            let message = refusal["error"]["message"].as_str().unwrap();
            assert!(message.contains(why), "{line}: {message}");
        }
    }

    /// An upstream server's own children go with it: a wrapper (`npx`,
    /// `uvx`) or a tool it ran outlived `wasmwire mcp`, only the server's
    /// own pid being killed.
    #[tokio::test]
    async fn what_an_upstream_server_started_goes_with_it() {
        let dir = std::env::temp_dir().join(format!("wasmwire-deep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("grandchild");
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(format!(
            "sleep 300 & echo $! > {}.tmp && mv {0}.tmp {0}; cat > /dev/null",
            marker.display()
        ));
        let transport = ChildTransport::spawn(command).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !marker.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the server never started"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let alive = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let state = stat.rsplit(')').next().unwrap_or("").trim();
                !state.starts_with('Z') && !state.starts_with('X')
            })
        };
        assert!(alive(pid));
        drop(transport);
        while alive(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "the server's child {pid} outlived it"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_deep_request_is_answered_between_rmcps_lines_and_the_rest_pass() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{}}}\n",
            nested(200, "")
        );
        let notification = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{}}}\n",
            nested(200, "")
        );
        let plain = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n";
        let input = format!("{deep}{notification}{plain}");
        let (answers, answered) = mpsc::channel(REFUSALS_QUEUED);
        let mut to_rmcp = Vec::new();
        requests(input.as_bytes(), &mut to_rmcp, answers).await;
        assert_eq!(String::from_utf8(to_rmcp).unwrap(), plain);
        // rmcp's own output and the answer come out as whole lines.
        let rmcp_said = "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n";
        let mut out = Vec::new();
        let (left, written) = watch::channel(0);
        answers_out(rmcp_said.as_bytes(), &mut out, answered, left).await;
        assert_eq!(*written.borrow(), rmcp_said.len() as u64);
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 2, "{lines:?}");
        let refused = lines.iter().find(|l| l["id"] == 3).expect("answered");
        assert_eq!(refused["error"]["code"], -32600);
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("201 levels")
        );
        assert!(
            lines
                .iter()
                .any(|l| l["id"] == 4 && l["result"].is_object())
        );
    }

    #[tokio::test]
    async fn a_line_longer_than_rmcp_reads_without_an_id_is_dropped_and_the_next_is_judged() {
        // Not held whole (a line without end would grow without bound);
        // rmcp would drop it.
        let long = "x".repeat(MAX_LINE_LENGTH + 5) + "\n";
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}}\n",
            nested(300, "")
        );
        let mut to_rmcp = Vec::new();
        answers_in(format!("{long}{deep}").as_bytes(), &mut to_rmcp).await;
        assert_eq!(to_rmcp, answer_unread(&Why::Deep(301), "9"));
    }

    /// A request longer than rmcp reads was dropped without a word, and its
    /// client waited for ever; it is answered under its id, found at
    /// either end (the Python SDK writes it first, the TypeScript SDK last).
    #[tokio::test]
    async fn a_request_longer_than_rmcp_reads_is_answered_under_its_id() {
        let code = "x".repeat(MAX_LINE_LENGTH);
        let params = format!(r#"{{"name":"run_javascript","arguments":{{"code":"{code}"}}}}"#);
        let first =
            format!(r#"{{"jsonrpc":"2.0","id":"a\"1","method":"tools/call","params":{params}}}"#);
        let last =
            format!(r#"{{"method":"tools/call","params":{params},"jsonrpc":"2.0","id":12 }}"#);
        let notification = format!(r#"{{"method":"n","params":{params},"jsonrpc":"2.0"}}"#);
        // Member order is free: the method after the params, past the head.
        let method_last =
            format!(r#"{{"params":{params},"jsonrpc":"2.0","id":"ml","method":"tools/call"}}"#);
        // A client's answer to a request of ours is no request.
        let answer = format!(r#"{{"jsonrpc":"2.0","id":5,"result":{params}}}"#);
        let plain = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n";
        let input = format!("{first}\n{last}\r\n{notification}\n{method_last}\n{answer}\n{plain}");
        let (answers, mut answered) = mpsc::channel(REFUSALS_QUEUED);
        let mut to_rmcp = Vec::new();
        requests(input.as_bytes(), &mut to_rmcp, answers).await;
        assert_eq!(String::from_utf8(to_rmcp).unwrap(), plain);
        let mut refused = Vec::new();
        while let Ok(line) = answered.try_recv() {
            refused.extend(json_lines(&line));
        }
        assert_eq!(refused.len(), 3, "{refused:?}");
        assert_eq!(refused[0]["id"], "a\"1");
        assert_eq!(refused[1]["id"], 12);
        assert_eq!(refused[2]["id"], "ml");
        for (refusal, len) in refused.iter().zip([first.len() + 1, last.len() + 2]) {
            assert_eq!(refusal["error"]["code"], -32600);
            let message = refusal["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(&format!("is {len} bytes long")),
                "{message}"
            );
        }
    }

    /// A client that sent lines to refuse and read nothing made the server
    /// hold a refusal for every line, without bound; now reading stops
    /// while [`REFUSALS_QUEUED`] wait to be written, and none is lost.
    #[tokio::test]
    async fn refusals_nobody_reads_stop_the_reading_and_none_is_lost() {
        let sent = 1000;
        let input: String = (0..sent)
            .map(|id| format!("{{\"jsonrpc\":\"1.0\",\"id\":{id},\"method\":\"x\"}}\n"))
            .collect();
        let (answers, mut answered) = mpsc::channel(REFUSALS_QUEUED);
        let mut to_rmcp = Vec::new();
        // Unconstrained: no poll ends for tokio's budget, only for a wait.
        let mut reading = std::pin::pin!(tokio::task::unconstrained(requests(
            input.as_bytes(),
            &mut to_rmcp,
            answers
        )));
        let mut ids = Vec::new();
        // Every line is there to read at once, so a poll reads until it
        // must wait, which it does only for refusals nobody took.
        while futures::poll!(reading.as_mut()).is_pending() {
            assert_eq!(answered.len(), REFUSALS_QUEUED);
            while let Ok(line) = answered.try_recv() {
                ids.extend(json_lines(&line).iter().map(|l| l["id"].as_i64().unwrap()));
            }
        }
        while let Ok(line) = answered.try_recv() {
            ids.extend(json_lines(&line).iter().map(|l| l["id"].as_i64().unwrap()));
        }
        assert_eq!(ids, (0..sent).collect::<Vec<_>>());
    }

    /// An upstream answer longer than rmcp reads left the program's call
    /// waiting until its deadline; it becomes a [`TOO_LONG`] error at once.
    #[tokio::test]
    async fn an_answer_longer_than_rmcp_reads_becomes_an_error_under_its_id() {
        let text = "y".repeat(MAX_LINE_LENGTH);
        let long = format!(
            r#"{{"result":{{"content":[{{"type":"text","text":"{text}"}}]}},"jsonrpc":"2.0","id":33}}"#
        );
        let plain = "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}\n";
        // A request of the upstream's (its ids are of its own space) is
        // dropped, as rmcp would, and fails no call of ours.
        let request = format!(
            r#"{{"method":"sampling/createMessage","params":{{"t":"{text}"}},"jsonrpc":"2.0","id":10}}"#
        );
        let mut to_rmcp = Vec::new();
        answers_in(
            format!("{long}\n{request}\n{plain}").as_bytes(),
            &mut to_rmcp,
        )
        .await;
        let lines = json_lines(&to_rmcp);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0]["id"], 33);
        assert_eq!(lines[0]["error"]["code"], TOO_LONG);
        assert!(
            lines[0]["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{TOO_LONG_WORDS}{} bytes", long.len() + 1))
        );
        assert_eq!(lines[1]["id"], 10);
    }

    #[test]
    fn a_trailing_id_is_read_only_at_the_top_level() {
        let id = |text: &str| trailing_id(text.as_bytes());
        assert_eq!(id(r#"x","id":7}"#).as_deref(), Some("7"));
        assert_eq!(
            id("x\" , \"id\" : -1.5e3 }  \r\n").as_deref(),
            Some("-1.5e3")
        );
        assert_eq!(id(r#"{"id":"a\\"}"#).as_deref(), Some(r#""a\\""#));
        assert_eq!(id(r#"x","id":"q\"}"#), None, "the string does not close");
        assert_eq!(id(r#"{"p":{"id":1}}"#), None, "nested");
        assert_eq!(id(r#"x","id":{"a":1}}"#), None, "not an id");
        assert_eq!(id(r#"x","xid":1}"#), None);
        // Not the last member: read back over those after it.
        assert_eq!(
            id(r#"x","id":"ml","method":"tools/call","p":{"q":["}\"",1]},"t":true}"#).as_deref(),
            Some(r#""ml""#)
        );
        assert_eq!(id(r#"x","id":3,"s":"a\\"}"#).as_deref(), Some("3"));
        // The tail may begin inside a character (its first bytes cut off).
        assert_eq!(trailing_id(b"\xa9\xe9x\",\"id\":7}").as_deref(), Some("7"));
        // A nested id after the top-level's own is still not it.
        assert_eq!(id(r#"[1],"p":{"id":9}}"#), None);
    }

    #[tokio::test]
    async fn a_deep_answer_from_upstream_becomes_an_error_under_its_id() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}}\n",
            nested(300, "")
        );
        let plain = "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}\n";
        let mut to_rmcp = Vec::new();
        answers_in(format!("{deep}{plain}").as_bytes(), &mut to_rmcp).await;
        let lines = json_lines(&to_rmcp);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0]["id"], 9);
        assert_eq!(lines[0]["error"]["code"], -32603);
        assert_eq!(
            lines[1],
            serde_json::from_str::<serde_json::Value>(plain).unwrap()
        );
    }

    /// An upstream that ended its output right after an answer without its
    /// newline: rmcp drops a line that never ends, and the call waited for
    /// ever. The line is passed on ended; a line of only blanks is not, and
    /// a line too long to read that ends there is answered as one.
    #[tokio::test]
    async fn a_whole_last_answer_without_its_newline_is_passed_on_and_a_cut_one_dropped() {
        let plain = "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}";
        let mut to_rmcp = Vec::new();
        answers_in(plain.as_bytes(), &mut to_rmcp).await;
        assert_eq!(to_rmcp, format!("{plain}\n").into_bytes());

        let mut to_rmcp = Vec::new();
        answers_in(format!("{plain}\n  \t").as_bytes(), &mut to_rmcp).await;
        assert_eq!(to_rmcp, format!("{plain}\n").into_bytes());

        // A server that died while writing: its call fails as the exit
        // fails it, not on JSON that cannot be read.
        let cut = "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"content\":[{\"type\":\"te";
        let mut to_rmcp = Vec::new();
        answers_in(format!("{plain}\n{cut}").as_bytes(), &mut to_rmcp).await;
        assert_eq!(to_rmcp, format!("{plain}\n").into_bytes());

        // Cut 200 levels deep: cut, not too deep to read.
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":14,\"result\":{}",
            "[".repeat(200)
        );
        let mut to_rmcp = Vec::new();
        answers_in(format!("{plain}\n{deep}").as_bytes(), &mut to_rmcp).await;
        assert_eq!(to_rmcp, format!("{plain}\n").into_bytes());
        // A string cut, braces inside it or an escaped quote before its end.
        for cut in [
            r#"{"id":15,"result":{"a":"}}"#,
            r#"{"id":16,"result":"x\"}"#,
        ] {
            let mut to_rmcp = Vec::new();
            answers_in(cut.as_bytes(), &mut to_rmcp).await;
            assert_eq!(to_rmcp, Vec::<u8>::new(), "{cut}");
        }

        // Whole but unreadable (not cut short): answered as unreadable.
        let wrong = "{\"jsonrpc\":\"2.0\",\"id\":13,\"result\":{}} }";
        let mut to_rmcp = Vec::new();
        answers_in(wrong.as_bytes(), &mut to_rmcp).await;
        assert_ne!(to_rmcp, Vec::<u8>::new(), "not dropped as cut");

        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":\"{}\"}}",
            "x".repeat(MAX_LINE_LENGTH)
        );
        let mut to_rmcp = Vec::new();
        answers_in(format!("{long}\n").as_bytes(), &mut to_rmcp).await;
        let lines = json_lines(&to_rmcp);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0]["id"], 11);
        assert_eq!(lines[0]["error"]["code"], TOO_LONG);
        // Without its newline it is still answered as too long; cut short
        // (its end not a message's), it is dropped.
        let mut to_rmcp = Vec::new();
        answers_in(long.as_bytes(), &mut to_rmcp).await;
        assert_eq!(json_lines(&to_rmcp)[0]["error"]["code"], TOO_LONG);
        let mut to_rmcp = Vec::new();
        answers_in(&long.as_bytes()[..long.len() - 3], &mut to_rmcp).await;
        assert_eq!(to_rmcp, Vec::<u8>::new());
    }
}
