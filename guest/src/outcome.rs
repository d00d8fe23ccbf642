//! How a run ends, and the one Result each ending becomes.
//!
//! A fulfilled program ends with the JSON text of its value (`undefined`
//! becomes `null`; a value JSON has no text for, or cannot serialise, is
//! kind `invalid`). A rejected one ends with the class of its reason:
//!
//! | reason                                         | kind      |
//! |------------------------------------------------|-----------|
//! | a ToolError the evaluator issued               | its own   |
//! | QuickJS's stack overflow                       | `limit`   |
//! | QuickJS's out-of-memory errors, or a `null`    | `limit`   |
//! | (or `undefined`) thrown with the heap near its |           |
//! | limit (see `limits::MemoryWatch`)              |           |
//! | QuickJS's fixed caps on one value's size or a  | `limit`   |
//! | count (strings, buffers, BigInts, arguments,   |           |
//! | variables, regexp captures, ...)               |           |
//! | anything else (syntax error, exception, a      | `invalid` |
//! | program's own `throw null`)                    |           |
//!
//! QuickJS's errors are recognised by their name and message
//! ([`quickjs_limit`]); a program that throws an identical error of its own
//! is classed the same way, which only costs it a wrong class.
//!
//! The message names the error and, when the reason was thrown in the
//! program, its line and column in the program: an `Error` by its stack, any
//! other value by where it was thrown (`throw_site`). A syntax error found
//! in the wrapper's closing `})` is "unexpected end of the program", placed
//! at the program's end.

use rquickjs::{Ctx, Type, Value};
use wire::FailureKind;

use crate::hints::{self, Unbalanced};
use crate::intrinsics::Intrinsics;
use crate::program::{self, Place, Sent};
use crate::session::Session;
use crate::stop::Reason;
use crate::tool_error;

/// How one run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The program returned; the JSON text of its value.
    Finished(String),
    /// The run failed with a class.
    Failed(FailureKind, String),
    /// The parent broke the protocol on the call channel.
    Protocol(String),
}

impl Ending {
    /// A failure of class `kind`.
    pub(crate) fn failed(kind: FailureKind, message: impl Into<String>) -> Self {
        Ending::Failed(kind, message.into())
    }

    /// Whether this is a failure for want of memory.
    pub(crate) fn is_memory_limit(&self) -> bool {
        matches!(self, Ending::Failed(FailureKind::Limit, why) if why.starts_with("memory limit: "))
    }

    /// The ending of a run its stop ended for `reason`: the stop's words,
    /// unless the program was judged to have run out of memory (its error
    /// and its place), which then gets the refusal's figures that it alone
    /// leaves out: `memory limit: InternalError: out of memory at line 1,
    /// column 23 (the program's heap could not grow by ...)`. An ending
    /// that is the stop's own already (the stop ended a program that caught
    /// its refusal) is left as it is: the figures were told twice.
    pub(crate) fn stopped_for(self, reason: &Reason) -> Ending {
        let stopped = reason.ending();
        if self == stopped {
            return stopped;
        }
        let judged_memory = matches!(reason, Reason::Memory { .. }) && self.is_memory_limit();
        match (self, stopped) {
            (Ending::Failed(kind, judged), Ending::Failed(_, refused)) if judged_memory => {
                let figures = refused.strip_prefix("memory limit: ").unwrap_or(&refused);
                Ending::Failed(kind, format!("{judged} ({figures})"))
            }
            (_, stopped) => stopped,
        }
    }

    /// The Result message for this ending.
    pub(crate) fn into_result(self, result_id: &str, calls: u64, bytes: u64) -> wire::Result {
        let mut result = match self {
            Ending::Finished(value) => wire::Result::success(result_id, value),
            Ending::Failed(kind, error) => wire::Result::failure(result_id, kind, shorten(error)),
            Ending::Protocol(error) => wire::Result::protocol_error(result_id, shorten(error)),
        };
        result.calls = calls;
        result.bytes = bytes;
        result
    }
}

/// The longest error text a Result carries: what the parent keeps of a
/// Result's error ([`wire::MAX_ERROR_BYTES`]), so that the parent never cuts
/// it again (a second cut took the note of the first, and the place). An
/// error message is the program's to choose (`throw new Error(hugeString)`);
/// a person reads the start of it, and the place at its end.
const MAX_ERROR_BYTES: usize = wire::MAX_ERROR_BYTES;

/// Bytes kept from the end of a long error: the place the evaluator puts
/// after the message (` at line L, column C`), and what a cause adds.
const KEPT_TAIL_BYTES: usize = 512;

/// `error`, cut in its middle to at most [`MAX_ERROR_BYTES`] at character
/// boundaries: its start, a note of how much went, and its end.
fn shorten(error: String) -> String {
    if error.len() <= MAX_ERROR_BYTES {
        return error;
    }
    let note = cut_note(error.len());
    let mut head = MAX_ERROR_BYTES - KEPT_TAIL_BYTES - note.len();
    while !error.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = error.len() - KEPT_TAIL_BYTES;
    while !error.is_char_boundary(tail) {
        tail += 1;
    }
    let mut short = String::with_capacity(MAX_ERROR_BYTES);
    short.push_str(&error[..head]);
    short.push_str(&note);
    short.push_str(&error[tail..]);
    short
}

/// What a cut text says of itself: how long it was.
fn cut_note(len: usize) -> String {
    format!(" [... {len} bytes in all, cut here ...] ")
}

/// Text past which a part of an error (its message, a thrown value) is
/// cut as it is read ([`cut_part`]) rather than copied whole.
pub(crate) const PART_WHOLE: usize = 64 << 10;

/// A part of an error, `text` (UTF-8, possibly not well-formed, longer than
/// [`PART_WHOLE`]), as the Result tells it: its start and a note of its
/// length, short enough that the error needs no second cut. The place
/// after it is kept, as [`shorten`] keeps it.
pub(crate) fn cut_part(text: &[u8]) -> String {
    let note = cut_note(text.len());
    let mut head = (MAX_ERROR_BYTES - KEPT_TAIL_BYTES - note.len()).min(text.len());
    // No character cut in two: back to the start of the one at `head`.
    while head > 0 && head < text.len() && text[head] & 0xC0 == 0x80 {
        head -= 1;
    }
    let mut part = String::from_utf8_lossy(&text[..head]).into_owned();
    part.push_str(note.trim_end());
    part
}

/// `text` in double quotes, with the quotes and backslashes in it escaped.
pub(crate) fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Why a returned value has no JSON text: a function or a symbol, or an
/// object whose `toJSON` gave one of those or `undefined`.
fn no_json_form(value: &Value<'_>) -> String {
    match Intrinsics::type_name(value) {
        name @ ("object" | "array") => format!(
            "the program returned an {name} whose toJSON gave no JSON value (undefined, a \
             function or a symbol)"
        ),
        name => format!("the program returned a {name}, which has no JSON form"),
    }
}

/// What the evaluator knows when it judges an ending.
#[derive(Debug)]
pub(crate) struct Judge<'a, 'js> {
    /// The captured intrinsics, to read values without the program's help.
    pub(crate) intrinsics: &'a Intrinsics<'js>,
    /// The run's session, to recognise issued ToolErrors.
    pub(crate) session: &'a Session<'js>,
    /// The program as sent, to place errors in it and name each place
    /// as the author's.
    pub(crate) sent: &'a Sent,
    /// The tools, to name the one a misspelt name meant.
    pub(crate) tools: &'a [wire::StartBinding],
}

impl<'js> Judge<'_, 'js> {
    /// The ending of a program that returned `value`.
    pub(crate) fn fulfilled(&self, ctx: &Ctx<'js>, value: &Value<'js>) -> Ending {
        if value.is_undefined() {
            return Ending::Finished("null".to_owned());
        }
        match ctx.json_stringify(value.clone()) {
            Ok(Some(json)) => {
                let json = self.intrinsics.string(&json);
                // What JSON empties is written `{}`: no such text, nothing
                // to look for (the walk is JavaScript, and pages of the
                // snapshot it touches cost every run that pays for it).
                if json.contains("{}") {
                    self.warn_lossy(value);
                }
                Ending::Finished(json)
            }
            Ok(None) => Ending::failed(FailureKind::Invalid, no_json_form(value)),
            Err(e) => match self.error(ctx, e) {
                Ending::Failed(FailureKind::Invalid, why) => {
                    let hint = hints::no_json(&why)
                        .map(|h| format!(" ({h})"))
                        .unwrap_or_default();
                    Ending::failed(
                        FailureKind::Invalid,
                        format!(
                            "the program's return value cannot be serialised as JSON: {why}{hint}"
                        ),
                    )
                }
                other => other,
            },
        }
    }

    /// Warns on the console when the returned value holds what JSON writes
    /// as `{}` (a caught Error, a Map of results, an un-awaited Promise):
    /// the Result is still the value JSON.stringify gives, as promised, but
    /// the run no longer ends `ok` with the data silently gone.
    fn warn_lossy(&self, value: &Value<'js>) {
        let Some((kind, path)) = self.intrinsics.lossy(value) else {
            return;
        };
        let what = if path.is_empty() {
            format!("the program returned {kind}")
        } else {
            let path = crate::console::escape_line_breaks(&path);
            format!("the returned value holds {kind} at {path}")
        };
        self.session.write_console(
            format!(
                "warn: {what}, which JSON does not carry in full (an Error's message, a Map's or \
                 Set's entries, an iterator's items, a getter's value, a Promise's value): return \
                 plain data (error.message, Object.fromEntries(map), [...set], [...iterator], \
                 {{ total: o.total }}, the awaited value)\n"
            )
            .as_bytes(),
        );
    }

    /// The ending of a program that failed with a Rust-side error (an
    /// exception pending in `ctx`, or something rquickjs refused).
    pub(crate) fn error(&self, ctx: &Ctx<'js>, error: rquickjs::Error) -> Ending {
        match error {
            rquickjs::Error::Exception => self.rejected(&ctx.catch()),
            rquickjs::Error::Allocation => Ending::failed(
                FailureKind::Limit,
                "memory limit: QuickJS could not allocate",
            ),
            other => Ending::failed(FailureKind::Unknown, format!("evaluator error: {other}")),
        }
    }

    /// The ending of a program rejected with `reason` (or a compile error).
    pub(crate) fn rejected(&self, reason: &Value<'js>) -> Ending {
        if let Some((kind, tool)) = tool_error::issued_kind(self.session, reason) {
            let message = self
                .intrinsics
                .property(reason, "message")
                .unwrap_or_default();
            return Ending::failed(
                kind,
                format!("ToolError from {tool}: {message}{}", self.place(reason)),
            );
        }
        // A DOMException is not one of QuickJS's errors, but is an Error.
        if reason.type_of() != Type::Exception && !self.intrinsics.inherits_from_error(reason) {
            // QuickJS throws null when it cannot allocate even the error
            // for "out of memory"; its heap refused, which stopped the run,
            // and the stop's ending replaces this one.
            // No stack of its own: where it was thrown, if that was kept.
            let place = self
                .session
                .thrown_at()
                .and_then(|backtrace| self.intrinsics.thrown_text(&backtrace))
                .and_then(|backtrace| self.sent.locate(&backtrace))
                .map(|at| format!(" at {}", self.sent.shown(at.position())))
                .unwrap_or_default();
            return Ending::failed(
                FailureKind::Invalid,
                format!(
                    "uncaught exception: {}{place}",
                    match reason.as_string() {
                        // Quoted, as Node shows a thrown string: bare, it ran
                        // on into the place after it.
                        Some(text) => quoted(&self.intrinsics.shown(text)),
                        None => self.intrinsics.display(reason),
                    }
                ),
            );
        }
        let mut headline = self.intrinsics.error_headline(reason);
        let mut located = self.locate(reason);
        if headline.starts_with("SyntaxError:") && matches!(located, Some(Place::End(_))) {
            // QuickJS met the wrapper's closing `})`, which the program
            // never wrote: naming that brace would point at nothing.
            return Ending::failed(
                FailureKind::Invalid,
                wrapper_tail_error(&headline, located, self.sent),
            );
        }
        if let Some(Place::In(at)) = located {
            // Only when the program itself made the call: a builtin that
            // was handed something else than a function (`[1].map(5)`)
            // throws the same words from its own frame, and the call the
            // program made there, `.map`, is a function.
            if headline == "TypeError: not a function"
                && self.thrown_by_the_program(reason)
                && let Some(callee) = hints::callee(self.sent.source(), at)
            {
                headline = format!("TypeError: {callee} is not a function");
            } else if headline.starts_with("SyntaxError:")
                && self.thrown_by_the_program(reason)
                && hints::module_statement(self.sent.source(), at)
            {
                headline = format!("{headline} ({})", hints::NO_MODULES);
            } else if headline.starts_with("SyntaxError:")
                // The program's own syntax, not text a builtin refused
                // (`JSON.parse(await text())`, which read as a misplaced
                // `await`).
                && self.thrown_by_the_program(reason)
                && let Some(word) = hints::await_outside_async(self.sent.source(), at)
            {
                headline = "SyntaxError: await is only valid in an async function, and the \
                            function around this one is not async"
                    .to_owned();
                located = Some(Place::In(word));
            }
        }
        // QuickJS's JSON.parse says only `unexpected token: 'not'`, which
        // reads as a mistake in the program's own syntax.
        if headline.starts_with("SyntaxError:")
            && self
                .frames(reason, 2)
                .iter()
                .any(|f| f == "at parse (native)")
            && !headline.contains("JSON")
        {
            headline = headline.replacen(
                "SyntaxError: ",
                "SyntaxError: JSON.parse: the text is not JSON: ",
                1,
            );
        }
        // `new RegExp(text)` of text with a `+` or a `(` in it (or such
        // text given to `match`, `search`...): QuickJS says only `nothing to
        // repeat`, which reads as the program's own syntax. Its own caps
        // (`too many captures`) keep their words: they are `limit`.
        if let Some(rest) = headline.strip_prefix("SyntaxError: ")
            && quickjs_limit(&headline).is_none()
            && self
                .frames(reason, 1)
                .first()
                .is_some_and(|f| f == "at RegExp (native)")
        {
            headline = if rest.contains("flags") {
                format!(
                    "{headline} (a regular expression's flags are some of d, g, i, m, s, u, v \
                     and y, each once)"
                )
            } else {
                format!(
                    "SyntaxError: invalid regular expression: {rest} (a pattern made from \
                     text could not be read: to match text as it is, escape it first, \
                     text.replace(/[.*+?^${{}}()|[\\]\\\\]/g, \"\\\\$&\"))"
                )
            };
        }
        // `require`, `fetch`, `process`: what a model reaches for, named
        // with what to do instead; and a tool's name misspelt.
        if let Some(name) = headline
            .strip_prefix("ReferenceError: ")
            .and_then(|rest| rest.strip_suffix(" is not defined"))
        {
            if let Some(why) = hints::missing_global(name) {
                headline = format!("{headline} ({why})");
            } else if let Some(meant) = self.nearest_tool(name, "the tool ") {
                headline = format!("{headline} ({meant})");
            }
        }
        // `host.get_wheather(...)`, `crypto.createHash(...)`.
        if let Some(callee) = headline
            .strip_prefix("TypeError: ")
            .and_then(|rest| rest.strip_suffix(" is not a function"))
        {
            if let Some(why) = hints::missing_method(callee) {
                headline = format!("{headline} ({why})");
            } else if let Some(name) = callee.strip_prefix("host.")
                && let Some(meant) = self.nearest_tool(name, "host.")
            {
                headline = format!("{headline} ({meant})");
            }
        }
        // `await import("x")`.
        if headline.starts_with("ReferenceError: could not load module ") {
            headline = format!("{headline} ({})", hints::NO_MODULES);
        }
        // `JSON.parse(value)` of a value already parsed: QuickJS reads the
        // object as its text, "[object Object]".
        if headline == "SyntaxError: JSON.parse: the text is not JSON: unexpected token: 'object'" {
            headline = format!(
                "{headline} (if JSON.parse was given an object, it read it as the text \
                 \"[object Object]\": a JSON tool's value arrives parsed, ready to use)"
            );
        }
        if let Some(why) = hints::not_an_object(&headline) {
            headline = format!("{headline} ({why})");
        }
        let place = located
            .map(|at| format!(" at {}", self.sent.shown(at.position())))
            .unwrap_or_default();
        match quickjs_limit(&headline) {
            // A JavaScript recursion (not the regexp compiler's, nor one
            // function's operands): what to write instead.
            Some(Cap::Stack) if headline == "RangeError: Maximum call stack size exceeded" => {
                self.stack_limit(&format!("{headline}{place} ({LOOP_INSTEAD})"))
            }
            Some(Cap::Stack) => self.stack_limit(&format!("{headline}{place}")),
            Some(Cap::Memory) => Ending::failed(
                FailureKind::Limit,
                format!("memory limit: {headline}{place}"),
            ),
            Some(Cap::Size) if headline.starts_with("RangeError: too many arguments") => {
                Ending::failed(
                    FailureKind::Limit,
                    format!("size limit: {headline}{place} ({SPREAD_INSTEAD})"),
                )
            }
            Some(Cap::Size) => {
                Ending::failed(FailureKind::Limit, format!("size limit: {headline}{place}"))
            }
            // A timeout the program set itself (`AbortSignal.timeout` on a
            // call), let go uncaught: the tool was slower than the program
            // would wait, as a `deadlineMs` that passed, which is
            // `transient`; the program is not wrong for it.
            None => Ending::failed(
                if headline.starts_with("TimeoutError") && self.intrinsics.is_dom_exception(reason)
                {
                    FailureKind::Transient
                } else {
                    FailureKind::Invalid
                },
                format!(
                    "{}{}{}{}{place}",
                    aggregate_headline(headline),
                    // Its own fields (`class HttpError` with a `status`),
                    // which the headline alone lost.
                    self.intrinsics.error_fields(reason),
                    self.aggregated(reason),
                    self.causes(reason)
                ),
            ),
        }
    }

    /// A value as a message tells it: a ToolError the evaluator issued by
    /// its tool, kind and message; anything else as the console shows it.
    pub(crate) fn told(&self, value: &Value<'js>) -> String {
        match tool_error::issued_kind(self.session, value) {
            Some((kind, tool)) => format!(
                "ToolError from {tool} ({}): {}",
                kind.as_str(),
                self.intrinsics
                    .property(value, "message")
                    .unwrap_or_default()
            ),
            None => self.intrinsics.display(value),
        }
    }

    /// [`told`](Judge::told), once the program has ended (the report of
    /// what it left behind): no code of the program's runs.
    pub(crate) fn told_quietly(&self, value: &Value<'js>) -> String {
        match tool_error::issued_kind(self.session, value) {
            Some((kind, tool)) => format!(
                "ToolError from {tool} ({}): {}",
                kind.as_str(),
                self.intrinsics.quiet_message(value)
            ),
            None => self
                .intrinsics
                .quietly(value)
                .unwrap_or_else(|| format!("[{}]", value.type_name())),
        }
    }

    /// ` (caused by X; caused by Y)` for an error's `cause` chain, at most
    /// [`MAX_CAUSES`] deep: an error a program wraps around a ToolError
    /// (`throw new Error("lookup failed", { cause: e })`) kept only its own
    /// message, and the tool's was lost.
    fn causes(&self, error: &Value<'js>) -> String {
        let mut said = Vec::new();
        let mut seen: Vec<Value<'js>> = Vec::new();
        let mut current = error.clone();
        while said.len() < MAX_CAUSES {
            let Some(object) = current.as_object() else {
                break;
            };
            let cause = match object.get::<_, Value>("cause") {
                Ok(cause) if !cause.is_undefined() => cause,
                Ok(_) => break,
                Err(_) => {
                    let _ = error.ctx().catch();
                    break;
                }
            };
            // A chain that comes back on itself is told once.
            if cause == *error || seen.contains(&cause) {
                break;
            }
            said.push(self.told(&cause));
            seen.push(cause.clone());
            current = cause;
        }
        if said.is_empty() {
            return String::new();
        }
        format!(" (caused by {})", said.join("; caused by "))
    }

    /// ` (2 errors: X; Y)` for an AggregateError (`Promise.any` of calls
    /// that all failed), at most [`MAX_AGGREGATED`] of them told: the Result
    /// read "AggregateError" and lost every reason.
    fn aggregated(&self, error: &Value<'js>) -> String {
        let Some(object) = error.as_object() else {
            return String::new();
        };
        if self.intrinsics.property(error, "name").as_deref() != Some("AggregateError") {
            return String::new();
        }
        let errors = match object.get::<_, Value>("errors") {
            Ok(errors) => errors,
            Err(_) => {
                let _ = error.ctx().catch();
                return String::new();
            }
        };
        let Some(errors) = errors.as_array() else {
            return String::new();
        };
        let told: Vec<String> = errors
            .iter::<Value>()
            .take(MAX_AGGREGATED)
            .map_while(|e| e.ok())
            .map(|e| match e.as_string() {
                // Quoted: a reason's own "; " read as two reasons.
                Some(text) => quoted(&self.intrinsics.shown(text)),
                None => aggregate_headline(self.told(&e)),
            })
            .collect();
        let _ = error.ctx().catch();
        match errors.len() {
            0 => String::new(),
            1 => format!(" (1 error: {})", told.join("; ")),
            n if n > told.len() => format!(
                " ({n} errors: {}; and {} more)",
                told.join("; "),
                n - told.len()
            ),
            n => format!(" ({n} errors: {})", told.join("; ")),
        }
    }

    fn stack_limit(&self, why: &str) -> Ending {
        Ending::failed(FailureKind::Limit, format!("stack limit: {why}"))
    }

    /// Whether the error's innermost frame is the program's (not a
    /// builtin's, `at map (native)`).
    fn thrown_by_the_program(&self, error: &Value<'js>) -> bool {
        self.frames(error, 1)
            .first()
            .is_some_and(|frame| frame.contains(program::FILE))
    }

    /// The `n` innermost frames of the error's stack (`at parse (native)`;
    /// JSON.parse's error has the text's own place, `at <input>:1:1`,
    /// before it).
    fn frames(&self, error: &Value<'js>, n: usize) -> Vec<String> {
        let Some(stack) = self.intrinsics.raw_stack(error) else {
            return Vec::new();
        };
        stack
            .lines()
            .map(str::trim)
            .filter(|frame| frame.starts_with("at "))
            .take(n)
            .map(str::to_owned)
            .collect()
    }

    /// "did you mean ...?" for the tool whose name is nearest `name`, if
    /// one is near: as `{reach}NAME` (`the tool `, `host.`), or through
    /// `host.call` for a name that is no identifier, which only it reaches.
    fn nearest_tool(&self, name: &str, reach: &str) -> Option<String> {
        let meant = wire::names::nearest(name, self.tools.iter().map(|tool| tool.name.as_str()))?;
        Some(if crate::bindings::is_identifier(meant) {
            format!("did you mean {reach}{meant}?")
        } else {
            format!(
                "did you mean {}host.call({meant:?}, args)?",
                reach.trim_end_matches("host.")
            )
        })
    }

    /// ` at line L, column C` when the error's stack passes through the program.
    fn place(&self, error: &Value<'js>) -> String {
        self.locate(error)
            .map(|at| format!(" at {}", self.sent.shown(at.position())))
            .unwrap_or_default()
    }

    /// The program's innermost place in the error's stack, if any.
    /// None for an object that only looks like an Error
    /// (`Object.create(Error.prototype)`): its `stack`, if any, is the
    /// program's, and QuickJS's note of a throw is of the first error made
    /// since the last `catch`, which need not be this one.
    fn locate(&self, error: &Value<'js>) -> Option<Place> {
        self.intrinsics
            .raw_stack(error)
            .and_then(|stack| self.sent.locate(&stack))
    }
}

/// The message for a syntax error QuickJS found in the wrapper's closing
/// `})`. Either the program ended too early (an unclosed bracket, a
/// dangling operator): "unexpected end of the program" at its end. Or a
/// `}` of the program closed the function it is wrapped in, and QuickJS,
/// past that function, met the wrapper's `}` as a statement
/// ("Unexpected token '}'", its message for that and only that): the stray
/// brace is somewhere in the program, and its end is no place to name.
fn wrapper_tail_error(headline: &str, located: Option<Place>, sent: &Sent) -> String {
    // Which bracket, if a scan of the text can tell: a program cut off
    // inside `(` or `[` meets the wrapper's `}` as "Unexpected token '}'"
    // too, which read as a stray brace.
    match hints::unbalanced(sent.source()) {
        Some(Unbalanced::Unclosed(bracket, at)) => {
            let at = sent.shown(at);
            // The place last, as every message of the child gives it.
            return format!(
                "SyntaxError: unexpected end of the program: '{bracket}' never closed, opened at {at}"
            );
        }
        Some(Unbalanced::Stray(bracket, at)) => {
            let at = sent.shown(at);
            return format!(
                "SyntaxError: a '{bracket}' that closes nothing of the program's at {at}"
            );
        }
        None => {}
    }
    if headline == "SyntaxError: Unexpected token '}'" {
        return "SyntaxError: the program has a '}' that closes no '{' of its own".to_owned();
    }
    let place = located
        .map(|at| format!(" at {}", sent.shown(at.position())))
        .unwrap_or_default();
    format!("SyntaxError: unexpected end of the program{place}")
}

/// How deep an uncaught error's `cause` chain is told.
const MAX_CAUSES: usize = 3;

/// The most errors of an AggregateError a message tells.
const MAX_AGGREGATED: usize = 4;

/// QuickJS makes `Promise.any`'s AggregateError with no message, which read
/// as a bare "AggregateError"; Node's (and the standard's own note) says
/// what happened.
fn aggregate_headline(headline: String) -> String {
    if headline == "AggregateError" {
        "AggregateError: All promises were rejected".to_owned()
    } else {
        headline
    }
}

/// Which of QuickJS's limits an error of QuickJS's reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cap {
    /// Recursion or nesting deeper than a stack allows.
    Stack,
    /// An allocation failed.
    Memory,
    /// A fixed cap on one value's size, or on a count.
    Size,
}

/// What a program that ran out of stack can write instead. QuickJS, unlike
/// V8, joins an array that holds itself without end (`a.push(a);
/// String(a)`): that reads as a recursion too deep, so it is named. (V8's
/// cycle check, written around `join`, cost every join 70% more; not done.)
/// What to write instead of a spread (or `apply`) of more values than a
/// call takes: QuickJS passes at most 65,535 arguments, V8 about 120,000.
const SPREAD_INSTEAD: &str = "a spread passes each value as an argument: for many values use \
    a loop or reduce (Math.max, Math.min), push them in a loop or concat, or convert bytes \
    with TextDecoder or in chunks of at most 65,535 (String.fromCharCode)";

const LOOP_INSTEAD: &str = "walk deep data with a loop and a stack of your own; or, if an array \
                            holds itself, take it out of itself before joining it (QuickJS, \
                            unlike V8, joins such an array without end)";

/// The limit an error headline (`Name: message`) of QuickJS's reports, or
/// `None` for any other error.
///
/// Every message here is one QuickJS throws only for its own limit. Left
/// out on purpose: "Invalid array length" (also a negative or fractional
/// length), "invalid max array buffer length", ".size is not a legal size"
/// (bad arguments, whatever their size).
pub(crate) fn quickjs_limit(headline: &str) -> Option<Cap> {
    const STACK: &[&str] = &[
        "RangeError: Maximum call stack size exceeded",
        // The regexp compiler's own recursion check.
        "SyntaxError: stack overflow",
        "SyntaxError: too many imbricated quantifiers",
    ];
    const STACK_PREFIXES: &[&str] = &[
        // One function's operand stack over 65,535 slots (at compile time).
        "InternalError: stack overflow (op=",
    ];
    const MEMORY: &[&str] = &[
        "InternalError: out of memory",
        "InternalError: out of memory in regexp execution",
        // The regexp compiler's.
        "SyntaxError: out of memory",
    ];
    const SIZE: &[&str] = &[
        // A string of 2^30 characters, an ArrayBuffer over 2^31 - 1 bytes
        // (or a resizable one past its own maximum). A negative count or
        // length has messages of its own, so these mean "too large".
        "InternalError: string too long",
        "RangeError: invalid string length",
        "RangeError: invalid array buffer length",
        "RangeError: BigInt is too large",
        "RangeError: BigInt is too large to allocate",
        // Base64 and hex encodings whose text would be too long.
        "RangeError: input too large",
        "RangeError: output too large",
        // Regexps.
        "SyntaxError: too many captures",
        "SyntaxError: too many ranges",
        "SyntaxError: too many named groups",
    ];
    const SIZE_PREFIXES: &[&str] = &[
        // A spread or apply of more than 65,535 arguments.
        "RangeError: too many arguments in function call",
        // Counts in one function, at compile time.
        "SyntaxError: too many variables declared",
        "SyntaxError: too many parameters in function definition",
        "SyntaxError: too many closure variables used",
    ];
    let is = |exact: &[&str], prefixes: &[&str]| {
        exact.contains(&headline) || prefixes.iter().any(|p| headline.starts_with(p))
    };
    if is(STACK, STACK_PREFIXES) {
        Some(Cap::Stack)
    } else if is(MEMORY, &[]) {
        Some(Cap::Memory)
    } else if is(SIZE, SIZE_PREFIXES) {
        Some(Cap::Size)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_run_ends_in_the_stops_words_and_a_refusal_is_told_once() {
        let refusal = Reason::Memory {
            requested: 8,
            used: 9,
            limit: Some(10),
            outside: 0,
        };
        let figures = "the program's heap could not grow by 8 bytes: 9 of the 10 that \
                       max_memory leaves it were in use; keep less in memory at once";
        // Judged to have run out of memory: its error and place, then the
        // refusal's figures.
        let judged = Ending::failed(
            FailureKind::Limit,
            "memory limit: InternalError: out of memory at line 1, column 2",
        );
        assert_eq!(
            judged.clone().stopped_for(&refusal),
            Ending::failed(
                FailureKind::Limit,
                format!(
                    "memory limit: InternalError: out of memory at line 1, column 2 ({figures})"
                ),
            )
        );
        // A program that caught the refusal was ended by the stop: its
        // words are the refusal's, told once (they were told twice).
        let stopped = refusal.ending();
        assert_eq!(stopped.clone().stopped_for(&refusal), stopped);
        // Anything else ends in the stop's words.
        let ok = Ending::Finished("1".to_owned());
        assert_eq!(ok.stopped_for(&refusal), refusal.ending());
        let wall_clock = Reason::WallClock(std::time::Duration::from_secs(1));
        assert_eq!(judged.stopped_for(&wall_clock), wall_clock.ending());
    }

    #[test]
    fn quickjs_limits_are_told_from_other_errors_by_headline() {
        for (headline, cap) in [
            (
                "RangeError: Maximum call stack size exceeded",
                Some(Cap::Stack),
            ),
            (
                "InternalError: stack overflow (op=12, pc=3)",
                Some(Cap::Stack),
            ),
            (
                "InternalError: out of memory in regexp execution",
                Some(Cap::Memory),
            ),
            ("RangeError: BigInt is too large", Some(Cap::Size)),
            (
                "RangeError: too many arguments in function call (only 65535 allowed)",
                Some(Cap::Size),
            ),
            ("RangeError: Invalid array length", None),
            ("RangeError: too many", None),
            ("Error: out of memory", None),
            ("TypeError: x is not a function", None),
        ] {
            assert_eq!(quickjs_limit(headline), cap, "{headline}");
        }
    }

    #[test]
    fn a_long_part_is_cut_so_that_its_error_needs_no_second_cut() {
        let message = "é".repeat(PART_WHOLE);
        let part = cut_part(message.as_bytes());
        assert!(part.starts_with("ééé"), "{part}");
        assert!(
            part.ends_with(&format!(
                " [... {} bytes in all, cut here ...]",
                2 * PART_WHOLE
            )),
            "{part}"
        );
        // The headline and place around it, and no second cut.
        let error = format!("Error: {part} at line 3, column 9");
        assert!(error.len() <= MAX_ERROR_BYTES, "{}", error.len());
        assert_eq!(shorten(error.clone()), error);
        // Not well-formed: cut all the same, a lone surrogate as U+FFFD.
        let mut odd = vec![0xED, 0xA0, 0x80];
        odd.extend(std::iter::repeat_n(b'x', PART_WHOLE));
        assert!(cut_part(&odd).starts_with("\u{FFFD}"));
    }

    #[test]
    fn a_long_error_is_cut_in_its_middle_at_character_boundaries() {
        let error = format!("{} at line 3, column 9", "é".repeat(MAX_ERROR_BYTES));
        let short = shorten(error.clone());
        // The parent keeps it whole: no second cut, which took the note.
        assert!(short.len() <= wire::MAX_ERROR_BYTES, "{}", short.len());
        assert!(short.starts_with("ééé"));
        assert!(short.contains(&format!(
            " [... {} bytes in all, cut here ...] ",
            error.len()
        )));
        assert!(short.ends_with("éé at line 3, column 9"), "{short}");
        assert_eq!(shorten("short".to_owned()), "short");
        let edge = "x".repeat(MAX_ERROR_BYTES);
        assert_eq!(shorten(edge.clone()), edge);
    }
}
