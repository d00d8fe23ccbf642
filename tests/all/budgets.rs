//! Every budget item at its boundary, and the hostile programs each one
//! stops. After every hostile case the same Sandbox runs a normal program.

use std::time::Duration;

use serde_json::json;
use wasmwire::{
    Budget, CancellationToken, Execution, FailureKind, Outcome, Sandbox, SandboxOptions,
};
use wasmwire_tests::{
    assert_failed, assert_still_healthy, budget, roomy, run, run_on, run_with, sandbox, tools,
    value,
};

fn with(f: impl FnOnce(&mut Budget)) -> Budget {
    let mut b = budget();
    f(&mut b);
    b
}

#[tokio::test]
async fn max_calls_allows_n_and_refuses_n_plus_one() {
    let program = r#"
        const got = [];
        for (let i = 0; i < 4; i++) {
            try { got.push(await echo(i)); } catch (e) { got.push(e.kind); }
        }
        return got;
    "#;
    let outcome = run_with(program, with(|b| b.max_calls = 3)).await;
    assert_eq!(value(&outcome), json!([0, 1, 2, "limit"]));
    assert_eq!(outcome.result.calls, 3);
    // The child reports the calls the parent took, not the one it refused:
    // an honest child that spent its quota agrees with the parent.
    assert_eq!(outcome.child_counts.map(|(calls, _)| calls), Some(3));
    assert!(!outcome.counts_disagree, "{outcome:#?}");
    assert_still_healthy(sandbox()).await;
}

#[tokio::test]
async fn max_bytes_allows_exactly_the_budget_and_refuses_one_byte_more() {
    let program = r#"
        const a = await bytes(60);
        let second;
        try { second = (await bytes(41)).length; } catch (e) { second = e.kind; }
        const third = (await bytes(40)).length;
        return [a.length, second, third];
    "#;
    let outcome = run_with(program, with(|b| b.max_bytes = 100)).await;
    assert_eq!(
        value(&outcome),
        json!([58, "limit", 38]),
        "JSON strings: 2 bytes of quotes each"
    );
    assert_eq!(outcome.result.bytes, 100);
}

#[tokio::test]
async fn an_endless_loop_ends_at_the_wall_clock() {
    let outcome = run_with(
        "for (;;) {}",
        with(|b| b.wall_clock = Duration::from_millis(300)),
    )
    .await;
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "wall clock of 300ms ran out with no tool call running: the program was computing",
    );
    // `elapsed` runs from the Start, so building the shared Sandbox (a cold
    // cache compiles the guest) does not count: not early, and not long after.
    assert!(
        outcome.elapsed >= Duration::from_millis(300) && outcome.elapsed < Duration::from_secs(3),
        "took {:?}",
        outcome.elapsed
    );
    assert_still_healthy(sandbox()).await;
}

/// A program that catches the parent's "wall clock ran out" refusal of a
/// call and answers has still run out of time: the refusal comes from the
/// instant the wall clock ends, the timer that ends the run up to a
/// millisecond later, and the Result that came between ended `ok` in 189
/// of 200 runs through Python.
#[tokio::test]
async fn a_program_that_catches_the_wall_clocks_refusal_does_not_end_ok() {
    let program = "for (;;) {\n\
                     try { await echo(1); } catch (e) {\n\
                       if (e.message.includes('wall clock')) return 'survived: ' + e.message;\n\
                     }\n\
                   }";
    for _ in 0..5 {
        let outcome = run_with(program, with(|b| b.wall_clock = Duration::from_millis(50))).await;
        assert_failed(&outcome, FailureKind::Limit, "wall clock of 50ms ran out");
    }
}

/// A wall clock that runs out while a large answer waits for the child
/// says so: it said "the program was computing or waiting on a timer"
/// while a 15 MB answer was still on its way.
#[tokio::test]
async fn a_wall_clock_that_runs_out_with_an_answer_unread_says_so() {
    let outcome = run_with(
        // The timer's turn sends the call; the program then never reads.
        "bytes(15000000);\nawait new Promise((r) => setTimeout(r, 0));\nfor (;;) {}",
        with(|b| b.wall_clock = Duration::from_millis(500)),
    )
    .await;
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "wall clock of 500ms ran out with no tool call running: the child had not yet read ",
    );
    assert!(
        outcome
            .result
            .error
            .ends_with("bytes of tool answers (it was taking one in, or computing)"),
        "{}",
        outcome.result.error
    );
}

/// A wall clock longer than the clock can count to is no limit, not a
/// panic: `Instant + Duration::MAX` overflows (the library panicked with
/// "overflow when adding duration to instant" before it ran anything).
#[tokio::test]
async fn a_wall_clock_past_what_the_clock_can_count_is_no_limit() {
    for wall_clock in [Duration::MAX, Duration::from_secs(u64::MAX / 2)] {
        let outcome = run_with(
            "await echo(1); return 2",
            with(|b| b.wall_clock = wall_clock),
        )
        .await;
        assert_eq!(value(&outcome), json!(2), "{wall_clock:?}");
    }
    assert_still_healthy(sandbox()).await;
}

#[tokio::test]
async fn a_loop_that_catches_everything_cannot_swallow_the_interrupt() {
    let program = "for (;;) { try { for (;;) {} } catch (e) {} finally { continue; } }";
    let outcome = run_with(program, with(|b| b.wall_clock = Duration::from_millis(300))).await;
    assert_failed(&outcome, FailureKind::Limit, "wall clock");
    assert_still_healthy(sandbox()).await;
}

/// A cap below what the guest's memory starts at fails every run before
/// the program does anything: the Result says so, where it said only "the
/// child asked for 6160384 bytes". Just above the start, the guest says
/// itself that no room is left for a program.
#[tokio::test]
async fn a_memory_cap_too_small_to_start_says_so() {
    let outcome = run_with("return 1", with(|b| b.max_memory = 2 << 20)).await;
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "so no program runs under this cap; give it more than that",
    );
    let outcome = run_with("return 1", with(|b| b.max_memory = 7 << 20)).await;
    assert_failed(&outcome, FailureKind::Limit, "leaves no room for a program");
    assert_still_healthy(sandbox()).await;
}

#[tokio::test]
async fn a_memory_bomb_ends_as_limit() {
    let program = "const a = []; for (;;) a.push(new Array(100000).fill(a.length));";
    let outcome = run_with(program, with(|b| b.max_memory = 32 << 20)).await;
    assert_failed(&outcome, FailureKind::Limit, "memory limit");
    assert_still_healthy(sandbox()).await;
}

#[tokio::test]
async fn cyclic_garbage_is_collected_under_a_small_budget() {
    // Each pair refers to the other, so reference counting never frees it:
    // only QuickJS's cycle collector does, and it must run well before the
    // limit (about 30 MiB of pairs go through an 8 MiB budget).
    let program = "for (let i = 0; i < 200000; i++) { const a = { i }; a.b = { a }; } return 1";
    let outcome = run_with(program, with(|b| b.max_memory = 8 << 20)).await;
    assert_eq!(value(&outcome), json!(1), "{:?}", outcome.result);
}

/// Every ToolError the evaluator issued was kept for the whole run (so
/// that it could tell its own from a forged one), about 570 bytes a
/// failed call: under 8 MiB, a loop that caught its failures ended after
/// 2,242 of them, and as `invalid` "can never finish" (memory ran out as a
/// rejection was queued, which left the loop's await pending). The mark
/// now goes with the error.
#[tokio::test]
async fn failed_calls_a_program_catches_hold_none_of_its_memory() {
    let program = "let n = 0; for (let i = 0; i < 50000; i++) { \
                   try { await host.call('nope', {}); } catch (e) { n++; } } return n";
    let outcome = run_with(program, with(|b| b.max_memory = 8 << 20)).await;
    assert_eq!(value(&outcome), json!(50000), "{:?}", outcome.result);
    assert_eq!(outcome.result.calls, 50000);
    // Kept by the program, they take its memory, and that is its limit.
    let program = "const kept = []; for (;;) { \
                   try { await host.call('nope', {}); } catch (e) { kept.push(e); } }";
    let outcome = run_with(program, with(|b| b.max_memory = 8 << 20)).await;
    assert_failed(&outcome, FailureKind::Limit, "memory limit");
}

/// A program that fills its memory and then calls tools met QuickJS out
/// of memory as it settled a call's promise, where it dropped the reaction
/// it could not queue and said nothing: the program's `await` was left
/// pending, and the run ended `invalid`, "can never finish". Running out
/// of memory now ends the run where it happens, caught or not: over a
/// range of room left, every run ends `limit`, and none of the calls the
/// program makes after it reaches the parent.
#[tokio::test]
async fn memory_running_out_as_a_call_settles_is_a_limit_not_a_stuck_program() {
    for room in 0..12 {
        let program = format!(
            "const keep = []; try {{ for (;;) keep.push(new Array(16).fill(0)); }} catch (e) {{}} \
             keep.length -= {room}; let n = 0; \
             for (let i = 0; i < 3000; i++) {{ try {{ await host.call('nope', {{}}); }} catch (e) {{ n++; }} }} \
             return n"
        );
        let outcome = run_with(&program, with(|b| b.max_memory = 8 << 20)).await;
        assert_failed(&outcome, FailureKind::Limit, "memory limit");
        assert_eq!(outcome.result.calls, 0, "{room}: {outcome:?}");
    }
}

/// QuickJS throws its out-of-memory error (or `null`, with no memory left
/// for an error) as an ordinary exception, so a program could catch it and
/// go on: each of these ended `ok` ("went on", a count of the failures it
/// caught, or the error as text), a catch-all loop ran past its limit and
/// its later calls failed. The first allocation the heap refuses now ends
/// the run `limit`, whatever catches it, and a call made after it is never
/// sent.
#[tokio::test]
async fn running_out_of_memory_cannot_be_caught() {
    let fill = "const a = []; for (;;) a.push({ i: a.length, s: 'item ' + a.length });";
    for program in [
        format!("try {{ {fill} }} catch (e) {{}} return 'went on'"),
        format!("try {{ {fill} }} catch (e) {{ return String(e) }}"),
        format!("try {{ {fill} }} finally {{ return 'went on' }}"),
        format!("try {{ {fill} }} catch (e) {{}} return await echo('went on')"),
        format!("await Promise.resolve(); try {{ {fill} }} catch (e) {{}} return 'went on'"),
        format!(
            "const p = new Promise((ok) => {{ try {{ {fill} }} catch (e) {{}} ok(1) }}); return await p"
        ),
        "const keep = []; let caught = 0;\n\
         for (let i = 0; i < 20000; i++) {\n\
           try { keep.push('x'.repeat(1 << 14) + i); } catch (e) { caught++; keep.length = 0; }\n\
         }\n\
         return caught"
            .to_owned(),
        "const kept = []; try { for (;;) kept.push(new Uint8Array(1 << 16)); } catch (e) {} \
         return kept.length"
            .to_owned(),
        "try { JSON.parse('[' + '1,'.repeat(4 << 20) + '1]') } catch (e) {} return 'went on'"
            .to_owned(),
    ] {
        let outcome = run_with(&program, with(|b| b.max_memory = 16 << 20)).await;
        assert_failed(&outcome, FailureKind::Limit, "memory limit");
        assert_eq!(outcome.result.calls, 0, "{program}: {outcome:?}");
    }
    assert_still_healthy(sandbox()).await;
}

/// The exception that ends a stopped program is an allocation: with the
/// heap kept full it was refused, and QuickJS threw a `null` the program
/// caught, so a loop that caught it, freed a little and filled the heap
/// again ran on after the memory stop until the wall clock ("wall clock of
/// 10s ran out"; for ever without one, natively). The stop is now given
/// room for its exception, and the run ends at once, as memory.
#[tokio::test]
async fn a_program_that_keeps_its_heap_full_is_still_stopped() {
    let program = "const k = [];\n\
                   try { for (;;) k.push({}); } catch (e) {}\n\
                   for (;;) { try { for (;;) {} } catch (e) { k.pop(); k.pop(); \
                   try { for (;;) k.push({}); } catch (e2) {} } }";
    let outcome = run_with(
        program,
        with(|b| {
            b.max_memory = 16 << 20;
            b.wall_clock = Duration::from_secs(10);
        }),
    )
    .await;
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "memory limit: the program's heap could not grow by ",
    );
    assert_still_healthy(sandbox()).await;
}

/// QuickJS collects cycles once its heap has grown half as much again
/// since the last collection, which with a live set past two thirds of
/// the limit is beyond it: cyclic garbage beside such a set was refused
/// (`limit`, "out of memory at line 3"), in the guest before this one too,
/// where a collection would have freed it. The heap now moves QuickJS's
/// next collection under the limit.
#[tokio::test]
async fn cyclic_garbage_beside_a_large_live_set_is_collected_before_the_limit() {
    for live in [60, 70] {
        let program = format!(
            "const live = []; for (let i = 0; i < {live}; i++) live.push(new Uint8Array(100000));\n\
             let made = 0;\n\
             for (let i = 0; i < 100; i++) {{ const a = {{ buf: new Uint8Array(1 << 19) }}; a.self = a; made++; }}\n\
             return [live.length, made];"
        );
        let outcome = run_with(&program, with(|b| b.max_memory = 16 << 20)).await;
        assert_eq!(
            value(&outcome),
            json!([live, 100]),
            "{live}: {:?}",
            outcome.result
        );
    }
    // Small objects that refer to themselves (a node with a parent link,
    // say) beside 7.8 MB of live buffers: out of memory ("it threw null")
    // before.
    let program = "const live = []; for (let i = 0; i < 78; i++) live.push(new Uint8Array(100000));\n\
                   let made = 0;\n\
                   for (let i = 0; i < 200000; i++) { const o = { i }; o.self = o; made++; }\n\
                   return made";
    let outcome = run_with(program, with(|b| b.max_memory = 16 << 20)).await;
    assert_eq!(value(&outcome), json!(200000), "{:?}", outcome.result);
}

/// The mark cannot be read, copied or forged: a ToolError the program
/// makes, or one it dresses as another kind, is the program's own error.
#[tokio::test]
async fn a_tool_error_the_program_forges_is_its_own_error() {
    let outcome =
        run("const e = new ToolError('x'); e.kind = 'transient'; e.tool = 'echo'; throw e").await;
    assert_failed(&outcome, FailureKind::Invalid, "ToolError: x");
    let outcome = run(
        "let real; try { await host.call('nope', {}); } catch (e) { real = e; } \
         throw Object.create(Object.getPrototypeOf(real), Object.getOwnPropertyDescriptors(real))",
    )
    .await;
    assert_failed(&outcome, FailureKind::Invalid, "ToolError: no tool named");
    // The error itself, rethrown, is still the tool's.
    let outcome =
        run("try { await host.call('nope', {}); } catch (e) { e.message = 'changed'; throw e; }")
            .await;
    assert_failed(
        &outcome,
        FailureKind::NotFound,
        "ToolError from nope: changed",
    );
}

#[tokio::test]
async fn a_string_doubling_bomb_ends_as_limit() {
    // QuickJS concatenates into ropes, so this meets its 2^30-character
    // cap on one string before it fills memory: a size limit.
    let program = "let s = 'x'; for (;;) s = s + s;";
    let outcome = run_with(program, with(|b| b.max_memory = 32 << 20)).await;
    assert_failed(&outcome, FailureKind::Limit, "string too long");
    assert_still_healthy(sandbox()).await;
}

#[tokio::test]
async fn deep_recursion_ends_as_limit() {
    let outcome = run("function f(n) { return f(n + 1) + 1; } return f(0);").await;
    assert_failed(&outcome, FailureKind::Limit, "stack");
    assert_still_healthy(sandbox()).await;
}

#[tokio::test]
async fn a_console_flood_is_truncated_and_the_execution_goes_on() {
    let program = "for (let i = 0; i < 200000; i++) console.log('flood line ' + i); return 'done';";
    let outcome = run(program).await;
    assert_eq!(value(&outcome), json!("done"));
    assert!(
        outcome.console.len() <= wasmwire::console::DEFAULT_CONSOLE_CAP + 200,
        "{}",
        outcome.console.len()
    );
    assert!(outcome.console.contains("flood line 0\n"));
    assert!(
        outcome
            .console
            .trim_end()
            .lines()
            .last()
            .unwrap_or("")
            .contains("truncated"),
        "marker at the end"
    );
}

#[tokio::test]
async fn a_tool_that_never_answers_fails_transient_at_the_per_call_deadline() {
    let program = r#"
        const t = Date.now();
        try { await host.call("never", {}, {deadlineMs: 100}); return "answered"; }
        catch (e) { return [e.kind, e.retryable, Date.now() - t >= 90]; }
    "#;
    let outcome = run(program).await;
    assert_eq!(value(&outcome), json!(["transient", true, true]));
    assert_still_healthy(sandbox()).await;
}

/// The Result names the calls the execution was still waiting on when its
/// wall clock ran out, by tool, with how long the longest had run: a model
/// whose program made slow calls one after another learns that, not only
/// that time ran out.
#[tokio::test]
async fn a_tool_that_never_answers_without_a_deadline_ends_at_the_wall_clock() {
    let outcome = run_with(
        "await echo(1); await Promise.all([never(), echo(2), never()]); return 1;",
        with(|b| b.wall_clock = Duration::from_millis(200)),
    )
    .await;
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "wall clock of 200ms ran out with 2 tool calls still running: never x2 (the longest for ",
    );
    assert_eq!(outcome.result.calls, 4, "{outcome:#?}");
}

#[tokio::test]
async fn the_host_maximum_call_deadline_caps_the_programs_wish() {
    let sandbox = Sandbox::new(SandboxOptions {
        max_call_deadline: Some(Duration::from_millis(50)),
        ..SandboxOptions::default()
    })
    .unwrap();
    let program = r#"try { await host.call("never", {}, {deadlineMs: 60000}); } catch (e) { return [e.kind, e.message]; }"#;
    let outcome = run_on(&sandbox, program, budget(), &tools()).await;
    // Named as the host's, not as the program's own deadline.
    assert_eq!(
        value(&outcome),
        json!(["transient", "the host's per-call deadline of 50 ms passed"])
    );
}

/// The guest paces its calls to the cap the Sandbox serves with (the
/// Start's `max_inflight`): the fifth call waits for a slot instead of
/// being refused. The parent still refuses a child that does not pace:
/// `wire/tests/server.rs` `in_flight_cap_allows_n_and_refuses_n_plus_one_at_once`
/// and the process children's flood in `children.rs`.
#[tokio::test]
async fn the_in_flight_cap_paces_the_fifth_call_instead_of_refusing_it() {
    let sandbox = Sandbox::new(SandboxOptions {
        max_in_flight: 4,
        ..SandboxOptions::default()
    })
    .unwrap();
    let program = r#"
        const ps = [];
        for (let i = 0; i < 5; i++) ps.push(delay(50, i).then(v => v, e => e.kind));
        return await Promise.all(ps);
    "#;
    let outcome = run_on(&sandbox, program, budget(), &tools()).await;
    assert_eq!(value(&outcome), json!([0, 1, 2, 3, 4]));
    assert_eq!(outcome.result.calls, 5);
    // The fifth call went only once one of the first four was answered.
    assert!(
        outcome.elapsed >= Duration::from_millis(100),
        "{:?}",
        outcome.elapsed
    );
}

/// A token cancelled as soon as the program calls the tool `running`, so
/// the cancel provably lands while the program runs (never before it
/// started, however slow the start). The standard tools, plus `running()`,
/// which answers at once, and `running_forever()`, which never answers.
fn cancel_once_running() -> (CancellationToken, wasmwire::Tools) {
    let cancel = CancellationToken::new();
    let mut tools = tools();
    for (name, answers) in [("running", true), ("running_forever", false)] {
        let c = cancel.clone();
        tools
            .register(wasmwire::Tool::new(name, move |_call| {
                let c = c.clone();
                async move {
                    if answers {
                        // Answered first, then cancelled: the program is back
                        // in its loop, or about to be, when the cancel lands.
                        tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            c.cancel();
                        });
                        Ok(wasmwire::Json(1))
                    } else {
                        c.cancel();
                        std::future::pending::<()>().await;
                        Ok(wasmwire::Json(0))
                    }
                }
            }))
            .unwrap();
    }
    (cancel, tools)
}

/// Runs `program` with [`cancel_once_running`]'s tools and token, and
/// checks that it ended `cancelled`.
async fn run_until_cancelled(program: &str) -> Outcome {
    let (cancel, tools) = cancel_once_running();
    let execution = Execution::new(program).budget(budget());
    let outcome = sandbox().run(&execution, &tools, cancel).await.unwrap();
    assert_failed(&outcome, FailureKind::Cancelled, "cancel");
    outcome
}

#[tokio::test]
async fn cancellation_ends_in_cancelled_and_stops_the_child() {
    let outcome = run_until_cancelled("await running(); for (;;) {}").await;
    assert_eq!(outcome.result.calls, 1, "the program ran: {outcome:#?}");
    // From the Start: the Sandbox's build does not count.
    assert!(
        outcome.elapsed < Duration::from_secs(3),
        "took {:?}",
        outcome.elapsed
    );
    assert_still_healthy(sandbox()).await;
}

/// On a one-thread runtime (`#[tokio::test]`'s), the cancel comes from
/// another task: it lands only if a program calling tools in a loop, whose
/// every call is answered at once, still gives the thread up.
#[tokio::test]
async fn a_program_calling_tools_in_a_loop_still_lets_other_tasks_run() {
    let outcome = run_until_cancelled("await running(); for (;;) await echo(1);").await;
    assert!(outcome.result.calls > 1, "the loop ran: {outcome:#?}");
}

#[tokio::test]
async fn cancellation_while_waiting_on_a_tool_ends_in_cancelled() {
    let outcome = run_until_cancelled("await running_forever(); return 1;").await;
    assert_eq!(outcome.result.calls, 1, "the program ran: {outcome:#?}");
}

/// A program whose Start cannot fit in a frame is the caller's error before
/// anything starts, never blamed on the child as a protocol violation.
#[tokio::test]
async fn a_program_too_large_to_send_is_refused_before_start() {
    let program = format!("return {:?}.length", "p".repeat(17 << 20));
    let execution = Execution::new(program).budget(budget());
    match sandbox()
        .run(&execution, &tools(), CancellationToken::new())
        .await
    {
        Err(wasmwire::SandboxError::ProgramTooLarge { bytes, max }) => {
            assert!(bytes > max, "{bytes} <= {max}");
        }
        other => panic!("{other:?}"),
    }
    assert_still_healthy(sandbox()).await;
}

/// A large program (a data literal, say) is held by the child once beside
/// its frame (tests/HOSTILE.md item 113). The Start was read into a frame
/// grown by doubling and its program through serde_json's doubling scratch
/// (any program of more than one line has an escape): 8 MB under 64 MiB
/// was refused ("the child already uses 46333952 bytes"), 15 MB ended in
/// the allocator's abort ("memory allocation of 31457298 bytes failed"),
/// and a Start too large for the cap at all must still end `limit`.
#[tokio::test]
async fn a_program_of_megabytes_is_held_once_and_one_too_large_says_so() {
    let sized = |mib: usize| format!("let x = \"{}\\n\";\nreturn x.length", "a".repeat(mib << 20));
    let outcome = run_with(&sized(8), with(|b| b.max_memory = 64 << 20)).await;
    assert_eq!(value(&outcome), json!((8 << 20) + 1));
    let outcome = run_with(&sized(15), with(|b| b.max_memory = 64 << 20)).await;
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "leaves no room for a program of",
    );
    let outcome = run_with(&sized(15), with(|b| b.max_memory = 16 << 20)).await;
    assert_failed(&outcome, FailureKind::Limit, "memory limit reached");
    assert_still_healthy(sandbox()).await;
}

/// Tools whose bindings take the frame are named as the cause: a program
/// of one byte was told it was too large.
#[tokio::test]
async fn tools_too_large_to_send_are_blamed_not_the_program() {
    let mut many = wasmwire::Tools::new();
    // Each name nearly as long as a name may be (64 KiB); together past a
    // frame.
    for i in 0..300 {
        let name = format!("{}{i}", "t".repeat(60_000));
        many.register(wasmwire::Tool::new(name, |_call: wasmwire::Call| async {
            Ok(json!(1))
        }))
        .expect("registers");
    }
    let execution = Execution::new("1").budget(budget());
    match sandbox()
        .run(&execution, &many, CancellationToken::new())
        .await
    {
        Err(
            e @ wasmwire::SandboxError::ToolsTooLarge {
                tools: 300,
                bytes,
                max,
            },
        ) => {
            assert!(bytes > max, "{bytes} <= {max}");
            assert!(e.to_string().contains("the 300 tools' names"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

/// A `max_memory` above the pool's slot cannot be held: refused before
/// start, naming what can be held, instead of silently capped.
#[tokio::test]
async fn max_memory_over_the_pool_slot_is_refused_not_capped() {
    let execution = Execution::new("return 1").budget(with(|b| b.max_memory = 2 << 30));
    match sandbox()
        .run(&execution, &tools(), CancellationToken::new())
        .await
    {
        Err(e @ wasmwire::SandboxError::OverCeiling { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("max_memory") && text.contains("1073741824"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    // At the slot's size it runs.
    let outcome = run_with("return 1", with(|b| b.max_memory = 1 << 30)).await;
    assert_eq!(value(&outcome), json!(1));
}

#[tokio::test]
async fn program_code_run_by_a_call_sites_stack_capture_cannot_break_the_call() {
    // A tool call captures the program's stack when it is made, and QuickJS
    // runs `Error.prepareStackTrace` right there, inside the call's binding:
    // program code in the middle of a call that is half made.
    let calls_inside = run("Error.prepareStackTrace = () => echo(1); return await echo(2);").await;
    assert_eq!(value(&calls_inside), json!(2));
    assert_eq!(calls_inside.result.calls, 2);
    let throws = run(r#"
        Error.prepareStackTrace = () => { throw new Error("no"); };
        try { await fail("unknown", "gone"); }
        catch (e) { return [e.stack, e.kind, e.message, await echo(3)]; }
    "#)
    .await;
    assert_eq!(value(&throws), json!([null, "unknown", "gone", 3]));
    let spins = run_with(
        "Error.prepareStackTrace = () => { for (;;) {} }; return await echo(4);",
        with(|b| b.wall_clock = Duration::from_millis(300)),
    )
    .await;
    assert_failed(&spins, FailureKind::Limit, "wall clock");
    // `Error.stackTraceLimit` is read when a call site keeps its frames (the
    // vendored QuickJS writes the stack later): a `valueOf` that calls a
    // tool meanwhile makes that call's site with no stack, as QuickJS's own
    // capture did, instead of reading the limit again without end; one
    // that throws leaves the limit at 0.
    let reads_again = run(r#"
        let reads = 0;
        Error.stackTraceLimit = { valueOf() { reads++; echo(0); return 2; } };
        const answer = await echo(1);
        Error.stackTraceLimit = { valueOf() { throw new Error("no limit"); } };
        const site = await fail("unknown", "x").catch((e) => e);
        Error.stackTraceLimit = 10;
        return [answer, reads, site.stack];
    "#)
    .await;
    assert_eq!(value(&reads_again), json!([1, 1, "ToolError: x"]));
    assert_still_healthy(sandbox()).await;
}

/// Ordinary recursion as deep as Node allows returns: a plain recursion
/// 8,000 calls deep (Node: about 10,800) and an async one 3,000 deep (Node:
/// about 3,000). At a 2 MiB wasm stack they ended `limit` at about 2,800
/// and 1,500 calls, so a recursive walk of a deep tree failed here and not
/// in Node.
#[tokio::test]
async fn recursion_as_deep_as_node_allows_returns() {
    let outcome = run(
        "function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); }\n\
         async function later(n) { return n === 0 ? 0 : 1 + await later(n - 1); }\n\
         return [depth(8000), await later(3000)];",
    )
    .await;
    assert_eq!(value(&outcome), json!([8000, 3000]));
}

/// A recursion ends where the stack ends, not where a counter stands: the
/// guest's only stack check was a guard that looked every 10,000 QuickJS
/// ticks, so how deep a recursion went, and whether it ended as the
/// guard's uncatchable stop or as the wasm stack's trap, moved with the
/// ticks spent before it (any change to the set-up scripts moved them, and
/// two tests with them). QuickJS's own check, at every call, now throws
/// V8's `RangeError`, which a program catches as in Node, at the same depth
/// whatever ran before; uncaught, it ends the run `limit` with its place.
#[tokio::test]
async fn a_recursion_throws_at_the_same_depth_whatever_ran_before_and_can_be_caught() {
    let outcome = run(
        "function spin(n) { let x = 0; for (let i = 0; i < n; i++) x += i; return x; }\n\
         let depth = 0; function down() { depth++; down(); }\n\
         const seen = [];\n\
         for (let ticks = 0; ticks < 10000; ticks += 1250) {\n\
           spin(ticks); depth = 0;\n\
           try { down(); } catch (e) { seen.push([depth, e instanceof RangeError, e.message]); }\n\
         }\n\
         return seen;",
    )
    .await;
    let seen = value(&outcome);
    let seen = seen.as_array().expect("an array");
    assert_eq!(seen.len(), 8, "{seen:?}");
    let first = &seen[0];
    assert!(
        first[0].as_u64().is_some_and(|depth| depth >= 10_000),
        "{first}"
    );
    assert_eq!(first[1], json!(true), "{first}");
    assert_eq!(first[2], json!("Maximum call stack size exceeded"));
    assert!(seen.iter().all(|one| one == first), "{seen:?}");

    let outcome = run("function down(n) { return down(n + 1) + 1; }\nreturn down(0);").await;
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "stack limit: RangeError: Maximum call stack size exceeded at line 1, column",
    );
}

/// Recursions that go through native code between their JavaScript calls
/// (a `map` callback, a constructor, `apply`, a Proxy trap, `yield*`)
/// reach QuickJS's check before the wasm stack's end, so they too throw a
/// `RangeError` a program can catch, as in Node. They ended the run
/// uncatchably ("stack overflow") while the interpreter's native frame was
/// larger (the `switch` dispatch, before PATCHES.md item 14).
#[tokio::test]
async fn recursions_through_native_calls_throw_a_catchable_range_error() {
    let outcome = run(
        "const depths = {};\n\
         function count(name, start) {\n\
           let d = 0;\n\
           try { start(() => d++); } catch (e) { depths[name] = [d, e instanceof RangeError]; }\n\
         }\n\
         count('map', (tick) => { const f = () => { tick(); [1].map(f); }; f(); });\n\
         count('constructor', (tick) => { class C { constructor() { tick(); new C(); } } new C(); });\n\
         count('apply', (tick) => { function f() { tick(); f.apply(null, []); } f(); });\n\
         count('proxy', (tick) => { const p = new Proxy({}, { get(t, k) { tick(); return p[k]; } }); p.x; });\n\
         count('yield*', (tick) => { function* g() { tick(); yield* g(); } [...g()]; });\n\
         return depths;",
    )
    .await;
    let depths = value(&outcome);
    let depths = depths.as_object().expect("an object");
    assert_eq!(depths.len(), 5, "{depths:?}");
    for (name, seen) in depths {
        assert_eq!(seen[1], json!(true), "{name}: {seen}");
        // Node 20 throws at 3,479 to 10,439 calls for these.
        assert!(
            seen[0].as_u64().is_some_and(|depth| depth >= 3_000),
            "{name}: {seen}"
        );
    }
}

/// Calls still queued behind the in-flight cap when the program ended were
/// told as calls whose answers were dropped (and the console counted three
/// where the Result counted one call): they were never sent, and the one
/// sent was cancelled, which the console now says apart.
#[tokio::test]
async fn calls_never_sent_are_told_apart_from_calls_cancelled() {
    let sandbox = wasmwire::Sandbox::new(wasmwire::SandboxOptions {
        max_in_flight: 1,
        ..wasmwire::SandboxOptions::default()
    })
    .unwrap();
    let program = "never(); never(); never();\n\
                   await new Promise((r) => setTimeout(r, 0));\n\
                   return 'bye';";
    let outcome =
        wasmwire_tests::run_on(&sandbox, program, budget(), &wasmwire_tests::tools()).await;
    assert_eq!(value(&outcome), json!("bye"));
    assert_eq!(outcome.result.calls, 1);
    assert_eq!(
        outcome.console,
        "warn: the program ended with 3 tool calls unanswered (never): 1 cancelled while running \
         (work may be half done, answers dropped); 2 never sent (held by the in-flight cap); \
         await a call to have it finish\n"
    );
    // Made in a timer that then threw: the run ended before it could send
    // them, which was told as the cap's doing (with a cap of 64 and one call).
    let program = "setTimeout(() => { never(); never(); throw new Error('in timer'); }, 0);\n\
                   await new Promise((r) => setTimeout(r, 20));\n\
                   return 1;";
    let outcome = run(program).await;
    assert_failed(&outcome, FailureKind::Invalid, "in timer");
    assert_eq!(outcome.result.calls, 0);
    assert!(
        outcome
            .console
            .contains("2 tool calls unanswered (never): 2 never sent (the run ended before it could send them)"),
        "{}",
        outcome.console
    );
}

/// A Sandbox whose pool has `max_children` slots.
fn pooled(max_children: u32) -> Sandbox {
    use wasmwire::wasm::{EngineOptions, Pooling};
    Sandbox::new(SandboxOptions {
        engine: EngineOptions {
            pooling: Some(Pooling {
                max_children,
                max_memory: 64 << 20,
            }),
            ..EngineOptions::default()
        },
        ..SandboxOptions::default()
    })
    .expect("a small pool")
}

/// A run whose future is dropped (a timeout around `run`, an aborted task)
/// stops its child and frees its pool slot: with two slots, ten runs
/// dropped while they compute or wait leave the next run to start at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_run_frees_its_pool_slot() {
    use std::sync::Arc;
    use wasmwire::{Call, HandlerError, Json, Tool, Tools};

    let sandbox = Arc::new(pooled(2));
    let long = with(|b| b.wall_clock = Duration::from_secs(60));
    let tool_set = tools();
    for program in ["while (true) {}", "await delay(100000, 1)"] {
        for _ in 0..5 {
            let execution = Execution::new(program).budget(long);
            let run = sandbox.run(&execution, &tool_set, Default::default());
            let dropped = tokio::time::timeout(Duration::from_millis(20), run).await;
            assert!(dropped.is_err(), "{program}: {dropped:?}");
        }
    }
    // Both slots taken (each run is in its call to `hold`) by tasks that
    // are then aborted.
    let held = Arc::new(tokio::sync::Semaphore::new(0));
    let mut holding = Tools::new();
    let on_hold = held.clone();
    holding
        .register(Tool::new("hold", move |_c: Call| {
            on_hold.add_permits(1);
            std::future::pending::<Result<Json<()>, HandlerError>>()
        }))
        .expect("a tool");
    let running: Vec<_> = (0..2)
        .map(|_| {
            let (sandbox, long, holding) = (sandbox.clone(), long, holding.clone());
            tokio::spawn(async move {
                let execution = Execution::new("await hold()").budget(long);
                sandbox.run(&execution, &holding, Default::default()).await
            })
        })
        .collect();
    // Bounded: had a dropped run above kept its slot, one of these would
    // wait for a slot until its wall clock.
    let _both = tokio::time::timeout(Duration::from_secs(30), held.acquire_many(2))
        .await
        .expect("both runs reach `hold`: no slot was kept by a dropped run")
        .expect("the semaphore stays open");
    for task in running {
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
    }
    // Had a slot been kept, this would wait out its wall clock for one.
    let execution =
        Execution::new("return 1").budget(with(|b| b.wall_clock = Duration::from_secs(5)));
    let outcome = sandbox
        .run(&execution, &tools(), Default::default())
        .await
        .expect("runs");
    assert_eq!(value(&outcome), json!(1), "{outcome:#?}");
}

/// A pool of one slot, held by a run whose tool `hold` answers when
/// `release` is notified; returned once the holder runs.
struct Holder {
    sandbox: std::sync::Arc<Sandbox>,
    tools: wasmwire::Tools,
    release: std::sync::Arc<tokio::sync::Notify>,
    holder: tokio::task::JoinHandle<Result<Outcome, wasmwire::SandboxError>>,
}

async fn holding_the_only_slot() -> Holder {
    use std::sync::Arc;
    use tokio::sync::Notify;
    use wasmwire::{Call, HandlerError, Json, Tool, Tools};

    let sandbox = Arc::new(pooled(1));
    let (held, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let mut tools = Tools::new();
    let (on_hold, on_release) = (held.clone(), release.clone());
    tools
        .register(Tool::new("hold", move |_c: Call| {
            let (held, release) = (on_hold.clone(), on_release.clone());
            async move {
                held.notify_one();
                release.notified().await;
                Ok::<_, HandlerError>(Json("released"))
            }
        }))
        .unwrap();
    let holder = {
        let (sandbox, tools) = (sandbox.clone(), tools.clone());
        tokio::spawn(async move {
            sandbox
                .run(
                    &Execution::new("return await hold();"),
                    &tools,
                    CancellationToken::new(),
                )
                .await
        })
    };
    held.notified().await;
    Holder {
        sandbox,
        tools,
        release,
        holder,
    }
}

/// A run that waits for a pool slot waits inside its wall clock; if that
/// runs out first, its words say the program never started (they said the
/// program "was computing or waiting on a timer"). A cancel made as a run
/// starts (before or during its wait: which, the test cannot see) ends it
/// cancelled, and the slot is free again after the holder ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_waits_out_its_wall_clock_for_a_pool_slot_says_it_never_started() {
    let Holder {
        sandbox,
        tools,
        release,
        holder,
    } = holding_the_only_slot().await;

    let mut waiting = Execution::new("return 1");
    waiting.budget.wall_clock = Duration::from_millis(200);
    let outcome = sandbox
        .run(&waiting, &tools, CancellationToken::new())
        .await
        .unwrap();
    let failure = outcome.value().expect_err("no slot came free");
    assert_eq!(failure.kind, Some(FailureKind::Limit), "{failure:?}");
    assert!(
        failure.message.starts_with(
            "wall clock of 200ms ran out before the program started: the pool's only slot stayed in use for the "
        ) && failure.message.ends_with(" ms it waited (`Pooling::max_children`)"),
        "{}",
        failure.message
    );

    let cancel = CancellationToken::new();
    let cancelling = {
        let cancel = cancel.clone();
        async move {
            tokio::task::yield_now().await;
            cancel.cancel();
        }
    };
    let one = Execution::new("return 1");
    let (outcome, ()) = tokio::join!(sandbox.run(&one, &tools, cancel.clone()), cancelling);
    let failure = outcome.unwrap().into_value().expect_err("cancelled");
    assert_eq!(failure.kind, Some(FailureKind::Cancelled), "{failure:?}");

    release.notify_one();
    let held = holder.await.unwrap().unwrap();
    assert_eq!(held.value(), Ok(&json!("released")));
    // The slot is free again.
    let after = sandbox
        .run(
            &Execution::new("return 2"),
            &tools,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(after.value(), Ok(&json!(2)));
}

/// A run that got its pool slot late, and then ran out of wall clock, says
/// how late it started (tests/HOSTILE.md item 114): 814 of 3,000 runs at
/// once on 1,000 slots got theirs near their deadline and were told only
/// that "the program was computing". Here the only slot is released a
/// second into the waiting run's three, and its program then computes past
/// the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_got_its_pool_slot_late_says_so_when_its_wall_clock_runs_out() {
    let Holder {
        sandbox,
        tools,
        release,
        holder,
    } = holding_the_only_slot().await;
    let mut late = Execution::new("for (;;) {}");
    late.budget.wall_clock = Duration::from_secs(3);
    let releasing = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        release.notify_one();
    };
    let (outcome, ()) = tokio::join!(
        sandbox.run(&late, &tools, CancellationToken::new()),
        releasing
    );
    let failure = outcome.unwrap().into_value().expect_err("out of time");
    assert_eq!(failure.kind, Some(FailureKind::Limit), "{failure:?}");
    assert!(
        failure
            .message
            .starts_with("wall clock of 3s ran out with no tool call running")
            && failure.message.contains(" (it started only after ")
            && failure
                .message
                .ends_with("waiting for the pool's only slot: `Pooling::max_children`)"),
        "{}",
        failure.message
    );
    let held = holder.await.unwrap().unwrap();
    assert_eq!(held.value(), Ok(&json!("released")));
}

/// A program that catches running out of memory is stopped all the same,
/// in the stop's words, which are the heap's refusal: the Result told its
/// figures twice ("... keep less in memory at once (the program's heap
/// could not grow by 760 bytes: ... keep less in memory at once)").
#[tokio::test]
async fn a_caught_refusal_is_told_once() {
    let outcome = run_with(
        "const kept = [];\n\
         try { for (;;) kept.push(new Array(1000).fill(1)); } catch (e) { return String(e); }",
        roomy(),
    )
    .await;
    assert_failed(&outcome, FailureKind::Limit, "could not grow by");
    assert_eq!(
        outcome.result.error.matches("could not grow by").count(),
        1,
        "{}",
        outcome.result.error
    );
    assert_still_healthy(sandbox()).await;
}

/// What the guest holds for a program's calls and timers (a call's args
/// until its Request is written, the tables of calls and timers) lives
/// outside QuickJS's heap. Uncounted, piling them up ran the linear memory
/// into the parent's cap: the host's words, no place, and Rust's "memory
/// allocation of N bytes failed" on the console (tests/HOSTILE.md item
/// 106). Counted with the heap, the run stops at the call or timer that
/// did not fit, in the guest's words, and a program cannot catch it.
#[tokio::test]
async fn calls_and_timers_piled_up_count_towards_the_memory_limit() {
    for (program, place) in [
        // Unawaited calls, each holding a 1 MB string as its args.
        (
            "const s = 'x'.repeat(1e6);\nfor (let i = 0; i < 100; i++) echo(s);\nreturn 1;",
            Some("at line 2"),
        ),
        // Two hundred thousand unawaited calls (a hundred thousand fit
        // since a call made where the last one was shares its frames).
        (
            "const s = 'x';\nfor (let i = 0; i < 200000; i++) echo(i);\nreturn 1;",
            Some("at line 2"),
        ),
        // Two million timers.
        (
            "const s = 'x';\nfor (let i = 0; i < 2000000; i++) setTimeout(() => {}, 100000);\nreturn 1;",
            Some("at line 2"),
        ),
        // Caught: the run still ends there, in the refusal's words.
        (
            "try { for (let i = 0; i < 200000; i++) echo(i); } catch (e) { return String(e); }",
            None,
        ),
    ] {
        let outcome = run_with(program, roomy()).await;
        assert_failed(
            &outcome,
            FailureKind::Limit,
            "held for its calls and timers",
        );
        let error = &outcome.result.error;
        if let Some(place) = place {
            assert!(error.contains(place), "{program}: {error}");
        }
        assert!(
            !outcome.console.contains("memory allocation"),
            "{program}: {}",
            outcome.console
        );
    }
    assert_still_healthy(sandbox()).await;
}

/// A run stopped for its memory with tens of thousands of calls still
/// queued: the warning that tells them copied every call's tool name into
/// a list, the guest's own allocation failed where there was no room left,
/// and the child ended in Rust's "memory allocation of 542796 bytes
/// failed" and the parent's words, without the program's place. Told from
/// a tally of a few names, it ends in the guest's words, every call
/// counted.
#[tokio::test]
async fn a_run_out_of_memory_with_many_calls_queued_tells_them_all() {
    let program = "let n = 0; const ps = [];\n\
                   for (let i = 0; i < 200000; i++) ps.push(echo(i).then(() => n++));\n\
                   await Promise.all(ps);\nreturn n;";
    let outcome = run_with(program, roomy()).await;
    // The guest's words (the parent's were "the child asked for N bytes").
    assert_failed(
        &outcome,
        FailureKind::Limit,
        "the program's heap could not grow",
    );
    assert!(
        !outcome.console.contains("memory allocation"),
        "{}",
        outcome.console
    );
    let told = outcome
        .console
        .split("warn: the program ended with ")
        .nth(1)
        .and_then(|rest| rest.split(" tool calls unanswered (echo)").next())
        .and_then(|count| count.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no count of the calls: {}", outcome.console));
    assert!(told > 10_000, "{told}: {}", outcome.console);
    assert_still_healthy(sandbox()).await;
}

/// What a call holds is given back when it is answered: 200 awaited calls
/// of 1 MB args, 200 MB in all under 64 MiB, end `ok` (each call's args
/// are freed once its Request is written, and the count follows).
#[tokio::test]
async fn what_an_answered_call_held_is_given_back() {
    let outcome = run_with(
        "const s = 'x'.repeat(1e6);\nlet n = 0;\n\
         for (let i = 0; i < 200; i++) n += (await echo(s)).length;\nreturn n;",
        roomy(),
    )
    .await;
    assert_eq!(value(&outcome), json!(200_000_000), "{:?}", outcome.result);
}

/// A console line as large as the heap allows is written from QuickJS's
/// own copy of it, in pieces: 25 MB logged under 64 MiB took three copies
/// of the guest's own and ended at the memory cap, with Rust's allocation
/// message on the console (tests/HOSTILE.md item 107). The parent keeps
/// its console cap's worth, and the run goes on. In time: each piece
/// looked for a line break to the end of the text, so one such line took
/// seconds (8 s for 20 MB; item 108's neighbours), and these two ran out
/// of this wall clock; written in one pass they take a fraction of it.
#[tokio::test]
async fn a_console_line_as_large_as_the_heap_allows_is_written_and_capped() {
    let outcome = run_with(
        "const s = 'x'.repeat(2.5e7);\nconsole.log(s);\nconsole.log(s);\nconsole.log('after');\nreturn 1;",
        Budget {
            wall_clock: Duration::from_secs(5),
            ..budget()
        },
    )
    .await;
    assert_eq!(value(&outcome), json!(1), "{:?}", outcome.result);
    assert!(
        outcome.console.contains("[console output truncated")
            && !outcome.console.contains("memory allocation"),
        "{}",
        &outcome.console[outcome.console.len().saturating_sub(300)..]
    );
}

/// The hints on QuickJS's errors read only the text near their place: a
/// call that is not a function after 2 MB of comment on its line (or 600
/// KB under 16 MiB) copied the line at 16 bytes a character and ended at
/// the memory cap, with Rust's allocation message on the console
/// (tests/HOSTILE.md item 109).
#[tokio::test]
async fn a_hint_on_a_line_of_megabytes_reads_only_near_its_place() {
    for (pad, max_memory) in [(2 << 20, 64 << 20), (600 << 10, 16 << 20)] {
        let program = format!(
            "const o = {{ run() {{}} }};\n/* {} */ let f = 1; o.run(f(2));",
            "a".repeat(pad)
        );
        let outcome = run_with(
            &program,
            Budget {
                max_memory,
                ..budget()
            },
        )
        .await;
        assert_failed(&outcome, FailureKind::Invalid, "not a function");
        assert!(
            outcome
                .result
                .error
                .contains("o.run (or f, called in its arguments)")
                && !outcome.console.contains("memory allocation"),
            "{:?}\n{}",
            outcome.result,
            outcome.console
        );
    }
}

/// An error's message, a thrown string or value, as large as the heap
/// allows, is read only as far as the Result tells it (8 KiB): a 14 MB
/// message was copied whole, twice, and ended at the memory cap with
/// Rust's allocation message instead of the program's error
/// (tests/HOSTILE.md item 107).
#[tokio::test]
async fn an_error_as_large_as_the_heap_allows_is_told_cut() {
    for (program, starts) in [
        (
            "const s = 'x'.repeat(1.4e7);\nthrow new Error(s);",
            "Error: xxx",
        ),
        (
            "const s = '\"'.repeat(9e6);\nthrow s;",
            "uncaught exception: \"\\\"\\\"",
        ),
        // As JSON (QuickJS's own JSON text of 14 MB does not fit 64 MiB).
        (
            "const s = 'y'.repeat(5e6);\nthrow { s };",
            "uncaught exception: {\"s\":\"yyy",
        ),
    ] {
        let outcome = run_with(program, roomy()).await;
        assert_failed(&outcome, FailureKind::Invalid, starts);
        let error = &outcome.result.error;
        assert!(
            error.contains("bytes in all, cut here ...]") && error.contains(" at line 2, column "),
            "{program}: {}",
            &error[error.len().saturating_sub(200)..]
        );
        assert!(error.len() <= wire::MAX_ERROR_BYTES, "{}", error.len());
        assert!(
            !outcome.console.contains("memory allocation"),
            "{}",
            outcome.console
        );
    }
}

/// Text the web surface hands to its Rust half (a URL, a form body, text
/// to encode) is copied out of QuickJS only when what the guest makes of
/// it fits the program's memory: `new URL()` of a 20 MB string was copied
/// three times past the memory cap, with Rust's allocation message on the
/// console (tests/HOSTILE.md item 107). Now the run stops there, in the
/// guest's words; text that fits works as before.
#[tokio::test]
async fn web_natives_take_program_sized_text_only_when_it_fits() {
    for program in [
        "const s = 'x'.repeat(2e7);\nreturn new URL('http://a/?q=' + s).href.length;",
        "const s = 'x'.repeat(2e7);\nreturn new URLSearchParams('a=' + s).get('a').length;",
    ] {
        let outcome = run_with(program, roomy()).await;
        assert_failed(&outcome, FailureKind::Limit, "out of memory at line 2");
        assert!(
            !outcome.console.contains("memory allocation"),
            "{}",
            outcome.console
        );
    }
    let outcome = run_with(
        "const s = 'x'.repeat(2e6);\nconst u = new URL('http://a/?q=' + s);\nu.search = '?b=' + s;\n\
         return [u.href.length, new URLSearchParams('a=' + s).get('a').length, \
         new TextEncoder().encode(s).length];",
        roomy(),
    )
    .await;
    assert_eq!(value(&outcome), json!([2_000_012, 2_000_000, 2_000_000]));
}

/// A tool name no tool can have is refused where `host.call` is made: a
/// 20 MB one was copied into the call, its Request and every error that
/// told it, past the memory cap (tests/HOSTILE.md item 107).
#[tokio::test]
async fn a_tool_name_no_tool_can_have_is_refused_at_the_call() {
    let outcome = run_with(
        "const s = 'x'.repeat(2e7);\n\
         try { await host.call(s); } catch (e) { return [e.name, e.message]; }",
        roomy(),
    )
    .await;
    assert_eq!(
        value(&outcome),
        json!([
            "TypeError",
            "host.call: a tool name of 20000000 bytes names no tool (a name has at most 65536)"
        ])
    );
    assert_eq!(outcome.result.calls, 0);
}
