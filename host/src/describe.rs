//! What a model is shown of the tools: TypeScript declarations
//! ([`Tools::typescript`]) and a prompt with the sandbox's rules
//! ([`Tools::prompt`]).
//!
//! The declarations are one `.d.ts` text (a script, not a module: every
//! name in it is global, as in the child). Each tool a program can call by
//! name is a `declare function` whose JSDoc is the tool's description and
//! the schema's descriptions; its params and its value are typed from the
//! tool's JSON Schemas (`unknown` where there is none). `host` declares
//! `host.call` once per tool (so a wrong name or args fail to type-check),
//! and every tool as a property, the call-only ones included.
//! `ToolError` is declared with the closed set of kinds of
//! [`wire::FAILURE_KINDS`], so a program can branch on `e.kind`.
//!
//! Schemas map to types as a model would read them: `type` (one or a
//! list), `enum`, `const`, `oneOf`/`anyOf` (unions), `allOf`
//! (intersections), `properties` with `required` (the rest optional),
//! `additionalProperties` (`true` or a schema adds an index signature;
//! absent adds none, so a misspelt property is caught), `items` and
//! `prefixItems` (arrays and tuples), `nullable`, and `$ref` into the
//! schema itself (`#/$defs/..`), inlined; a reference back into a type
//! being written is `unknown`. Anything else is `unknown`. A tool's args
//! may be left out (`args?`) exactly when its params schema accepts the
//! empty object, which is what no args are checked as.
//!
//! The declarations are for a program type-checked against the ES2022
//! library without the DOM's: they declare the child's own `console`, its
//! timers and the web APIs it has (`URL`, `TextEncoder`, `AbortController`,
//! ...), each as far as the child defines it, and kept short: they are in
//! every prompt.

use std::fmt::Write as _;

use serde_json::Value;

use crate::tools::{Tool, Tools};
use crate::{Budget, SandboxOptions};

impl Tools {
    /// The tools' TypeScript declarations (a `.d.ts`), with JSDoc from the
    /// descriptions and types from the schemas, and the `ToolError` and
    /// `host` the program gets.
    pub fn typescript(&self) -> String {
        let mut out = String::new();
        out.push_str(PREAMBLE);
        tool_error(&mut out);
        for tool in self.iter().filter(|t| !t.is_call_only()) {
            out.push('\n');
            function(&mut out, tool);
        }
        out.push('\n');
        host(&mut out, self);
        out
    }

    /// What a model needs to write a program for this sandbox: the rules
    /// (the program is an async function body; tools are global async
    /// functions and `host.call`; calls are paced; no fetch, filesystem or
    /// network), the limits of this execution (`budget`, and the in-flight
    /// cap and call deadline of `options`), then [`Tools::typescript`].
    pub fn prompt(&self, budget: &Budget, options: &SandboxOptions) -> String {
        let mut out = String::from(
            "Write a JavaScript (or TypeScript) program to do the task. It runs in a sandbox:\n\
             - The program is the body of an async function: use `await` at the top level, \
             and `return` the answer (or end with an expression, whose value is the answer, \
             as in a REPL: in a last `if` or `try`, that of the branch that ran). \
             The answer must be JSON-serialisable: a `Map`, a `Set` or an `Error` becomes `{}`, \
             so return plain objects and arrays (`Object.fromEntries(map)`, `e.message`).\n\
             - Each tool is a global async function; `host.call(name, args, { deadlineMs, signal })` \
             calls one by name with a deadline of its own, or an `AbortSignal` that cancels it. \
             Calls run concurrently: use \
             `Promise.all` to fan out. Calls beyond the in-flight cap wait their turn in order, \
             so fanning out over many items is fine. To time a call out, pass \
             `{ signal: AbortSignal.timeout(ms) }` to `host.call`: a `Promise.race` against a timer \
             leaves the call running and holding its slot.\n\
             - A failed call rejects with a `ToolError`: branch on `e.kind`, and retry only when \
             `e.retryable`. Arguments are checked against the declarations before a tool runs; \
             bad ones fail with kind `invalid` and a message naming the field.\n\
             - There is no `fetch`, no network, no filesystem, no `require`/`import` and no \
             environment: only the tools, `console`, timers, the JavaScript built-ins and these \
             web APIs: `URL`, `URLSearchParams`, `TextEncoder`, `TextDecoder`, `structuredClone`, \
             `crypto.getRandomValues`, `crypto.randomUUID`, `crypto.subtle.digest` (SHA only), \
             `AbortController`, `AbortSignal` (with `AbortSignal.timeout` and `any`), `Event`, \
             `CustomEvent`, `EventTarget`, `DOMException`, `atob`, `btoa`, `queueMicrotask`, \
             `performance`. `TextDecoder` is UTF-8 only. `console` is Node's (`log`, `table`, \
             `time`, ...); its output is shown to the operator, not returned.\n\
             - Numbers format as en-US (`toLocaleString`, `Intl.NumberFormat` in every style, \
             unit and currency included, and every notation, compact included), and \
             `Intl.PluralRules`, `Intl.RelativeTimeFormat` and `Intl.ListFormat` speak English; \
             other locales throw. \
             Dates format as en-US, and the time zone is UTC (`toLocaleDateString`, \
             `toLocaleTimeString`, `toLocaleString`, `Intl.DateTimeFormat` with every option); \
             other locales and time zones throw. `localeCompare` sorts as in English (with `sensitivity`, `numeric`, \
             `caseFirst`, `ignorePunctuation`) for Latin, Greek, Cyrillic and Hangul text, digits and \
             punctuation; it throws for other scripts, emoji and locales whose order differs.\n\
             - Recursion deeper than about 10,800 calls throws `RangeError: Maximum call stack size \
             exceeded`, as in Node; through callbacks, getters or `async` functions it can instead \
             end the run, uncatchably, from about 4,200 calls: walk very deep data with a loop and a \
             stack.\n",
        );
        out.push_str("\nThe limits of this execution:\n");
        // "none" would read as "no calls allowed".
        let none = |n: u64, text: String| if n == 0 { "no limit".to_string() } else { text };
        let _ = writeln!(
            out,
            "- wall clock: {}",
            if budget.wall_clock.is_zero() {
                "no limit".to_string()
            } else {
                format!("{:?}", budget.wall_clock)
            }
        );
        let _ = writeln!(
            out,
            "- memory: {}",
            none(budget.max_memory, size(budget.max_memory))
        );
        let _ = writeln!(
            out,
            "- tool calls: {}",
            none(budget.max_calls, budget.max_calls.to_string())
        );
        let _ = writeln!(
            out,
            "- bytes of tool values: {}",
            none(budget.max_bytes, size(budget.max_bytes))
        );
        let _ = writeln!(out, "- calls in flight at once: {}", options.max_in_flight);
        if let Some(deadline) = options.max_call_deadline {
            let _ = writeln!(out, "- longest one call may take: {deadline:?}");
        }
        out.push_str("\nThe tools, as TypeScript declarations:\n\n```ts\n");
        out.push_str(&self.typescript());
        out.push_str("```\n");
        out
    }
}

/// `bytes` in the largest unit that writes it whole: `64 MiB`, `512 KiB`, `100 B`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// What the child gives every program besides the tools.
const PREAMBLE: &str = "\
// The tools of this sandbox, and what else the program has.
// The program is the body of an async function: top-level await and return work.

/** Node's console: each call one line (`table` a line per row), values shown as Node shows them. */
interface Console {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
  trace(...data: unknown[]): void;
  dir(item?: unknown, options?: { depth?: number | null }): void;
  table(data: unknown, columns?: string[]): void;
  assert(condition?: unknown, ...data: unknown[]): void;
  count(label?: string): void;
  countReset(label?: string): void;
  time(label?: string): void;
  timeLog(label?: string, ...data: unknown[]): void;
  timeEnd(label?: string): void;
  group(...label: unknown[]): void;
  groupEnd(): void;
}
declare var console: Console;
declare function setTimeout(callback: (...args: any[]) => void, delay?: number, ...args: any[]): number;
declare function setInterval(callback: (...args: any[]) => void, delay?: number, ...args: any[]): number;
declare function clearTimeout(id?: number): void;
declare function clearInterval(id?: number): void;
declare function queueMicrotask(callback: () => void): void;

// The web APIs the sandbox has (no DOM, no fetch).
declare class URL {
  constructor(url: string | URL, base?: string | URL);
  static canParse(url: string | URL, base?: string | URL): boolean;
  static parse(url: string | URL, base?: string | URL): URL | null;
  href: string; protocol: string; username: string; password: string; host: string;
  hostname: string; port: string; pathname: string; search: string; hash: string;
  readonly origin: string;
  readonly searchParams: URLSearchParams;
  toJSON(): string;
}
declare class URLSearchParams {
  constructor(init?: string | Record<string, string> | Iterable<[string, string]>);
  readonly size: number;
  append(name: string, value: string): void;
  delete(name: string, value?: string): void;
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string, value?: string): boolean;
  set(name: string, value: string): void;
  sort(): void;
  forEach(callback: (value: string, name: string, params: URLSearchParams) => void): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}
declare class TextEncoder {
  readonly encoding: \"utf-8\";
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}
/** UTF-8 only: any other encoding throws a RangeError. */
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: \"utf-8\";
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: ArrayBuffer | ArrayBufferView, options?: { stream?: boolean }): string;
}
/** Plain data, Map, Set, Date, RegExp, buffers, errors; anything else throws a DataCloneError. */
declare function structuredClone<T>(value: T, options?: { transfer?: ArrayBuffer[] }): T;
declare var crypto: {
  getRandomValues<T extends Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array
    | Int32Array | Uint32Array | BigInt64Array | BigUint64Array>(array: T): T;
  randomUUID(): string;
  /** Only `digest`; the rest of WebCrypto rejects with a NotSupportedError. */
  subtle: {
    digest(algorithm: \"SHA-1\" | \"SHA-256\" | \"SHA-384\" | \"SHA-512\" | { name: string },
      data: ArrayBuffer | ArrayBufferView): Promise<ArrayBuffer>;
  };
};
declare function atob(data: string): string;
declare function btoa(data: string): string;
declare var performance: { now(): number; readonly timeOrigin: number };
declare class DOMException extends Error {
  constructor(message?: string, name?: string);
  readonly code: number;
}
declare class Event {
  constructor(type: string, init?: { bubbles?: boolean; cancelable?: boolean; composed?: boolean });
  readonly type: string;
  readonly target: EventTarget | null;
  readonly currentTarget: EventTarget | null;
  readonly bubbles: boolean;
  readonly cancelable: boolean;
  readonly composed: boolean;
  readonly defaultPrevented: boolean;
  readonly timeStamp: number;
  preventDefault(): void;
  stopPropagation(): void;
  stopImmediatePropagation(): void;
}
declare class CustomEvent<T = any> extends Event {
  constructor(type: string, init?: { bubbles?: boolean; cancelable?: boolean; composed?: boolean; detail?: T });
  readonly detail: T;
}
type EventListenerOrObject = ((event: Event) => void) | { handleEvent(event: Event): void };
declare class EventTarget {
  addEventListener(type: string, listener: EventListenerOrObject | null,
    options?: boolean | { capture?: boolean; once?: boolean; signal?: AbortSignal }): void;
  removeEventListener(type: string, listener: EventListenerOrObject | null,
    options?: boolean | { capture?: boolean }): void;
  /** False when a listener called `preventDefault()` on a cancelable event. */
  dispatchEvent(event: Event): boolean;
}
/** Aborting it cancels what it was given to: a `host.call`, a listener added with it. */
declare class AbortSignal extends EventTarget {
  private constructor();
  static abort(reason?: any): AbortSignal;
  static timeout(ms: number): AbortSignal;
  static any(signals: Iterable<AbortSignal>): AbortSignal;
  readonly aborted: boolean;
  readonly reason: any;
  onabort: ((event: Event) => void) | null;
  throwIfAborted(): void;
}
declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: any): void;
}

/** Options of one `host.call`. */
interface CallOptions {
  /** The longest the tool may take once the call is sent, in milliseconds; past it the call fails `transient`. Time waiting behind the in-flight cap does not count: use `signal: AbortSignal.timeout(ms)` to bound that too. */
  deadlineMs?: number;
  /** Cancels the call when it aborts: the call rejects with the signal's reason. */
  signal?: AbortSignal;
}
";

/// `ToolErrorKind` and `ToolError`.
fn tool_error(out: &mut String) {
    out.push_str("\n/** How a tool call failed:\n");
    for row in wire::FAILURE_KINDS.iter() {
        let _ = writeln!(
            out,
            " * - `{}`{}: {}",
            row.name,
            if row.retryable { " (retryable)" } else { "" },
            row.description
        );
    }
    out.push_str(" */\ntype ToolErrorKind =");
    for row in wire::FAILURE_KINDS.iter() {
        let _ = write!(out, "\n  | {:?}", row.name);
    }
    out.push_str(";\n");
    out.push_str(
        "\n/** What a failed tool call rejects with. */\n\
         declare class ToolError extends Error {\n\
         \x20 private constructor();\n\
         \x20 /** The failure class. */\n\
         \x20 readonly kind: ToolErrorKind;\n\
         \x20 /** Whether trying again may succeed (`transient`, `rate_limited`). */\n\
         \x20 readonly retryable: boolean;\n\
         \x20 /** The tool that failed. */\n\
         \x20 readonly tool: string;\n\
         }\n",
    );
}

/// One tool's `declare function`.
fn function(out: &mut String, tool: &Tool) {
    let params = tool.params_schema();
    let result = result_type(tool, 0);
    let mut doc = Vec::new();
    if !tool.description_text().is_empty() {
        doc.extend(lines(tool.description_text()));
    }
    let list = match tool.parameters() {
        Some(names) => {
            let properties = params.and_then(|p| p.get("properties"));
            let required = required(params);
            // A required parameter cannot follow an optional one in
            // TypeScript: an optional one before a required one takes
            // `undefined` instead.
            let last_required = names.iter().rposition(|n| required.contains(n));
            let mut list = Vec::new();
            for (i, name) in names.iter().enumerate() {
                let schema = properties.and_then(|p| p.get(*name));
                let ty = match (params, schema) {
                    (Some(root), Some(schema)) => ts_type(schema, root, &mut Refs::default(), 0),
                    _ => "unknown".to_string(),
                };
                if let Some(d) = schema.and_then(description) {
                    doc.push(format!("@param {name} {}", one_line(d)));
                }
                let optional = params.is_some() && !required.contains(name);
                list.push(match (optional, last_required.is_some_and(|l| i < l)) {
                    (false, _) => format!("{name}: {ty}"),
                    (true, false) => format!("{name}?: {ty}"),
                    (true, true) => format!("{name}: {ty} | undefined"),
                });
            }
            list.join(", ")
        }
        None => {
            let ty = params_type(tool, 0);
            let optional = tool.args_optional();
            if params.is_some() {
                doc.push("@param args The params, as one object.".into());
            }
            format!("args{}: {ty}", if optional { "?" } else { "" })
        }
    };
    if let Some(d) = tool.result_schema().and_then(description) {
        doc.push(format!("@returns {}", one_line(d)));
    }
    doc.push("@throws {ToolError} when the call fails; `kind` says how.".into());
    jsdoc(out, &doc, 0);
    let _ = writeln!(
        out,
        "declare function {}({list}): Promise<{result}>;",
        tool.name()
    );
}

/// `host`: `call` once per tool, and each tool as a property.
fn host(out: &mut String, tools: &Tools) {
    out.push_str("/** Every tool by name, and `host.call`. */\ndeclare const host: {\n");
    if tools.is_empty() {
        out.push_str("  /** There are no tools. */\n");
        out.push_str(
            "  call(name: never, args?: unknown, options?: CallOptions): Promise<never>;\n",
        );
    }
    for tool in tools.iter() {
        let name = serde_json::Value::String(tool.name().to_string()).to_string();
        let optional = tool.args_optional();
        // Through `jsdoc`: a call-only tool's name may hold `*/`.
        jsdoc(
            out,
            &[format!(
                "Calls `{}` with its params as one object.",
                tool.name()
            )],
            1,
        );
        let _ = writeln!(
            out,
            "  call(name: {name}, args{}: {}, options?: CallOptions): Promise<{}>;",
            if optional { "?" } else { "" },
            params_type(tool, 1),
            result_type(tool, 1)
        );
    }
    for tool in tools.iter() {
        // `host.call` stays the call function: a tool named `call` is not
        // a property of `host` in the child either (its `call` overloads
        // are above, and the global is declared).
        if tool.name() == "call" {
            continue;
        }
        if tool.is_call_only() {
            let name = property_name(tool.name());
            let optional = tool.args_optional();
            if !tool.description_text().is_empty() {
                jsdoc(out, &[one_line(tool.description_text())], 1);
            }
            let _ = writeln!(
                out,
                "  readonly {name}: (args{}: {}) => Promise<{}>;",
                if optional { "?" } else { "" },
                params_type(tool, 1),
                result_type(tool, 1)
            );
        } else {
            let _ = writeln!(
                out,
                "  readonly {}: typeof {};",
                property_name(tool.name()),
                tool.name()
            );
        }
    }
    out.push_str("};\n");
}

fn params_type(tool: &Tool, indent: usize) -> String {
    match tool.params_schema() {
        Some(schema) => ts_type(schema, schema, &mut Refs::default(), indent),
        None => "unknown".into(),
    }
}

fn result_type(tool: &Tool, indent: usize) -> String {
    match tool.result_schema() {
        Some(schema) => ts_type(schema, schema, &mut Refs::default(), indent),
        None => "unknown".into(),
    }
}

fn required(schema: Option<&Value>) -> Vec<&str> {
    schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn description(schema: &Value) -> Option<&str> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
}

/// `text`'s lines, split at every line ending a reader of the prompt may
/// take for one (a lone CR, U+2028 and U+2029 too, which `str::lines`
/// keeps).
fn lines(text: &str) -> Vec<String> {
    text.replace("\r\n", "\n")
        .split(['\n', '\r', '\u{2028}', '\u{2029}'])
        .map(str::to_string)
        .collect()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A JSDoc block of `lines` at `indent` levels; `*/` in a line cannot end
/// it early.
/// Control characters (an escape sequence, a DEL) are shown as the console
/// shows them: a description is read by a model and by an operator's
/// terminal, and drives neither.
fn jsdoc(out: &mut String, lines: &[String], indent: usize) {
    let pad = "  ".repeat(indent);
    let lines: Vec<String> = lines
        .iter()
        .map(|l| crate::console::neutralise(&l.replace("*/", "*\\/")))
        .collect();
    if lines.is_empty() {
        return;
    }
    if let [line] = lines.as_slice() {
        let _ = writeln!(out, "{pad}/** {line} */");
        return;
    }
    let _ = writeln!(out, "{pad}/**");
    for line in lines {
        if line.is_empty() {
            let _ = writeln!(out, "{pad} *");
        } else {
            let _ = writeln!(out, "{pad} * {line}");
        }
    }
    let _ = writeln!(out, "{pad} */");
}

/// `name` as a property key: bare when it is an identifier, else quoted.
fn property_name(name: &str) -> String {
    if crate::tools::is_ascii_identifier(name) {
        name.to_string()
    } else {
        Value::String(name.to_string()).to_string()
    }
}

/// The TypeScript type of `schema`, whose `$ref`s point into `root`.
/// `refs` holds the references being written (a reference back into one
/// is `unknown`); `indent` is the nesting level of the text around.
fn ts_type(schema: &Value, root: &Value, refs: &mut Refs, indent: usize) -> String {
    let object = match schema {
        Value::Bool(true) => return "unknown".into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(object) => object,
        _ => return "unknown".into(),
    };
    let mut ty = if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        resolve(reference, root, refs, indent)
    } else if let Some(value) = object.get("const") {
        literal(value)
    } else if let Some(values) = object.get("enum").and_then(Value::as_array) {
        union(values.iter().map(literal).collect())
    } else if let Some(any) = object
        .get("oneOf")
        .or_else(|| object.get("anyOf"))
        .and_then(Value::as_array)
    {
        let alternatives = union(any.iter().map(|s| ts_type(s, root, refs, indent)).collect());
        // Properties beside the alternatives hold in each of them.
        if object.contains_key("properties") && alternatives != "unknown" {
            let shared = of_type("object", object, root, refs, indent);
            format!("{} & {}", wrap(&shared), wrap(&alternatives))
        } else {
            alternatives
        }
    } else if let Some(all) = object.get("allOf").and_then(Value::as_array) {
        let parts: Vec<String> = all
            .iter()
            .map(|s| ts_type(s, root, refs, indent))
            .filter(|t| t != "unknown")
            .map(|t| wrap(&t))
            .collect();
        if parts.is_empty() {
            "unknown".into()
        } else {
            parts.join(" & ")
        }
    } else {
        match object.get("type") {
            Some(Value::String(name)) => of_type(name, object, root, refs, indent),
            Some(Value::Array(names)) => union(
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|name| of_type(name, object, root, refs, indent))
                    .collect(),
            ),
            _ if object.contains_key("properties") => of_type("object", object, root, refs, indent),
            _ if object.contains_key("items") => of_type("array", object, root, refs, indent),
            _ => "unknown".into(),
        }
    };
    if object.get("nullable") == Some(&Value::Bool(true)) {
        ty = union(vec![ty, "null".into()]);
    }
    ty
}

/// The `$ref`s of one type being written: those open now (a reference
/// back into one is `unknown`) and how many were inlined so far.
#[derive(Debug, Default)]
struct Refs {
    open: Vec<String>,
    inlined: usize,
    /// Bytes of text the references inlined so far made.
    text: usize,
}

/// The most `$ref`s open at once in one type: a longer chain is written
/// `unknown` from there (and the walk's recursion stays shallow).
const MAX_OPEN_REFS: usize = 32;

/// The most `$ref`s inlined in one type: a reference used twice at each
/// level would otherwise double the text with every level (40 levels of a
/// 4 KB schema made gigabytes).
const MAX_INLINED_REFS: usize = 1000;

/// The most text the `$ref`s inlined in one type may make: past it a
/// reference is `unknown` (a reference inside another counts in both, so
/// the cap comes a little early for nested ones). A few references to one large definition (a
/// thousand properties each pointing at one of 60,000) made 2.6 GB of
/// declarations from a 1.8 MB manifest, where the count of references
/// held.
const MAX_INLINED_TEXT: usize = 1 << 20;

/// A `$ref` inside the schema, inlined.
fn resolve(reference: &str, root: &Value, refs: &mut Refs, indent: usize) -> String {
    let Some(pointer) = reference.strip_prefix('#') else {
        return "unknown".into();
    };
    if refs.open.len() >= MAX_OPEN_REFS
        || refs.inlined >= MAX_INLINED_REFS
        || refs.text >= MAX_INLINED_TEXT
        || refs.open.iter().any(|r| r == reference)
    {
        return "unknown".into();
    }
    let Some(target) = root.pointer(pointer) else {
        return "unknown".into();
    };
    refs.inlined += 1;
    refs.open.push(reference.to_string());
    let ty = ts_type(target, root, refs, indent);
    refs.open.pop();
    refs.text = refs.text.saturating_add(ty.len());
    if refs.text > MAX_INLINED_TEXT {
        return "unknown".into();
    }
    ty
}

fn of_type(
    name: &str,
    schema: &serde_json::Map<String, Value>,
    root: &Value,
    refs: &mut Refs,
    indent: usize,
) -> String {
    match name {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => {
            if let Some(prefix) = schema.get("prefixItems").and_then(Value::as_array) {
                let items: Vec<String> = prefix
                    .iter()
                    .map(|s| ts_type(s, root, refs, indent))
                    .collect();
                return format!("[{}]", items.join(", "));
            }
            match schema.get("items") {
                Some(items) => format!("{}[]", wrap(&ts_type(items, root, refs, indent))),
                None => "unknown[]".into(),
            }
        }
        "object" => object_type(schema, root, refs, indent),
        _ => "unknown".into(),
    }
}

fn object_type(
    schema: &serde_json::Map<String, Value>,
    root: &Value,
    refs: &mut Refs,
    indent: usize,
) -> String {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: std::collections::HashSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let patterned = schema
        .get("patternProperties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let extra = match schema.get("additionalProperties") {
        // Keys that match a pattern are allowed whatever else is said.
        _ if patterned => Some("unknown".to_string()),
        None => properties.is_none().then(|| "unknown".to_string()),
        Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some("unknown".into()),
        Some(extra) => Some(if properties.is_some_and(|p| !p.is_empty()) {
            // Every property must fit the index signature's type.
            "unknown".into()
        } else {
            ts_type(extra, root, refs, indent + 1)
        }),
    };
    let properties: Vec<(&String, &Value)> = properties.into_iter().flatten().collect();
    if properties.is_empty() {
        return match extra {
            Some(extra) => format!("{{ [key: string]: {extra} }}"),
            None => "{}".into(),
        };
    }
    let pad = "  ".repeat(indent + 1);
    let mut out = String::from("{\n");
    for (name, property) in properties {
        if let Some(d) = description(property) {
            jsdoc(&mut out, &[one_line(d)], indent + 1);
        }
        let ty = ts_type(property, root, refs, indent + 1);
        let optional = if required.contains(name.as_str()) {
            ""
        } else {
            "?"
        };
        let _ = writeln!(out, "{pad}{}{optional}: {ty};", property_name(name));
    }
    if let Some(extra) = extra {
        let _ = writeln!(out, "{pad}[key: string]: {extra};");
    }
    let _ = write!(out, "{}}}", "  ".repeat(indent));
    out
}

/// A JSON value as a literal type; a string's control characters escaped
/// as JSON escapes them ([`crate::console::json_line`]: the same string).
fn literal(value: &Value) -> String {
    match value {
        Value::String(_) => crate::console::json_line(value.to_string()),
        Value::Number(_) | Value::Bool(_) | Value::Null => value.to_string(),
        _ => "unknown".into(),
    }
}

/// `a | b`, without repeats; `unknown` swallows the rest. Linear in the
/// members (an `enum` of 200,000 took 91 s when each was looked for among
/// those before it).
fn union(types: Vec<String>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for ty in types {
        if ty == "unknown" {
            return ty;
        }
        if seen.insert(ty.clone()) {
            parts.push(ty);
        }
    }
    match parts.len() {
        0 => "never".into(),
        1 => parts.remove(0),
        _ => parts
            .iter()
            .map(|t| wrap(t))
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

/// `ty` in parentheses when it is a union or an intersection that an
/// outer `[]`, `|` or `&` would otherwise split.
/// Brackets inside a string literal (`"}"`, an enum's value) or a comment
/// (a property's description) do not count.
fn wrap(ty: &str) -> String {
    let bytes = ty.as_bytes();
    let mut depth = 0i32;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at = wire::json::skip_string(bytes, at);
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = ty[at + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| at + 2 + end + 1);
            }
            b'{' | b'[' | b'(' | b'<' => depth += 1,
            b'}' | b']' | b')' | b'>' => depth -= 1,
            b'|' | b'&' if depth == 0 => return format!("({ty})"),
            _ => {}
        }
        at += 1;
    }
    ty.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ty(schema: Value) -> String {
        ts_type(&schema, &schema, &mut Refs::default(), 0)
    }

    #[test]
    fn scalars_enums_and_unions() {
        assert_eq!(ty(json!({"type": "string"})), "string");
        assert_eq!(ty(json!({"type": "integer"})), "number");
        assert_eq!(ty(json!({"type": ["string", "null"]})), "string | null");
        assert_eq!(
            ty(json!({"type": "string", "nullable": true})),
            "string | null"
        );
        assert_eq!(
            ty(json!({"enum": ["a", "b", 1, null]})),
            "\"a\" | \"b\" | 1 | null"
        );
        assert_eq!(ty(json!({"const": "x"})), "\"x\"");
        assert_eq!(
            ty(
                json!({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "number"}}]})
            ),
            "string | number[]"
        );
        assert_eq!(
            ty(json!({"type": "array", "items": {"type": ["string", "number"]}})),
            "(string | number)[]"
        );
        assert_eq!(ty(json!({})), "unknown");
        assert_eq!(ty(json!(true)), "unknown");
        assert_eq!(ty(json!({"anyOf": [{"type": "string"}, {}]})), "unknown");
        assert_eq!(
            ty(json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]})),
            "[string, number]"
        );
    }

    #[test]
    fn objects_optional_fields_and_additional_properties() {
        let t = ty(json!({
            "type": "object",
            "properties": {
                "host": {"type": "string", "description": "The host."},
                "tags": {"type": "array", "items": {"type": "string"}},
                "a-b": {"type": "boolean"},
            },
            "required": ["host"],
            "additionalProperties": false,
        }));
        assert!(t.contains("  /** The host. */\n  host: string;"), "{t}");
        assert!(t.contains("  host: string;"), "{t}");
        assert!(t.contains("  tags?: string[];"), "{t}");
        assert!(t.contains("  \"a-b\"?: boolean;"), "{t}");
        assert!(!t.contains("[key: string]"), "{t}");
        assert_eq!(
            ty(json!({"type": "object", "additionalProperties": {"type": "integer"}})),
            "{ [key: string]: number }"
        );
        assert_eq!(ty(json!({"type": "object"})), "{ [key: string]: unknown }");
        let open = ty(
            json!({"type": "object", "properties": {"a": {"type": "string"}},
            "additionalProperties": true}),
        );
        assert!(open.contains("[key: string]: unknown;"), "{open}");
    }

    #[test]
    fn references_are_inlined_and_recursion_stops_at_unknown() {
        let schema = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "required": ["root"],
            "$defs": {"Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["name"],
            }},
        });
        let t = ty(schema);
        assert!(t.contains("root: {"), "{t}");
        assert!(t.contains("name: string;"), "{t}");
        assert!(t.contains("children?: unknown[];"), "{t}");
        assert_eq!(ty(json!({"$ref": "#/nowhere"})), "unknown");
        assert_eq!(ty(json!({"$ref": "https://example.invalid/x"})), "unknown");
    }

    #[test]
    fn what_references_inline_is_bounded_by_its_text() {
        // 200 properties, each a reference to one definition of 20,000
        // properties: inlined whole, 200 copies of it.
        let big: serde_json::Map<String, Value> = (0..20_000)
            .map(|i| (format!("field{i}"), json!({"type": "string"})))
            .collect();
        let props: serde_json::Map<String, Value> = (0..200)
            .map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/Big"})))
            .collect();
        let t = ty(json!({
            "type": "object",
            "properties": props,
            "$defs": {"Big": {"type": "object", "properties": big}},
        }));
        assert!(
            t.len() < 2 * MAX_INLINED_TEXT + (1 << 20),
            "{} bytes",
            t.len()
        );
        assert!(
            t.contains("p0?: {") && t.contains("p199?: unknown;"),
            "{}",
            &t[..200]
        );
    }

    #[test]
    fn long_enums_and_required_lists_are_written_whole() {
        let members: Vec<String> = (0..50_000).map(|i| format!("m{i}")).collect();
        let t = ty(json!({"enum": members}));
        assert!(
            t.starts_with("\"m0\" | \"m1\"") && t.ends_with("\"m49999\""),
            "{}",
            &t[..40]
        );
        assert_eq!(ty(json!({"enum": ["a", "b", "a"]})), "\"a\" | \"b\"");
    }

    #[test]
    fn sizes_are_written_whole() {
        assert_eq!(size(64 << 20), "64 MiB");
        assert_eq!(size(512 << 10), "512 KiB");
        assert_eq!(size(1500), "1500 B");
    }

    #[test]
    fn control_characters_in_descriptions_and_literals_are_escaped() {
        let evil = "a\u{1b}]0;T\u{7} \u{1b}[2J\u{9b}31m\u{7f}b";
        let mut out = String::new();
        jsdoc(&mut out, &lines(&format!("{evil}\r\nFAKE")), 0);
        assert!(
            !out.contains(|c: char| c.is_control() && c != '\n'),
            "{out:?}"
        );
        assert!(out.contains(r"a\x1b]0;T\x07 \x1b[2J\x9b31m\x7fb"), "{out}");
        let ty = literal(&json!(evil));
        assert!(!ty.contains(|c: char| c.is_control()), "{ty:?}");
        assert_eq!(serde_json::from_str::<String>(&ty).unwrap(), evil);
    }

    #[test]
    fn jsdoc_cannot_be_closed_by_a_description() {
        let mut out = String::new();
        jsdoc(&mut out, &["a */ declare var x: 1; /*".to_string()], 0);
        assert!(!out.contains("a */"), "{out}");
    }
}
