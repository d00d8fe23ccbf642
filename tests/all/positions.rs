//! Error places name the program's own text, through the library and the
//! real guest: a program cut short, CR-only line endings, a thrown value
//! that is not an Error.

use serde_json::json;
use wasmwire::FailureKind;
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
            "    at f (<program>:2:16)\n    at <anonymous> (<program>:4:13)\n",
            true
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
