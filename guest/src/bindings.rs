//! The tools as the program sees them: global async functions, `host.<name>`
//! and `host.call(name, args, {deadlineMs, signal})`.
//!
//! A call made with an AbortSignal rejects with the signal's reason when it
//! aborts (at once if it already has) and is withdrawn: never sent if it
//! was still queued, else withdrawn from the parent, which cancels its
//! handler (see `event_loop` and `wire::Withdraw`).
//!
//! A binding with a signature such as `get_logs(host, count)` maps its
//! arguments to an object by position: `get_logs("db1", 50)` sends
//! `{"host":"db1","count":50}` (an `undefined` argument is left out); one
//! plain object with a parameter's name among its keys is the args by
//! name, sent as it is (`get_logs({host: "db1", count: 50})`, the same). A
//! binding without one sends its single argument: a string as it is,
//! `undefined` as no args, anything else as its JSON text. `host.call`
//! always takes args in that second form.
//!
//! A binding becomes a global only when its name is a plain ASCII
//! identifier that is not a reserved word and not already reachable from the
//! global object (`eval`, `JSON`, `Promise`, `console`, `host`, `toString`,
//! ...). Every binding is reachable through `host`, which has no prototype,
//! so no name can collide with anything there except `call` itself.
//!
//! What is sent is built without looking anything up in the program's
//! reach: the args object for a signature has no prototype (a setter or
//! `toJSON` added to `Object.prototype` never sees it), and JSON text comes
//! from QuickJS's C serializer, not from the global `JSON`. Values the
//! program passes in are serialized by JSON's usual rules, their own
//! `toJSON` methods included.

use std::collections::HashSet;

use rquickjs::function::{Opt, Rest};
use rquickjs::object::Property;
use rquickjs::{Atom, Ctx, Exception, Function, Object, Value};
use wire::StartBinding;

use crate::calls::Call;
use crate::intrinsics::{Utf8, Watched};
use crate::pending::Pending;
use crate::session::Session;
use crate::throw_site;
use crate::tool_error;

/// One binding, checked and ready to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The tool's name.
    pub(crate) name: String,
    /// The signature's parameter names; `None` when it has no signature.
    pub(crate) parameters: Option<Vec<String>>,
    /// The signature's last parameter is a rest parameter (`...rest`): it
    /// takes every argument from its position on, as an array.
    pub(crate) rest: bool,
}

/// Checks the Start's bindings. A name given twice, an empty name or a
/// signature that is not `name(param, ...)` is a fault of the Start, refused
/// before the program runs.
pub(crate) fn plan(bindings: &[StartBinding]) -> Result<Vec<Binding>, String> {
    let mut planned: Vec<Binding> = Vec::with_capacity(bindings.len());
    // A set, not a search of what is planned: with a few hundred tools
    // that search was a tenth of every run (measured: 100 tools, 13% of a
    // `return 1` in `memcmp`).
    let mut names: HashSet<&str> = HashSet::with_capacity(bindings.len());
    for binding in bindings {
        if binding.name.is_empty() {
            return Err("a binding has an empty name".to_owned());
        }
        if !names.insert(binding.name.as_str()) {
            return Err(format!("binding {:?} is declared twice", binding.name));
        }
        let parameters = parameters(&binding.signature)
            .map_err(|why| format!("binding {:?}: {why}", binding.name))?;
        planned.push(Binding {
            name: binding.name.clone(),
            rest: has_rest(&binding.signature),
            parameters,
        });
    }
    Ok(planned)
}

/// Defines `host` and the global functions.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    bindings: &[Binding],
) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let host = Object::new(ctx.clone())?;
    host.set_prototype(None)?;
    host.prop("call", Property::from(host_call(ctx, session)?))?;
    // `host` first, so that a binding named "host" cannot take the global.
    globals.prop(
        "host",
        Property::from(host.clone()).writable().configurable(),
    )?;
    for binding in bindings {
        let function = binding_function(ctx, session, binding.clone())?;
        // The name made an atom once, for the three uses below.
        let name = Atom::from_str(ctx.clone(), &binding.name)?;
        if binding.name != "call" {
            host.prop(name.clone(), Property::from(function.clone()).enumerable())?;
        }
        if is_identifier(&binding.name) && !globals.contains_key(name.clone())? {
            globals.prop(name, Property::from(function).writable().configurable())?;
        }
    }
    Ok(())
}

/// The function a binding becomes.
fn binding_function<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    binding: Binding,
) -> rquickjs::Result<Function<'js>> {
    let session = session.clone();
    let arity = binding.parameters.as_ref().map_or(1, Vec::len);
    let name = binding.name.clone();
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, values: Rest<Value<'js>>| {
            if let Some(why) = unread_argument(&binding, &values.0) {
                return rejected(&ctx, type_error(&ctx, &why));
            }
            let args = match &binding.parameters {
                Some(parameters) if given_by_name(parameters, binding.rest, &values.0) => {
                    args_from_value(&ctx, &session, &binding.name, values.0.first())
                }
                Some(parameters) => args_from_parameters(
                    &ctx,
                    &session,
                    &binding.name,
                    parameters,
                    binding.rest,
                    &values.0,
                ),
                None => args_from_value(&ctx, &session, &binding.name, values.0.first()),
            };
            call(&ctx, &session, binding.name.clone(), args, 0, None)
        },
    )?
    .with_name(name)?
    .with_length(arity)
}

/// Whether `values` are what an array method passes its callback: the
/// element, its index and the array (`ids.map(fetch_doc)`).
fn callback_arguments(values: &[Value<'_>]) -> bool {
    values.len() == 3 && values[1].is_number() && values[2].is_array()
}

/// Whether a call of a binding with a signature gave its args by name:
/// one ordinary object (an object literal, `Object.create(null)`, a class
/// instance; not an array, a Map, a Proxy...) with a parameter's name among
/// its own keys, and nothing after it but `undefined`, or the index and
/// array an array method passes (`add({a: 1}, 5)` is by position).
///
/// Models call `add({a: 2, b: 3})` of `add(a, b)` as often as `add(2, 3)`,
/// and by position that sent `{"a": {"a": 2, "b": 3}}` without a word;
/// `host.call` already took the object as the args. Such an object is sent
/// as it is, keys the signature does not name included: `search({query:
/// "rust", limit: 5})` of `search(query)` sent `{"query": {"query": ...}}`
/// (tests/HOSTILE.md item 114), where the tool now gets `limit` beside
/// `query`, or refuses it by its schema. (An object meant as the first
/// parameter's value that holds a parameter's name is read the same way; a
/// binding with a rest parameter is always read by position.)
fn given_by_name(parameters: &[String], rest: bool, values: &[Value<'_>]) -> bool {
    const OBJECT_CLASS: u32 = 1; // JS_CLASS_OBJECT in quickjs.c
    if rest || parameters.is_empty() {
        return false;
    }
    let Some(object) = values.first().and_then(Value::as_object) else {
        return false;
    };
    let trailing_ignored =
        callback_arguments(values) || values.iter().skip(1).all(Value::is_undefined);
    if !trailing_ignored || crate::web::class_id(object.clone().into_value()) != OBJECT_CLASS {
        return false;
    }
    object
        .keys::<String>()
        .any(|key| key.is_ok_and(|key| parameters.contains(&key)))
}

/// Why an argument past a binding's own would be lost, if one would: a
/// binding reads its parameters (one args value without a signature) and
/// nothing after them, so `search("q", { limit: 5 })` or
/// `fetch_doc(id, { signal })` would run without what the program passed.
/// What array methods pass their callbacks is left alone, so that
/// `ids.map(fetch_doc)` works: the index (a number) second and the array
/// third, the three together; and so is `undefined` or `null`. A binding
/// that declares no parameter reads nothing: `get_user("alice")` of
/// `get_user()` ran without a word and answered for whoever the tool
/// chose (`.then(() => ping())` passes nothing on).
fn unread_argument(binding: &Binding, values: &[Value<'_>]) -> Option<String> {
    let taken = match &binding.parameters {
        Some(_) if binding.rest => return None,
        Some(parameters) => parameters.len(),
        None => 1,
    };
    // The index and the array only as an array method passes them: a
    // number second alone is an argument (`add(7, 8)` of `add(a)`).
    let callback = callback_arguments(values);
    let (position, value) =
        values.iter().enumerate().skip(taken).find(|(i, v)| {
            !(v.is_undefined() || v.is_null() || (callback && (*i == 1 || *i == 2)))
        })?;
    let takes = match &binding.parameters {
        Some(parameters) if parameters.is_empty() => "no arguments".to_owned(),
        Some(parameters) if parameters.len() == 1 => format!("one argument, {}", parameters[0]),
        Some(parameters) => format!("{} arguments, {}", parameters.len(), parameters.join(", ")),
        None => "one argument, its args".to_owned(),
    };
    // A Proxy is not asked (its `has` trap is the program's code).
    // SAFETY: JS_IsProxy only reads the value's class.
    let proxy = unsafe { rquickjs::qjs::JS_IsProxy(value.as_raw()) };
    // `timeout` is the word models reach for most.
    let options = !proxy
        && value.as_object().is_some_and(|o| {
            ["signal", "deadlineMs", "timeout", "timeoutMs", "timeout_ms"]
                .iter()
                .any(|key| o.contains_key(*key).unwrap_or(false))
        });
    let instead = if options {
        format!(
            "; call options go through host.call({}, args, {{ signal, deadlineMs }}) (a \
             timeout is deadlineMs, in milliseconds)",
            crate::outcome::quoted(&binding.name)
        )
    } else if binding.parameters.is_none() {
        "; put everything the tool needs in that one value".to_owned()
    } else {
        String::new()
    };
    let kind = crate::intrinsics::Intrinsics::type_name(value);
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    Some(format!(
        "{} takes {takes}; its {} argument, {article} {kind}, would be read by nothing{instead}",
        binding.name,
        ordinal(position + 1),
    ))
}

/// `1st`, `2nd`, `3rd`, `4th`, ... `11th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The longest tool name `host.call` sends, in bytes.
const MAX_TOOL_NAME: usize = wire::MAX_TOOL_NAME_BYTES;

/// `host.call(name, args, {deadlineMs})`.
fn host_call<'js>(ctx: &Ctx<'js>, session: &Session<'js>) -> rquickjs::Result<Function<'js>> {
    let session = session.clone();
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              tool: Opt<Value<'js>>,
              args: Opt<Value<'js>>,
              options: Opt<Value<'js>>| {
            let Some(tool) = tool.0.as_ref().and_then(Value::as_string) else {
                return rejected(
                    &ctx,
                    type_error(&ctx, "host.call: the tool name must be a string"),
                );
            };
            let Some(intrinsics) = session.intrinsics() else {
                return Err(ended(&ctx));
            };
            // A name no tool has is refused before it is copied: a 20 MB
            // one went into every error that told it, past the memory cap
            // (tests/HOSTILE.md item 107).
            let tool = Utf8::of(tool)?;
            if tool.bytes().len() > MAX_TOOL_NAME {
                return rejected(
                    &ctx,
                    type_error(
                        &ctx,
                        &format!(
                            "host.call: a tool name of {} bytes names no tool (a name has at \
                             most {MAX_TOOL_NAME})",
                            tool.bytes().len()
                        ),
                    ),
                );
            }
            // Held with the call, as its args are.
            let tool = intrinsics.held(&tool, session.heap(), 1)?;
            let deadline = match deadline_ms(&ctx, options.0.as_ref()) {
                Ok(deadline) => deadline,
                Err(e) => return rejected(&ctx, tool_error::caught(&ctx, e)),
            };
            let signal = match signal_of(options.0.as_ref()) {
                Ok(signal) => signal,
                Err(e) => return rejected(&ctx, tool_error::caught(&ctx, e)),
            };
            let args = args_from_value(&ctx, &session, &tool, args.0.as_ref());
            call(&ctx, &session, tool, args, deadline, signal)
        },
    )?
    .with_name("call")?
    .with_length(3)
}

/// Queues a call and returns its promise; a call whose args could not be
/// built is rejected with the reason, as an async function would.
fn call<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    tool: String,
    args: rquickjs::Result<String>,
    deadline_ms: u64,
    signal: Option<Value<'js>>,
) -> rquickjs::Result<Value<'js>> {
    let args = match args {
        Ok(args) => args,
        // No memory for the args: thrown where the call is, as QuickJS's
        // own error for a full heap is (the run is stopped).
        Err(e) if session.heap().refused_own() => return Err(e),
        Err(e) => return rejected(ctx, tool_error::caught(ctx, e)),
    };
    let Some(intrinsics) = session.intrinsics() else {
        return Err(ended(ctx));
    };
    let Some(key) = session.with_calls(|calls| calls.next_key()) else {
        return Err(ended(ctx));
    };
    let mut watched = None;
    if let Some(signal) = signal {
        let on_abort = abort_call(ctx, session, key)?;
        match intrinsics.watch_signal(signal.clone(), on_abort) {
            Ok(Watched::Watching(watch)) => watched = Some((signal, watch)),
            Ok(Watched::Aborted(reason)) => return rejected(ctx, reason),
            Err(e) => return rejected(ctx, tool_error::caught(ctx, e)),
        }
    }
    let site = throw_site::unnoted(ctx, session, || intrinsics.call_site())?;
    let pending = Pending::new(ctx)?;
    let promise = pending.promise();
    let call = Call {
        tool,
        args,
        deadline_ms,
        promise: pending,
        site,
        key,
        signal: watched,
    };
    // What the guest holds for the call (its args, and room in the tables
    // of calls for it) counts towards the program's memory; past the limit
    // the run stops here, as when QuickJS's heap is full.
    // (The args were admitted as they were read: `Intrinsics::held`.)
    let heap = session.heap();
    let queued = session.with_calls(|calls| {
        let fits = heap.reserve(|| calls.reserve_one());
        if fits {
            calls.queue(call);
        }
        fits
    });
    match queued {
        None => Err(ended(ctx)),
        Some(false) => Err(out_of_memory(ctx)),
        Some(true) => Ok(promise),
    }
}

/// QuickJS's own error for a heap that is full, thrown where the program
/// is once the guest's memory for it ran out; the run is stopped already.
pub(crate) fn out_of_memory(ctx: &Ctx<'_>) -> rquickjs::Error {
    Exception::throw_internal(ctx, "out of memory")
}

/// What a call's signal runs when it aborts: the call numbered `key`, if
/// still unanswered, is withdrawn and rejects with the signal's reason.
fn abort_call<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    key: u64,
) -> rquickjs::Result<Function<'js>> {
    let session = session.clone();
    Function::new(ctx.clone(), move |reason: Value<'js>| {
        if let Some(call) = session.with_calls(|calls| calls.withdraw(key)).flatten() {
            call.promise.reject(reason);
        }
        Ok::<_, rquickjs::Error>(())
    })
}

/// `options.signal`, when given (checked by the web surface).
fn signal_of<'js>(options: Option<&Value<'js>>) -> rquickjs::Result<Option<Value<'js>>> {
    let Some(options) = options.and_then(Value::as_object) else {
        return Ok(None);
    };
    let signal: Value = options.get("signal")?;
    // `signal: opts.signal ?? null` is no signal, as in `fetch`.
    Ok((!signal.is_undefined() && !signal.is_null()).then_some(signal))
}

/// Whether a signature's last parameter is a rest parameter.
fn has_rest(signature: &str) -> bool {
    let (Some(open), Some(close)) = (signature.find('('), signature.rfind(')')) else {
        return false;
    };
    open < close
        && split_top_level(&signature[open + 1..close])
            .iter()
            .rev()
            .map(|p| p.trim())
            .find(|p| !p.is_empty())
            .is_some_and(|p| p.starts_with("..."))
}

/// Args for a binding with a signature: its parameters by position; a rest
/// parameter last takes an array of every value from its position on.
fn args_from_parameters<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    tool: &str,
    parameters: &[String],
    rest: bool,
    values: &[Value<'js>],
) -> rquickjs::Result<String> {
    let object = Object::new(ctx.clone())?;
    object.set_prototype(None)?;
    let single = if rest {
        parameters.len().saturating_sub(1)
    } else {
        parameters.len()
    };
    for (parameter, value) in parameters[..single].iter().zip(values) {
        if !value.is_undefined() {
            object.prop(
                parameter.as_str(),
                Property::from(value.clone()).enumerable(),
            )?;
        }
    }
    if rest && let Some(parameter) = parameters.last() {
        let taken = rquickjs::Array::new(ctx.clone())?;
        for (i, value) in values.iter().skip(single).enumerate() {
            taken.set(i, value.clone())?;
        }
        object.prop(parameter.as_str(), Property::from(taken).enumerable())?;
    }
    // An object always has JSON text.
    let object = object.into_value();
    let text = stringify_args(ctx, tool, object.clone())?
        .map_or(Ok(String::new()), |json| held_args(ctx, session, &json))?;
    warn_lossy_args(session, tool, &text, &object);
    Ok(text)
}

/// Warns on the console, once a run, when a call's args held what JSON
/// writes as `{}` (a Map, a Set, an Error, an iterator...), as a returned
/// value's warning does: the tool was called with the args JSON gives, as
/// promised, but not with the data silently gone. Looked for only when the
/// text has a `{}` (the walk is JavaScript; nearly every call's args are
/// plain data), and in the first calls of a run only
/// ([`MAX_LOSSY_ARGS_WALKS`](crate::session::MAX_LOSSY_ARGS_WALKS)).
fn warn_lossy_args<'js>(session: &Session<'js>, tool: &str, text: &str, value: &Value<'js>) {
    if !text.contains("{}") || !session.may_walk_lossy_args() {
        return;
    }
    let Some((kind, path)) = session
        .intrinsics()
        .and_then(|intrinsics| intrinsics.lossy(value))
    else {
        return;
    };
    session.note_lossy_args_warned();
    // The tool's name is the program's too (`host.call`'s).
    let tool = crate::console::escape_line_breaks(tool);
    let path = crate::console::escape_line_breaks(&path);
    session.write_console(
        format!(
            "warn: a call of {tool} was given {kind} at args{path}, which JSON sends as {{}} \
             (an Error's message, a Map's or Set's entries, an iterator's items are lost): pass \
             plain data (error.message, Object.fromEntries(map), [...set], [...iterator]); \
             later calls of this run are not warned of\n"
        )
        .as_bytes(),
    );
}

/// `JSON.stringify(args)`, its TypeError (a BigInt, a cycle) said of the
/// call: "search: the args have no JSON form: Converting circular structure
/// to JSON" where the engine's own words named no tool. Anything else (out
/// of memory) is thrown on as it is.
fn stringify_args<'js>(
    ctx: &Ctx<'js>,
    tool: &str,
    value: Value<'js>,
) -> rquickjs::Result<Option<rquickjs::String<'js>>> {
    match ctx.json_stringify(value) {
        Err(rquickjs::Error::Exception) => {
            let thrown = ctx.catch();
            let type_error = thrown
                .as_object()
                .filter(|_| thrown.is_error())
                .and_then(|e| e.get::<_, Value>("name").ok())
                .and_then(|name| name.as_string().and_then(|s| s.to_string().ok()))
                .is_some_and(|name| name == "TypeError");
            let message = thrown
                .as_exception()
                .and_then(|e| e.message())
                .unwrap_or_default();
            if type_error {
                let hint = crate::hints::no_json(&message)
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                Err(Exception::throw_type(
                    ctx,
                    &format!("{tool}: the args have no JSON form: {message}{hint}"),
                ))
            } else {
                Err(ctx.throw(thrown))
            }
        }
        other => other,
    }
}

/// A call's args text, read from QuickJS and held with the call until its
/// Request is framed: admitted under the program's memory limit before it
/// is copied (`Intrinsics::held`). `JSON.stringify`'s text is always well
/// formed, so nearly every call converts it as it is.
fn held_args<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    text: &rquickjs::String<'js>,
) -> rquickjs::Result<String> {
    let intrinsics = session.intrinsics().ok_or_else(|| ended(ctx))?;
    intrinsics.held(&Utf8::of(text)?, session.heap(), 1)
}

/// Args for a binding without a signature, and for `host.call`.
fn args_from_value<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    tool: &str,
    value: Option<&Value<'js>>,
) -> rquickjs::Result<String> {
    let Some(value) = value.filter(|v| !v.is_undefined()) else {
        return Ok(String::new());
    };
    if let Some(s) = value.as_string() {
        return held_args(ctx, session, s);
    }
    // A whole number (the argument of many calls) is its own JSON text.
    if let Some(n) = value.as_int() {
        return Ok(n.to_string());
    }
    match stringify_args(ctx, tool, value.clone())? {
        Some(json) => {
            let text = held_args(ctx, session, &json)?;
            warn_lossy_args(session, tool, &text, value);
            Ok(text)
        }
        None => Err(Exception::throw_type(
            ctx,
            &format!(
                "{tool}: args must be a string or have a JSON form; got a {}",
                crate::intrinsics::Intrinsics::type_name(value)
            ),
        )),
    }
}

/// `options.deadlineMs` as whole milliseconds (rounded up); 0 = none.
fn deadline_ms<'js>(ctx: &Ctx<'js>, options: Option<&Value<'js>>) -> rquickjs::Result<u64> {
    let Some(options) = options.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(0);
    };
    let Some(options) = options.as_object() else {
        return Err(Exception::throw_type(
            ctx,
            "host.call: options must be an object",
        ));
    };
    // An option the call does not know would be ignored, and a program
    // that meant `{ timeout: 5000 }` as a deadline would wait without one.
    for key in options.keys::<rquickjs::String>() {
        let key = key?.to_string()?;
        if key != "deadlineMs" && key != "signal" {
            let meant = match key.to_ascii_lowercase().as_str() {
                "timeout" | "timeoutms" | "deadline" | "deadline_ms" | "ms" => {
                    " (a deadline is `deadlineMs`, in milliseconds)"
                }
                "abortsignal" | "abort" => " (a signal is `signal`, an AbortSignal)",
                _ => "",
            };
            return Err(Exception::throw_type(
                ctx,
                &format!(
                    "host.call: unknown option {}{meant}; the options are deadlineMs and signal",
                    crate::outcome::quoted(&key)
                ),
            ));
        }
    }
    let deadline: Value = options.get("deadlineMs")?;
    if deadline.is_undefined() {
        return Ok(0);
    }
    match deadline.as_number() {
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            // `as` saturates: a deadline past u64 milliseconds is no deadline worth refusing.
            Ok(ms.ceil() as u64)
        }
        _ => Err(Exception::throw_range(
            ctx,
            "host.call: deadlineMs must be a finite, non-negative number of milliseconds",
        )),
    }
}

/// A promise already rejected with `reason`.
fn rejected<'js>(ctx: &Ctx<'js>, reason: Value<'js>) -> rquickjs::Result<Value<'js>> {
    let pending = Pending::new(ctx)?;
    pending.reject(reason);
    Ok(pending.promise())
}

/// A `TypeError` value (not thrown).
fn type_error<'js>(ctx: &Ctx<'js>, message: &str) -> Value<'js> {
    let e = Exception::throw_type(ctx, message);
    tool_error::caught(ctx, e)
}

/// Thrown when a function outlives its run (a program cannot reach one
/// afterwards; this only keeps the closure total).
fn ended(ctx: &Ctx<'_>) -> rquickjs::Error {
    Exception::throw_internal(ctx, "the execution has ended")
}

/// The parameter names of `name(a, b: type, c = 1)`; `None` for no signature.
fn parameters(signature: &str) -> Result<Option<Vec<String>>, String> {
    let signature = signature.trim();
    if signature.is_empty() {
        return Ok(None);
    }
    let (Some(open), Some(close)) = (signature.find('('), signature.rfind(')')) else {
        return Err(format!(
            "signature {signature:?} is not of the form name(param, ...)"
        ));
    };
    if close < open {
        return Err(format!(
            "signature {signature:?} is not of the form name(param, ...)"
        ));
    }
    let mut names = Vec::new();
    let mut seen = HashSet::new();
    for parameter in split_top_level(&signature[open + 1..close]) {
        let parameter = parameter.trim();
        if parameter.is_empty() {
            continue;
        }
        let name = parameter
            .split([':', '=', '?'])
            .next()
            .unwrap_or_default()
            .trim()
            .trim_start_matches("...");
        if name.is_empty() {
            return Err(format!(
                "signature {signature:?} has a parameter without a name"
            ));
        }
        // A second one would take the first's place in the args (a parent
        // of this crate refuses such a signature when the tool is made; a
        // foreign parent may send one). A set: a signature may be long.
        if !seen.insert(name) {
            return Err(format!(
                "signature {signature:?} names parameter {name:?} twice"
            ));
        }
        names.push(name.to_owned());
    }
    Ok(Some(names))
}

/// Splits on commas that are not nested in brackets, so that a parameter's
/// type (`Map<string, number>`) stays whole.
fn split_top_level(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in list.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts
}

/// Words a binding may not take as a global name: reserved words, and names
/// the function body itself defines. Sorted: [`is_identifier`] searches it.
const RESERVED: &[&str] = &[
    "arguments",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// Whether `name` can be a global binding: an ASCII identifier that is not
/// a reserved word. (Non-ASCII identifiers are valid JS, but are left to
/// `host` rather than checked against Unicode's tables.)
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && RESERVED.binary_search(&name).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserved_words_are_sorted_for_their_binary_search() {
        assert!(RESERVED.windows(2).all(|pair| pair[0] < pair[1]));
        for word in RESERVED {
            assert!(!is_identifier(word), "{word}");
        }
        assert!(is_identifier("fetch_logs") && is_identifier("yields"));
    }

    #[test]
    fn signature_parameters_are_names_in_order() {
        assert_eq!(
            parameters("get_logs(host, count)"),
            Ok(Some(vec!["host".into(), "count".into()]))
        );
        assert_eq!(
            parameters("f(a: Map<string, number>, b?: string, c = 1, ...rest)"),
            Ok(Some(vec![
                "a".into(),
                "b".into(),
                "c".into(),
                "rest".into()
            ]))
        );
        assert_eq!(parameters("now()"), Ok(Some(vec![])));
        assert_eq!(parameters(""), Ok(None));
        assert_eq!(parameters("   "), Ok(None));
    }

    #[test]
    fn malformed_signatures_are_refused() {
        assert!(parameters("get_logs").is_err());
        assert!(parameters("f)(").is_err());
        assert!(parameters("f(: string)").is_err());
    }

    #[test]
    fn only_plain_ascii_non_reserved_names_are_identifiers() {
        for name in ["get_logs", "_x", "$", "a1", "fetchURL"] {
            assert!(is_identifier(name), "{name}");
        }
        for name in [
            "",
            "1a",
            "get-logs",
            "a b",
            "données",
            "class",
            "await",
            "arguments",
            "yield",
        ] {
            assert!(!is_identifier(name), "{name}");
        }
    }

    #[test]
    fn duplicate_and_empty_names_are_refused() {
        let binding = |name: &str| StartBinding {
            name: name.into(),
            signature: String::new(),
        };
        assert!(plan(&[binding("a"), binding("a")]).is_err());
        assert!(plan(&[binding("")]).is_err());
        assert!(plan(&[binding("a"), binding("b")]).is_ok());
        let signed = |signature: &str| StartBinding {
            name: "t".into(),
            signature: signature.into(),
        };
        let twice = plan(&[signed("t(a, b: string, ...a)")]).expect_err("a twice");
        assert!(twice.contains("names parameter \"a\" twice"), "{twice}");
        assert!(plan(&[signed("t(a, b)")]).is_ok());
    }
}
