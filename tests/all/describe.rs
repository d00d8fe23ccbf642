//! Tools that describe themselves: args checked against the params schema
//! by the parent (the handler never sees a bad call), typed tools over
//! serde structs, and declarations that the real TypeScript compiler
//! accepts for correct programs and rejects for wrong ones.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use wasmwire::{
    Budget, Call, FailureKind, HandlerError, SandboxOptions, Text, Tool, ToolFailure, Tools,
};
use wasmwire_tests::{assert_failed, budget, run_on, sandbox, value};

/// A tool with a strict params schema, and the count of its handler's calls.
fn counted_tool() -> (Tools, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let tool = Tool::new("get_logs", move |call: Call| {
        seen.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, HandlerError>(Text(call.args)) }
    })
    .description("The newest log lines of one host.")
    .params(json!({
        "type": "object",
        "properties": {
            "host": {"type": "string", "description": "The host's name."},
            "count": {"type": "integer", "minimum": 1},
        },
        "required": ["host"],
        "additionalProperties": false,
    }));
    let mut tools = Tools::new();
    tools.register(tool).unwrap();
    (tools, calls)
}

/// A wrong type, a missing required field and a field the schema forbids:
/// each is answered `invalid` with the field and the rule, and the handler
/// is never called. A call that fits reaches it.
#[tokio::test]
async fn bad_args_are_invalid_with_the_field_and_rule_and_never_reach_the_handler() {
    let (tools, calls) = counted_tool();
    for (args, needle) in [
        (
            r#"{host: "db1", count: "ten"}"#,
            r#"get_logs: invalid args: args.count: "ten" is not of type "integer" (rule `type`)"#,
        ),
        (
            r#"{count: 5}"#,
            r#"get_logs: invalid args: args: "host" is a required property (rule `required`)"#,
        ),
        (
            r#"{host: "db1", verbose: true}"#,
            "get_logs: invalid args: args: Additional properties are not allowed ('verbose' was unexpected) (rule `additionalProperties`)",
        ),
        (
            r#"{host: "db1", count: 0}"#,
            "args.count: 0 is less than the minimum of 1 (rule `minimum`)",
        ),
    ] {
        let program = format!("return await get_logs({args});");
        let outcome = run_on(sandbox(), &program, budget(), &tools).await;
        assert_failed(&outcome, FailureKind::Invalid, needle);
        // The program can catch it as a ToolError of kind invalid.
        let program = format!(
            "try {{ await host.call('get_logs', {args}); }} catch (e) {{ return [e.kind, e.message]; }}"
        );
        let outcome = run_on(sandbox(), &program, budget(), &tools).await;
        let caught = value(&outcome);
        assert_eq!(caught[0], "invalid");
        assert!(caught[1].as_str().unwrap().contains(needle), "{caught}");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the handler saw a bad call"
    );

    let outcome = run_on(
        sandbox(),
        r#"return await get_logs({host: "db1", count: 2});"#,
        budget(),
        &tools,
    )
    .await;
    assert_eq!(value(&outcome), json!(r#"{"host":"db1","count":2}"#));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// A signature must fit the params schema: a parameter that is no
/// property, or a required property the signature does not take, is
/// refused at registration.
#[test]
fn a_signature_that_does_not_fit_the_params_schema_is_refused() {
    let params = json!({
        "type": "object",
        "properties": {"host": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["host"],
    });
    let tool = || {
        Tool::new("get_logs", |_c: Call| async {
            Ok::<_, HandlerError>(Text(String::new()))
        })
        .params(params.clone())
    };
    let err = Tools::new()
        .register(tool().signature("get_logs(host, lines)"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"lines\" of the signature is not a property"),
        "{err}"
    );
    let err = Tools::new()
        .register(tool().signature("get_logs(count)"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("requires \"host\""), "{err}");
    let err = Tools::new()
        .register(tool().params(json!({"type": "array"})))
        .unwrap_err()
        .to_string();
    assert!(err.contains("must be an object schema"), "{err}");
    Tools::new()
        .register(tool().signature("get_logs(host, count)"))
        .unwrap();
}

/// A schema that is no JSON Schema is refused at registration, the result
/// schema as the params schema (a result schema was taken unread, and its
/// mistake reached the program's declarations).
#[test]
fn a_schema_that_is_no_json_schema_is_refused() {
    let tool = || {
        Tool::new("t", |_c: Call| async {
            Ok::<_, HandlerError>(Text(String::new()))
        })
    };
    for bad in [json!({"type": "nope"}), json!({"minimum": "one"}), json!(7)] {
        let err = Tools::new()
            .register(tool().result(bad.clone()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the result schema is not a usable JSON Schema"),
            "{bad}: {err}"
        );
        let mut params = json!({"type": "object", "properties": {"x": bad.clone()}});
        if bad.is_number() {
            params = bad.clone();
        }
        assert!(
            Tools::new().register(tool().params(params)).is_err(),
            "{bad}"
        );
    }
    Tools::new()
        .register(tool().result(json!({"type": "array", "items": {"type": "string"}})))
        .unwrap();
    Tools::new().register(tool().result(json!(true))).unwrap();
}

/// With a signature, positional arguments are checked by their names.
#[tokio::test]
async fn positional_args_are_checked_by_the_signatures_names() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let mut tools = Tools::new();
    tools
        .register(
            Tool::new("get_logs", move |call: Call| {
                seen.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, HandlerError>(Text(call.args)) }
            })
            .signature("get_logs(host, count)")
            .params(json!({
                "type": "object",
                "properties": {"host": {"type": "string"}, "count": {"type": "integer"}},
                "required": ["host"],
            })),
        )
        .unwrap();
    let outcome = run_on(sandbox(), "return await get_logs(7, 2);", budget(), &tools).await;
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        r#"args.host: 7 is not of type "string""#,
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let outcome = run_on(
        sandbox(),
        "return await get_logs('db1', 2);",
        budget(),
        &tools,
    )
    .await;
    assert_eq!(value(&outcome), json!(r#"{"host":"db1","count":2}"#));
}

/// A point on the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

/// How to move the shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Motion {
    /// Stay where it is.
    Still,
    /// Move by this much.
    Shift { by: Point },
}

/// The params of `move_shape`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Shape {
    /// The shape's name.
    name: String,
    /// Its corners.
    corners: Vec<Point>,
    motion: Motion,
    /// A label, if any.
    label: Option<String>,
}

/// What `move_shape` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Moved {
    shape: Shape,
    centre: Point,
}

fn typed_tools(calls: Arc<AtomicUsize>) -> Tools {
    let mut tools = Tools::new();
    tools
        .register(
            Tool::typed("move_shape", move |shape: Shape| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    let by = match &shape.motion {
                        Motion::Still => Point { x: 0.0, y: 0.0 },
                        Motion::Shift { by } => by.clone(),
                    };
                    let corners: Vec<Point> = shape
                        .corners
                        .iter()
                        .map(|p| Point {
                            x: p.x + by.x,
                            y: p.y + by.y,
                        })
                        .collect();
                    if corners.is_empty() {
                        return Err(ToolFailure::new(FailureKind::Invalid, "no corners").into());
                    }
                    let n = corners.len() as f64;
                    let centre = Point {
                        x: corners.iter().map(|p| p.x).sum::<f64>() / n,
                        y: corners.iter().map(|p| p.y).sum::<f64>() / n,
                    };
                    Ok(Moved {
                        shape: Shape { corners, ..shape },
                        centre,
                    })
                }
            })
            .description("Moves a shape and says where its centre ends up."),
        )
        .unwrap();
    tools
}

/// A typed tool takes nested serde structs from the program and hands
/// nested structs back; args that do not fit its derived schema never
/// reach it; its derived schema is in the declarations.
#[tokio::test]
async fn a_typed_tool_round_trips_nested_structs_and_declares_them() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tools = typed_tools(calls.clone());
    let program = r#"
        const moved = await move_shape({
            name: "square",
            corners: [{x: 0, y: 0}, {x: 2, y: 0}, {x: 2, y: 2}, {x: 0, y: 2}],
            motion: {shift: {by: {x: 1, y: 1}}},
        });
        return moved;
    "#;
    let outcome = run_on(sandbox(), program, budget(), &tools).await;
    let moved: Moved = serde_json::from_value(value(&outcome)).unwrap();
    assert_eq!(
        moved,
        Moved {
            shape: Shape {
                name: "square".into(),
                corners: vec![
                    Point { x: 1.0, y: 1.0 },
                    Point { x: 3.0, y: 1.0 },
                    Point { x: 3.0, y: 3.0 },
                    Point { x: 1.0, y: 3.0 },
                ],
                motion: Motion::Shift {
                    by: Point { x: 1.0, y: 1.0 }
                },
                label: None,
            },
            centre: Point { x: 2.0, y: 2.0 },
        }
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    let bad =
        r#"return await move_shape({name: "s", corners: [{x: "0", y: 0}], motion: "still"});"#;
    let outcome = run_on(sandbox(), bad, budget(), &tools).await;
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        "args.corners[0].x: \"0\" is not of type",
    );
    let bad = r#"return await move_shape({name: "s", corners: [], motion: "sideways"});"#;
    let outcome = run_on(sandbox(), bad, budget(), &tools).await;
    assert_failed(&outcome, FailureKind::Invalid, "args.motion:");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "a bad call reached the handler"
    );

    let dts = tools.typescript();
    for needle in [
        "Moves a shape and says where its centre ends up.",
        "declare function move_shape(args: {",
        "/** The shape's name. */",
        "name: string;",
        "corners: {\n",
        "x: number;",
        "label?: string | null;",
        "\"still\"",
        "shift: {",
        "}): Promise<{",
        "centre: {",
    ] {
        assert!(dts.contains(needle), "{needle:?} not in:\n{dts}");
    }
}

/// The tools of the TypeScript checks: a typed one, one with a signature
/// and a schema, one with a schema of every shape the generator knows, a
/// call-only one, and one with no schema at all.
fn sample_tools() -> Tools {
    let mut tools = typed_tools(Arc::new(AtomicUsize::new(0)));
    let echo = |call: Call| async move { Ok::<_, HandlerError>(Text(call.args)) };
    tools
        .register(
            Tool::new("get_logs", echo)
                .signature("get_logs(host, count)")
                .description("The newest log lines of one host.")
                .params(json!({
                    "type": "object",
                    "properties": {
                        "host": {"type": "string", "description": "The host's name."},
                        "count": {"type": "integer", "description": "How many lines."},
                    },
                    "required": ["host"],
                }))
                .result(json!({"type": "array", "items": {"type": "string"},
                    "description": "The lines, newest last."})),
        )
        .unwrap()
        .register(
            Tool::new("query", echo)
                .description("Every schema shape at once.")
                .params(json!({
                    "type": "object",
                    "properties": {
                        "table": {"enum": ["hosts", "alerts"]},
                        "filter": {
                            "type": "object",
                            "properties": {
                                "field": {"type": "string"},
                                "op": {"enum": ["=", "<", ">"]},
                                "value": {"oneOf": [{"type": "string"}, {"type": "number"}]},
                            },
                            "required": ["field", "op", "value"],
                            "additionalProperties": false,
                        },
                        "limit": {"type": ["integer", "null"]},
                        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                        "window": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "string"}]},
                    },
                    "required": ["table"],
                    "additionalProperties": false,
                }))
                .result(json!({
                    "type": "object",
                    "properties": {
                        "rows": {"type": "array", "items": {"type": "object", "additionalProperties": true}},
                        "next": {"type": "string", "nullable": true},
                    },
                    "required": ["rows", "next"],
                })),
        )
        .unwrap()
        .register(
            Tool::new("search-docs", echo)
                .call_only()
                .description("Searches the docs.")
                .params(json!({
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"],
                })),
        )
        .unwrap()
        .register(Tool::new("ping", echo))
        .unwrap();
    tools
}

/// Where scripts/setup installs the pinned TypeScript compiler.
fn tsc() -> PathBuf {
    let tsc = Path::new(env!("CARGO_MANIFEST_DIR")).join("typescript/node_modules/.bin/tsc");
    assert!(
        tsc.exists(),
        "the TypeScript compiler is not installed at {}: run scripts/setup",
        tsc.display()
    );
    tsc
}

/// Type-checks `program` (a program body, as a model writes it) against
/// `declarations`; tsc's output when it does not pass.
fn type_check(declarations: &str, program: &str) -> Result<(), String> {
    let dir = tempdir();
    std::fs::write(dir.join("tools.d.ts"), declarations).unwrap();
    // The child runs the program as the body of an async function.
    let wrapped = format!("async function program() {{\n{program}\n}}\nvoid program;\n");
    std::fs::write(dir.join("program.ts"), wrapped).unwrap();
    std::fs::write(
        dir.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022",
            "lib": ["es2022"], "types": [], "skipLibCheck": false},
            "files": ["tools.d.ts", "program.ts"]}"#,
    )
    .unwrap();
    let out = std::process::Command::new(tsc())
        .arg("-p")
        .arg(dir.join("tsconfig.json"))
        .output()
        .expect("tsc runs");
    let _ = std::fs::remove_dir_all(&dir);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn tempdir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "wasmwire-tsc-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn samples() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("typescript/samples");
    let mut samples: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ts"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    samples.sort();
    assert!(samples.len() >= 4, "{samples:?}");
    samples
}

/// The declarations type-check with the real `tsc --noEmit --strict`
/// together with every `ok_*.ts` sample, and each `bad_*.ts` sample is
/// rejected with the error its first line names (`// expect: TS2322 ...`).
#[test]
fn the_declarations_pass_tsc_with_good_programs_and_fail_bad_ones() {
    let declarations = sample_tools().typescript();
    type_check(&declarations, "").unwrap_or_else(|e| panic!("{e}\n{declarations}"));
    for (name, program) in samples() {
        let result = type_check(&declarations, &program);
        if name.starts_with("ok_") {
            if let Err(e) = result {
                panic!("{name} should type-check:\n{e}\n{declarations}");
            }
        } else {
            let expect = program
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("// expect: "))
                .unwrap_or_else(|| panic!("{name}: its first line is not `// expect: ...`"));
            match result {
                Ok(()) => panic!("{name} should be rejected by tsc\n{declarations}"),
                Err(e) => assert!(e.contains(expect), "{name}: {expect:?} not in:\n{e}"),
            }
        }
    }
}

/// Hostile and odd schemas, from an embedder or an upstream server: the
/// declarations still compile with the real tsc, say what the schema says,
/// and stay bounded. Found by a probe of the CLI, which saw each case fail
/// on the code before (the doubling one took 1.9 GB at 22 levels, so it is
/// not run against that code here).
#[test]
fn odd_schemas_give_declarations_tsc_takes_and_that_mean_the_schema() {
    let plain = |name: &str| {
        Tool::new(name, |_c: Call| async {
            Ok::<_, HandlerError>(Text(String::new()))
        })
    };
    let mut tools = Tools::new();
    // A call-only name closed the comment before `host.NAME` and declared
    // a member of its own.
    tools
        .register(plain("x */ readonly injected: (code: string) => Promise<any>; /* ").call_only())
        .unwrap();
    // `}` inside an enum's string or a description counted as a bracket,
    // and the union lost its parentheses: `"}" | "x"[]`.
    tools
        .register(plain("braces").params(json!({
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"enum": ["}", "x"]}},
                "b": {"type": "array", "items": {"anyOf": [
                    {"type": "object", "properties": {"k": {"type": "string", "description": "a } b"}}},
                    {"type": "number"},
                ]}},
            },
        })))
        .unwrap();
    // Keys matching a pattern, and properties beside `anyOf`, were dropped.
    tools
        .register(plain("patterned").params(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": false,
        })))
        .unwrap();
    tools
        .register(plain("beside").params(json!({
            "type": "object",
            "properties": {"b": {"type": "number"}},
            "anyOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"c": {"type": "string"}}, "required": ["c"]},
            ],
        })))
        .unwrap();
    // No args are the empty object, which `beside` refuses (each branch
    // requires a field), `nonempty` too; `open` takes it. Only a top-level
    // `required` made the args required.
    tools
        .register(plain("nonempty").params(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "minProperties": 1,
        })))
        .unwrap();
    tools
        .register(plain("open").params(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "anyOf": [{"required": ["a"]}, {"maxProperties": 0}],
        })))
        .unwrap();
    // Each level uses the next twice: inlined, 40 levels doubled the text
    // forty times (gigabytes; 22 levels made 1.29 GB).
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/$defs/A{}", i + 1)});
        defs.insert(
            format!("A{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next}}),
        );
    }
    defs.insert("A40".into(), json!({"type": "string"}));
    tools
        .register(plain("doubling").params(json!({
            "type": "object", "properties": {"x": {"$ref": "#/$defs/A0"}}, "$defs": defs,
        })))
        .unwrap();
    // A chain of 40,000 references overflowed the stack. Since item 111
    // such a chain is refused when it is registered (deeper than 256);
    // one of 250 is declared, its depth past `describe`'s own bound
    // written `unknown`.
    let chain = |links: usize| {
        let mut chain = serde_json::Map::new();
        for i in 0..links {
            chain.insert(
                format!("C{i}"),
                json!({"$ref": format!("#/$defs/C{}", i + 1)}),
            );
        }
        chain.insert(format!("C{links}"), json!({"type": "string"}));
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/C0"}}, "$defs": chain})
    };
    let refused = Tools::new()
        .register(plain("chain").params(chain(40_000)))
        .unwrap_err()
        .to_string();
    assert!(refused.contains("deeper than 256"), "{refused}");
    tools.register(plain("chain").params(chain(250))).unwrap();
    // A tool named `call`: `host.call` stays the call function (it was
    // declared a property too, which tsc refused: TS2687, TS2717).
    tools.register(plain("call")).unwrap();
    let declarations = tools.typescript();
    assert!(declarations.len() < 4 << 20, "{} bytes", declarations.len());
    let program = r#"
        await braces({ a: ["x", "}"], b: [{ k: "v" }, 3] });
        await patterned({ a: "1", "x-y": "2" });
        await beside({ a: "1", b: 2 });
        // @ts-expect-error: no args fit none of beside's branches
        await beside();
        // @ts-expect-error: nor nonempty's minProperties
        await host.call("nonempty");
        await nonempty({ b: "x" });
        await open();
        await doubling({ x: { a: { a: {} }, b: {} } });
        await chain({ x: "s" });
        await call({});
        await host.call("call", {});
        // @ts-expect-error: the comment did not declare a member
        await host.injected("rm -rf /");
    "#;
    type_check(&declarations, program).unwrap_or_else(|e| panic!("{e}"));
    // A signature's parameter that is a reserved word cannot be declared.
    let err = Tools::new()
        .register(plain("f").signature("f(delete)"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("reserved word"), "{err}");
    for bad in ["f(this, b)", "f(x\u{b2})"] {
        assert!(
            Tools::new().register(plain("f").signature(bad)).is_err(),
            "{bad}"
        );
    }
    Tools::new()
        .register(plain("f").signature("f(größe, $a, _b)"))
        .unwrap();
}

/// The prompt is the rules, this execution's limits and the declarations.
#[test]
fn the_prompt_has_the_rules_the_limits_and_the_declarations() {
    let tools = sample_tools();
    let budget = Budget {
        max_calls: 20,
        ..Budget::default()
    };
    let prompt = tools.prompt(&budget, &SandboxOptions::default());
    for needle in [
        "body of an async function",
        "global async function",
        "host.call(name, args, { deadlineMs, signal })",
        "wait their turn",
        "no `fetch`",
        "`URL`, `URLSearchParams`, `TextEncoder`, `TextDecoder`, `structuredClone`",
        "`crypto.randomUUID`",
        "`AbortController`",
        "Numbers format as en-US",
        "`localeCompare` sorts as in English",
        "wall clock: 10s",
        "memory: 64 MiB",
        "tool calls: 20",
        // Not "none", which reads as "no calls allowed".
        "bytes of tool values: no limit",
        "calls in flight at once: 64",
        "declare function get_logs(",
        "type ToolErrorKind",
    ] {
        assert!(prompt.contains(needle), "{needle:?} not in:\n{prompt}");
    }
    assert!(prompt.contains(&tools.typescript()));
}

/// Which host.
#[derive(Deserialize, JsonSchema)]
struct LoadQuery {
    /// The host's name, e.g. "db1".
    host: String,
}

/// One host's load.
#[derive(Serialize, JsonSchema)]
struct Load {
    host: String,
    /// The 1-minute load average per core.
    load: f64,
}

/// The README's typed tool: the same code as its example.
fn readme_tools() -> Tools {
    let mut tools = Tools::new();
    tools
        .register(
            Tool::typed("get_load", |q: LoadQuery| async move {
                match q.host.as_str() {
                    "db1" => Ok(Load {
                        host: q.host,
                        load: 0.91,
                    }),
                    _ => {
                        let why = format!("no host {}", q.host);
                        Err(ToolFailure::new(FailureKind::NotFound, why).into())
                    }
                }
            })
            .description("The current load of one host."),
        )
        .unwrap();
    tools
}

/// The README shows the declarations of its typed tool as they are
/// generated: its `.d.ts` block is a part of `Tools::typescript()`.
#[test]
fn the_readme_shows_the_generated_declarations() {
    let dts = readme_tools().typescript();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let shown = readme
        .split("<!-- get_load.d.ts begins -->\n```ts\n")
        .nth(1)
        .and_then(|rest| rest.split("```\n<!-- get_load.d.ts ends -->").next())
        .unwrap_or_else(|| panic!("the README has no get_load.d.ts block; it would be:\n{dts}"));
    assert!(
        dts.contains(shown),
        "the README's block is not generated text; now:\n{dts}"
    );
    assert!(shown.contains("declare function get_load("), "{shown}");
}

/// A program that uses every web API the child has, as a model would.
const WEB_APIS: &str = r#"const url = new URL("/a?b=1", "https://example.com");
url.searchParams.append("c", "2");
const params = new URLSearchParams({ q: "x" });
const pairs: string[] = [];
for (const [name, value] of params) pairs.push(`${name}=${value}`);
const parsed: URL | null = URL.parse("no url");
const bytes: Uint8Array = new TextEncoder().encode("héllo");
const text: string = new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: false });
const copy: { a: number[] } = structuredClone({ a: [1] });
const random: Uint32Array = crypto.getRandomValues(new Uint32Array(4));
const id: string = crypto.randomUUID();
const target = new EventTarget();
let heard = "";
target.addEventListener("ping", (event) => { heard = event.type; }, { once: true });
const dispatched: boolean = target.dispatchEvent(new Event("ping", { cancelable: true }));
const controller = new AbortController();
let onabort = false;
controller.signal.onabort = () => { onabort = true; };
controller.abort(new DOMException("stop", "AbortError"));
const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(100)]);
let caught = "";
try { signal.throwIfAborted(); } catch (e) { if (e instanceof DOMException) caught = `${e.name} ${e.code}`; }
const early: boolean = AbortSignal.abort().aborted;
let micro = false;
queueMicrotask(() => { micro = true; });
await null;
const elapsed: number = performance.now();
const custom = new CustomEvent<number>("n", { detail: 5 });
const detail: number = custom.detail;
const digest: ArrayBuffer = await crypto.subtle.digest("SHA-256", bytes);
console.table([{ a: 1 }]);
console.time("t");
console.timeEnd("t");
return [url.href, pairs, parsed, text, copy, random.length, id.length, heard, dispatched,
  onabort, caught, early, micro, atob(btoa("x")), elapsed >= 0, detail, digest.byteLength];"#;

/// The web APIs the child has are declared, as far as it defines them:
/// a program using each passes tsc (it failed with "Cannot find name
/// 'URL'" and the like) and runs in the child, and a misuse fails tsc.
#[tokio::test]
async fn the_web_apis_the_child_has_are_declared() {
    let declarations = Tools::new().typescript();
    type_check(&declarations, WEB_APIS).unwrap_or_else(|e| panic!("{e}\n{declarations}"));
    let prepared = wasmwire::source::prepare(WEB_APIS, wasmwire::source::Language::TypeScript)
        .expect("the program prepares");
    let outcome = wasmwire_tests::run(&prepared.text).await;
    assert_eq!(
        value(&outcome),
        json!([
            "https://example.com/a?b=1&c=2",
            ["q=x"],
            null,
            "héllo",
            {"a": [1]},
            4,
            36,
            "ping",
            true,
            true,
            "AbortError 20",
            true,
            true,
            "x",
            true,
            5,
            32
        ])
    );
    for (misuse, expect) in [
        ("new URL(1, 2, 3);", "TS2554"),
        ("crypto.getRandomValues(new Float64Array(2));", "TS2345"),
        ("new AbortSignal();", "TS2673"),
        (
            "const n: number = new TextDecoder().decode(new Uint8Array(1));",
            "TS2322",
        ),
    ] {
        match type_check(&declarations, misuse) {
            Ok(()) => panic!("{misuse} should be rejected by tsc"),
            Err(e) => assert!(e.contains(expect), "{misuse}: {expect} not in:\n{e}"),
        }
    }
}
