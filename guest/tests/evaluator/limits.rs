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
        (
            FailureKind::Invalid,
            "uncaught exception: null at line 1, column 7"
        )
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
    // The program is told what to write instead. (Natively QuickJS's own
    // check, which a `catch` could have stopped, comes first; in the
    // component the guest's guard, which says no `catch` stops it.)
    assert!(error.contains("a loop and a stack of your own"), "{error}");
}

/// QuickJS joins an array that holds itself until the stack runs out
/// (V8 joins the inner one as ""): the ending names that case, which
/// otherwise read as a hint about deep data only.
#[test]
fn an_array_that_holds_itself_is_named_when_its_join_runs_out_of_stack() {
    let run = run_alone("const a = [1, 2];\na.push(a);\nreturn String(a);");
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Limit);
    assert!(error.contains("if an array holds itself"), "{error}");
}

#[test]
fn recursion_that_is_caught_lets_the_program_go_on() {
    let program = "function down(n) { return down(n + 1) + 1; }\ntry { down(0); } catch (e) { return e.name; }";
    assert_eq!(run_alone(program).value(), r#""RangeError""#);
}

#[test]
fn memory_running_out_inside_a_promise_job_ends_as_limit_not_as_stuck() {
    // The chain grows without end; QuickJS rejects a link with out-of-memory
    // instead of failing the job, and the queue drains. Every link is kept:
    // a chain nothing holds may be collected as it grows, in some heap
    // layouts, and then runs until the wall clock (none in these tests),
    // as `for (;;) {}` does.
    let program = "const kept = [];\nfunction again() { const p = Promise.resolve().then(again); kept.push(p); return p; }\nagain(); await new Promise(() => {});";
    // Where memory runs out (inside a job, or in the program's own
    // continuation, where QuickJS throws `null`) moves with the heap's
    // layout; either way it is memory, never a promise that cannot finish.
    let (kind, error) = with_memory(program, 16 * MIB).failure();
    assert_eq!(kind, FailureKind::Limit, "{error}");
    assert!(error.starts_with("memory limit: "), "{error}");
}

#[test]
fn async_functions_left_waiting_forever_are_collected_within_the_budget() {
    // Each function waits on a promise nobody holds, and goes with it: the
    // function that would resume it holds it, and nothing holds that
    // function but the promise. 200,000 of them kept would be far over
    // 16 MiB.
    let program = "let made = 0;
for (let i = 0; i < 200000; i++) { (async () => { await new Promise(() => {}); })(); made++; }
return made;";
    assert_eq!(with_memory(program, 16 * MIB).value(), "200000");
}

#[test]
fn a_promise_nobody_settles_is_still_invalid_when_memory_is_fine() {
    let (kind, error) = with_memory("await new Promise(() => {});", 16 * MIB).failure();
    assert_eq!(kind, FailureKind::Invalid, "{error}");
    assert!(error.contains("can never finish"), "{error}");
}

#[test]
fn quickjs_size_caps_end_as_limit_and_bad_lengths_as_invalid() {
    for program in [
        "return 'x'.repeat(2 ** 30).length;",
        "return new ArrayBuffer(2 ** 31).byteLength;",
        "let s = 'x'; for (;;) s = s + s;",
    ] {
        let (kind, error) = with_memory(program, 64 * MIB).failure();
        assert_eq!(kind, FailureKind::Limit, "{program}: {error}");
        assert!(
            error.starts_with("size limit: ") || error.starts_with("memory limit: "),
            "{error}"
        );
    }
    for program in ["return 'x'.repeat(-1);", "return new ArrayBuffer(-1);"] {
        let (kind, error) = with_memory(program, 64 * MIB).failure();
        assert_eq!(kind, FailureKind::Invalid, "{program}: {error}");
    }
}

#[test]
fn a_programs_own_null_or_undefined_under_a_budget_is_invalid() {
    // A thrown value is placed where it was thrown; a rejection nothing
    // threw has no place.
    for (program, shown) in [
        ("throw null;", "null at line 1, column 7"),
        ("throw undefined;", "undefined at line 1, column 7"),
        ("return Promise.reject(null);", "null"),
        ("await Promise.reject(null);", "null at line 1, column 22"),
        ("return Promise.reject(undefined);", "undefined"),
    ] {
        let (kind, error) = with_memory(program, 64 * MIB).failure();
        assert_eq!(
            (kind, error.as_str()),
            (
                FailureKind::Invalid,
                format!("uncaught exception: {shown}").as_str()
            ),
            "{program}"
        );
    }
}

#[test]
fn a_null_rejection_left_unhandled_is_not_mistaken_for_memory() {
    // An unhandled `Promise.reject(null)`, then a program that can never
    // finish: stuck, not "out of memory inside a promise job".
    let program = "Promise.reject(null); await new Promise(() => {});";
    let (kind, error) = with_memory(program, 64 * MIB).failure();
    assert_eq!(kind, FailureKind::Invalid, "{error}");
    assert!(error.contains("can never finish"), "{error}");
}

#[test]
fn memory_running_out_in_a_function_whose_locals_are_then_freed_ends_as_limit() {
    // QuickJS throws null here (no memory left for an error object), and
    // the array is freed as the error unwinds out of `fill`.
    let program = "function fill() { const a = [];\nfor (;;) a.push({ i: a.length, s: 'item ' + a.length }); }\nfill();";
    for max_memory in [16 * MIB, 32 * MIB] {
        let (kind, error) = with_memory(program, max_memory).failure();
        assert_eq!(kind, FailureKind::Limit, "{max_memory}: {error}");
        assert!(error.starts_with("memory limit: "), "{error}");
    }
}

#[test]
fn a_regexp_out_of_memory_ends_as_limit() {
    let program = r#"return /(?:a|b|ab)*c/.test("ab".repeat(1e6));"#;
    let (kind, error) = with_memory(program, 16 * MIB).failure();
    assert_eq!(kind, FailureKind::Limit, "{error}");
    assert!(
        error.starts_with("memory limit: InternalError: out of memory in regexp execution"),
        "{error}"
    );
}

/// One allocation past the limit throws QuickJS's "out of memory" where the
/// program asked for it, before any stop: the Result names that place and
/// also gives the heap's figures (what was asked, of how much), which the
/// error alone left out (a probe's program read only "memory limit:
/// InternalError: out of memory").
#[test]
fn memory_running_out_at_one_allocation_says_where_and_how_much() {
    let program = "return new Array(2e7).fill(0).length;";
    let (kind, error) = with_memory(program, 16 * MIB).failure();
    assert_eq!(kind, FailureKind::Limit, "{error}");
    assert!(
        error.starts_with("memory limit: InternalError: out of memory at line 1, column "),
        "{error}"
    );
    assert!(
        error.contains("(the program's heap could not grow by ")
            && error
                .contains("that max_memory leaves it were in use; keep less in memory at once)"),
        "{error}"
    );
}

#[test]
fn quickjs_size_caps_end_as_limit() {
    for (program, headline) in [
        (
            "return 2n ** 100000000n;",
            "RangeError: BigInt is too large",
        ),
        (
            "return Math.max(...new Array(1e6).fill(1));",
            "RangeError: too many arguments in function call",
        ),
        (
            "return Math.max.apply(null, new Array(1e6).fill(1));",
            "RangeError: too many arguments in function call",
        ),
        (
            "return new RegExp('(a)'.repeat(300)).source;",
            "SyntaxError: too many captures",
        ),
        (
            "return 'x'.repeat(2 ** 30);",
            "RangeError: invalid string length",
        ),
    ] {
        let (kind, error) = run_alone(program).failure();
        assert_eq!(kind, FailureKind::Limit, "{program}: {error}");
        assert!(
            error.starts_with(&format!("size limit: {headline}")),
            "{program}: {error}"
        );
        // A spread of too many values says what to write instead.
        assert_eq!(
            headline.contains("too many arguments"),
            error
                .contains("(a spread passes each value as an argument: for many values use a loop"),
            "{program}: {error}"
        );
    }
}

#[test]
fn json_text_larger_than_memory_ends_as_limit() {
    let program =
        "const s = 'x'.repeat(1 << 20);\nreturn JSON.stringify(new Array(2048).fill(s)).length;";
    let (kind, error) = with_memory(program, 64 * MIB).failure();
    assert_eq!(kind, FailureKind::Limit, "{error}");
    assert!(error.starts_with("memory limit: "), "{error}");
}

#[test]
fn bad_values_that_resemble_caps_stay_invalid() {
    for program in [
        "return new Array(-1);",
        "return 'x'.repeat(-1);",
        "throw new RangeError('too many');",
        "return BigInt(1.5);",
    ] {
        let (kind, error) = run_alone(program).failure();
        assert_eq!(kind, FailureKind::Invalid, "{program}: {error}");
    }
}

/// A tool's value too large to build within the memory limit fails the call
/// `limit`. QuickJS throws `null` when it runs out entirely, which the
/// parse took for "not JSON": the program got the JSON text as a string
/// (`typeof rows` "string", `rows.length` its byte count) and the run ended
/// `ok`. A value that is not JSON is still the string it is.
#[test]
fn a_tool_value_too_large_for_memory_fails_the_call_and_is_never_a_string() {
    let rows: Vec<String> = (0..200_000)
        .map(|i| format!(r#"{{"i":{i},"s":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}"#))
        .collect();
    let big = format!("[{}]", rows.join(","));
    let program = "try { const rows = await big({}); return typeof rows } catch (e) { return [e.kind, e.message] }";
    let mut large = start(program, &[("big", "big(args)")]);
    large.budget = StartBudget {
        max_memory: 16 * MIB,
        ..StartBudget::default()
    };
    let run = run_start(&large, Tools::new().tool("big", move |_| Ok(big.clone())));
    let value: serde_json::Value = serde_json::from_str(run.value()).unwrap();
    assert_eq!(value[0], "limit", "{value}");
    let message = value[1].as_str().unwrap();
    assert!(
        message.starts_with("the tool's value (")
            && message.contains("bytes of JSON) could not be built"),
        "{message}"
    );
    // Small and not JSON: the text, as before.
    let mut small = start("return typeof (await raw({}))", &[("raw", "raw(args)")]);
    small.budget.max_memory = 64 * MIB;
    let run = run_start(
        &small,
        Tools::new().tool("raw", |_| Ok("not json".to_owned())),
    );
    assert_eq!(run.value(), r#""string""#);
}

/// QuickJS's out-of-memory error is an exception a program could catch:
/// these ended `ok`, the last with its call sent after memory ran out. The
/// heap's first refusal now ends the run `limit`, caught or not, and the
/// call is never made.
#[test]
fn running_out_of_memory_ends_the_run_whatever_catches_it() {
    let fill = "const a = []; for (;;) a.push({ i: a.length, s: 'item ' + a.length });";
    for program in [
        format!("try {{ {fill} }} catch (e) {{}} return 'went on'"),
        format!("try {{ {fill} }} catch (e) {{ return String(e) }}"),
        format!("try {{ {fill} }} catch (e) {{}} return await echo('went on')"),
    ] {
        let mut start = start(&program, &[("echo", "echo(args)")]);
        start.budget.max_memory = 16 * MIB;
        let run = run_start(
            &start,
            Tools::new().tool("echo", |args| Ok(args.to_owned())),
        );
        let (kind, error) = run.failure();
        assert_eq!(kind, FailureKind::Limit, "{program}: {error}");
        assert!(
            error.starts_with("memory limit: the program's heap could not grow by "),
            "{error}"
        );
        assert_eq!(run.result.calls, 0, "{program}");
    }
}

/// QuickJS collects cycles once its heap has grown half as much again
/// since the last collection, which with a live set past two thirds of
/// the limit is beyond it: cyclic garbage beside such a set was refused
/// (`limit` at line 3) where a collection would have freed it. The heap
/// now moves QuickJS's next collection under the limit.
#[test]
fn cyclic_garbage_beside_a_large_live_set_is_collected_before_the_limit() {
    for live in [100, 115, 125] {
        let program = format!(
            "const live = []; for (let i = 0; i < {live}; i++) live.push(new Uint8Array(100000));\n\
             let made = 0;\n\
             for (let i = 0; i < 100; i++) {{ const a = {{ buf: new Uint8Array(1 << 19) }}; a.self = a; made++; }}\n\
             return [live.length, made];"
        );
        let run = with_memory(&program, 16 * MIB);
        assert_eq!(run.value(), format!("[{live},100]"), "{live}");
    }
}

/// QuickJS cuts a large block it built piece by piece (a string's buffer)
/// to what it holds: no growth, so nothing the limit may refuse.
#[test]
fn a_block_given_back_in_part_under_a_memory_budget_is_not_refused() {
    let program = "const parts = [];\nfor (let i = 0; i < 100000; i++) parts.push(i);\nreturn parts.join(',').length;";
    assert_eq!(with_memory(program, 64 * MIB).value(), "588889");
}
