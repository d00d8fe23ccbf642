//! Error places name the program's own text, through the library and the
//! real guest: a program cut short, CR-only line endings, a thrown value
//! that is not an Error.

use serde_json::json;
use wasmwire::FailureKind;
use wasmwire::source::Language;
use wasmwire_tests::{assert_failed, run, value};

/// The outcome's error text, asserting it failed `invalid`.
async fn invalid(program: &str) -> String {
    let outcome = run(program).await;
    assert_failed(&outcome, FailureKind::Invalid, "");
    outcome.result.error.clone()
}

#[tokio::test]
async fn a_program_cut_short_ends_unexpectedly_at_its_end_not_at_a_brace_it_never_wrote() {
    // Cut off inside a bracket: the bracket left open, the innermost, is
    // named where it was opened.
    let error = invalid("return (1 +").await;
    assert_eq!(
        error,
        "SyntaxError: unexpected end of the program: '(' never closed, opened at line 1, column 8"
    );
    let error = invalid("const xs = [1, 2, 3];\nreturn xs.map((x) => {\n  return x *").await;
    assert_eq!(
        error,
        "SyntaxError: unexpected end of the program: '{' never closed, opened at line 2, column 22"
    );
    assert!(!error.contains('}'), "{error}");
    // With every bracket closed, the end of the program.
    let error = invalid("const x = 1;\nreturn x *").await;
    assert_eq!(
        error,
        "SyntaxError: unexpected end of the program at line 2, column 11"
    );
}

#[tokio::test]
async fn places_are_right_with_cr_only_line_endings() {
    let program = "const a = 1;\rconst b = 2;\rconst c = 3;\r\rconst d = ;\r";
    let error = invalid(program).await;
    assert!(error.starts_with("SyntaxError: "), "{error}");
    assert!(error.ends_with(" at line 5, column 11"), "{error}");
    let error = invalid("const o = null;\r\r\r\ro.missing.field;").await;
    let same_with_lf = invalid("const o = null;\n\n\n\no.missing.field;").await;
    assert!(
        error.starts_with("TypeError: ") && error.contains(" at line 5, column "),
        "{error}"
    );
    assert_eq!(error, same_with_lf);
}

#[tokio::test]
async fn a_thrown_string_says_where_it_was_thrown() {
    let error = invalid("const n = 3;\nif (n > 2) {\n  throw \"boom\";\n}\nreturn n;").await;
    assert_eq!(error, "uncaught exception: \"boom\" at line 3, column 9");
    let error = invalid("await null;\nfunction fail() {\n    throw { code: 7 };\n}\nfail();").await;
    assert_eq!(
        error,
        r#"uncaught exception: {"code":7} at line 3, column 11"#
    );
}

#[tokio::test]
async fn a_thrown_string_is_placed_at_its_throw_not_at_a_call_made_before_it() {
    // Each call's site captures a stack, and QuickJS keeps the first stack
    // made since the last `catch` as where a non-Error was thrown: a call
    // made earlier in the same job took the throw's place.
    let error = invalid("const p = echo(1);\nthrow \"boom\";").await;
    assert_eq!(error, "uncaught exception: \"boom\" at line 2, column 7");
    // In a later job too, and with a call made after an earlier throw that
    // escaped into a promise (the first throw of the job is still the one
    // kept, as before).
    let error = invalid("await null;\nconst p = echo(1);\nthrow \"boom\";").await;
    assert_eq!(error, "uncaught exception: \"boom\" at line 3, column 7");
    let error = invalid(
        "await null;\n(async () => { throw 1 })().catch(() => {});\nconst p = echo(1);\nthrow \"boom\";",
    )
    .await;
    assert_eq!(error, "uncaught exception: \"boom\" at line 2, column 22");
    // The web surface's errors made and not thrown (an abort's reason).
    let error = invalid("const c = new AbortController();\nc.abort();\nthrow \"boom\";").await;
    assert_eq!(error, "uncaught exception: \"boom\" at line 3, column 7");
    let error = invalid("AbortSignal.abort();\nthrow \"boom\";").await;
    assert_eq!(error, "uncaught exception: \"boom\" at line 2, column 7");
}

#[tokio::test]
async fn a_failed_call_is_placed_at_the_line_that_made_it() {
    // The ToolError is born at the call: its stack is the program's frames
    // when it called, not the event loop's when the answer came.
    let outcome = run("const a = 1;\n\nawait fail(\"transient\", \"gone\");\nreturn a;").await;
    assert_failed(
        &outcome,
        FailureKind::Transient,
        "ToolError from fail: gone at line 3, column 7",
    );
    let program = "async function f() {\n  return await fail(\"unknown\", \"no\");\n}\n\
                   try { await f(); } catch (e) { return [e.stack, e instanceof ToolError]; }";
    let outcome = run(program).await;
    assert_eq!(
        value(&outcome),
        json!([
            "ToolError: no\n    at f (<program>:2:16)\n    at <anonymous> (<program>:4:13)",
            true
        ])
    );
}

#[tokio::test]
async fn failed_calls_made_where_the_last_was_each_get_their_own_error_and_their_own_stack() {
    // A call made where the last one was keeps the same frames (the guest
    // keeps them, not an error, until a call fails): each failure is still
    // an error of its own, and its stack is still its own call's, through
    // a recursion, the same function called from the next line, the
    // function renamed, and Error.stackTraceLimit changed.
    let program = r#"async function at(depth) { return depth === 0 ? await fail("unknown", "x") : at(depth - 1); }
const errors = [];
for (let i = 0; i < 3; i++) { try { await fail("unknown", "x"); } catch (e) { errors.push(e); } }
const deep = [];
for (const d of [0, 2, 0]) { try { await at(d); } catch (e) { deep.push(e.stack); } }
function g() { return fail("unknown", "x"); }
const first = await g().catch((e) => e.stack);
const again = await g().catch((e) => e.stack);
Object.defineProperty(g, "name", { value: "renamed" });
const second = await g().catch((e) => e.stack);
const names = []; for (const name of ["one", "two"]) { Object.defineProperty(g, "name", { value: name }); names.push(await g().catch((e) => e.stack)); }
Error.stackTraceLimit = 1;
const limited = await at(2).catch((e) => e.stack);
Error.stackTraceLimit = 10;
const restored = await at(2).catch((e) => e.stack);
return [errors.map((e) => e.stack), errors[0] !== errors[1] && errors[1] !== errors[2],
  errors.every((e) => e instanceof ToolError), deep, first, again, second, names, limited, restored];"#;
    let at_loop = "ToolError: x\n    at <anonymous> (<program>:3:43)";
    let at_0 = "ToolError: x\n    at at (<program>:1:55)\n    at <anonymous> (<program>:5:45)";
    let at_2 = |line: u32, column: u32| {
        format!(
            "ToolError: x\n    at at (<program>:1:55)\n    at at (<program>:1:89)\n    at at (<program>:1:89)\n    at <anonymous> (<program>:{line}:{column})"
        )
    };
    assert_eq!(
        value(&run(program).await),
        json!([
            [at_loop, at_loop, at_loop],
            true,
            true,
            [at_0, at_2(5, 45), at_0],
            "ToolError: x\n    at g (<program>:6:23)\n    at <anonymous> (<program>:7:21)",
            "ToolError: x\n    at g (<program>:6:23)\n    at <anonymous> (<program>:8:21)",
            "ToolError: x\n    at renamed (<program>:6:23)\n    at <anonymous> (<program>:10:22)",
            [
                "ToolError: x\n    at one (<program>:6:23)\n    at <anonymous> (<program>:11:124)",
                "ToolError: x\n    at two (<program>:6:23)\n    at <anonymous> (<program>:11:124)",
            ],
            "ToolError: x\n    at at (<program>:1:55)",
            at_2(15, 24),
        ])
    );
}

#[tokio::test]
async fn a_script_files_interpreter_line_is_read_as_a_comment_and_places_stay() {
    // QuickJS said "invalid first character of private name at line 1".
    assert_eq!(
        value(&run("#!/usr/bin/env node\nreturn 6 * 7").await),
        json!(42)
    );
    let error = invalid("#!/usr/bin/env node\nconst x = ;").await;
    assert!(error.ends_with(" at line 2, column 11"), "{error}");
    // Only as the first two characters: elsewhere it is what JavaScript says.
    let error = invalid(" #!/usr/bin/env node\nreturn 1").await;
    assert!(error.starts_with("SyntaxError: "), "{error}");
}

/// The stack a program reads (`e.stack`, a CallSite's numbers, what the
/// console shows) is V8's shape, `Name: message` then the frames, and each
/// frame is at the place the author wrote: the parent edits what it sends
/// (a last expression made the answer, TypeScript transformed), and the
/// child maps each place back. Before, a stack had no message, the frames
/// of a last expression's line stood 18 columns right, those of a
/// transformed TypeScript program on other lines, and columns counted
/// UTF-8 bytes.
#[tokio::test]
async fn a_stack_a_program_reads_has_its_message_and_the_authors_places() {
    // The last expression's line.
    let outcome = run("function f() { return new Error(\"x\").stack }\nf()").await;
    assert_eq!(
        value(&outcome),
        json!("Error: x\n    at f (<program>:1:27)\n    at <anonymous> (<program>:2:1)")
    );
    // Columns in characters, as the Result counts them, and at the place
    // the Result names.
    let line = "const city = \"Zürich\"; const e = new Error(\"x\");";
    let stack = value(&run(&format!("{line}\nreturn e.stack")).await);
    let error = invalid(&format!("{line}\nthrow e")).await;
    assert_eq!(error, "Error: x at line 1, column 38");
    assert_eq!(
        stack,
        json!("Error: x\n    at <anonymous> (<program>:1:38)")
    );
    // A CallSite's numbers, for a program's own `Error.prepareStackTrace`.
    let outcome = run(
        "Error.prepareStackTrace = (e, sites) => sites.map((s) => `${s.getLineNumber()}:${s.getColumnNumber()}`).join(' ');\n\
         function f() { return new Error().stack }\n\
         f()",
    )
    .await;
    assert_eq!(value(&outcome), json!("2:27 3:1"));
    // `Error.captureStackTrace`, as a custom error class and a plain
    // object use it, and what the console shows of them.
    let outcome = run(
        "class NotFound extends Error {\n  constructor(m) { super(m); this.name = 'NotFound'; Error.captureStackTrace(this, NotFound); }\n}\n\
         function find() { throw new NotFound('no row 7'); }\n\
         const o = {};\n\
         try { find() } catch (e) { console.log(e); Error.captureStackTrace(o); return [e.stack, o.stack] }",
    )
    .await;
    assert_eq!(
        value(&outcome),
        json!([
            "NotFound: no row 7\n    at find (<program>:4:29)\n    at <anonymous> (<program>:6:7)",
            "Error\n    at <anonymous> (<program>:6:68)"
        ])
    );
    assert_eq!(
        outcome.console,
        "NotFound: no row 7 { name: 'NotFound' }\\n    at find (<program>:4:29)\\n    at <anonymous> (<program>:6:7)\n"
    );
}

#[tokio::test]
async fn a_stack_in_transformed_typescript_names_the_lines_written() {
    // An enum and a parameter property each make the TypeScript compiler
    // generate the program anew. Lines are the author's; a column is as
    // near as the transform's source map records (QuickJS places the
    // call `.get(...)` at its argument, 26 in the same program as
    // JavaScript; the map has the call's own token, 22).
    let program = "enum Color { Red, Green }\n\
                   class Repo {\n  constructor(private readonly base: string) {}\n  get(id: number): string { throw new Error(`no ${id} in ${this.base}`); }\n}\n\
                   try { new Repo('db').get(Color.Green) } catch (e: any) { return e.stack }";
    let outcome = wasmwire_tests::run_in(program, Language::TypeScript).await;
    assert_eq!(
        value(&outcome),
        json!(
            "Error: no 1 in db\n    at get (<program>:4:51)\n    at <anonymous> (<program>:6:22)"
        )
    );
    let outcome = wasmwire_tests::run_in(
        &program.replace("catch (e: any) { return e.stack }", "finally {}"),
        Language::TypeScript,
    )
    .await;
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        "Error: no 1 in db at line 4, column 51",
    );
}

/// What model-written code gets wrong about the sandbox, said where it
/// happens: a module's statements, a tool's name misspelt, JSON parsed
/// twice, a last `console.log` for an answer.
#[tokio::test]
async fn module_statements_misspelt_tools_and_parsing_twice_are_explained() {
    for program in [
        "import fs from 'fs';\nreturn 1",
        "export async function main() { return 1 }",
        "const m = await import('csv-parse/sync');",
    ] {
        let error = invalid(program).await;
        assert!(error.contains("there are no modules"), "{program}: {error}");
    }
    let error = invalid("return await plainError(1)").await;
    assert!(
        error.starts_with(
            "ReferenceError: plainError is not defined (did you mean the tool plain_error?)"
        ),
        "{error}"
    );
    let outcome = run("return await host.call('plainErrors', {})").await;
    assert_failed(
        &outcome,
        FailureKind::NotFound,
        "no tool named \"plainErrors\" (did you mean \"plain_error\"?)",
    );
    // Other hosts' ways to reach a tool, and Node's crypto.
    let error = invalid("return await host.plainErrors({})").await;
    assert!(
        error.starts_with(
            "TypeError: host.plainErrors is not a function (did you mean host.plain_error?)"
        ),
        "{error}"
    );
    for reach in ["tools", "functions", "default_api"] {
        let error = invalid(&format!("return await {reach}.echo(1)")).await;
        assert!(
            error.contains("each tool is a global async function"),
            "{error}"
        );
    }
    let error = invalid("return crypto.createHash('sha256').update('a').digest('hex')").await;
    assert!(error.contains("crypto.subtle.digest"), "{error}");
    // A pattern built from data: QuickJS said only "nothing to repeat".
    let error = invalid("const text = 'c++';\nreturn new RegExp(text, 'i').test('C++')").await;
    assert!(
        error.starts_with(
            "SyntaxError: invalid regular expression: nothing to repeat (a pattern made from text"
        ) && error.contains(r#"text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")"#)
            && error.ends_with("at line 2, column 19"),
        "{error}"
    );
    let error = invalid("return new RegExp('a', 'zz').test('a')").await;
    assert!(
        error.starts_with(
            "SyntaxError: invalid regular expression flags (a regular expression's flags are"
        ),
        "{error}"
    );
    let error = invalid("return await echo_later(1)").await;
    assert!(
        error.starts_with("ReferenceError: echo_later is not defined at line"),
        "{error}"
    );
    let error = invalid("const v = await echo({ a: 1 });\nreturn JSON.parse(v).a").await;
    assert!(
        error.contains("JSON.parse was given an object") && error.ends_with("at line 2, column 19"),
        "{error}"
    );
    let outcome = run("const d = await echo(7);\nconsole.log(d)").await;
    assert_eq!(value(&outcome), json!(null));
    assert!(
        outcome.console.contains(
            "warn: the program ended with console.log(...), which gives undefined, and answered null"
        ),
        "{:?}",
        outcome.console
    );
}

/// A stack the program's own `Error.prepareStackTrace` made is the
/// program's: its CallSites' numbers are already the author's, so it is
/// neither mapped again (a Result or the console read it 18 columns short)
/// nor headed, and whether it is the program's own is what made it, not
/// what `Error.prepareStackTrace` holds when it is read.
#[tokio::test]
async fn a_stack_the_program_formats_itself_is_placed_once() {
    let format = "Error.prepareStackTrace = (e, sites) => String(e) + '\\n' + sites.map((s) => \
                  `    at ${s.getFunctionName() || '<anonymous>'} (${s.getFileName()}:${s.getLineNumber()}:${s.getColumnNumber()})`).join('\\n');\n";
    let error = invalid(&format!(
        "{format}const r = 1; const q = 2; (() => {{ throw new Error('boom') }})()"
    ))
    .await;
    assert_eq!(error, "Error: boom at line 2, column 46");
    let outcome = run(&format!(
        "{format}const r = 1; (() => {{ const e = new Error('boom'); console.log(e); return e.stack }})()"
    ))
    .await;
    assert_eq!(
        value(&outcome),
        json!(
            "Error: boom\n    at <anonymous> (<program>:2:37)\n    at <anonymous> (<program>:2:83)"
        )
    );
    assert_eq!(
        outcome.console,
        "Error: boom\\n    at <anonymous> (<program>:2:37)\\n    at <anonymous> (<program>:2:83)\n"
    );
    // Made before the program formats stacks, read after; and the other
    // way round.
    let outcome = run(
        "const a = 1; (() => { const e = new Error('m'); Error.prepareStackTrace = () => 'custom'; \
         const after = e.stack; Error.prepareStackTrace = undefined; return after })()",
    )
    .await;
    assert_eq!(
        value(&outcome),
        json!(
            "Error: m\n    at <anonymous> (<program>:1:37)\n    at <anonymous> (<program>:1:164)"
        )
    );
    let outcome = run(
        "const a = 1; (() => { Error.prepareStackTrace = () => 'custom'; const e = new Error('m'); \
         Error.prepareStackTrace = undefined; return e.stack })()",
    )
    .await;
    assert_eq!(value(&outcome), json!("custom"));
}

/// What a program can put in a stack's way: an object that only looks
/// like an Error, carrying another's stack; function names with a lone
/// surrogate or a place of their own; `captureStackTrace` given what is
/// not a constructor.
#[tokio::test]
async fn a_stack_holds_its_places_whatever_the_program_names_or_copies() {
    // An object that only looks like an Error has no stack of QuickJS's:
    // no place, rather than one read from the text it carries (the
    // author's already, or forged) or QuickJS's note of the first error
    // made since the last `catch` (another line).
    let error = invalid(
        "const a = 1; (() => { const o = Object.create(Error.prototype); o.message = 'm'; \
         o.stack = new Error('q').stack; throw o })()",
    )
    .await;
    assert_eq!(error, "Error: m");
    let outcome = run(
        "const o = { ['\\ud800']() { return new Error('n').stack } }; const a = 1; o['\\ud800']()",
    )
    .await;
    // The value's JSON escapes the lone surrogate, which serde_json does
    // not read: its text, then.
    assert!(
        outcome.result.ok
            && outcome
                .result
                .value
                .ends_with("\\ud800 (<program>:1:39)\\n    at <anonymous> (<program>:1:74)\""),
        "{:?}",
        outcome.result
    );
    let error = invalid(
        "const o = { ['x\\n    at y (<program>:1:90)']() { throw new Error('n') } }; const a = 1; \
         o['x\\n    at y (<program>:1:90)']()",
    )
    .await;
    assert_eq!(error, "Error: n at line 1, column 60");
    let outcome = run(
        "const r = []; for (const opt of [undefined, null, 0, {}, 'x']) { const o = {}; \
         Error.captureStackTrace(o, opt); r.push(o.stack) }\nr",
    )
    .await;
    for stack in value(&outcome).as_array().unwrap() {
        assert_eq!(stack, &json!("Error\n    at <anonymous> (<program>:1:107)"));
    }
}

#[tokio::test]
async fn a_misspelt_tool_that_is_no_identifier_is_named_with_host_call() {
    let mut tools = wasmwire_tests::tools();
    tools
        .register(
            wasmwire::Tool::new("search-docs", |_call| async {
                Ok::<_, wasmwire::HandlerError>(wasmwire::Text("[]".into()))
            })
            .call_only(),
        )
        .expect("the tool registers");
    let outcome = wasmwire_tests::run_on(
        wasmwire_tests::sandbox(),
        "return await searchDocs('x')",
        wasmwire_tests::budget(),
        &tools,
    )
    .await;
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        "ReferenceError: searchDocs is not defined (did you mean the tool host.call(\"search-docs\", args)?)",
    );
}

/// The second review's cases (tests/HOSTILE.md item 90): a program's
/// `Error.prepareStackTrace` and what QuickJS keeps of a throw, a
/// `captureStackTrace` inside it, a function name that forges a syntax
/// error's whole-line place, a DOMException, a forged console line through
/// a tool's name, and program code run by the args' walk.
#[tokio::test]
async fn what_a_program_formats_or_names_never_moves_a_place() {
    let format = "Error.prepareStackTrace = (err, sites) => String(err) + '\\n' + sites.map((s) => \
                  `    at ${s.getFunctionName() || '<anonymous>'} (${s.getFileName()}:${s.getLineNumber()}:${s.getColumnNumber()})`).join('\\n');\n";
    let thrown = "const label = '日本語'; function check(v) { if (v < 0) throw `negative: ${v}`; return v; }\ncheck(-1)";
    let error = invalid(&format!("{format}{thrown}")).await;
    assert_eq!(
        error,
        "uncaught exception: \"negative: -1\" at line 2, column 72"
    );
    assert_eq!(
        invalid(thrown).await,
        "uncaught exception: \"negative: -1\" at line 1, column 72"
    );
    // A text the program made that names a place of its own is not
    // taken for QuickJS's: the place is the one the same program gets
    // without it (QuickJS's note of the first error made since the last
    // `catch`, here the note's: throw_site.rs).
    let thrown = "const note = new Error('note');\n\nthrow 'str'";
    let forged = invalid(&format!(
        "Error.prepareStackTrace = () => '    at fake (<program>:1:1)';\n{thrown}"
    ))
    .await;
    let plain = invalid(&format!("\n{thrown}")).await;
    assert_eq!(forged, plain);
    assert!(!forged.ends_with("line 1, column 1"), "{forged}");
    // `captureStackTrace` inside the program's own function.
    let outcome = run(
        "Error.prepareStackTrace = (err, sites) => { Error.captureStackTrace({}); return 'P' + sites.length };\n\
         const t = {}; Error.captureStackTrace(t); return t.stack",
    )
    .await;
    assert_eq!(value(&outcome), json!("P1"));
    // A function's name that holds a line and a place.
    let error = invalid(
        "const x = 1;\nfunction g() { throw new Error('here'); }\n\
         Object.defineProperty(g, 'name', { value: 'a\\n    at <program>:1:3\\nb' });\ng()",
    )
    .await;
    assert_eq!(error, "Error: here at line 2, column 26");
    // A DOMException is placed where it was made (its own stack).
    let error =
        invalid("const y = 1;\nconst d = new DOMException('dom', 'AbortError');\nthrow d").await;
    assert_eq!(error, "AbortError: dom at line 2, column 15");
    // A program's own first line of a stack it formats is shown.
    let outcome = run(
        "Error.prepareStackTrace = () => 'REQ-42 failed\\n    at custom frame';\n\
         console.log(new Error('m'));\nreturn 1",
    )
    .await;
    assert_eq!(
        outcome.console,
        "Error: m\\nREQ-42 failed\\n    at custom frame\n"
    );
}

#[tokio::test]
async fn the_args_walk_runs_no_program_code_and_forges_no_console_line() {
    // QuickJS's own JSON.stringify sets an index of an array of its own
    // per nested object (so the program's setter runs there, as it would
    // for a returned value): the walk adds none.
    let outcome = run(
        "let ran = 0;\n\
         Object.defineProperty(Array.prototype, '1', { set(v) { ran++; }, get() {}, configurable: true });\n\
         await echo({ a: [1], b: [2] });\n\
         const plain = ran;\n\
         await echo({ a: {}, b: new Map([[1, 2]]) });\n\
         const walked = ran - plain; delete Array.prototype[1];\n\
         await host.call('echo\\nerror: FORGED', { m: new Map([[1, 2]]) }).catch(() => {});\n\
         return [plain, walked]",
    )
    .await;
    let counts = value(&outcome);
    assert_eq!(counts[0], counts[1], "{counts}");
    assert!(
        outcome
            .console
            .starts_with("warn: a call of echo was given a Map at args.b, "),
        "{:?}",
        outcome.console
    );
    assert_eq!(outcome.console.lines().count(), 1, "{:?}", outcome.console);
}

#[tokio::test]
async fn an_error_subclass_is_placed_where_the_program_made_it_not_at_its_super() {
    // QuickJS's stack of an Error subclass starts in its constructors, so
    // every `throw new NotFound(...)` was placed at NotFound's `super(...)`
    // line, whichever throw it was; V8's starts where `new` was said. (The
    // column is QuickJS's place for the `new`: the last it noted of it, in
    // its arguments.)
    let program = "class Base extends Error { constructor(m) { super(m); this.name = 'Base'; } }\n\
                   class NotFound extends Base {\n  constructor(what) { super(`${what} not found`); this.name = 'NotFound'; }\n}\n\
                   function find(id) { if (id > 1) throw new NotFound(`user ${id}`); return id; }\n\
                   let caught;\n\
                   try { find(9); } catch (e) { caught = e.stack.split('\\n').slice(0, 2); console.log(e); }\n\
                   find(1);\n\
                   find(2);";
    let outcome = run(program).await;
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        "NotFound: user 2 not found at line 5, column 60",
    );
    let logged = &outcome.console;
    assert!(
        logged.starts_with("NotFound: user 9 not found")
            && logged.contains("at find (<program>:5:60)")
            && !logged.contains("at Base")
            && !logged.contains("at NotFound"),
        "{logged}"
    );
    // What the program reads.
    let outcome = run(&program.replace("find(2);", "return caught;")).await;
    assert_eq!(
        value(&outcome),
        json!(["NotFound: user 9 not found", "    at find (<program>:5:60)"])
    );
    // A subclass with no constructor of its own (no frame of its), and a
    // plain Error, are as they were.
    let outcome = run(
        "class E extends Error {}\nconst e = new E('x');\nreturn [e.stack.split('\\n')[1], new Error('y').stack.split('\\n')[1]];",
    )
    .await;
    assert_eq!(
        value(&outcome),
        json!([
            "    at <anonymous> (<program>:2:15)",
            "    at <anonymous> (<program>:3:37)"
        ])
    );
}

/// A tool call's site keeps the frames of the moment of the call, and its
/// stack is written from them when first read (guest/rquickjs-sys/PATCHES.md:
/// writing every call's stack cost a tenth of a round trip, and few are
/// read): whatever the program changes in between (a function's name,
/// `Error.stackTraceLimit`), the text is the one the call was made with,
/// and reads the same each time.
#[tokio::test]
async fn a_call_sites_stack_is_written_from_the_moment_of_the_call() {
    let outcome = run(r#"
        async function inner(x) { return await fail("unknown", "no " + x); }
        function outer() { return inner(1); }
        const pending = outer();
        Object.defineProperty(inner, "name", { value: "renamed" });
        Error.stackTraceLimit = 1;
        const e = await pending.catch((e) => e);
        Error.stackTraceLimit = 0;
        const none = await fail("unknown", "none").catch((e) => e);
        Error.stackTraceLimit = 10;
        const sites = await Promise.all([1, 2, 3].map((i) => fail("unknown", "f" + i).catch((e) => e)));
        return [e.stack, e.stack === e.stack, none.stack, sites[2].stack];
    "#)
    .await;
    assert_eq!(
        value(&outcome),
        json!([
            "ToolError: no 1\n    at inner (<program>:2:72)\n    at outer (<program>:3:35)\n    at <anonymous> (<program>:4:25)",
            true,
            "ToolError: none",
            "ToolError: f3\n    at <anonymous> (<program>:11:84)\n    at map (native)\n    at <anonymous> (<program>:11:51)"
        ])
    );
}

/// A ToolError the program keeps does not keep its callers' closures: the
/// frames kept for its stack hold each function's bytecode, not the
/// function (a reviewer found 40 kept errors, each made in a function
/// whose closure held 100,000 numbers, ran 16 MiB out after 7 calls). And a
/// `prepareStackTrace` set while the limit is read is the one called.
#[tokio::test]
async fn a_kept_call_site_keeps_no_closure_and_calls_the_latest_prepare() {
    let outcome = wasmwire_tests::run_with(
        r#"
        const errors = [];
        for (let i = 0; i < 40; i++) {
          const f = (() => { const big = new Array(100000).fill(i); return async () => { big.length; try { await fail("unknown", "no"); } catch (e) { return e; } }; })();
          errors.push(await f());
        }
        const read = errors[39].stack.split("\n").length;
        let n = 0;
        Error.stackTraceLimit = { valueOf() { if (n++ === 0) Error.prepareStackTrace = () => "PREPARED"; return 5; } };
        const prepared = await fail("unknown", "x").catch((e) => e.stack);
        Error.prepareStackTrace = undefined;
        Error.stackTraceLimit = 10;
        return [errors.length, read, prepared];
        "#,
        {
            let mut budget = wasmwire_tests::budget();
            budget.max_memory = 16 << 20;
            budget
        },
    )
    .await;
    assert_eq!(
        value(&outcome),
        json!([40, 3, "PREPARED"]),
        "{:?}",
        outcome.result
    );
}
