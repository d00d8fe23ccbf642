//! The five messages (docs/protocol.md §3) and their JSON shape.
//!
//! Field names and omission rules follow the original Go package, so that a
//! Go parent and a Rust child interoperate: a field marked *omitted when
//! empty* is left out when it is zero, empty or `None` (Go's `omitempty`),
//! and a missing optional field decodes as its zero value. Unknown fields are
//! ignored; a field of the wrong type is a decode error.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ProtocolError;
use crate::{FailureKind, ToolFailure, VERSION};

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_duration(d: &Duration) -> bool {
    d.is_zero()
}

/// An optional field that may arrive as `null`: read as its zero value,
/// as if it had been left out. Go's encoding/json writes `null` for a nil
/// slice, map, pointer or `json.RawMessage` that is not `omitempty`, so a
/// Go peer may send `null` for any optional field (docs/protocol.md §1).
/// Required fields (`v`, `id`, `ok`, `program`, `result_id`, a binding's
/// `name`) are not read this way: `null` there is refused.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `T` read only from a JSON object. serde's derive also reads a struct
/// from a list (its fields by position), which no encoder of this protocol
/// writes and which would make field order a contract: `"budget": []`
/// would read as no budget.
struct ObjectOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Fields<T>(std::marker::PhantomData<T>);

        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Fields<T> {
            type Value = T;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }

        d.deserialize_map(Fields(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

/// The Start's `budget`: an object, or `null` or absent for none.
fn budget_object<'de, D>(d: D) -> std::result::Result<StartBudget, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(Option::<ObjectOnly<StartBudget>>::deserialize(d)?
        .map_or_else(StartBudget::default, |b| b.0))
}

/// The Start's `program`, the largest thing a parent sends: its text as
/// sent, taken whole, then read in place
/// ([`unescape_in_place`](crate::json::unescape_in_place)), so that a program
/// with escapes (every program of more than one line) is held once beside
/// its frame, not in serde_json's scratch too.
fn program_text<'de, D>(d: D) -> std::result::Result<String, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let raw: Box<str> = Box::<serde_json::value::RawValue>::deserialize(d)?.into();
    let raw = String::from(raw);
    if !raw.starts_with('"') {
        let kind = match raw.as_bytes().first() {
            Some(b'{') => "an object",
            Some(b'[') => "an array",
            Some(b'n') => "null",
            Some(b't' | b'f') => "a boolean",
            _ => "a number",
        };
        return Err(serde::de::Error::invalid_type(
            serde::de::Unexpected::Other(kind),
            &"the program's text, a string",
        ));
    }
    // Its quotes off (one move of the text), then read where it is.
    let mut text = raw;
    text.pop();
    text.remove(0);
    crate::json::unescape_in_place(text).ok_or_else(|| {
        serde::de::Error::custom(
            "the program has an escape JSON does not read as text (half a surrogate pair?)",
        )
    })
}

/// The Start's `bindings`: a list of objects, or `null` or absent for none.
fn binding_objects<'de, D>(d: D) -> std::result::Result<Vec<StartBinding>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let bindings = Option::<Vec<ObjectOnly<StartBinding>>>::deserialize(d)?.unwrap_or_default();
    Ok(bindings.into_iter().map(|b| b.0).collect())
}

/// A message that travels in a frame: it carries `"v"`.
pub trait Message: Serialize + for<'de> Deserialize<'de> {
    /// The message's name, for errors ("Request", "Result", ...).
    const NAME: &'static str;
    /// The `v` it carries.
    fn version(&self) -> u32;
}

/// A tool call, child -> parent, on the call channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Protocol version; always [`VERSION`] when built here.
    pub v: u32,
    /// Non-empty, unique among the execution's calls in flight.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments as raw text (usually JSON); the protocol never parses
    /// them. Omitted when empty.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub args: String,
    /// The child's wish for a per-call deadline in milliseconds; 0 (omitted)
    /// means none. The parent enforces `min(wish, host maximum)`.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "null_as_default"
    )]
    pub deadline_ms: u64,
}

/// A [`Request`] as it is written, its text borrowed: a call's args are
/// framed from the program's text, not copied into a [`Request`] first
/// (for large args that copy was as large again, held at once).
#[derive(Debug, Serialize)]
pub(crate) struct RequestOut<'a> {
    pub(crate) v: u32,
    pub(crate) id: &'a str,
    pub(crate) tool: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub(crate) args: &'a str,
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) deadline_ms: u64,
}

impl RequestOut<'_> {
    /// This Request's whole frame (prefix included), the bytes
    /// [`encode`](crate::encode) writes (serde_json's key order, escapes
    /// and numbers), without serde's walk of the struct: the child frames
    /// every call it makes, and that walk was a twentieth of a call's round
    /// trip. For args of any size the frame grows as `encode`'s does; large
    /// ones go through `encode_sized`, which counts them first.
    pub(crate) fn frame(&self) -> std::result::Result<Vec<u8>, crate::FrameError> {
        use crate::frame::PREFIX_BYTES;
        let mut buf = Vec::with_capacity(
            PREFIX_BYTES + 48 + self.id.len() + self.tool.len() + self.args.len(),
        );
        buf.extend_from_slice(&[0; PREFIX_BYTES]);
        buf.extend_from_slice(br#"{"v":"#);
        json(&mut buf, &self.v)?;
        buf.extend_from_slice(br#","id":"#);
        json(&mut buf, self.id)?;
        buf.extend_from_slice(br#","tool":"#);
        json(&mut buf, self.tool)?;
        if !self.args.is_empty() {
            buf.extend_from_slice(br#","args":"#);
            json(&mut buf, self.args)?;
        }
        if !is_zero(&self.deadline_ms) {
            buf.extend_from_slice(br#","deadline_ms":"#);
            json(&mut buf, &self.deadline_ms)?;
        }
        buf.push(b'}');
        crate::frame::seal(&mut buf, crate::MAX_FRAME_BYTES)?;
        Ok(buf)
    }
}

/// `value` written after `buf` as serde_json writes it.
fn json<T: Serialize + ?Sized>(
    buf: &mut Vec<u8>,
    value: &T,
) -> std::result::Result<(), crate::FrameError> {
    serde_json::to_writer(buf, value).map_err(|e| crate::FrameError::Io(e.into()))
}

impl Request {
    /// A request at the current version.
    pub fn new(id: impl Into<String>, tool: impl Into<String>, args: impl Into<String>) -> Self {
        Request {
            v: VERSION,
            id: id.into(),
            tool: tool.into(),
            args: args.into(),
            deadline_ms: 0,
        }
    }
}

/// The child no longer wants the answer to one call in flight, child ->
/// parent, on the call channel: `{"v":1,"withdraw":"<id>"}`.
///
/// Sent only to a parent whose [`Start`] set `withdraw`. The parent
/// cancels the call's handler if it is still running and answers the call
/// `cancelled` itself, so every accepted call still gets exactly one
/// Response and the child frees the call's slot only when it arrives. A
/// Withdraw for an id that is not in flight (its answer crossed the
/// Withdraw on the wire) is ignored: it is not a protocol violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Withdraw {
    /// Protocol version.
    pub v: u32,
    /// The `id` of the Request withdrawn.
    pub withdraw: String,
}

impl Withdraw {
    /// Withdraws the call `id`, at the current version.
    pub fn new(id: impl Into<String>) -> Self {
        Withdraw {
            v: VERSION,
            withdraw: id.into(),
        }
    }
}

/// The answer to one [`Request`], parent -> child, matched by `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// Protocol version.
    pub v: u32,
    /// The `id` of the request this answers.
    pub id: String,
    /// Whether the call succeeded.
    pub ok: bool,
    /// The value as raw text (usually JSON). Omitted when empty.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub value: String,
    /// The failure class; always present when `ok` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FailureKind>,
    /// What went wrong. Omitted when empty.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub error: String,
}

impl Response {
    /// A successful answer carrying `value`.
    pub fn success(id: impl Into<String>, value: impl Into<String>) -> Self {
        Response {
            v: VERSION,
            id: id.into(),
            ok: true,
            value: value.into(),
            kind: None,
            error: String::new(),
        }
    }

    /// A failed answer of class `kind`.
    pub fn failure(id: impl Into<String>, kind: FailureKind, error: impl Into<String>) -> Self {
        Response {
            v: VERSION,
            id: id.into(),
            ok: false,
            value: String::new(),
            kind: Some(kind),
            error: error.into(),
        }
    }

    /// What the answer says, as a child takes it: the value, or the failure
    /// with its class. A failure without a kind, or a success with one, is
    /// the parent's protocol violation.
    #[allow(clippy::type_complexity)] // (id, the call's outcome) or the violation
    pub fn into_outcome(
        self,
    ) -> std::result::Result<(String, std::result::Result<String, ToolFailure>), ProtocolError>
    {
        match (self.ok, self.kind) {
            (true, None) => Ok((self.id, Ok(self.value))),
            (false, Some(kind)) => Ok((self.id, Err(ToolFailure::new(kind, self.error)))),
            (true, Some(_)) => Err(ProtocolError::KindOnSuccess {
                message: "Response",
                id: self.id,
            }),
            (false, None) => Err(ProtocolError::MissingKind {
                message: "Response",
                id: self.id,
            }),
        }
    }
}

/// One binding the program can call: a global async function and `host.<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartBinding {
    /// The tool's name.
    pub name: String,
    /// e.g. `"get_logs(host, count)"`: the parameter names become the keys of
    /// the args object. Omitted when empty (then the single argument is sent).
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub signature: String,
}

/// The budget of one execution. Every item is 0 (and omitted) when unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartBudget {
    /// Wall-clock time for the whole execution, as integer nanoseconds on the wire.
    #[serde(
        default,
        skip_serializing_if = "is_zero_duration",
        with = "nanoseconds"
    )]
    pub wall_clock: Duration,
    /// Most tool calls the parent accepts.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "null_as_default"
    )]
    pub max_calls: u64,
    /// Most bytes of tool values the parent sends.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "null_as_default"
    )]
    pub max_bytes: u64,
    /// Most bytes of memory the child may use.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "null_as_default"
    )]
    pub max_memory: u64,
}

/// Starts one execution, parent -> child, on the start channel.
///
/// Build it with a struct literal; [`Start::max_in_flight`] reads the cap
/// the child paces to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Start {
    /// Protocol version.
    pub v: u32,
    /// The JavaScript program: the body of an async function.
    #[serde(deserialize_with = "program_text")]
    pub program: String,
    /// The tools the program may call. Omitted when empty; `null` (what
    /// Go's encoding/json writes for a nil slice) reads as none.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "binding_objects"
    )]
    pub bindings: Vec<StartBinding>,
    /// The budget (always sent; its zero items are omitted). `null` reads
    /// as no budget, as a Go parent writes a nil `*Budget`.
    #[serde(default, deserialize_with = "budget_object")]
    pub budget: StartBudget,
    /// The parent's cap on calls in flight, which the child paces its calls
    /// to: it keeps at most this many on the wire and queues the rest in
    /// order. `None` (omitted, or `null`) means
    /// [`DEFAULT_MAX_INFLIGHT`](crate::DEFAULT_MAX_INFLIGHT), so a parent
    /// that never sends it gets the default it most likely serves with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_inflight: Option<u32>,
    /// Whether the parent takes [`Withdraw`] messages on the call channel.
    /// A child sends one only when this is true; a parent that never sets
    /// it (omitted = false) never sees one. See [`Withdraw`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub withdraw: bool,
    /// How places in `program` map back to the program its author wrote,
    /// when the parent prepared it (see [`places`](crate::places)): a child
    /// that takes them names every place as the author's. Omitted when the
    /// program is sent as written; `null` reads as none.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub places: Vec<crate::places::PlaceStep>,
    /// Echoed in the [`Result`], so a stale answer cannot be taken for this one.
    pub result_id: String,
}

impl Start {
    /// The in-flight cap the child paces its calls to: `max_inflight`, or
    /// [`DEFAULT_MAX_INFLIGHT`](crate::DEFAULT_MAX_INFLIGHT) when absent.
    /// A cap of 0 is taken as 1: the child sends one call at a time and the
    /// parent, the authority on its own cap, answers each as it decides.
    pub fn max_in_flight(&self) -> usize {
        self.max_inflight
            .map_or(crate::DEFAULT_MAX_INFLIGHT, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
            .max(1)
    }
}

/// How one execution ended, child -> parent, on the start channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Result {
    /// Protocol version.
    pub v: u32,
    /// The [`Start`]'s `result_id`.
    pub result_id: String,
    /// Whether the program finished and returned a value.
    pub ok: bool,
    /// The JSON text of what the program returned. Omitted when empty.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub value: String,
    /// The failure class. Present whenever `ok` is false, except for a
    /// protocol-level error (which has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FailureKind>,
    /// What went wrong. Omitted when empty.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub error: String,
    /// Calls as the child counted them: only for reconciliation.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "null_as_default"
    )]
    pub calls: u64,
    /// Value bytes as the child counted them: only for reconciliation.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "null_as_default"
    )]
    pub bytes: u64,
}

impl Result {
    /// A finished execution whose program returned `value` (JSON text).
    pub fn success(result_id: impl Into<String>, value: impl Into<String>) -> Self {
        Result {
            v: VERSION,
            result_id: result_id.into(),
            ok: true,
            value: value.into(),
            kind: None,
            error: String::new(),
            calls: 0,
            bytes: 0,
        }
    }

    /// A failed execution of class `kind`.
    pub fn failure(
        result_id: impl Into<String>,
        kind: FailureKind,
        error: impl Into<String>,
    ) -> Self {
        Result {
            kind: Some(kind),
            ..Result::protocol_error(result_id, error)
        }
    }

    /// An execution ended by a protocol violation: `ok` false and no kind.
    pub fn protocol_error(result_id: impl Into<String>, error: impl Into<String>) -> Self {
        Result {
            v: VERSION,
            result_id: result_id.into(),
            ok: false,
            value: String::new(),
            kind: None,
            error: error.into(),
            calls: 0,
            bytes: 0,
        }
    }
}

/// The longest error text the parent keeps or passes on, in bytes. A tool
/// that fails with megabytes of stderr, or a child whose Result carries a
/// huge error, must not make the parent hold or print all of it; the text is
/// cut at a character boundary with a marker that says how much went.
pub const MAX_ERROR_BYTES: usize = 8 << 10;

/// The longest Request `id` the parent accepts, in bytes. Ids are echoed in
/// every Response, so bounding them bounds every answer the parent makes up
/// itself (a failure always fits in a frame).
pub const MAX_ID_BYTES: usize = 1024;

/// The longest tool name, in bytes: a parent registers none longer, and a
/// child's `host.call` refuses a longer name at once (it names no tool),
/// rather than copy a program-sized string into a Request.
pub const MAX_TOOL_NAME_BYTES: usize = 64 << 10;

/// `text` cut to at most [`MAX_ERROR_BYTES`] (plus a short marker).
pub fn cap_error_text(mut text: String) -> String {
    if text.len() <= MAX_ERROR_BYTES {
        return text;
    }
    let mut end = MAX_ERROR_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    text.push_str(&format!(" [... {cut} more bytes cut]"));
    text
}

macro_rules! message {
    ($($ty:ident),*) => {$(
        impl Message for $ty {
            const NAME: &'static str = stringify!($ty);
            fn version(&self) -> u32 {
                self.v
            }
        }
    )*};
}
message!(Request, Withdraw, Response, Start, Result);

/// `Duration` as integer nanoseconds, as Go's `time.Duration` marshals.
mod nanoseconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        // Durations past u64 nanoseconds (584 years) saturate.
        s.serialize_u64(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    /// A negative duration is refused (it does not fit a `u64`); `null`
    /// reads as 0, no limit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Option::<u64>::deserialize(d).map(|n| Duration::from_nanos(n.unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A Request's frame written by hand is `encode`'s, byte for byte.
        #[test]
        fn a_request_framed_by_hand_is_what_encode_writes(
            id in proptest::prelude::any::<String>(),
            tool in proptest::prelude::any::<String>(),
            args in proptest::prelude::any::<String>(),
            deadline_ms in proptest::prop_oneof![proptest::prelude::Just(0u64), proptest::prelude::any::<u64>()],
            v in proptest::prop_oneof![proptest::prelude::Just(VERSION), proptest::prelude::any::<u32>()],
        ) {
            let request = RequestOut { v, id: &id, tool: &tool, args: &args, deadline_ms };
            proptest::prop_assert_eq!(request.frame().unwrap(), crate::encode(&request).unwrap());
        }
    }

    #[test]
    fn a_request_written_from_borrowed_text_is_the_request_byte_for_byte() {
        for (args, deadline_ms) in [("", 0), (r#"{"q":"a \"b\"\n"}"#, 0), ("7", 2500)] {
            let mut owned = Request::new("12", "search", args);
            owned.deadline_ms = deadline_ms;
            let borrowed = RequestOut {
                v: VERSION,
                id: "12",
                tool: "search",
                args,
                deadline_ms,
            };
            assert_eq!(
                serde_json::to_string(&borrowed).unwrap(),
                serde_json::to_string(&owned).unwrap()
            );
        }
    }
}
