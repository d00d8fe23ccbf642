//! `console`: one line per call, each level labelled.

use wasmwire_guest::Evaluator;

use crate::fake::{Console, Tools, run_alone, start};

#[test]
fn each_level_writes_one_labelled_line_per_call() {
    let run = run_alone(
        "console.log('plain', 1);\nconsole.info('i');\nconsole.warn('w');\nconsole.error('e');\nconsole.debug('d');",
    );
    assert_eq!(
        run.console,
        "plain 1\ninfo: i\nwarn: w\nerror: e\ndebug: d\n"
    );
}

#[test]
fn values_are_shown_as_a_reader_expects() {
    let program = r#"
        function named() {}
        console.log('s', 42, 1.5, true, null, undefined, 7n, Symbol('tag'), { a: [1, 'x'] }, [1, 2],
                    named, () => 1, new TypeError('bad'));"#;
    let run = run_alone(program);
    assert_eq!(
        run.console,
        "s 42 1.5 true null undefined 7n Symbol(tag) {\"a\":[1,\"x\"]} [1,2] [Function named] [Function (anonymous)] TypeError: bad\n"
    );
}

#[test]
fn a_message_with_line_breaks_stays_on_one_line() {
    let run = run_alone("console.log('a\\nb\\r\\nc');\nconsole.error('x\\ny');");
    assert_eq!(run.console, "a\\nb\\r\\nc\nerror: x\\ny\n");
}

#[test]
fn unicode_and_lone_surrogates_are_written_as_utf8() {
    let run = run_alone("console.log('é😀', '\\ud800');");
    assert_eq!(run.console, "é😀 \u{fffd}\n");
}

#[test]
fn a_value_that_cannot_be_shown_does_not_fail_the_program() {
    let program = r#"
        const cyclic = {}; cyclic.self = cyclic;
        const hostile = { toString() { throw new Error('no'); }, toJSON() { throw new Error('no'); } };
        console.log(cyclic, hostile);
        return 'still running';"#;
    let run = run_alone(program);
    assert_eq!(run.value(), r#""still running""#);
    assert_eq!(run.console, "[object Object] [object]\n");
}

#[test]
fn console_output_is_written_as_the_program_runs_and_kept_on_failure() {
    let run = run_alone("console.log('before');\nthrow new Error('after');");
    assert_eq!(run.console, "before\n");
    assert!(!run.result.ok);
}

#[test]
fn replacing_console_methods_is_the_programs_own_business() {
    let run = run_alone(
        "const log = console.log;\nconsole.log = () => {};\nconsole.log('hidden');\nlog('shown');",
    );
    assert_eq!(run.console, "shown\n");
}

#[test]
fn an_evaluator_runs_one_program_and_a_second_is_refused_before_it_writes() {
    // The console (and the timers) are made once with the evaluator and
    // find the run in progress when called; a second run on the same
    // evaluator is refused before any of its code could reach them.
    let (first, second) = (Console::default(), Console::default());
    let mut evaluator = Evaluator::new().expect("evaluator");
    let mut tools = Tools::new();
    let program = "console.log('one'); setTimeout(() => console.log('later'), 0); return 1";
    let ran = evaluator.run(&start(program, &[]), &mut tools, first.clone());
    assert!(ran.ok, "{ran:?}");
    let again = evaluator.run(
        &start("console.log('two'); return 2", &[]),
        &mut tools,
        second.clone(),
    );
    assert!(!again.ok);
    assert!(
        again.error.contains("each run needs a fresh one"),
        "{}",
        again.error
    );
    assert_eq!(
        (first.text(), second.text()),
        ("one\n".to_owned(), String::new())
    );
}
