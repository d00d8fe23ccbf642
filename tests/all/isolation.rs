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

#[tokio::test]
async fn the_only_globals_beyond_the_language_are_the_bindings_host_toolerror_and_console() {
    let program = r#"
        return Object.getOwnPropertyNames(globalThis).filter((n) => !/^[A-Z]/.test(n)).sort();
    "#;
    let got = value(&run(program).await);
    let names: Vec<&str> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for forbidden in ["require", "process", "fetch", "std", "os"] {
        assert!(!names.contains(&forbidden), "{names:?}");
    }
    assert!(
        names.contains(&"host") && names.contains(&"console") && names.contains(&"echo"),
        "{names:?}"
    );
}
