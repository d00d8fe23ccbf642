//! The tools a program may call: names, signatures and async handlers.
//!
//! [`Tools`] is what the parent's [`wire::Server`] answers with: it looks a
//! call's tool up by name (an unknown name is answered `not_found`) and runs
//! its handler. A handler returns a value that is JSON by construction (a
//! [`serde_json::Value`], a typed value in [`Json`], text in [`Text`], or
//! checked JSON text in [`JsonText`]), or fails with a [`ToolFailure`] to
//! choose the failure class; any other error becomes `unknown`. The program
//! never has to guess: a text tool that answers `123` hands it the string
//! `"123"`.
//!
//! A tool's name becomes a global function of the program, so it must be a
//! name a program can write and that takes nothing from it: a plain ASCII
//! identifier, not a reserved word, not a global the child already has
//! (`JSON`, `console`, `setTimeout`, ...). Any other name is refused at
//! registration, unless the tool is registered [`Tool::call_only`]: then
//! the program reaches it only as `host.call("search-docs", args)`.
//!
//! A tool can describe itself: a [`Tool::description`], a JSON Schema for
//! its params ([`Tool::params`]) and one for its result ([`Tool::result`]).
//! [`Tool::typed`] derives both from serde types (with `schemars`). The
//! parent checks every call's args against the params schema before the
//! handler runs: a call that does not fit is answered `invalid`, naming the
//! field and the rule, and the handler never sees it. The descriptions and
//! schemas become the program's declarations ([`Tools::typescript`]).
//!
//! **How a program passes params.** With a signature
//! (`.signature("get_logs(host, count)")`) the program calls
//! `get_logs("db1", 50)`: the arguments map by position to the signature's
//! names, each of which must be a property of the params schema. Without a
//! signature the program passes **one object**, the params themselves:
//! `get_logs({ host: "db1", count: 50 })`. A schema's property order is
//! never used as a parameter order: JSON objects are unordered, and an
//! order that a round trip through a map could change is no contract.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use wire::{Call, FailureKind, Handler, HandlerError, HandlerFuture, StartBinding, ToolFailure};

use crate::SandboxError;
use crate::schema::{self, ParamsSchema};

/// A tool's value, as the program receives it: always JSON on the wire.
///
/// Implemented for [`serde_json::Value`], [`Json`] (any `Serialize` value),
/// [`Text`] (sent as a JSON string) and [`JsonText`] (JSON text checked
/// once). `String` is deliberately not one: say whether it is text or JSON.
pub trait ToolValue {
    /// The value's JSON text, or why it has none.
    fn into_json(self) -> Result<String, HandlerError>;
}

impl ToolValue for serde_json::Value {
    fn into_json(self) -> Result<String, HandlerError> {
        Ok(self.to_string())
    }
}

/// A typed value, serialized with serde: `Ok(Json(rows))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> ToolValue for Json<T> {
    fn into_json(self) -> Result<String, HandlerError> {
        serde_json::to_string(&self.0).map_err(|e| {
            ToolFailure::new(
                FailureKind::Unknown,
                format!("the tool's value could not be encoded as JSON: {e}"),
            )
            .into()
        })
    }
}

/// Text, handed to the program as a string whatever it looks like.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Text(pub String);

impl ToolValue for Text {
    fn into_json(self) -> Result<String, HandlerError> {
        Ok(JsonText::string(self)?.0)
    }
}

/// The length of `text` as a JSON string as serde_json writes it: its
/// quotes, two bytes for `"`, `\\` and the five control characters with a
/// short escape, six for every other control character.
fn json_string_len(text: &str) -> usize {
    let escaped: usize = text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\x08' | b'\x0c' | b'\n' | b'\r' | b'\t' => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum();
    escaped + 2
}

/// `text` as a JSON string of `len` bytes ([`json_string_len`]), written
/// by serde_json into a buffer of that size (its own grows by doubling).
fn json_string(text: &str, len: usize) -> String {
    let mut json = Vec::with_capacity(len);
    serde_json::to_writer(&mut json, text).expect("a string is written to memory without fail");
    String::from_utf8(json).expect("serde_json writes UTF-8")
}

/// JSON text that has been checked to be one JSON value: sent as it is,
/// without being parsed into a tree and written out again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText(String);

impl JsonText {
    /// `text` if it is exactly one JSON value (whitespace around it
    /// allowed). Checked without building a tree, and without recursion:
    /// any depth is checked without risk to the parent's stack (the child's
    /// parser has its own limit).
    pub fn new(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        let text = text.into();
        serde_json::from_str::<serde::de::IgnoredAny>(&text)?;
        Ok(JsonText(text))
    }

    /// `text` as a JSON string, written once, at its size, and only when
    /// it fits in a frame; past that, a `limit` failure, before any of it
    /// is written. Escaping makes up to six bytes of one (`\u0001`): 16 MB
    /// of control characters became 96 MB, then a frame of that, before
    /// the Server could refuse it. What [`Text`] is sent as.
    pub fn string(text: Text) -> Result<Self, ToolFailure> {
        let len = json_string_len(&text.0);
        if len > wire::MAX_FRAME_BYTES {
            return Err(ToolFailure::new(
                FailureKind::Limit,
                format!(
                    "the tool's value, {} bytes of text, is {len} bytes as a JSON string (its \
                     quotes, backslashes and control characters escaped): more than a frame \
                     carries ({} bytes)",
                    text.0.len(),
                    wire::MAX_FRAME_BYTES
                ),
            ));
        }
        Ok(JsonText(json_string(&text.0, len)))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Text as a JSON string.
/// Of any size: [`JsonText::string`] refuses one larger than a frame
/// before writing it.
impl From<Text> for JsonText {
    fn from(text: Text) -> Self {
        let len = json_string_len(&text.0);
        JsonText(json_string(&text.0, len))
    }
}

impl ToolValue for JsonText {
    fn into_json(self) -> Result<String, HandlerError> {
        Ok(self.0)
    }
}

/// One registered tool.
#[derive(Clone)]
pub struct Tool {
    name: String,
    signature: String,
    handler: Arc<dyn Handler>,
    timeout: Option<Duration>,
    call_only: bool,
    description: String,
    params: Option<serde_json::Value>,
    result: Option<serde_json::Value>,
    /// The params schema compiled, once the tool is registered.
    checker: Option<Arc<ParamsSchema>>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("signature", &self.signature)
            .field("timeout", &self.timeout)
            .field("call_only", &self.call_only)
            .field("description", &self.description)
            .field("params", &self.params)
            .field("result", &self.result)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool named `name` answered by `handler`:
    /// `async fn(Call) -> Result<impl ToolValue, HandlerError>`.
    ///
    /// The handler's future is polled in the execution's own task. It may
    /// await anything: it spends tokio's cooperative budget as any task's
    /// code does, so even one whose every await is ready gives way, and its
    /// [`timeout`](Self::timeout) and the wall clock fire. It must not
    /// block its thread (a sleep, a long computation, a blocking lock):
    /// nothing can interrupt that, and its timeout and the wall clock wait
    /// until it returns. Send such work to `tokio::task::spawn_blocking`.
    pub fn new<F, Fut, V>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<V, HandlerError>> + Send + 'static,
        V: ToolValue + 'static,
    {
        let handler = move |call: Call| {
            let answering = handler(call);
            async move { answering.await?.into_json() }
        };
        Tool {
            name: name.into(),
            signature: String::new(),
            handler: Arc::new(handler),
            timeout: None,
            call_only: false,
            description: String::new(),
            params: None,
            result: None,
            checker: None,
        }
    }

    /// A tool over serde types: `handler` gets the args deserialized as
    /// `A` and its `R` is serialized as the value. Both JSON Schemas are
    /// derived from the types (`#[derive(JsonSchema)]`, doc comments
    /// becoming descriptions), so the args are checked against `A`'s schema
    /// before `handler` runs and the declarations show both types.
    ///
    /// `A` must be a struct (an object schema): its fields are the params.
    /// Without a [`Tool::signature`] the program passes them as one object.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    /// use wasmwire::{HandlerError, Tool};
    ///
    /// /// Which host, and how many lines.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Query { host: String, count: Option<u32> }
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// struct Logs { host: String, lines: Vec<String> }
    ///
    /// let tool = Tool::typed("get_logs", |q: Query| async move {
    ///     let lines = vec![format!("{} is up", q.host); q.count.unwrap_or(1) as usize];
    ///     Ok::<_, HandlerError>(Logs { host: q.host, lines })
    /// })
    /// .description("The newest log lines of one host.");
    /// ```
    pub fn typed<A, R, F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        R: Serialize + JsonSchema + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    {
        let name = name.into();
        let tool = name.clone();
        Tool::new(name, move |call: Call| {
            // The args as `A` are held while the handler has them, at what
            // they would take as a tree of JSON (an `A` seldom takes more).
            let answering = typed_args::<A>(&tool, &call.args, &call.holdings)
                .map(|(args, tree)| (tree, handler(args)));
            async move {
                let (_tree, answer) = answering?;
                Ok(Json(answer.await?))
            }
        })
        .params(derived_schema::<A>())
        .result(derived_schema::<R>())
    }

    /// What the tool does, for the program's author (a model): the first
    /// line of its JSDoc in [`Tools::typescript`].
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The JSON Schema of the params: an object schema whose properties
    /// are the parameters. Every call's args are checked against it before
    /// the handler runs; one that does not fit is answered `invalid`.
    pub fn params(mut self, schema: serde_json::Value) -> Self {
        self.params = Some(schema);
        self
    }

    /// The JSON Schema of the tool's value, for the declarations (the
    /// parent does not check values against it).
    pub fn result(mut self, schema: serde_json::Value) -> Self {
        self.result = Some(schema);
        self
    }

    /// Sets the signature, e.g. `"get_logs(host, count)"`: the program then
    /// calls `get_logs("db1", 50)` and the tool receives
    /// `{"host":"db1","count":50}`. Without one, the single argument is sent.
    pub fn signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = signature.into();
        self
    }

    /// The longest one call may take. Past it the call is answered
    /// `transient` ("the tool's timeout of N ms passed") and the handler's future
    /// is dropped. A shorter deadline from the program or the sandbox wins.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Lets the tool have a name that cannot be a global of the program
    /// (`search-docs`, `delete`, `JSON`): it is then reachable only as
    /// `host.call(name, args)`. Without this such a name is refused.
    pub fn call_only(mut self) -> Self {
        self.call_only = true;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The signature, `""` when there is none.
    pub fn signature_text(&self) -> &str {
        &self.signature
    }

    /// The signature's parameter names, in order; `None` without one.
    pub fn parameters(&self) -> Option<Vec<&str>> {
        let (_, rest) = self.signature.split_once('(')?;
        let list = rest.trim_end().strip_suffix(')')?;
        Some(
            list.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .collect(),
        )
    }

    /// The description, `""` when there is none.
    pub fn description_text(&self) -> &str {
        &self.description
    }

    /// The params schema, if any.
    pub fn params_schema(&self) -> Option<&serde_json::Value> {
        self.params.as_ref()
    }

    /// Whether a call may pass no args: the tool has no params schema, or
    /// its schema accepts the empty object (what no args are checked as).
    /// Asked of the compiled schema once the tool is registered, so
    /// `anyOf` branches that each require a field, `minProperties` or a
    /// `$ref`'d `required` count; before, of the top-level `required`.
    pub(crate) fn args_optional(&self) -> bool {
        match (&self.params, &self.checker) {
            (None, _) => true,
            (Some(_), Some(checker)) => checker.accepts_no_args(),
            (Some(params), None) => params
                .get("required")
                .and_then(serde_json::Value::as_array)
                .is_none_or(Vec::is_empty),
        }
    }

    /// The result schema, if any.
    pub fn result_schema(&self) -> Option<&serde_json::Value> {
        self.result.as_ref()
    }

    /// Whether the tool is reached only through `host.call`.
    pub fn is_call_only(&self) -> bool {
        self.call_only
    }

    /// The longest one call may take, if the tool sets one.
    pub fn timeout_limit(&self) -> Option<Duration> {
        self.timeout
    }

    fn check(&self) -> Result<(), SandboxError> {
        let bad = |why: String| SandboxError::BadTool {
            name: self.name.clone(),
            why,
        };
        if self.name.is_empty() {
            return Err(bad("the name is empty".into()));
        }
        if self.name.chars().any(char::is_control) {
            return Err(bad("the name contains a control character".into()));
        }
        if self.name.len() > wire::MAX_TOOL_NAME_BYTES {
            return Err(bad(format!(
                "the name is {} bytes long, and a program can call no name longer than {}",
                self.name.len(),
                wire::MAX_TOOL_NAME_BYTES
            )));
        }
        if !self.call_only
            && let Some(why) = not_a_global_name(&self.name)
        {
            return Err(bad(format!(
                "{why}, so the program could not call it by name; \
                 mark it call-only (Tool::call_only, or --call-only) \
                 to reach it as host.call({:?}, args)",
                self.name
            )));
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(bad("a timeout of 0 would fail every call".into()));
        }
        if self.signature.is_empty() {
            return Ok(());
        }
        let (fname, rest) = self.signature.split_once('(').ok_or_else(|| {
            bad(format!(
                "signature {:?} has no parameter list",
                self.signature
            ))
        })?;
        let params = rest.trim_end().strip_suffix(')').ok_or_else(|| {
            bad(format!(
                "signature {:?} does not end with ')'",
                self.signature
            ))
        })?;
        if fname.trim() != self.name {
            return Err(bad(format!(
                "signature {:?} names another function",
                self.signature
            )));
        }
        let mut seen = Vec::new();
        // A set beside the list: 100,000 parameters checked against a list
        // took 14 s of the registering thread.
        let mut unique = std::collections::HashSet::new();
        for param in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if !is_identifier(param) {
                return Err(bad(format!("parameter {param:?} is not an identifier")));
            }
            // It is a parameter of the declared function: a reserved word
            // (`delete`) does not compile, and `this` means another thing.
            if RESERVED_WORDS.contains(&param) {
                return Err(bad(format!(
                    "parameter {param:?} is a JavaScript reserved word"
                )));
            }
            if !unique.insert(param) {
                return Err(bad(format!("parameter {param:?} appears twice")));
            }
            seen.push(param);
        }
        if let Some(params) = &self.params
            && let Some(why) = schema::signature_mismatch(&seen, params)
        {
            return Err(bad(format!("signature {:?}: {why}", self.signature)));
        }
        Ok(())
    }
}

/// `A`'s JSON Schema as derived by schemars.
fn derived_schema<A: JsonSchema>() -> serde_json::Value {
    schemars::schema_for!(A).to_value()
}

/// The args of a typed tool as `A` (no args are the empty object), and
/// their tree's hold. They have passed the params schema already; what
/// still fails to deserialize is the schema's fault or serde's stricter
/// rule, and `invalid` either way; args whose tree would not fit are `limit`.
fn typed_args<A: DeserializeOwned>(
    tool: &str,
    args: &str,
    holdings: &wire::Holdings,
) -> Result<(A, wire::Held), HandlerError> {
    let args = if args.trim().is_empty() { "{}" } else { args };
    match crate::json::read_held(holdings, args) {
        Ok((args, held, _)) => Ok((args, held)),
        Err(crate::json::HeldReadError::TooLarge(e)) => {
            let why = format!("{tool}: the args cannot be read: {e}");
            Err(ToolFailure::new(FailureKind::Limit, why).into())
        }
        Err(crate::json::HeldReadError::Read(e)) => {
            let why = format!("{tool}: invalid args: {e}");
            Err(ToolFailure::new(FailureKind::Invalid, why).into())
        }
    }
}

/// Why `name` cannot be a global function of the program, if it cannot.
fn not_a_global_name(name: &str) -> Option<String> {
    if !is_ascii_identifier(name) {
        Some("the name is not a plain ASCII JavaScript identifier".into())
    } else if RESERVED_WORDS.contains(&name) {
        Some("the name is a JavaScript reserved word".into())
    } else if WEB_GLOBALS_TO_COME.contains(&name) {
        Some(format!(
            "the name is kept for the web platform's `{name}`, which the child does not define \
             but a program may look for (`typeof {name}`) or be given later"
        ))
    } else if CHILD_GLOBALS.contains(&name) {
        Some("the name is already a global of the program".into())
    } else {
        None
    }
}

/// The web platform's globals in [`CHILD_GLOBALS`] that the built-in child
/// does not define (yet): a tool is refused them all the same, and told so.
const WEB_GLOBALS_TO_COME: &[&str] = &[
    "Blob",
    "Headers",
    "Request",
    "Response",
    "fetch",
    "navigator",
    "self",
];

/// Words a program cannot use as a function's name, nor a signature as a
/// parameter's (the Python package derives signatures by them).
#[rustfmt::skip]
pub const RESERVED_WORDS: &[&str] = &[
    "arguments", "await", "break", "case", "catch", "class", "const", "continue", "debugger",
    "default", "delete", "do", "else", "enum", "eval", "export", "extends", "false", "finally",
    "for", "function", "if", "implements", "import", "in", "instanceof", "interface", "let",
    "new", "null", "package", "private", "protected", "public", "return", "static", "super",
    "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with", "yield",
];

/// The globals the built-in child gives every program (and the properties
/// of its global object's prototype chain). tests/all checks this list
/// against the guest's `globalThis`, so a global added there cannot be
/// forgotten here.
#[rustfmt::skip]
pub const CHILD_GLOBALS: &[&str] = &[
    // ECMAScript.
    "AggregateError", "Array", "ArrayBuffer", "Atomics", "BigInt", "BigInt64Array",
    "BigUint64Array", "Boolean", "DataView", "Date", "Error", "EvalError", "FinalizationRegistry",
    "Float16Array", "Float32Array", "Float64Array", "Function", "Infinity", "Int16Array",
    "Int32Array", "Int8Array", "Iterator", "JSON", "Map", "Math", "NaN", "Number", "Object",
    "Promise", "Proxy", "RangeError", "ReferenceError", "Reflect", "RegExp", "Set",
    "SharedArrayBuffer", "String", "Symbol", "SyntaxError", "TypeError", "URIError",
    "Uint16Array", "Uint32Array", "Uint8Array", "Uint8ClampedArray", "WeakMap", "WeakRef",
    "WeakSet", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape",
    "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt", "undefined", "unescape",
    // Object.prototype, reachable as globals.
    "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
    "__proto__", "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
    "toLocaleString", "toString", "valueOf",
    "AsyncDisposableStack", "DisposableStack", "InternalError", "SuppressedError", "eval",
    // The web platform's, present or to come (a name refused early cannot
    // break a tool when the global arrives).
    "AbortController", "AbortSignal", "Blob", "Crypto", "CustomEvent", "DOMException", "Event",
    "EventTarget", "Headers", "Intl", "Performance", "Request", "Response", "SubtleCrypto",
    "TextDecoder", "TextEncoder", "URL", "URLSearchParams", "atob", "btoa", "crypto", "fetch",
    "navigator", "performance", "queueMicrotask", "self", "structuredClone",
    // The child's own.
    "ToolError", "clearInterval", "clearTimeout", "console", "host", "setInterval",
    "setTimeout",
];

/// Whether `s` is an identifier of plain ASCII: what a global binding, a
/// field written `args.name` and a bare TypeScript property key may be.
pub(crate) fn is_ascii_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Whether `s` is an identifier (any letters, as JavaScript's ID_Start and
/// ID_Continue take them): what a signature's parameter may be called.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c == '$' || unicode_ident::is_xid_start(c))
        && chars.all(|c| c == '$' || unicode_ident::is_xid_continue(c))
}

/// The tools of an execution. Cheap to clone; answers calls by name.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    by_name: Arc<BTreeMap<String, Tool>>,
}

impl Tools {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`, refusing a bad name or signature, or a name taken twice.
    pub fn register(&mut self, tool: Tool) -> Result<&mut Self, SandboxError> {
        let mut tool = tool;
        tool.check()?;
        if let Some(params) = &tool.params {
            let checker = ParamsSchema::compile(params).map_err(|why| SandboxError::BadTool {
                name: tool.name.clone(),
                why,
            })?;
            tool.checker = Some(Arc::new(checker));
        }
        // A result schema only describes the value (the declarations show
        // it), but one that is no JSON Schema is the same mistake as a
        // params schema that is none, and is refused the same way.
        if let Some(result) = &tool.result {
            jsonschema::validator_for(result).map_err(|e| SandboxError::BadTool {
                name: tool.name.clone(),
                why: format!("the result schema is not a usable JSON Schema: {e}"),
            })?;
        }
        let map = Arc::make_mut(&mut self.by_name);
        if map.contains_key(&tool.name) {
            return Err(SandboxError::BadTool {
                name: tool.name,
                why: "registered twice".into(),
            });
        }
        map.insert(tool.name.clone(), tool);
        Ok(self)
    }

    /// The Start's bindings: one per tool, in name order.
    pub fn bindings(&self) -> Vec<StartBinding> {
        self.by_name
            .values()
            .map(|t| StartBinding {
                name: t.name.clone(),
                signature: t.signature.clone(),
            })
            .collect()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The tools, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.by_name.values()
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name)
    }
}

impl Handler for Tools {
    fn timeout(&self, tool: &str) -> Option<Duration> {
        self.by_name.get(tool).and_then(|t| t.timeout)
    }

    fn call(&self, call: Call) -> HandlerFuture {
        match self.by_name.get(&call.tool) {
            Some(tool) => {
                if let Some(checker) = &tool.checker
                    && let Err(failure) = checker.check(&tool.name, &call.args, &call.holdings)
                {
                    return Box::pin(async move { Err(failure.into()) });
                }
                tool.handler.call(call)
            }
            None => {
                let why =
                    match wire::names::nearest(&call.tool, self.by_name.keys().map(String::as_str))
                    {
                        Some(meant) => {
                            format!("no tool named {:?} (did you mean {meant:?}?)", call.tool)
                        }
                        None => format!("no tool named {:?}", call.tool),
                    };
                Box::pin(async move { Err(ToolFailure::new(FailureKind::NotFound, why).into()) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> Tool {
        Tool::new("t", |_call| async {
            Ok::<_, HandlerError>(Text(String::new()))
        })
    }

    #[test]
    fn good_signatures_are_accepted() {
        for sig in [
            "",
            "t()",
            "t(a)",
            "t(host, count)",
            "t( a ,b )",
            "t($x, _y2)",
        ] {
            assert!(noop().signature(sig).check().is_ok(), "{sig}");
        }
    }

    #[test]
    fn bad_names_and_signatures_are_refused_with_a_reason() {
        let cases = [
            (
                Tool::new("", |_c| async {
                    Ok::<_, HandlerError>(Text(String::new()))
                }),
                "empty",
            ),
            (noop().signature("t"), "no parameter list"),
            (noop().signature("t(a"), "does not end"),
            (noop().signature("u(a)"), "another function"),
            (noop().signature("t(1a)"), "not an identifier"),
            (noop().signature("t(a, a)"), "twice"),
            // A name no program can call: `host.call` refuses it.
            (
                Tool::new("t".repeat(wire::MAX_TOOL_NAME_BYTES + 1), |_c| async {
                    Ok::<_, HandlerError>(Text(String::new()))
                })
                .call_only(),
                "no name longer than 65536",
            ),
        ];
        for (tool, why) in cases {
            let err = tool.check().unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn text_is_sent_as_the_json_string_serde_json_writes_and_refused_past_a_frame() {
        let all_ascii: String = (0u8..=0x7f).map(char::from).collect();
        for text in [
            String::new(),
            all_ascii,
            "é\u{2028}\u{9b}\"\\\u{0}𝒜".to_owned(),
        ] {
            let written = serde_json::to_string(&text).unwrap();
            assert_eq!(json_string_len(&text), written.len(), "{text:?}");
            assert_eq!(Text(text.clone()).into_json().unwrap(), written);
            assert_eq!(JsonText::from(Text(text)).as_str(), written);
        }
        // Six bytes for each NUL: over a frame as JSON, though not as text.
        let nul = "\0".repeat(wire::MAX_FRAME_BYTES / 6 + 1);
        let refused = JsonText::string(Text(nul)).unwrap_err();
        assert_eq!(refused.kind, FailureKind::Limit);
        assert!(refused.message.contains("as a JSON string"), "{refused}");
        let quotes = "\"".repeat(wire::MAX_FRAME_BYTES / 2 - 1);
        assert!(JsonText::string(Text(quotes)).is_ok());
    }

    #[test]
    fn names_a_program_cannot_call_are_refused_unless_call_only() {
        for (name, why) in [
            ("search-docs", "not a plain ASCII JavaScript identifier"),
            ("1st", "not a plain ASCII JavaScript identifier"),
            ("café", "not a plain ASCII JavaScript identifier"),
            ("delete", "reserved word"),
            ("await", "reserved word"),
            ("JSON", "already a global"),
            ("console", "already a global"),
            ("setTimeout", "already a global"),
            ("toString", "already a global"),
            ("fetch", "kept for the web platform's `fetch`"),
            ("Intl", "already a global"),
        ] {
            let tool = || {
                Tool::new(name, |_c| async {
                    Ok::<_, HandlerError>(Text(String::new()))
                })
            };
            let err = Tools::new().register(tool()).unwrap_err().to_string();
            assert!(err.contains(why), "{name}: {err}");
            assert!(err.contains("call_only"), "{name}: {err}");
            let mut tools = Tools::new();
            tools.register(tool().call_only()).unwrap();
            assert_eq!(tools.bindings()[0].name, name);
        }
        for name in ["search", "get_logs", "$x", "_private", "fetchDoc2"] {
            let tool = Tool::new(name, |_c| async {
                Ok::<_, HandlerError>(Text(String::new()))
            });
            Tools::new().register(tool).unwrap();
        }
    }

    #[tokio::test]
    async fn values_are_json_by_construction() {
        assert_eq!(Text("123".into()).into_json().unwrap(), r#""123""#);
        assert_eq!(Text("a\"b\n".into()).into_json().unwrap(), r#""a\"b\n""#);
        assert_eq!(
            serde_json::json!({"n": 123}).into_json().unwrap(),
            r#"{"n":123}"#
        );
        assert_eq!(Json(vec![1, 2]).into_json().unwrap(), "[1,2]");
        assert_eq!(
            JsonText::new(" 123 ").unwrap().into_json().unwrap(),
            " 123 "
        );
        for bad in ["", "abc", "{", "1 2", "[1,]"] {
            assert!(JsonText::new(bad).is_err(), "{bad:?}");
        }
        // 8 million deep (a 16 MiB value): checked, and the parent's stack
        // (a test thread's 2 MiB) is not touched.
        let deep = |n| "[".repeat(n) + &"]".repeat(n);
        assert!(JsonText::new(deep(8 << 20)).is_ok());
        assert!(JsonText::new(deep(8 << 20) + "]").is_err());
        // A map with non-string keys cannot be JSON: a failure, not a panic.
        let map: std::collections::HashMap<Vec<u8>, u8> = [(vec![1], 1)].into();
        let err = Json(map).into_json().unwrap_err();
        let failure = err.downcast::<ToolFailure>().unwrap();
        assert_eq!(failure.kind, FailureKind::Unknown);
        // Through a registered tool, a handler's text comes out a JSON string.
        let mut tools = Tools::new();
        tools
            .register(Tool::new("t", |_c| async {
                Ok::<_, HandlerError>(Text("123".into()))
            }))
            .unwrap();
        let call = Call::new("1", "t", "", wire::Holdings::new(0));
        assert_eq!(tools.call(call).await.unwrap(), r#""123""#);
    }

    #[test]
    fn a_timeout_is_the_tools_own_and_zero_is_refused() {
        let mut tools = Tools::new();
        tools
            .register(noop().timeout(Duration::from_millis(250)))
            .unwrap();
        assert_eq!(tools.timeout("t"), Some(Duration::from_millis(250)));
        assert_eq!(tools.timeout("other"), None);
        let err = Tools::new()
            .register(noop().timeout(Duration::ZERO))
            .unwrap_err();
        assert!(err.to_string().contains("timeout of 0"), "{err}");
    }

    #[test]
    fn a_name_registered_twice_is_refused() {
        let mut tools = Tools::new();
        tools.register(noop()).unwrap();
        assert!(tools.register(noop()).is_err());
        assert_eq!(tools.len(), 1);
    }

    #[tokio::test]
    async fn a_typed_tool_holds_its_args_at_their_tree_while_it_runs() {
        #[derive(serde::Deserialize, JsonSchema)]
        struct Items {
            items: Vec<serde_json::Map<String, serde_json::Value>>,
        }
        let (entered, running) = tokio::sync::oneshot::channel::<()>();
        let (finish, finished) = tokio::sync::oneshot::channel::<()>();
        let entered = std::sync::Mutex::new(Some(entered));
        let finished = std::sync::Mutex::new(Some(finished));
        let tool = Tool::typed("put", move |args: Items| {
            let entered = entered.lock().unwrap().take();
            let finished = finished.lock().unwrap().take();
            async move {
                let _ = entered.map(|e| e.send(()));
                if let Some(finished) = finished {
                    let _ = finished.await;
                }
                Ok::<_, HandlerError>(args.items.len())
            }
        });
        let args = format!(r#"{{"items":[{}]}}"#, vec![r#"{"":0}"#; 1000].join(","));
        let tree = crate::json::tree_bytes(&args);
        // Held while the handler runs, given back when it is done.
        let holdings = wire::Holdings::new(tree);
        let answer = tool
            .handler
            .call(Call::new("1", "put", args.clone(), holdings.clone()));
        let answer = tokio::spawn(answer);
        running.await.unwrap();
        assert_eq!(holdings.used(), tree);
        finish.send(()).unwrap();
        assert_eq!(answer.await.unwrap().unwrap(), "1000");
        assert_eq!(holdings.used(), 0);
        // Without room for the tree: `limit`, and the handler never runs.
        let call = Call::new("2", "put", args, wire::Holdings::new(tree - 1));
        let failure = tool.handler.call(call).await.unwrap_err();
        let failure = failure.downcast::<ToolFailure>().unwrap();
        assert_eq!(failure.kind, FailureKind::Limit);
        assert!(
            failure
                .message
                .contains("put: the args cannot be read: its "),
            "{}",
            failure.message
        );
    }

    #[tokio::test]
    async fn an_unknown_tool_is_not_found() {
        let tools = Tools::new();
        let call = Call::new("1", "nope", "", wire::Holdings::new(0));
        let err = tools.call(call).await.unwrap_err();
        let failure = err.downcast::<ToolFailure>().unwrap();
        assert_eq!(failure.kind, FailureKind::NotFound);
    }
}
