//! From inside a program: no filesystem, no network, no environment; time
//! and randomness, and nothing else of the host.

use serde_json::json;
use wasmwire_tests::{run, value};

#[tokio::test]
async fn no_module_loader_filesystem_network_or_process_object_exists() {
    let program = r#"
        const names = ["require", "process", "fetch", "XMLHttpRequest", "WebSocket", "Deno", "Bun",
                       "std", "os", "scriptArgs", "importScripts", "navigator", "location", "__filename"];
        return names.filter((n) => typeof globalThis[n] !== "undefined");
    "#;
    assert_eq!(value(&run(program).await), json!([]));
}

#[tokio::test]
async fn dynamic_import_of_host_modules_fails() {
    let program = r#"
        const out = [];
        for (const m of ["fs", "os", "std", "node:fs", "/etc/passwd", "net"]) {
            try { await import(m); out.push(m + ": loaded"); } catch (e) { out.push("refused"); }
        }
        return out;
    "#;
    assert_eq!(value(&run(program).await), json!(vec!["refused"; 6]));
}

#[tokio::test]
async fn no_js_global_reaches_the_environment() {
    // QuickJS has no environment API. That the child's WASI environment and
    // arguments are empty is proven from inside a child by the probe
    // component (probe.rs); here only the JS side is checked.
    let program =
        r#"return [typeof globalThis.environ, typeof globalThis.getenv, typeof globalThis.env];"#;
    assert_eq!(
        value(&run(program).await),
        json!(["undefined", "undefined", "undefined"])
    );
}

#[tokio::test]
async fn date_and_math_random_work() {
    let program = r#"
        const t = Date.now();
        const r = [Math.random(), Math.random()];
        return [t > 1.7e12, r[0] !== r[1], r.every((x) => x >= 0 && x < 1)];
    "#;
    assert_eq!(value(&run(program).await), json!([true, true, true]));
}

/// The ECMAScript globals of the engine (QuickJS-ng), by name.
const LANGUAGE_GLOBALS: &[&str] = &[
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "AsyncDisposableStack",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "DisposableStack",
    "Error",
    "EvalError",
    "FinalizationRegistry",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "Function",
    "Infinity",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "Iterator",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "SharedArrayBuffer",
    "String",
    "SuppressedError",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "eval",
    "globalThis",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "undefined",
    "unescape",
];

/// What QuickJS-ng adds beyond the language: none of it reaches the host
/// (`performance.now()` is a clock, like `Date.now()`).
const ENGINE_GLOBALS: &[&str] = &[
    "InternalError",
    "DOMException",
    "atob",
    "btoa",
    "performance",
    "queueMicrotask",
];

/// What wasmwire adds: `host`, `ToolError`, `console`, the four timer
/// functions, and one function per tool (the standard tools of the suite).
const WASMWIRE_GLOBALS: &[&str] = &[
    // The web surface (guest/src/web).
    "AbortController",
    "AbortSignal",
    "Crypto",
    "CustomEvent",
    "Event",
    "EventTarget",
    "Intl",
    "TextDecoder",
    "TextEncoder",
    "URL",
    "URLSearchParams",
    "Performance",
    "SubtleCrypto",
    "crypto",
    "structuredClone",
    "host",
    "ToolError",
    "console",
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "echo",
    "delay",
    "fail",
    "plain_error",
    "never",
    "bytes",
    "raw",
];

/// Every own property of `globalThis` is on an explicit list: the
/// language's, the engine's few extras, or wasmwire's own. A new global
/// (a host API, a leaked helper) fails this test until it is listed here.
#[tokio::test]
async fn the_only_globals_beyond_the_language_are_the_engines_few_the_bindings_host_toolerror_and_console()
 {
    let program = r#"
        return [Object.getOwnPropertyNames(globalThis).sort(),
                Object.getOwnPropertySymbols(globalThis).map(String)];
    "#;
    let got = value(&run(program).await);
    let names: Vec<&str> = got[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let allowed = |n: &&str| {
        LANGUAGE_GLOBALS.contains(n) || ENGINE_GLOBALS.contains(n) || WASMWIRE_GLOBALS.contains(n)
    };
    let unexpected: Vec<&str> = names.iter().copied().filter(|n| !allowed(n)).collect();
    assert!(unexpected.is_empty(), "globals on no list: {unexpected:?}");
    let missing: Vec<&str> = WASMWIRE_GLOBALS
        .iter()
        .copied()
        .filter(|n| !names.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "wasmwire's globals missing: {missing:?}"
    );
    // No symbol-keyed globals beyond the standard tag, if any.
    let symbols = got[1].as_array().unwrap();
    assert!(
        symbols.iter().all(|s| s == "Symbol(Symbol.toStringTag)"),
        "{symbols:?}"
    );
}
