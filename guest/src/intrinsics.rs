//! The intrinsics the evaluator relies on, captured before the program runs.
//!
//! A program may reassign `JSON.stringify`, replace `Error`, or pollute
//! `Object.prototype`. Nothing the evaluator does afterwards looks a global
//! up again: it holds the original functions here, and everything else it
//! needs (JSON, property definition) goes through QuickJS's C API, which no
//! program can reach.

use std::rc::Rc;

use rquickjs::function::This;
use rquickjs::object::Property;
use wire::FailureKind;

use rquickjs::{Array, Constructor, Ctx, Function, Object, Persistent, Symbol, Type, Value};

/// Defines `ToolError` and hands back the originals the evaluator keeps.
/// Runs before the program, so every name here is still the intrinsic.
///
/// `WeakMap` and its `get` and `set` keep the ToolErrors the evaluator
/// issued, as keys of a map no program can reach (made for a run when its
/// first call fails): told apart from forged ones by identity, and gone
/// when the program lets them go (a list of them kept each for the whole
/// run: about 570 bytes a failed call).
const PRELUDE: &str = r#"(function () {
  "use strict";
  class ToolError extends Error {}
  Object.defineProperty(ToolError.prototype, "name", {
    value: "ToolError", writable: true, enumerable: false, configurable: true,
  });
  return [Error, ToolError, String.prototype.toWellFormed, WeakMap,
          WeakMap.prototype.get, WeakMap.prototype.set];
})()"#;

/// Where [`PRELUDE`]'s array holds `WeakMap` and its `get` and `set`.
const WEAK_MAP: usize = 3;
const WEAK_MAP_GET: usize = 4;
const WEAK_MAP_SET: usize = 5;

/// The file name QuickJS reports for evaluator-internal code, so that a
/// location search never mistakes it for the program.
const PRELUDE_FILE: &str = "<wasmwire>";

/// What watching a call's signal found.
#[derive(Debug)]
pub(crate) enum Watched<'js> {
    /// It had already aborted, for this reason.
    Aborted(Value<'js>),
    /// It is watched; the key forgets the watch.
    Watching(Value<'js>),
}

/// QuickJS's UTF-8 copy of a string, made in its heap (under its limit):
/// text is read from it without a copy of the guest's own
/// ([`Intrinsics::text`]), or copied once what the guest would hold for it
/// is admitted under the program's memory limit ([`Intrinsics::held`]). A
/// lone surrogate is not UTF-8 (QuickJS writes its three bytes).
pub(crate) struct Utf8<'js> {
    copy: rquickjs::CString<'js>,
    of: rquickjs::String<'js>,
}

impl<'js> Utf8<'js> {
    /// The copy of `s`; an error only when QuickJS has no memory for it.
    pub(crate) fn of(s: &rquickjs::String<'js>) -> rquickjs::Result<Self> {
        Ok(Utf8 {
            copy: rquickjs::CString::from_string(s.clone())?,
            of: s.clone(),
        })
    }

    /// Its bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the live C string's own bytes, `len` of them.
        unsafe { std::slice::from_raw_parts(self.copy.as_ptr().cast::<u8>(), self.copy.len()) }
    }
}

/// Handles on the original intrinsics, shared: a clone is one count, where
/// each handle's own clone counts its value and the context (every tool
/// call takes the run's intrinsics twice).
#[derive(Clone, Debug)]
pub(crate) struct Intrinsics<'js>(Rc<Handles<'js>>);

impl<'js> std::ops::Deref for Intrinsics<'js> {
    type Target = Handles<'js>;

    fn deref(&self) -> &Handles<'js> {
        &self.0
    }
}

/// What [`Intrinsics`] holds.
#[derive(Debug)]
pub(crate) struct Handles<'js> {
    /// The original `Error`: a ToolError is born as one at the call site, so
    /// its stack points at the call in the program.
    error: Constructor<'js>,
    /// `ToolError.prototype`, so that `e instanceof ToolError` holds.
    tool_error_prototype: Object<'js>,
    /// `String.prototype.toWellFormed`: JS strings may hold lone surrogates,
    /// Rust strings may not.
    to_well_formed: Function<'js>,
    /// What [`PRELUDE`] returned: the map of the ToolErrors the evaluator
    /// issued is made and read through it, only when a call fails.
    captured: Array<'js>,
    /// What the web surface's files share (see `web`): `watchSignal`
    /// for `host.call`'s `{signal}`, `adoptTimers`.
    web: Object<'js>,
}

/// The originals and `ToolError`, made once with the evaluator (before the
/// snapshot, so that no execution compiles the prelude again).
#[derive(Debug)]
pub(crate) struct Originals {
    /// `[Error, ToolError, String.prototype.toWellFormed, WeakMap, get, set]`.
    captured: Persistent<Array<'static>>,
}

impl Originals {
    /// Captures the originals and defines the global `ToolError`.
    pub(crate) fn install(ctx: &Ctx<'_>) -> rquickjs::Result<Self> {
        let captured: Array = crate::setup::run(ctx, PRELUDE_FILE, PRELUDE)?;
        let tool_error: Constructor = captured.get(1)?;
        // Like the built-in classes: writable, configurable, not enumerable.
        ctx.globals().prop(
            "ToolError",
            Property::from(tool_error).writable().configurable(),
        )?;
        Ok(Originals {
            captured: Persistent::save(ctx, captured),
        })
    }
}

impl<'js> Intrinsics<'js> {
    /// The originals [`Originals::install`] captured, for this run.
    pub(crate) fn capture(
        ctx: &Ctx<'js>,
        originals: &Originals,
        web: &crate::web::Web,
    ) -> rquickjs::Result<Self> {
        let web = web.shared(ctx)?;
        let captured = originals.captured.clone().restore(ctx)?;
        let error: Constructor = captured.get(0)?;
        let tool_error: Constructor = captured.get(1)?;
        let to_well_formed: Function = captured.get(2)?;
        let tool_error_prototype: Object = tool_error.get("prototype")?;
        Ok(Intrinsics(Rc::new(Handles {
            error,
            tool_error_prototype,
            to_well_formed,
            captured,
            web,
        })))
    }

    /// A new map for the ToolErrors a run issues (the original
    /// `WeakMap`'s).
    pub(crate) fn issued_map(&self) -> rquickjs::Result<Object<'js>> {
        let weak_map: Constructor = self.captured.get(WEAK_MAP)?;
        weak_map.construct(())
    }

    /// Records in `map` that `error` is a ToolError the evaluator issued
    /// for a call of `tool` that failed as `kind`.
    pub(crate) fn issue(
        &self,
        map: &Object<'js>,
        error: &Object<'js>,
        kind: FailureKind,
        tool: &str,
    ) -> rquickjs::Result<()> {
        // The kind's name has no line break; the tool's may.
        let issued = format!("{}\n{tool}", kind.as_str());
        let set: Function = self.captured.get(WEAK_MAP_SET)?;
        set.call::<_, Value>((This(map.clone()), error.clone(), issued))
            .map(drop)
    }

    /// The kind and tool of `value` if `map` has it as a ToolError the
    /// evaluator issued (by identity, never by its properties).
    pub(crate) fn issued(
        &self,
        map: &Object<'js>,
        value: &Value<'js>,
    ) -> Option<(FailureKind, String)> {
        value.as_object()?;
        let get = self.captured.get::<Function>(WEAK_MAP_GET);
        let issued = match get.and_then(|get| {
            get.call::<_, Option<rquickjs::String>>((This(map.clone()), value.clone()))
        }) {
            Ok(issued) => issued?,
            Err(_) => {
                let _ = value.ctx().catch();
                return None;
            }
        };
        let issued = issued.to_string().ok()?;
        let (kind, tool) = issued.split_once('\n')?;
        Some((kind.parse().ok()?, tool.to_owned()))
    }

    /// Hands the timers to `AbortSignal.timeout`: a `setTimeout` of its
    /// own (its timers are not the program's), and the global
    /// `clearTimeout`.
    pub(crate) fn adopt_timers(&self, ctx: &Ctx<'js>) -> rquickjs::Result<()> {
        let set_timeout = crate::timers::own_set_timeout(ctx)?;
        let clear_timeout: Value = ctx.globals().get("clearTimeout")?;
        let adopt: Function = self.web.get("adoptTimers")?;
        adopt.call((set_timeout, clear_timeout))
    }

    /// Watches `signal` for a call: [`Watched::Aborted`] with its reason
    /// when it is already aborted, else `on_abort(reason)` is called once
    /// when it aborts, until [`Intrinsics::forget_signal`] with the key in
    /// [`Watched::Watching`]. A value that is not an AbortSignal is a
    /// TypeError.
    pub(crate) fn watch_signal(
        &self,
        signal: Value<'js>,
        on_abort: Function<'js>,
    ) -> rquickjs::Result<Watched<'js>> {
        let watch: Function = self.web.get("watchSignal")?;
        let watched: Value = watch.call((signal, on_abort))?;
        match watched.as_object() {
            Some(aborted) => Ok(Watched::Aborted(aborted.get("reason")?)),
            None => Ok(Watched::Watching(watched)),
        }
    }

    /// Stops watching `signal` for the call whose watch is `key` (it has
    /// been answered): a signal shared by many calls holds none of those
    /// that are done.
    pub(crate) fn forget_signal(&self, signal: &Value<'js>, key: &Value<'js>) {
        let forgot = self
            .web
            .get::<_, Function>("forgetSignal")
            .and_then(|forget| forget.call::<_, ()>((signal.clone(), key.clone())));
        if forgot.is_err() {
            let _ = signal.ctx().catch();
        }
    }

    /// An error's own fields as the console shows them (` { status: 404 }`),
    /// running none of the program's code; "" when it has none.
    pub(crate) fn error_fields(&self, error: &Value<'js>) -> String {
        let Ok(fields) = self.web.get::<_, Function>("errorFields") else {
            return String::new();
        };
        match fields.call::<_, rquickjs::String>((error.clone(),)) {
            Ok(text) => self.string(&text),
            Err(_) => {
                let _ = error.ctx().catch();
                String::new()
            }
        }
    }

    /// What in `value` JSON does not carry in full, and where: `("a Map",
    /// ".results")`, the path empty for the value itself (`console.js`);
    /// `None` when nothing is, or the look failed.
    pub(crate) fn lossy(&self, value: &Value<'js>) -> Option<(String, String)> {
        let lossy: Function = self.web.get("lossy").ok()?;
        let found = match lossy.call::<_, Option<Array>>((value.clone(),)) {
            Ok(found) => found?,
            Err(_) => {
                let _ = value.ctx().catch();
                return None;
            }
        };
        let part = |i: usize| {
            found
                .get::<rquickjs::String>(i)
                .ok()
                .map(|s| self.string(&s))
        };
        Some((part(0)?, part(1)?))
    }

    /// Where the program calls a tool, kept to make the call's ToolError
    /// from if the call fails ([`site_error`]). Every tool call takes one,
    /// and few fail: `JS_CaptureSite` keeps the frames of the stack
    /// (QuickJS's array of them, the same array again for a call made
    /// where the last one was), and makes the error now only when its
    /// stack must be written now (the program set `Error.prepareStackTrace`).
    pub(crate) fn call_site(&self) -> rquickjs::Result<Value<'js>> {
        let ctx = self.tool_error_prototype.ctx();
        // SAFETY: the context is live for 'js; `from_raw` takes the new
        // reference, and an exception value is never wrapped.
        unsafe {
            let raw = rquickjs::qjs::JS_CaptureSite(ctx.as_raw().as_ptr());
            if rquickjs::qjs::JS_IsException(raw) {
                return Err(rquickjs::Error::Exception);
            }
            Ok(Value::from_raw(ctx.clone(), raw))
        }
    }

    /// Makes a call's error a `ToolError`, once its call failed.
    pub(crate) fn as_tool_error(&self, error: &Object<'js>) -> rquickjs::Result<()> {
        error.set_prototype(Some(&self.tool_error_prototype))
    }

    /// A JS string as Rust text; lone surrogates become U+FFFD.
    pub(crate) fn string(&self, s: &rquickjs::String<'js>) -> String {
        match Utf8::of(s) {
            Ok(utf8) => self.text(&utf8),
            Err(_) => {
                // Only reachable when out of memory; the text is for people.
                let _ = s.ctx().catch();
                "<unprintable string>".to_owned()
            }
        }
    }

    /// `utf8`'s text as Rust text; lone surrogates become U+FFFD.
    pub(crate) fn text(&self, utf8: &Utf8<'js>) -> String {
        // Well-formed text, nearly every string, converts as it is: only a
        // string with a lone surrogate pays a JavaScript call.
        if let Ok(text) = std::str::from_utf8(utf8.bytes()) {
            return text.to_owned();
        }
        let well_formed = self
            .to_well_formed
            .call::<_, rquickjs::String>((rquickjs::function::This(utf8.of.clone()),));
        match well_formed.and_then(|s| s.to_string()) {
            Ok(text) => text,
            Err(_) => {
                let _ = utf8.of.ctx().catch();
                "<unprintable string>".to_owned()
            }
        }
    }

    /// [`text`](Intrinsics::text) for text the guest holds for the program
    /// (a call's args and tool name, what a web native copies), once
    /// `copies` times its length (what the guest makes of it) is admitted
    /// under the program's memory limit (`Heap::admit_own`): past that the
    /// run is stopped, and QuickJS's out-of-memory error is returned to be
    /// thrown where the program is.
    pub(crate) fn held(
        &self,
        utf8: &Utf8<'js>,
        heap: &crate::heap::Heap,
        copies: usize,
    ) -> rquickjs::Result<String> {
        if !heap.admit_own(utf8.bytes().len().saturating_mul(copies)) {
            return Err(crate::bindings::out_of_memory(utf8.of.ctx()));
        }
        Ok(self.text(utf8))
    }

    /// [`string`](Intrinsics::string) for text told to people (an error's
    /// message or name, a thrown value, a value as JSON): past
    /// [`PART_WHOLE`](crate::outcome::PART_WHOLE) bytes it is cut as the
    /// Result would cut it ([`cut_part`](crate::outcome::cut_part)), read
    /// from QuickJS's own copy: a 14 MB message was copied whole into the
    /// guest's memory, twice, past the memory cap, to be cut to 8 KiB
    /// (tests/HOSTILE.md item 107).
    pub(crate) fn shown(&self, s: &rquickjs::String<'js>) -> String {
        match Utf8::of(s) {
            Ok(utf8) if utf8.bytes().len() > crate::outcome::PART_WHOLE => {
                crate::outcome::cut_part(utf8.bytes())
            }
            Ok(utf8) => self.text(&utf8),
            Err(_) => self.string(s),
        }
    }

    /// How a value reads in console output and error messages: strings as
    /// they are, errors as `Name: message`, other objects as JSON where
    /// possible. Never fails; a value whose conversion throws gets a
    /// placeholder, and the exception is dropped.
    pub(crate) fn display(&self, value: &Value<'js>) -> String {
        let ctx = value.ctx();
        let text = match value.type_of() {
            Type::String => value.as_string().map(|s| self.shown(s)),
            Type::Symbol => value
                .as_symbol()
                .map(|s| format!("Symbol({})", self.symbol_description(s))),
            Type::BigInt => self.coerce(value).map(|s| s + "n"),
            Type::Undefined | Type::Null | Type::Bool | Type::Int | Type::Float => {
                self.coerce(value)
            }
            Type::Function | Type::Constructor => Some(format!(
                "[Function {}]",
                self.property(value, "name")
                    .filter(|name| !name.is_empty())
                    .unwrap_or_else(|| "(anonymous)".to_owned())
            )),
            Type::Exception => Some(self.error_headline(value)),
            // A DOMException is not one of QuickJS's errors, but reads as one.
            Type::Object if self.inherits_from_error(value) => Some(self.error_headline(value)),
            _ => self.json(value).or_else(|| self.coerce(value)),
        };
        text.unwrap_or_else(|| {
            let _ = ctx.catch();
            format!("[{}]", value.type_name())
        })
    }

    /// Whether `value` is a DOMException, as QuickJS made it (its class,
    /// which no program can spoof, not its name or prototype).
    pub(crate) fn is_dom_exception(&self, value: &Value<'js>) -> bool {
        let made = self
            .web
            .get::<_, Constructor>("DOMException")
            .and_then(|ctor| ctor.construct::<_, Value>(()));
        match made {
            Ok(one) => crate::web::class_id(one) == crate::web::class_id(value.clone()),
            Err(_) => {
                let _ = value.ctx().catch();
                false
            }
        }
    }

    /// Whether `Error.prototype` (the original's) is on the value's
    /// prototype chain, as it is for a DOMException.
    pub(crate) fn inherits_from_error(&self, value: &Value<'js>) -> bool {
        let Ok(error_prototype) = self.error.get::<_, Object>("prototype") else {
            let _ = value.ctx().catch();
            return false;
        };
        let mut object = value.as_object().cloned();
        // Bounded: a chain longer than this is nobody's error.
        for _ in 0..64 {
            match object.and_then(|o| o.get_prototype()) {
                Some(prototype) if prototype == error_prototype => return true,
                Some(prototype) => object = Some(prototype),
                None => return false,
            }
        }
        false
    }

    /// `Name: message` of an error object, each read as the program left it.
    pub(crate) fn error_headline(&self, value: &Value<'js>) -> String {
        let name = self
            .property(value, "name")
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "Error".to_owned());
        match self.property(value, "message") {
            Some(message) if !message.is_empty() => format!("{name}: {message}"),
            _ => name,
        }
    }

    /// How the report of what a program left behind tells a value, once
    /// the program has ended: as the console shows it (`console.js`'s
    /// `quietly`), an error without its stack, and no code of the
    /// program's run. `None` if that cannot be told.
    pub(crate) fn quietly(&self, value: &Value<'js>) -> Option<String> {
        // A reason may be a string as large as the heap allows.
        self.shared_string("quietly", value.clone())
            .map(|s| self.shown(&s))
    }

    /// An error's `message` if it is data, its own or inherited (no
    /// getter runs); empty otherwise.
    pub(crate) fn quiet_message(&self, value: &Value<'js>) -> String {
        self.shared_string("quietMessage", value.clone())
            .map(|s| self.shown(&s))
            .unwrap_or_default()
    }

    /// QuickJS's own stack text of an error, at places in the text sent
    /// (`stack.js`'s `rawStack`); `None` when it has none (an object that
    /// is not QuickJS's Error, whatever its `stack` says: a program reads
    /// that text with the author's places, or wrote it).
    pub(crate) fn raw_stack(&self, error: &Value<'js>) -> Option<String> {
        self.shared_text("rawStack", error.clone())
    }

    /// QuickJS's own text for a backtrace it kept of a throw
    /// (`stack.js`'s `thrownText`): the same, unless the program's
    /// `Error.prepareStackTrace` made it; `None` when that cannot be told.
    pub(crate) fn thrown_text(&self, text: &str) -> Option<String> {
        self.shared_text("thrownText", text)
    }

    /// The text `shared[name](arg)` gives, or `None` for anything else or
    /// a throw.
    fn shared_text<A: rquickjs::IntoJs<'js>>(&self, name: &str, arg: A) -> Option<String> {
        // Whole: a place is read from it.
        self.shared_string(name, arg).map(|s| self.string(&s))
    }

    /// The string `shared[name](arg)` gives, or `None` for anything else or
    /// a throw.
    fn shared_string<A: rquickjs::IntoJs<'js>>(
        &self,
        name: &str,
        arg: A,
    ) -> Option<rquickjs::String<'js>> {
        let found = self
            .web
            .get::<_, Function>(name)
            .and_then(|f| f.call::<_, Value>((arg,)));
        match found {
            Ok(text) => text.into_string(),
            Err(_) => {
                let _ = self.web.ctx().catch();
                None
            }
        }
    }

    /// A property of an object as text, or `None` when it is missing or its
    /// getter throws.
    pub(crate) fn property(&self, value: &Value<'js>, key: &str) -> Option<String> {
        let object = value.as_object()?;
        match object.get::<_, Value>(key) {
            Ok(v) if v.is_undefined() => None,
            Ok(v) => self.coerce(&v),
            Err(_) => {
                let _ = value.ctx().catch();
                None
            }
        }
    }

    /// `String(value)`, or `None` when it throws.
    fn coerce(&self, value: &Value<'js>) -> Option<String> {
        if let Some(s) = value.as_string() {
            return Some(self.shown(s));
        }
        match value.get::<rquickjs::convert::Coerced<rquickjs::String>>() {
            Ok(s) => Some(self.shown(&s.0)),
            Err(_) => {
                let _ = value.ctx().catch();
                None
            }
        }
    }

    /// The value as JSON text, or `None` when JSON has no text for it.
    fn json(&self, value: &Value<'js>) -> Option<String> {
        match value.ctx().json_stringify(value.clone()) {
            Ok(Some(s)) => Some(self.shown(&s)),
            Ok(None) => None,
            Err(_) => {
                let _ = value.ctx().catch();
                None
            }
        }
    }

    /// A value's type as a JavaScript programmer names it.
    pub(crate) fn type_name(value: &Value<'js>) -> &'static str {
        match value.type_of() {
            Type::Function | Type::Constructor => "function",
            Type::Int | Type::Float => "number",
            Type::Bool => "boolean",
            Type::BigInt => "BigInt",
            Type::Exception => "error",
            Type::Array => "array",
            other => other.as_str(),
        }
    }

    fn symbol_description(&self, symbol: &Symbol<'js>) -> String {
        match symbol.description() {
            Ok(d) if !d.is_undefined() => self.coerce(&d).unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// The error of a call made at `site` ([`Intrinsics::call_site`]), once the
/// call failed: an `Error` whose stack is the site's (`JS_NewError`'s
/// object, without the constructor's argument handling, which a ToolError,
/// dressed by the guest, never needs).
pub(crate) fn site_error<'js>(ctx: &Ctx<'js>, site: &Value<'js>) -> rquickjs::Result<Object<'js>> {
    // SAFETY: the context is live for 'js, and `site` one of its values;
    // `from_raw` takes the new reference, and an exception value is never
    // wrapped.
    let error = unsafe {
        let raw = rquickjs::qjs::JS_NewErrorAtSite(ctx.as_raw().as_ptr(), site.as_raw());
        if rquickjs::qjs::JS_IsException(raw) {
            return Err(rquickjs::Error::Exception);
        }
        Value::from_raw(ctx.clone(), raw)
    };
    error.into_object().ok_or(rquickjs::Error::Exception)
}
