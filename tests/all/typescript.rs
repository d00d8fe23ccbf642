//! TypeScript programs and programs without `return`, prepared by
//! `wasmwire::source` and run in the real guest, with the child's error
//! places mapped back to the program's own.

use serde_json::json;
use wasmwire::FailureKind;
use wasmwire::source::{Language, Prepared, prepare};
use wasmwire_tests::{assert_failed, run, value};

/// Prepares `program` in `language` and runs what is sent; the outcome's
/// error text is mapped back to the program's places.
async fn run_prepared(program: &str, language: Language) -> (wasmwire::Outcome, Prepared) {
    let prepared = prepare(program, language).expect("the program prepares");
    let mut outcome = run(&prepared.text).await;
    outcome.result.error = prepared.map.rewrite_positions(&outcome.result.error);
    (outcome, prepared)
}

#[tokio::test]
async fn a_typescript_program_with_every_construct_returns_its_value() {
    let program = r#"import type { Doc } from "./docs";
declare function echo<T>(x: T): Promise<T>;
interface Host { name: string; errors: number }
type Pair<A, B> = [A, B];
enum Level { Info, Warn = 5, Error }
function first<T>(items: T[]): T | undefined { return items[0]; }
const hosts: Host[] = [{ name: "db1", errors: 3 }, { name: "db2", errors: 0 }];
const got = (await echo({ hosts })) as { hosts: Host[] };
const pair: Pair<string, number> = [first(got.hosts)!.name, Level.Error];
const checked = { level: Level.Warn } satisfies { level: Level };
let later!: number;
later = hosts.filter((h: Host): boolean => h.errors > 1 && h.errors < 10).length;
return { pair, level: checked.level, later, name: Level[Level.Error] };
"#;
    let (outcome, _) = run_prepared(program, Language::TypeScript).await;
    assert_eq!(
        value(&outcome),
        json!({"pair": ["db1", 6], "level": 5, "later": 1, "name": "Error"})
    );
}

#[tokio::test]
async fn a_typescript_program_stripped_in_place_throws_on_its_own_line() {
    let program = "interface A { a: number }\n\
                   const a: A = { a: 1 };\n\
                   const b = a as A;\n\
                   if (b.a === 1) throw new Error('boom');\n\
                   return b;";
    let (outcome, prepared) = run_prepared(program, Language::TypeScript).await;
    assert!(prepared.map.is_identity());
    assert_failed(&outcome, FailureKind::Invalid, "boom");
    assert!(
        outcome.result.error.contains("line 4, column 26"),
        "{}",
        outcome.result.error
    );
}

#[tokio::test]
async fn a_typescript_program_with_an_enum_throws_on_its_own_line() {
    let program = "enum Color { Red, Green }\n\
                   const c: Color = Color.Green;\n\
                   \n\
                   if (c === Color.Green) throw new Error('green');\n\
                   return c;";
    let (outcome, prepared) = run_prepared(program, Language::TypeScript).await;
    assert!(!prepared.map.is_identity());
    assert_failed(&outcome, FailureKind::Invalid, "green");
    assert!(
        outcome.result.error.contains("line 4, column "),
        "{}",
        outcome.result.error
    );
}

#[tokio::test]
async fn an_awaited_call_alone_returns_its_value() {
    for language in [Language::JavaScript, Language::TypeScript] {
        let (outcome, _) = run_prepared("await delay(1, {got: [1, 'two']})", language).await;
        assert_eq!(value(&outcome), json!({"got": [1, "two"]}), "{language:?}");
    }
}

#[tokio::test]
async fn an_error_after_the_returned_expression_is_on_its_own_column() {
    // `__wasmwire_last = ` is put before `missing(a)`; the ReferenceError's
    // place is the program's column 3, not eighteen to the right.
    let (outcome, prepared) =
        run_prepared("const a = 1;\n  missing(a)", Language::JavaScript).await;
    assert!(
        prepared
            .text
            .starts_with("const a = 1;\n  __wasmwire_last = missing(a)\n"),
        "{}",
        prepared.text
    );
    assert_failed(&outcome, FailureKind::Invalid, "missing");
    assert!(
        outcome.result.error.contains("line 2, column 3"),
        "{}",
        outcome.result.error
    );
}

#[tokio::test]
async fn a_typescript_syntax_error_is_refused_with_the_programs_place() {
    let error = prepare("const a = 1;\nconst b: = 2;", Language::TypeScript).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("TypeScript syntax error at line 2, column 10: "),
        "{error}"
    );
}

/// An error in the returned last expression is placed on its own line
/// through `Sandbox::run`: QuickJS places errors by statement and keeps no
/// place for a `return` statement (an error in `return null.boom` would
/// be put at line 1, column 1), so the value is kept by an assignment.
#[tokio::test]
async fn an_error_in_the_returned_last_expression_is_on_its_own_line() {
    let outcome = wasmwire_tests::run("const x = 1;\nnull.boom").await;
    assert_failed(&outcome, FailureKind::Invalid, "line 2, column 1");
    // After a call, QuickJS places it at the last call in the statement.
    let outcome = wasmwire_tests::run("const x = 1;\n  (await echo(null)).boom").await;
    assert_failed(&outcome, FailureKind::Invalid, "line 2, column 15");
}
