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
    let (kind, error) = run_alone("if (true) {\n  return 1 +").failure();
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
fn a_thrown_non_error_is_invalid_with_its_text() {
    let (kind, error) = run_alone("throw 'boom';").failure();
    assert_eq!(
        (kind, error.as_str()),
        (FailureKind::Invalid, "uncaught exception: boom")
    );
    let (_, error) = run_alone("throw { code: 7 };").failure();
    assert_eq!(error, r#"uncaught exception: {"code":7}"#);
}

#[test]
fn an_unhandled_rejection_of_the_program_is_its_failure() {
    let (kind, error) = run_alone("await Promise.reject(new TypeError('nope'));").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.starts_with("TypeError: nope"), "{error}");
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
