//! The program as the body of an async function: values, errors, places.

use wire::FailureKind;

use crate::fake::{Tools, run, run_alone};

#[test]
fn top_level_await_and_return_give_the_value_as_json() {
    let run =
        run_alone("const x = await Promise.resolve(2);\nreturn { x, s: 'a', list: [1, null] };");
    assert_eq!(run.value(), r#"{"x":2,"s":"a","list":[1,null]}"#);
}

#[test]
fn a_program_that_returns_nothing_gives_null() {
    assert_eq!(run_alone("let x = 1;").value(), "null");
    assert_eq!(run_alone("return undefined;").value(), "null");
    assert_eq!(run_alone("").value(), "null");
}

#[test]
fn a_returned_string_is_json_text() {
    assert_eq!(run_alone("return 'a\"b\\n';").value(), r#""a\"b\n""#);
}

#[test]
fn returning_a_function_is_invalid() {
    let run = run_alone("return function f() {};");
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(
        error.contains("function") && error.contains("no JSON form"),
        "{error}"
    );
}

#[test]
fn returning_a_symbol_is_invalid() {
    let (kind, _) = run_alone("return Symbol('s');").failure();
    assert_eq!(kind, FailureKind::Invalid);
}

#[test]
fn returning_a_bigint_is_invalid() {
    let run = run_alone("return 10n ** 30n;");
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(
        error.contains("cannot be serialised") && error.contains("BigInt"),
        "{error}"
    );
}

#[test]
fn returning_a_cyclic_object_is_invalid() {
    let run = run_alone("const a = { name: 'a' };\na.self = a;\nreturn a;");
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(
        error.contains("cannot be serialised") && error.contains("circular"),
        "{error}"
    );
}

#[test]
fn a_syntax_error_names_its_line_and_column_in_the_program() {
    let run = run_alone("const a = 1;\nconst b = ;\nreturn a;");
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.starts_with("SyntaxError: "), "{error}");
    assert!(error.ends_with(" at line 2, column 11"), "{error}");
}

#[test]
fn a_syntax_error_on_the_first_line_is_placed_without_the_wrapper() {
    let (_, error) = run_alone("let x = ;").failure();
    assert!(error.ends_with(" at line 1, column 9"), "{error}");
}

#[test]
fn columns_count_characters_not_bytes() {
    // Two two-byte characters before the error.
    let (_, error) = run_alone("let s = 'éé'; let x = ;").failure();
    assert!(error.ends_with(" at line 1, column 23"), "{error}");
}

#[test]
fn a_program_that_ends_too_early_is_placed_at_its_end() {
    let (kind, error) = run_alone("const x = 1;\n  return x +").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.ends_with(" at line 2, column 13"), "{error}");
}

#[test]
fn an_uncaught_exception_names_its_line_and_column() {
    let (kind, error) = run_alone("const o = {};\n\n    o.missing.field;").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.starts_with("TypeError: "), "{error}");
    assert!(error.ends_with(" at line 3, column 5"), "{error}");
}

#[test]
fn an_exception_in_a_nested_function_is_placed_where_it_was_thrown() {
    let program = "function inner() {\n  throw new RangeError('too far');\n}\nfunction outer() { inner(); }\nouter();";
    let (_, error) = run_alone(program).failure();
    assert_eq!(error, "RangeError: too far at line 2, column 13");
}

#[test]
fn an_exception_after_an_await_is_placed_too() {
    let program = "await null;\nawait Promise.resolve();\nthrow new Error('late');";
    let (_, error) = run_alone(program).failure();
    assert_eq!(error, "Error: late at line 3, column 11");
}

#[test]
fn a_thrown_non_error_is_invalid_with_its_text_and_where_it_was_thrown() {
    let (kind, error) = run_alone("const x = 1;\n  throw 'boom';").failure();
    assert_eq!(
        (kind, error.as_str()),
        (
            FailureKind::Invalid,
            "uncaught exception: \"boom\" at line 2, column 9"
        )
    );
    let (_, error) = run_alone("await null;\nthrow { code: 7 };").failure();
    assert_eq!(
        error,
        r#"uncaught exception: {"code":7} at line 2, column 7"#
    );
    let (_, error) = run_alone("throw 'boom';").failure();
    assert!(
        error.starts_with("uncaught exception: \"boom\" at line 1, column "),
        "{error}"
    );
}

#[test]
fn a_value_thrown_in_a_function_is_placed_at_its_throw() {
    let program = "function check(n) {\n  if (n > 2)\n    throw 42;\n}\ncheck(1);\ncheck(3);";
    let (_, error) = run_alone(program).failure();
    assert_eq!(error, "uncaught exception: 42 at line 3, column 11");
}

#[test]
fn an_earlier_caught_throw_does_not_take_the_place_of_the_last() {
    let program =
        "try { throw 'first'; } catch {}\nawait null;\ntry { null.x; } catch {}\n\nthrow 'last';";
    let (_, error) = run_alone(program).failure();
    assert_eq!(error, "uncaught exception: \"last\" at line 5, column 7");
}

#[test]
fn a_value_rethrown_by_an_await_is_placed_where_it_entered_the_program() {
    let program = "async function f() {\n  await null;\n  throw 'deep';\n}\nawait f();";
    let (_, error) = run_alone(program).failure();
    assert_eq!(error, "uncaught exception: \"deep\" at line 5, column 7");
}

#[test]
fn a_non_error_thrown_by_a_timer_callback_is_placed_too() {
    let program = "setTimeout(() => {\n  throw 'tick';\n}, 1);\nawait new Promise(() => {});";
    let (_, error) = run_alone(program).failure();
    assert_eq!(error, "uncaught exception: \"tick\" at line 2, column 9");
}

#[test]
fn a_program_cut_short_is_an_unexpected_end_never_a_brace_it_does_not_have() {
    // A program cut off inside a bracket (a model's output at its length
    // limit) names the bracket left open, the innermost; QuickJS itself
    // said "Unexpected token '}'" for `(` and `[`, which read as a stray
    // brace. Brackets in strings and comments do not count.
    for (program, said) in [
        (
            "return (1 +",
            "'(' never closed, opened at line 1, column 8",
        ),
        (
            "if (true) {\n  return 1 +",
            "'{' never closed, opened at line 1, column 11",
        ),
        ("return {", "'{' never closed, opened at line 1, column 8"),
        (
            "return (function () {",
            "'{' never closed, opened at line 1, column 21",
        ),
        (
            "return (1 + // a comment )",
            "'(' never closed, opened at line 1, column 8",
        ),
        (
            "const a = [1,\n  ']',",
            "'[' never closed, opened at line 1, column 11",
        ),
        (
            "return Math.max(1, 2",
            "'(' never closed, opened at line 1, column 16",
        ),
        ("const x = 1;\nreturn x +", "at line 2, column 11"),
    ] {
        let (kind, error) = run_alone(program).failure();
        assert_eq!(kind, FailureKind::Invalid, "{program}");
        assert_eq!(
            error,
            format!(
                "SyntaxError: unexpected end of the program{}{said}",
                if said.starts_with("at") { " " } else { ": " }
            ),
            "{program:?}"
        );
    }
}

#[test]
fn a_stray_closing_brace_is_named_as_the_programs_not_placed_at_its_end() {
    for (program, at) in [
        ("}", "line 1, column 1"),
        ("let x = 1;\n}", "line 2, column 1"),
        ("if (1) { } }", "line 1, column 12"),
        ("return 1 }\n", "line 1, column 10"),
    ] {
        let (kind, error) = run_alone(program).failure();
        assert_eq!(kind, FailureKind::Invalid, "{program:?}");
        assert_eq!(
            error,
            format!("SyntaxError: a '}}' that closes nothing of the program's at {at}"),
            "{program:?}"
        );
    }
}

/// QuickJS's `not a function` names nothing, and an `await` in a function
/// that is not async was reported as the token after it (`expecting ';'`).
#[test]
fn a_call_of_what_is_not_a_function_and_a_misplaced_await_are_named() {
    for (program, said) in [
        (
            "const o = {};\no.method();",
            "TypeError: o.method is not a function at line 2, column 3",
        ),
        (
            "const x = 5; x.toUpperCase();",
            "TypeError: x.toUpperCase is not a function at line 1, column 16",
        ),
        // A builtin handed what is not a function says so itself: `map`
        // is a function, and is not named as the culprit.
        (
            "const xs = [1];\nxs.map(5);",
            "TypeError: not a function at line 2, column 4",
        ),
        (
            "const xs = [1];\nxs.forEach((x) => {\n  const r = await f(x);\n});",
            "SyntaxError: await is only valid in an async function, and the function around this \
             one is not async at line 3, column 13",
        ),
    ] {
        let (kind, error) = run_alone(program).failure();
        assert_eq!(kind, FailureKind::Invalid, "{program:?}");
        assert_eq!(error, said, "{program:?}");
    }
}

#[test]
fn places_are_right_with_cr_only_and_crlf_line_endings() {
    let cr = "let a = 1;\rlet b = 2;\r\rlet c = 3;\rlet e = ;\r";
    let (_, error) = run_alone(cr).failure();
    assert!(error.ends_with(" at line 5, column 9"), "{error}");
    let crlf = cr.replace('\r', "\r\n");
    let (_, error) = run_alone(&crlf).failure();
    assert!(error.ends_with(" at line 5, column 9"), "{error}");
    // A CR inside a block comment ends a line too.
    let (_, error) = run_alone("/* one\rtwo */\rnull.x;").failure();
    assert!(error.ends_with(" at line 3, column 1"), "{error}");
    // Runtime errors as well as syntax errors.
    let (_, error) = run_alone("const o = null;\r\r  o.x;").failure();
    let (_, same_with_lf) = run_alone("const o = null;\n\n  o.x;").failure();
    assert!(
        error.starts_with("TypeError: ") && error.contains(" at line 3, column "),
        "{error}"
    );
    assert_eq!(error, same_with_lf);
}

#[test]
fn turning_a_lone_cr_into_an_lf_changes_no_value() {
    // Template literals normalise CR and CRLF to LF, cooked and raw alike.
    let run = run_alone("return [`a\rb\r\nc`, String.raw`a\rb`, 'x\\\ry', 1 +\r2];");
    assert_eq!(run.value(), r#"["a\nb\nc","a\nb","xy",3]"#);
}

#[test]
fn line_and_paragraph_separators_in_strings_do_not_move_places() {
    let program = "const s = 'a\u{2028}b\u{2029}c';\nconst t = `\u{2028}`;\nlet e = ;";
    let (_, error) = run_alone(program).failure();
    assert!(error.ends_with(" at line 3, column 9"), "{error}");
    let run = run_alone("return 'a\u{2028}b'.length;");
    assert_eq!(run.value(), "3");
}

#[test]
fn an_unhandled_rejection_of_the_program_is_its_failure() {
    let (kind, error) = run_alone("await Promise.reject(new TypeError('nope'));").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.starts_with("TypeError: nope"), "{error}");
}

#[test]
fn async_functions_resume_at_each_await_and_those_left_waiting_are_freed() {
    // One function resumes each of an async function's awaits, fulfilled
    // or rejected, taken again by the next await while it is alive; the
    // function's state names it without holding it. The evaluator is
    // dropped after the run, and QuickJS aborts on anything left alive
    // (a resume function counted once too often is). The order is Node's.
    let program = "const order = [];
async function waits(label, n) {
  for (let i = 0; i < n; i++) order.push(label + (await i));
  try { await Promise.reject(new Error('no')); } catch (e) { order.push(label + ':' + e.message); }
  await new Promise(() => {});
  order.push('never');
}
waits('a', 3); waits('b', 2);
async function forever() { const p = new Promise(() => {}); globalThis.keep = p; await p; }
forever();
async function throws() { await 1; throw new TypeError('t'); }
let caught; try { await throws(); } catch (e) { caught = e.message }
for (let i = 0; i < 5; i++) await null;
return { order, caught };";
    assert_eq!(
        run_alone(program).value(),
        r#"{"order":["a0","b0","a1","b1","a2","b:no","a:no"],"caught":"t"}"#
    );
}

#[test]
fn a_never_settling_await_is_invalid_instead_of_hanging() {
    let (kind, error) = run_alone("await new Promise(() => {});\nreturn 1;").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.contains("can never finish"), "{error}");
}

#[test]
fn a_program_stuck_after_its_calls_were_answered_is_invalid() {
    let tools = Tools::new().echo("ping");
    let program = "await ping('a');\nawait new Promise(() => {});";
    let run = run(program, &[("ping", "")], tools);
    assert_eq!(run.failure().0, FailureKind::Invalid);
    assert_eq!(run.tools.answered.len(), 1);
}

#[test]
fn a_program_that_closes_its_wrapper_is_invalid_not_a_crash() {
    let (kind, _) = run_alone("}); (function () {").failure();
    assert_eq!(kind, FailureKind::Invalid);
    let (kind, _) = run_alone("return 1 }); 42; ({").failure();
    assert_eq!(kind, FailureKind::Invalid);
}

#[test]
fn a_program_with_a_nul_character_is_invalid() {
    let (kind, error) = run_alone("return 1;\0").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.contains("NUL"), "{error}");
}

#[test]
fn a_program_ending_in_a_line_comment_still_compiles() {
    assert_eq!(run_alone("return 5 // the answer").value(), "5");
}

#[test]
fn the_program_is_sloppy_mode_like_a_classic_script() {
    assert_eq!(
        run_alone("undeclared = 3;\nreturn undeclared;").value(),
        "3"
    );
}

#[test]
fn an_evaluator_runs_only_one_program() {
    let mut evaluator = wasmwire_guest::Evaluator::new().unwrap();
    let start = crate::fake::start("return 1;", &[]);
    let first = evaluator.run(&start, &mut Tools::new(), std::io::sink());
    assert!(first.ok);
    let second = evaluator.run(&start, &mut Tools::new(), std::io::sink());
    assert_eq!(second.kind, Some(FailureKind::Invalid));
}

/// An error wrapped around another (`{ cause }`) kept only its own message:
/// a ToolError's kind and message were lost. And a thrown DOMException read
/// as a non-error ("uncaught exception: AbortError: ...").
#[test]
fn an_uncaught_errors_causes_are_told_and_a_dom_exception_is_an_error() {
    let program =
        "try { await nf('db9'); }\ncatch (e) { throw new Error('lookup failed', { cause: e }); }";
    let (kind, error) = crate::fake::run(
        program,
        &[("nf", "nf(host)")],
        crate::fake::Tools::new().failing("nf", FailureKind::NotFound, "no such host db9"),
    )
    .failure();
    assert_eq!(kind, FailureKind::Invalid);
    // (QuickJS places a `new Error(...)` at the end of its arguments.)
    assert!(
        error.starts_with(
            "Error: lookup failed (caused by ToolError from nf (not_found): no such host db9) \
             at line 2, column "
        ),
        "{error}"
    );
    let (_, error) = run_alone(
        "const a = new Error('a', { cause: 'why' });\nthrow new TypeError('b', { cause: a });",
    )
    .failure();
    assert!(
        error.starts_with("TypeError: b (caused by Error: a; caused by why) at line 2, column "),
        "{error}"
    );
    let (kind, error) = run_alone("throw new DOMException('stopped', 'AbortError');").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.starts_with("AbortError: stopped"), "{error}");
}

/// What an uncaught error carries besides its message is told: its own
/// enumerable fields (an `HttpError` subclass's `status`), and every reason
/// of an AggregateError (`Promise.any` over calls that all failed), which
/// read "AggregateError" with every tool's kind and message lost. A thrown
/// string is quoted, so it does not run on into its place.
#[test]
fn an_uncaught_errors_fields_and_aggregated_reasons_are_told() {
    let (_, error) = run_alone(
        "class HttpError extends Error { constructor(s) { super('bad'); this.status = s } }\n\
         throw new HttpError(404);",
    )
    .failure();
    // Placed where it was made, not at its constructor's `super`.
    assert!(
        error.starts_with("Error: bad { status: 404 } at line 2, column "),
        "{error}"
    );
    let (_, error) =
        run_alone("throw Object.assign(new Error('main'), { details: { a: 1 } });").failure();
    assert!(
        error.starts_with("Error: main { details: { a: 1 } } at line 1"),
        "{error}"
    );
    // Shown as the console shows them: a BigInt, a getter never run, a
    // cycle; the name and message a custom error sets are not said twice.
    let (_, error) = run_alone(
        "const e = Object.assign(new Error('big'), { n: 1n });\n\
         Object.defineProperty(e, 'spin', { get() { for (;;) {} }, enumerable: true });\n\
         e.self = e; throw e;",
    )
    .failure();
    assert!(
        error.starts_with("Error: big { n: 1n, spin: [Getter], self: [Circular *1] } at line 1"),
        "{error}"
    );
    let (_, error) = run_alone(
        "class HttpError extends Error { constructor(m, s) { super(); this.name = 'HttpError'; \
         this.message = m; this.status = s } }\nthrow new HttpError('not found', 404);",
    )
    .failure();
    assert!(
        error.starts_with("HttpError: not found { status: 404 } at line 2"),
        "{error}"
    );

    let program = "await Promise.any([nf('a'), nf('b')]);";
    let (kind, error) = crate::fake::run(
        program,
        &[("nf", "nf(host)")],
        crate::fake::Tools::new().failing("nf", FailureKind::NotFound, "no such host"),
    )
    .failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(
        error.starts_with(
            "AggregateError: All promises were rejected (2 errors: ToolError from nf \
             (not_found): no such host; ToolError from nf (not_found): no such host)"
        ),
        "{error}"
    );
    let (_, error) = run_alone(
        "throw new AggregateError([1, 2, 3, 4, 5, 6].map((i) => new Error('e' + i)), 'six');",
    )
    .failure();
    assert!(
        error.starts_with(
            "AggregateError: six (6 errors: Error: e1; Error: e2; Error: e3; Error: e4; and 2 \
             more) at line 1"
        ),
        "{error}"
    );

    let (_, error) = run_alone("throw 'said \"no\"';").failure();
    assert!(
        error.starts_with(r#"uncaught exception: "said \"no\"" at line 1, column 7"#),
        "{error}"
    );
}

/// A value with no JSON text is named with its article, and an object's
/// `toJSON` is named as what gave nothing.
#[test]
fn a_return_value_with_no_json_form_says_why() {
    for (program, said) in [
        (
            "return { toJSON() { return undefined } };",
            "the program returned an object whose toJSON gave no JSON value",
        ),
        (
            "return () => 1;",
            "the program returned a function, which has no JSON form",
        ),
        (
            "return Symbol('s');",
            "the program returned a symbol, which has no JSON form",
        ),
    ] {
        let (kind, error) = run_alone(program).failure();
        assert_eq!(kind, FailureKind::Invalid, "{program}");
        assert!(error.starts_with(said), "{program}: {error}");
    }
}

/// A value JSON.stringify throws for says what to do about it: a BigInt
/// is converted first, a value that holds itself is copied.
#[test]
fn a_return_value_json_throws_for_says_what_to_do() {
    for (program, said) in [
        ("return { total: 12n };", "String(n)"),
        ("const a = { id: 1 }; a.self = a; return a;", "holds itself"),
    ] {
        let (kind, error) = run_alone(program).failure();
        assert_eq!(kind, FailureKind::Invalid, "{program}");
        assert!(
            error.starts_with(
                "the program's return value cannot be serialised as JSON: TypeError: "
            ),
            "{program}: {error}"
        );
        assert!(error.contains(said), "{program}: {error}");
    }
}

/// A cause chain that comes back on itself is told once.
#[test]
fn a_cyclic_cause_chain_is_told_once() {
    let (_, error) = run_alone(
        "const a = new Error('a'), b = new Error('b');\na.cause = b; b.cause = a;\nthrow a;",
    )
    .failure();
    assert!(
        error.starts_with("Error: a (caused by Error: b) at line "),
        "{error}"
    );
}

/// A statement placed on the program's first line is given the column it
/// has on any other line, and so is a frame of `error.stack`. The wrapper's
/// head once shared the first line: some of QuickJS's first-line columns
/// are counted from 0 and others from 1, and `throw null` on line 1 read
/// "column 6" where on line 2 it read "column 7".
#[test]
fn the_first_line_is_placed_as_every_other_line() {
    for program in [
        "throw null;",
        "throw undefined;",
        "await Promise.reject(null);",
        "const x = 5; x.toUpperCase();",
        "try { null.x } catch (e) { throw e }",
        "const o = null; o.boom;",
        "let a = 1; throw new Error('a');",
        "let x = ;",
        "let é = 1; ({}).f();",
        "return [1].map((x) => x.y.z);",
    ] {
        let (_, first) = run_alone(program).failure();
        let (_, second) = run_alone(&format!("\n{program}")).failure();
        let (Some((_, at_first)), Some((_, at_second))) = (
            first.rsplit_once(" at line 1, "),
            second.rsplit_once(" at line 2, "),
        ) else {
            panic!("{program:?}: no place in {first:?} or {second:?}");
        };
        assert_eq!(at_first, at_second, "{program:?}");
    }
    // What the program itself reads in a stack.
    let stack = |program: &str| {
        let run = run_alone(program);
        assert!(run.result.ok, "{:?}", run.result);
        run.result.value.clone()
    };
    assert_eq!(
        stack("try { null.x } catch (e) { return e.stack }"),
        "\"TypeError: cannot read property 'x' of null\\n    at <anonymous> (<program>:1:7)\""
    );
    assert_eq!(
        stack("\ntry { null.x } catch (e) { return e.stack }"),
        "\"TypeError: cannot read property 'x' of null\\n    at <anonymous> (<program>:2:7)\""
    );
}
