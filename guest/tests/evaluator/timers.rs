//! `setTimeout`, `setInterval` and their `clear` functions, in real time,
//! and the in-flight cap the evaluator paces its transport to.

use std::time::{Duration, Instant};

use wire::{FailureKind, ToolFailure};

use crate::fake::{Tools, run, run_alone, run_start, start};

#[test]
fn a_timer_delays_its_callback_by_at_least_its_delay() {
    let began = Instant::now();
    let run = run_alone(
        "const t0 = Date.now(); \
         await new Promise(r => setTimeout(r, 100)); \
         return Date.now() - t0 >= 100;",
    );
    assert_eq!(run.value(), "true");
    assert!(began.elapsed() >= Duration::from_millis(100));
}

#[test]
fn extra_arguments_are_passed_to_the_callback() {
    let run = run_alone(
        "return await new Promise(r => setTimeout((a, b, c) => r([a, b, c]), 1, 'x', 2, { y: 3 }));",
    );
    assert_eq!(run.value(), r#"["x",2,{"y":3}]"#);
}

#[test]
fn equal_delays_fire_in_creation_order_and_shorter_delays_first() {
    let run = run_alone(
        "const seen = []; \
         for (const name of ['a', 'b', 'c', 'd']) setTimeout(() => seen.push(name), 20); \
         setTimeout(() => seen.push('first'), 0); \
         await new Promise(r => setTimeout(r, 40)); \
         return seen;",
    );
    assert_eq!(run.value(), r#"["first","a","b","c","d"]"#);
}

#[test]
fn clear_timeout_prevents_the_callback() {
    let run = run_alone(
        "let fired = false; \
         const id = setTimeout(() => { fired = true; }, 10); \
         clearTimeout(id); \
         await new Promise(r => setTimeout(r, 50)); \
         return fired;",
    );
    assert_eq!(run.value(), "false");
}

/// Timers kept by id as an object's keys are cleared through the keys,
/// which are strings: as in browsers, the text is the id.
#[test]
fn an_id_as_text_clears_its_timer() {
    let run = run_alone(
        "const pending = {}, fired = [];          for (const name of ['a', 'b']) pending[setTimeout(() => fired.push(name), 10)] = name;          for (const id of Object.keys(pending)) clearTimeout(id);          const iv = setInterval(() => fired.push('iv'), 5); clearInterval(` ${iv} `);          await new Promise(r => setTimeout(r, 40));          return fired;",
    );
    assert_eq!(run.value(), "[]");
}

#[test]
fn an_interval_fires_until_it_is_cleared_from_its_own_callback() {
    let run = run_alone(
        "let n = 0; \
         await new Promise(done => { \
           const id = setInterval(() => { n += 1; if (n === 5) { clearInterval(id); done(); } }, 5); \
         }); \
         await new Promise(r => setTimeout(r, 30)); \
         return n;",
    );
    assert_eq!(run.value(), "5");
}

#[test]
fn ids_are_positive_integers_and_clearing_anything_else_is_a_no_op() {
    let run = run_alone(
        "const a = setTimeout(() => {}, 0), b = setInterval(() => {}, 1000); \
         clearInterval(b); \
         for (const x of [undefined, null, 'x', -1, 0, 1.5, 99999, {}]) { clearTimeout(x); clearInterval(x); } \
         return [a, b, Number.isInteger(a) && a > 0, Number.isInteger(b) && b > a];",
    );
    assert_eq!(run.value(), "[1,2,true,true]");
}

#[test]
fn negative_nan_and_missing_delays_are_zero() {
    let run = run_alone(
        "const seen = []; \
         setTimeout(() => seen.push('late'), 5); \
         setTimeout(() => seen.push('neg'), -100); \
         setTimeout(() => seen.push('nan'), NaN); \
         setTimeout(() => seen.push('none')); \
         setTimeout(() => seen.push('str'), '0'); \
         await new Promise(r => setTimeout(r, 20)); \
         return seen;",
    );
    assert_eq!(run.value(), r#"["neg","nan","none","str","late"]"#);
}

#[test]
fn a_callback_that_is_not_a_function_is_a_type_error() {
    let (kind, error) = run_alone("setTimeout('1 + 1', 0);").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(
        error.contains("TypeError: setTimeout: the callback must be a function"),
        "{error}"
    );
}

#[test]
fn a_pending_timer_keeps_the_program_alive() {
    // Not awaited: only the pending timer stands between the program and
    // "can never finish".
    let run = run_alone(
        "let fired = 0; \
         setTimeout(() => { fired += 1; }, 50); \
         return await new Promise(r => setTimeout(() => r(fired + 1), 100));",
    );
    assert_eq!(run.value(), "2");
}

#[test]
fn timers_still_pending_when_the_program_settles_are_dropped_and_said_so() {
    // Were the loop to wait for them, the callbacks would print. They were
    // dropped without a word (a flush scheduled with `setTimeout(f, 0)`
    // before `return` never ran, and nothing said so).
    let run = run_alone(
        "setTimeout(() => console.log('late'), 300); \
         setInterval(() => console.log('tick'), 0); \
         return 1;",
    );
    assert_eq!(run.value(), "1");
    assert_eq!(
        run.console,
        "warn: the program ended with 2 timers pending, never run (await what a timer settles \
         to have it run)\n"
    );
}

/// The warning tells an interval that ran from a timer that never did
/// (it said "never run" of both), and leaves out the timer of an
/// `AbortSignal.timeout` the program made for a call that answered: that
/// timer is the web surface's, and the idiom the docs teach.
#[test]
fn an_interval_that_ran_is_told_apart_and_a_signal_timeout_is_not_the_programs() {
    let ended = run(
        "const signal = AbortSignal.timeout(60000);\n\
         const answer = await host.call('t', 'x', { signal });\n\
         let ticks = 0; setInterval(() => { ticks += 1; }, 1);\n\
         await new Promise((r) => setTimeout(r, 20));\n\
         setTimeout(() => {}, 60000);\n\
         return [answer, ticks > 0];",
        &[("t", "")],
        Tools::new().echo("t"),
    );
    assert_eq!(ended.value(), r#"["x",true]"#);
    assert_eq!(
        ended.console,
        "warn: the program ended with 1 timer pending, never run (await what a timer settles \
         to have it run)\n\
         warn: the program ended with 1 interval still set, stopped with it (clearInterval one \
         when it is done)\n"
    );
    // With only the signal's timer left, nothing is said.
    let quiet = run(
        "return await host.call('t', 'y', { signal: AbortSignal.timeout(60000) });",
        &[("t", "")],
        Tools::new().echo("t"),
    );
    assert_eq!(quiet.value(), r#""y""#);
    assert_eq!(quiet.console, "");
}

/// Delays past 2^31 - 1 ms (Infinity too) fire after 1 ms, as in Node,
/// rather than waiting for the wall clock; an interval repeats at least
/// 1 ms apart, as in Node (`setInterval(f, 0)` ran 46,000 times in 0.2 s).
#[test]
fn an_overflowing_delay_is_one_millisecond_and_an_interval_at_least_one() {
    let run = run_alone(
        "const fired = await new Promise((r) => setTimeout(() => r('fired'), Infinity));\n\
         let ticks = 0; const id = setInterval(() => { ticks += 1; }, 0);\n\
         await new Promise((r) => setTimeout(r, 30));\n\
         clearInterval(id);\n\
         return [fired, ticks <= 31];",
    );
    assert_eq!(run.value(), r#"["fired",true]"#);
}

#[test]
fn a_callback_that_throws_ends_the_run_with_what_it_threw() {
    let (kind, error) = run_alone(
        "setTimeout(() => { throw new RangeError('from a timer'); }, 1);\n\
         await new Promise(r => setTimeout(r, 1000));",
    )
    .failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(
        error.starts_with("RangeError: from a timer at line 1"),
        "{error}"
    );
}

#[test]
fn a_program_awaiting_nothing_that_can_settle_is_still_stuck_without_timers() {
    let (kind, error) =
        run_alone("setTimeout(() => {}, 1); await new Promise(() => {});").failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.contains("can never finish"), "{error}");
}

#[test]
fn an_interval_of_zero_does_not_keep_answers_from_the_program() {
    let run = run(
        "let ticks = 0; setInterval(() => { ticks += 1; }, 0); \
         const a = await echo('a'); const b = await echo('b'); \
         await new Promise((r) => setTimeout(r, 5)); \
         return [a, b, ticks > 0];",
        &[("echo", "")],
        Tools::new().echo("echo"),
    );
    assert_eq!(run.value(), r#"["a","b",true]"#);
}

#[test]
fn a_backoff_loop_on_rate_limited_retries_after_each_wait() {
    let mut failures = 3;
    let tools = Tools::new().tool("flaky", move |_| {
        if failures > 0 {
            failures -= 1;
            Err(ToolFailure::new(FailureKind::RateLimited, "slow down"))
        } else {
            Ok("42".to_owned())
        }
    });
    let began = Instant::now();
    let run = run(
        "for (let attempt = 0; ; attempt++) { \
           try { return await flaky(); } \
           catch (e) { \
             if (!(e instanceof ToolError) || e.kind !== 'rate_limited') throw e; \
             await new Promise(r => setTimeout(r, 10 * 2 ** attempt)); \
           } \
         }",
        &[("flaky", "")],
        tools,
    );
    assert_eq!(run.value(), "42");
    assert_eq!(run.tools.sent.len(), 4);
    // 10 + 20 + 40 ms of waiting.
    assert!(began.elapsed() >= Duration::from_millis(70));
}

#[test]
fn the_transport_is_paced_to_the_starts_cap_or_the_default() {
    let run = run_alone("return 1");
    assert_eq!(run.tools.paced_to, Some(wire::DEFAULT_MAX_INFLIGHT));
    let mut capped = start("return 1", &[]);
    capped.max_inflight = Some(4);
    assert_eq!(run_start(&capped, Tools::new()).tools.paced_to, Some(4));
    capped.max_inflight = Some(0);
    assert_eq!(run_start(&capped, Tools::new()).tools.paced_to, Some(1));
}
