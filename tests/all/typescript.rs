//! TypeScript programs and programs without `return`, prepared by
//! `wasmwire::source` and run in the real guest, with the child's error
//! places mapped back to the program's own.

use serde_json::json;
use wasmwire::FailureKind;
use wasmwire::source::{Language, Prepared, prepare};
use wasmwire_tests::{assert_failed, run, run_in, value};

/// Runs `program` in `language` (the Sandbox prepares it, and the child
/// names places as the program's own), and what it is prepared into.
async fn run_prepared(program: &str, language: Language) -> (wasmwire::Outcome, Prepared) {
    let prepared = prepare(program, language).expect("the program prepares");
    (run_in(program, language).await, prepared)
}

#[tokio::test]
async fn a_typescript_program_starting_with_a_byte_order_mark_runs() {
    // swc drops the mark from its output: each such program failed
    // "the type stripper moved a top-level return".
    for (program, expected) in [
        ("\u{FEFF}1", json!(1)),
        ("\u{FEFF}const a: number = 2;\na", json!(2)),
        ("\u{FEFF}return { n: 3 as number }", json!({"n": 3})),
    ] {
        let (outcome, _) = run_prepared(program, Language::TypeScript).await;
        assert_eq!(value(&outcome), expected, "{program:?}");
    }
    let (outcome, _) = run_prepared("\u{FEFF}throw new Error('x')", Language::TypeScript).await;
    // The Sandbox takes the mark off, as an editor does not show it:
    // `Error` is the 11th column.
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        "Error: x at line 1, column 11",
    );
}

#[tokio::test]
async fn an_empty_export_that_makes_a_file_a_module_is_blanked() {
    // `export {};` was refused: "unsupported keyword: export".
    let (outcome, _) = run_prepared(
        "export {};\nconst n: number = await echo(4);\nn + 1",
        Language::TypeScript,
    )
    .await;
    assert_eq!(value(&outcome), json!(5));
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

/// A last `{ ... }` that reads as an object literal is returned, as
/// Node's REPL gives it: it was a block (`{ total, count }` returned
/// `null`) or a SyntaxError (`{ total: total, avg: 2 }`, "expecting ';'").
#[tokio::test]
async fn a_last_object_in_braces_is_returned_as_a_repl_gives_it() {
    for language in [Language::JavaScript, Language::TypeScript] {
        let (outcome, _) = run_prepared(
            "const items = [1, 2, 3]\nconst total = items.reduce((a, b) => a + b, 0)\n\
             const count = items.length\n{ total, count }\n",
            language,
        )
        .await;
        assert_eq!(
            value(&outcome),
            json!({"total": 6, "count": 3}),
            "{language:?}"
        );
        let (outcome, _) =
            run_prepared("const total = 6;\n{ total: total, avg: 2 };", language).await;
        assert_eq!(
            value(&outcome),
            json!({"total": 6, "avg": 2}),
            "{language:?}"
        );
        // A real block is still one, and answers as `eval` does: `x++`
        // gives 1.
        let (outcome, _) = run_prepared("let x = 1;\n{ x++; }", language).await;
        assert_eq!(value(&outcome), json!(1), "{language:?}");
        // An error in the object is placed in the program's own columns.
        let (outcome, _) = run_prepared("let a = 1\n  { a, b: missing(a) }", language).await;
        assert_failed(&outcome, FailureKind::Invalid, "missing");
        assert!(
            outcome.result.error.contains("line 2, column 11"),
            "{language:?}: {}",
            outcome.result.error
        );
    }
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

/// A program that ends in a `try` (or an `if`, or a block) whose branches
/// end in expressions answers as `eval` would, with the last expression of
/// the branch that ran: a model's `try { await f() } catch (e) { e.kind }`
/// answered `null` (it was told to `return` the value, since an assignment
/// put before each branch's expression would have moved the places of
/// that line in a stack the program reads; the child now maps them back).
/// A branch that ends in a sequence (`a, b`) is still only told.
#[tokio::test]
async fn a_program_ending_in_a_try_whose_branches_end_in_expressions_answers_the_one_that_ran() {
    for (program, answer) in [
        ("try { await echo(4) } catch (e) { e.kind }", json!(4)),
        (
            "try { await fail('transient', 'x') } catch (e) { e.kind }",
            json!("transient"),
        ),
        ("if (1 > 2) { 'a' } else { 'b' }", json!("b")),
        ("let n = 1;\n{ n += 1; n * 10 }", json!(20)),
        ("if (1 > 2) { 'a' }", json!(null)),
    ] {
        let outcome = run(program).await;
        assert_eq!(value(&outcome), answer, "{program}");
        assert!(
            !outcome.console.contains("answered null"),
            "{program}: {:?}",
            outcome.console
        );
    }
    // The catch's own stack names the program's places.
    let outcome = run("try { null.x } catch (e) { e.stack }").await;
    assert_eq!(
        value(&outcome),
        json!(
            "TypeError: Cannot read properties of null (reading 'x')\n    at <anonymous> (<program>:1:7)"
        )
    );
    let outcome = run("if (1 > 2) { 'a', 'b' } else { 'c', 'd' }").await;
    assert_eq!(value(&outcome), json!(null));
    assert!(
        outcome
            .console
            .contains("warn: the program ended in an `if` and answered null"),
        "{:?}",
        outcome.console
    );
}

/// A program that ends by declaring its answer (`const total = ...`) and
/// so answers `null` is told how to answer it: the model forgot `return`.
#[tokio::test]
async fn a_program_ending_in_a_declaration_is_told_to_return_it() {
    let outcome = run("const rows = [1, 2];\nconst total = await echo(rows.length);").await;
    assert_eq!(value(&outcome), json!(null));
    assert!(
        outcome.console.contains(
            "warn: the program ended by declaring `total` and answered null: end it with `return total`"
        ),
        "{:?}",
        outcome.console
    );
    // An entry point declared and never called, as a script would have it.
    let outcome = run("async function main() {\n  return await echo(1);\n}").await;
    assert_eq!(value(&outcome), json!(null));
    assert!(
        outcome.console.contains(
            "warn: the program ended by declaring function `main`, which nothing called, and \
             answered null: end it with `return await main()`"
        ),
        "{:?}",
        outcome.console
    );
    // An entry point called first and not awaited: the program ended
    // before it, its call cancelled.
    let outcome = run(
        "main();\nasync function main() {\n  const r = await echo(3);\n  console.log('got', r);\n  return r;\n}",
    )
    .await;
    assert_eq!(value(&outcome), json!(null));
    assert!(
        outcome
            .console
            .contains("warn: the program called `main()` without awaiting it and answered null")
            && outcome.console.contains("write `return await main()`")
            && !outcome.console.contains("got"),
        "{:?}",
        outcome.console
    );
    // Not when it answers, nor for a program that ends otherwise.
    for program in [
        "main();\nreturn 1;\nasync function main() { return null }",
        "return await main();\nasync function main() { return null }",
        "const t = 1;\nreturn null",
        "const t = 1;\nt",
        "let t = 1;\nt++",
    ] {
        let outcome = run(program).await;
        assert!(!outcome.console.contains("ended by declaring"), "{program}");
    }
}

/// A program longer than the parent reads is sent as written, so its last
/// expression is not returned: it answered `null` without a word.
#[tokio::test]
async fn a_program_too_long_to_read_for_its_last_expression_is_told_so() {
    let long = format!("// {}\nconst total = 41;\ntotal + 1", "x".repeat(70_000));
    let outcome = run(&long).await;
    assert_eq!(value(&outcome), json!(null));
    assert!(
        outcome.console.contains(&format!(
            "warn: the program is longer than the {} bytes whose last expression is returned, \
             so it answers only what it returns: end it with `return`",
            wasmwire::source::MAX_PARSED_BYTES
        )),
        "{:?}",
        outcome.console
    );
    // Not when it returns its answer.
    let outcome = run(&long.replace("total + 1", "return total + 1")).await;
    assert_eq!(value(&outcome), json!(42));
    assert!(outcome.console.is_empty(), "{:?}", outcome.console);
}

/// Runs `execution` on the shared sandbox, with no tools.
async fn run_execution(
    execution: &wasmwire::Execution,
    cancel: wasmwire::CancellationToken,
) -> wasmwire::Outcome {
    wasmwire_tests::sandbox()
        .run(execution, &wasmwire::Tools::new(), cancel)
        .await
        .expect("the execution starts")
}

/// TypeScript that swc parses in time growing faster than its length:
/// every `<` may open type arguments, tried to the end before it is taken
/// as a comparison (2,000 of them: seconds; 4,000: 12 s on a 2-core VM).
fn slow_to_parse() -> String {
    format!("{}a", "a < ".repeat(2000))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wall_clock_covers_preparing_the_program_and_a_slow_parse_holds_up_no_other() {
    let budget = wasmwire::Budget {
        wall_clock: std::time::Duration::from_millis(250),
        ..wasmwire_tests::budget()
    };
    let slow = wasmwire::Execution::typescript(slow_to_parse()).budget(budget);
    let outcome = run_execution(&slow, wasmwire::CancellationToken::new()).await;
    assert_failed(&outcome, FailureKind::Limit, "wall clock");
    // A small program whose parse grows exponentially with its nesting (20
    // levels: seconds): it too ends at the wall clock.
    let tiny = format!("{}a{}", "<T>(".repeat(20), ")".repeat(20));
    let execution = wasmwire::Execution::typescript(tiny.clone()).budget(budget);
    let started = std::time::Instant::now();
    let outcome = run_execution(&execution, wasmwire::CancellationToken::new()).await;
    let waited = started.elapsed();
    assert_failed(&outcome, FailureKind::Limit, "wall clock");
    // Not a timing guess: the same program's parse alone, on this machine.
    let parse = tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let _ = prepare(&tiny, Language::TypeScript);
        started.elapsed()
    })
    .await
    .expect("the parse ran");
    assert!(
        waited < parse,
        "the wall clock waited for the parse: {waited:?} against {parse:?}"
    );
    // The compile ended with the execution (its sandbox went with the
    // future that ran it): the next program is compiled at once.
    let next = format!("const s = {:?};\ns.length", "x".repeat(4000));
    let next = wasmwire::Execution::typescript(next).budget(wasmwire::Budget {
        wall_clock: std::time::Duration::from_secs(1),
        ..wasmwire_tests::budget()
    });
    let outcome = run_execution(&next, wasmwire::CancellationToken::new()).await;
    assert_eq!(value(&outcome), json!(4000));
}

#[tokio::test]
async fn typescript_that_makes_its_compiler_take_more_than_the_memory_cap_ends_at_the_cap() {
    // swc keeps an error for every pair of nested labels of one name: 2,000
    // of them, 24 KB of program, took the parent 149 MB when it compiled
    // TypeScript itself, and 1.95 GiB for 447 bytes of doubling enum
    // members (which the compiler refuses at once now). The compiler's
    // sandbox is held to the execution's cap: `limit`, nothing left over.
    let program = format!("var a;\n{}1\n", "a: ".repeat(2_000));
    for max_memory in [16 << 20, 64 << 20] {
        let execution = wasmwire::Execution::typescript(program.clone()).budget(wasmwire::Budget {
            max_memory,
            ..wasmwire_tests::budget()
        });
        let outcome = run_execution(&execution, wasmwire::CancellationToken::new()).await;
        assert_failed(
            &outcome,
            FailureKind::Limit,
            &format!(
                "memory limit: compiling the TypeScript program needed more than the \
                 {max_memory} bytes the execution may hold"
            ),
        );
    }
    // Under the smaller cap an ordinary program still compiles and runs.
    let execution =
        wasmwire::Execution::typescript("const n: number = 6;\nn * 7").budget(wasmwire::Budget {
            max_memory: 16 << 20,
            ..wasmwire_tests::budget()
        });
    let outcome = run_execution(&execution, wasmwire::CancellationToken::new()).await;
    assert_eq!(value(&outcome), json!(42));
}

/// A Sandbox that caches compiled components in `dir`.
fn sandbox_caching_in(dir: &std::path::Path) -> wasmwire::Sandbox {
    wasmwire::Sandbox::new(wasmwire::SandboxOptions {
        engine: wasmwire::wasm::EngineOptions {
            cache_dir: Some(dir.to_path_buf()),
            ..wasmwire::wasm::EngineOptions::default()
        },
        ..wasmwire::SandboxOptions::default()
    })
    .expect("the sandbox builds")
}

/// The compiled components cached in `dir`.
fn cached_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .expect("the cache directory was made")
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "cwasm"))
        .count()
}

/// Runs a small TypeScript program in `sandbox`, which must answer 3.
async fn runs_typescript(sandbox: &wasmwire::Sandbox) {
    let outcome = sandbox
        .run(
            &wasmwire::Execution::typescript("const n: number = 2;\nn + 1"),
            &wasmwire::Tools::new(),
            wasmwire::CancellationToken::new(),
        )
        .await
        .expect("the execution starts");
    assert_eq!(value(&outcome), json!(3));
}

#[tokio::test]
async fn the_typescript_compiler_is_cached_where_the_sandbox_caches_its_guest() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("typescript-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sandbox = sandbox_caching_in(&dir);
    assert_eq!(cached_in(&dir), 1, "the guest alone, before any TypeScript");
    runs_typescript(&sandbox).await;
    assert_eq!(
        cached_in(&dir),
        2,
        "the TypeScript compiler beside the guest"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process keeps one TypeScript compiler, whichever cache directories
/// its Sandboxes use: one was made and kept for good for each directory
/// (4.7 MiB and the mappings of its file each), so an embedder giving each
/// tenant or test a directory of its own grew without bound. Each
/// directory still gets the compiler's compiled form, for the next process.
#[tokio::test]
async fn one_typescript_compiler_serves_every_cache_directory() {
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("typescript-caches-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let dirs: Vec<_> = (0..3).map(|i| base.join(format!("d{i}"))).collect();
    for (i, dir) in dirs.iter().enumerate() {
        if i > 0 {
            // A warm cache, as a tenant's would be: the compiler is loaded
            // (mapped) from the directory, not compiled.
            std::fs::create_dir_all(dir).expect("made");
            for entry in std::fs::read_dir(&dirs[0]).expect("readable") {
                let from = entry.expect("entry").path();
                std::fs::copy(&from, dir.join(from.file_name().expect("named"))).expect("copied");
            }
        }
        runs_typescript(&sandbox_caching_in(dir)).await;
        assert_eq!(
            cached_in(dir),
            2,
            "the guest and the compiler in {}",
            dir.display()
        );
    }
    let maps = std::fs::read_to_string("/proc/self/maps").expect("readable");
    let mapped: std::collections::BTreeSet<_> = dirs
        .iter()
        .filter(|dir| maps.contains(&format!("{}/", dir.display())))
        .collect();
    assert!(
        mapped.len() <= 1,
        "compilers kept from {} directories: {mapped:?}",
        mapped.len()
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[tokio::test]
async fn typescript_nested_past_the_compilers_stacks_is_refused_saying_so() {
    let depth = 16_000;
    let program = format!("return {}1{}", "[".repeat(depth), "]".repeat(depth));
    let outcome = run_execution(
        &wasmwire::Execution::typescript(program),
        wasmwire::CancellationToken::new(),
    )
    .await;
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        "the TypeScript program nests too deeply to be compiled",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_ends_an_execution_whose_program_is_still_being_prepared() {
    let cancel = wasmwire::CancellationToken::new();
    let cancelling = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            cancel.cancel();
        })
    };
    let slow = wasmwire::Execution::typescript(slow_to_parse()).budget(wasmwire::Budget {
        wall_clock: std::time::Duration::ZERO,
        ..wasmwire_tests::budget()
    });
    let started = std::time::Instant::now();
    let outcome = run_execution(&slow, cancel).await;
    let waited = started.elapsed();
    cancelling.await.expect("the cancel was sent");
    assert_failed(&outcome, FailureKind::Cancelled, "cancelled");
    // Not a timing guess: the same program's parse alone, on this machine.
    let parse = tokio::task::spawn_blocking(|| {
        let started = std::time::Instant::now();
        let _ = prepare(&slow_to_parse(), Language::TypeScript);
        started.elapsed()
    })
    .await
    .expect("the parse ran");
    assert!(
        waited < parse,
        "the cancel waited for the parse: {waited:?} against {parse:?}"
    );
}

#[tokio::test]
async fn a_last_expression_is_returned_after_a_namespace_and_in_sloppy_javascript() {
    // The namespace transform ends the program in `var N;`, after the
    // expression; `using` and an `if` whose body is a function parse.
    let (outcome, _) = run_prepared(
        "namespace N { export const v = 5 }\nMath.max(N.v, 2)",
        Language::TypeScript,
    )
    .await;
    assert_eq!(value(&outcome), json!(5));
    for (program, want) in [
        ("using x = null\n16", json!(16)),
        ("if (true) function g() { return 9 }\ng() + 1", json!(10)),
        // A program that is only a string (taken for a directive, it
        // returned null); strict mode still holds for what follows one.
        ("'abc'", json!("abc")),
        ("\"use strict\"; 'x'", json!("x")),
        (
            "\"use strict\"; let r = 'sloppy'\ntry { undeclared = 1 } catch (e) { r = e.name }\nr",
            json!("ReferenceError"),
        ),
        // A program that names the variable the value goes through (it
        // returned null).
        ("let __wasmwire_last = 5;\n__wasmwire_last * 2", json!(10)),
    ] {
        let (outcome, _) = run_prepared(program, Language::JavaScript).await;
        assert_eq!(value(&outcome), want, "{program}");
    }
}

#[tokio::test]
async fn a_place_the_programs_own_message_quotes_is_not_mapped() {
    // The program ends in an expression, so what is sent is not the
    // program: `__wasmwire_last = ` moves line 2 right. Only the place the
    // guest puts after the message is mapped, not one the message quotes.
    let program = "const f = () => { throw new Error('bad csv at line 2, column 30') };\nf()";
    let (outcome, prepared) = run_prepared(program, Language::JavaScript).await;
    assert!(!prepared.map.is_identity());
    assert_failed(
        &outcome,
        FailureKind::Invalid,
        "bad csv at line 2, column 30 at line 1, column",
    );
}

#[tokio::test]
async fn a_transformed_program_places_an_error_after_astral_characters_in_characters() {
    // The enum makes swc transform the program; its source map counts
    // columns in UTF-16 units, where each emoji is two.
    let program = "enum E { A }\nconst s = \"😀😀😀😀😀😀😀😀\"; let o: any = null; o.boom";
    let (outcome, prepared) = run_prepared(program, Language::TypeScript).await;
    assert!(!prepared.map.is_identity());
    assert_failed(&outcome, FailureKind::Invalid, "at line 2, column 42");
}

/// Characters of more than one byte in types (a unit in a string type, a
/// comment, a type-only import's path) and a top-level `return` after them:
/// the program was refused ("the type stripper moved a top-level return"),
/// and an emoji in a type put later errors of its line a column off.
#[tokio::test]
async fn characters_of_any_width_in_types_keep_returns_and_places() {
    let program = "import { type Probe } from './ü';\n\
                   type Unit = \"°C\" | \"°F\";\n\
                   interface R {\n  /** Temperatur in °C */\n  temp: number;\n}\n\
                   const u: Unit = \"°C\";\n\
                   const r: R = { temp: 21 };\n\
                   return `${r.temp} ${u}`;";
    let (outcome, _) = run_prepared(program, Language::TypeScript).await;
    assert_eq!(value(&outcome), json!("21 °C"));

    // The same program with a one-unit character in the type fails at the
    // same place.
    let emoji = "const s: Record<\"😀\", number> = { \"😀\": 1 }; const o: any = null; o.boom;";
    let (outcome, _) = run_prepared(emoji, Language::TypeScript).await;
    let (narrow, _) = run_prepared(&emoji.replacen('😀', "x", 1), Language::TypeScript).await;
    assert_failed(&outcome, FailureKind::Invalid, "TypeError");
    assert!(
        outcome.result.error.contains("line 1, column"),
        "{}",
        outcome.result.error
    );
    assert_eq!(outcome.result.error, narrow.result.error);
}
