//! Memory and stack limits end as `limit`.

use wire::{FailureKind, StartBudget};

use crate::fake::{Tools, run_alone, run_start, start};

const MIB: u64 = 1 << 20;

fn with_memory(program: &str, max_memory: u64) -> crate::fake::Run {
    let mut start = start(program, &[]);
    start.budget = StartBudget {
        max_memory,
        ..StartBudget::default()
    };
    run_start(&start, Tools::new())
}

#[test]
fn a_program_over_its_memory_budget_ends_as_limit() {
    let program = "const keep = [];\nfor (;;) keep.push('x'.repeat(1 << 16) + keep.length);";
    let run = with_memory(program, 32 * MIB);
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Limit);
    assert!(error.starts_with("memory limit: "), "{error}");
}

#[test]
fn exhausting_memory_with_small_objects_ends_as_limit() {
    let program = "const keep = [];\nfor (;;) keep.push({ a: [1, 2, 3], b: 'y' + keep.length });";
    let (kind, error) = with_memory(program, 16 * MIB).failure();
    assert_eq!(kind, FailureKind::Limit);
    assert!(error.starts_with("memory limit: "), "{error}");
}

#[test]
fn throwing_null_without_a_memory_budget_is_an_ordinary_exception() {
    let (kind, error) = run_alone("throw null;").failure();
    assert_eq!(
        (kind, error.as_str()),
        (FailureKind::Invalid, "uncaught exception: null")
    );
}

#[test]
fn the_same_program_within_budget_finishes() {
    let program = "const keep = [];\nfor (let i = 0; i < 64; i++) keep.push('x'.repeat(1 << 16) + i);\nreturn keep.length;";
    assert_eq!(with_memory(program, 64 * MIB).value(), "64");
}

#[test]
fn a_budget_too_small_to_start_is_refused_as_limit() {
    let run = with_memory("return 1;", MIB);
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Limit);
    assert!(error.contains("leaves no room"), "{error}");
}

#[test]
fn deep_recursion_ends_as_limit() {
    let run = run_alone("function down(n) { return down(n + 1) + 1; }\nreturn down(0);");
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Limit);
    assert!(error.starts_with("stack limit: "), "{error}");
    assert!(error.contains(" at line 1, column "), "{error}");
}

#[test]
fn recursion_that_is_caught_lets_the_program_go_on() {
    let program = "function down(n) { return down(n + 1) + 1; }\ntry { down(0); } catch (e) { return e.name; }";
    assert_eq!(run_alone(program).value(), r#""RangeError""#);
}
