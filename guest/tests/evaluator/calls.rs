//! Calls in flight: concurrency, answers by id, failures, the channel's end.

use wire::FailureKind;

use crate::fake::{Order, Tools, run};

#[test]
fn fifty_concurrent_calls_are_all_sent_before_the_first_answer_is_awaited() {
    let program = "return await Promise.all(Array.from({ length: 50 }, (_, i) => echo({ i })));";
    let run = run(
        program,
        &[("echo", "")],
        Tools::new().echo("echo").order(Order::Lifo),
    );
    assert_eq!(run.tools.sent.len(), 50);
    assert_eq!(run.tools.in_flight_at_first_recv, Some(50));
    // Answered newest first, yet each promise got its own answer.
    assert_eq!(run.tools.answered.first().map(String::as_str), Some("50"));
    let expected: Vec<String> = (0..50).map(|i| format!(r#"{{"i":{i}}}"#)).collect();
    assert_eq!(run.value(), format!("[{}]", expected.join(",")));
}

#[test]
fn answers_in_reverse_order_settle_the_right_calls() {
    let program = r#"
        const [a, b, c] = await Promise.all([tool('a'), tool('b'), tool('c')]);
        return a + b + c;"#;
    let tools = Tools::new()
        .tool("tool", |args| Ok(format!("\"{args}!\"")))
        .order(Order::Lifo);
    let run = run(program, &[("tool", "")], tools);
    assert_eq!(run.tools.answered, ["3", "2", "1"]);
    assert_eq!(run.value(), r#""a!b!c!""#);
}

#[test]
fn a_value_that_is_not_json_resolves_to_the_raw_string() {
    let tools = Tools::new()
        .tool("text", |_| Ok("not json {".to_owned()))
        .tool("empty", |_| Ok(String::new()))
        .tool("json", |_| Ok(" [1, {\"a\": true}] ".to_owned()));
    let program = "return [await text(), await empty(), await json()];";
    let run = run(program, &[("text", ""), ("empty", ""), ("json", "")], tools);
    assert_eq!(run.value(), r#"["not json {","",[1,{"a":true}]]"#);
}

#[test]
fn a_failed_call_rejects_with_a_tool_error_the_program_can_catch_and_inspect() {
    let program = r#"
        try {
            await get_logs('db1', 1);
        } catch (e) {
            return { name: e.name, kind: e.kind, retryable: e.retryable, message: e.message, tool: e.tool,
                     isToolError: e instanceof ToolError, isError: e instanceof Error,
                     shown: String(e), json: JSON.parse(JSON.stringify(e)) };
        }"#;
    let tools = Tools::new().failing("get_logs", FailureKind::RateLimited, "slow down");
    let run = run(program, &[("get_logs", "get_logs(host, count)")], tools);
    assert_eq!(
        run.value(),
        r#"{"name":"ToolError","kind":"rate_limited","retryable":true,"message":"slow down","tool":"get_logs","isToolError":true,"isError":true,"shown":"ToolError: slow down","json":{"message":"slow down","kind":"rate_limited","retryable":true,"tool":"get_logs"}}"#
    );
}

#[test]
fn retryable_follows_the_failure_kind_table() {
    for kind in FailureKind::ALL {
        let tools = Tools::new().failing("t", kind, "x");
        let run = run(
            "try { await t(); } catch (e) { return [e.kind, e.retryable]; }",
            &[("t", "")],
            tools,
        );
        assert_eq!(
            run.value(),
            format!(r#"["{}",{}]"#, kind.as_str(), kind.retryable())
        );
    }
}

#[test]
fn a_program_can_branch_on_the_kind_and_retry() {
    let mut attempts = 0;
    let tools = Tools::new().tool("flaky", move |_| {
        attempts += 1;
        if attempts < 3 {
            Err(wire::ToolFailure::new(FailureKind::Transient, "try again"))
        } else {
            Ok("\"done\"".to_owned())
        }
    });
    let program = include_str!("../../sample-scripts/retry.js");
    let run = run(program, &[("flaky", "")], tools);
    assert_eq!(run.value(), r#"{"value":"done","attempts":3}"#);
}

#[test]
fn an_uncaught_tool_error_ends_the_run_with_its_own_kind() {
    let tools = Tools::new().failing("delete_db", FailureKind::Denied, "a person must approve");
    let run = run(
        "const x = 1;\nawait delete_db('prod');",
        &[("delete_db", "delete_db(name)")],
        tools,
    );
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Denied);
    assert_eq!(
        error,
        "ToolError from delete_db: a person must approve at line 2, column 7"
    );
}

#[test]
fn an_uncaught_rejection_from_promise_all_keeps_the_failing_calls_kind() {
    let tools = Tools::new()
        .echo("ok")
        .failing("missing", FailureKind::NotFound, "no such host");
    let run = run(
        "return await Promise.all([ok(1), missing(2), ok(3)]);",
        &[("ok", ""), ("missing", "")],
        tools,
    );
    assert_eq!(run.failure().0, FailureKind::NotFound);
}

#[test]
fn an_unknown_tool_fails_as_the_parent_says() {
    let run = run("return await host.call('nope', '');", &[], Tools::new());
    assert_eq!(run.failure().0, FailureKind::NotFound);
}

#[test]
fn a_look_alike_tool_error_does_not_choose_the_kind() {
    let program =
        "throw Object.assign(new ToolError('fake'), { kind: 'limit', retryable: false });";
    let (kind, _) = run(program, &[], Tools::new()).failure();
    assert_eq!(kind, FailureKind::Invalid);
    let program = "throw { name: 'ToolError', kind: 'denied', message: 'fake' };";
    let (kind, _) = run(program, &[], Tools::new()).failure();
    assert_eq!(kind, FailureKind::Invalid);
}

#[test]
fn a_tool_errors_kind_cannot_be_rewritten() {
    let program = r#"
        try { await t(); } catch (e) {
            e.kind = 'transient'; e.retryable = true;
            throw e;
        }"#;
    let run = run(
        program,
        &[("t", "")],
        Tools::new().failing("t", FailureKind::Denied, "no"),
    );
    assert_eq!(run.failure().0, FailureKind::Denied);
}

#[test]
fn a_rethrown_tool_error_keeps_its_kind_and_a_message_the_program_amended() {
    let program = r#"
        try { await t(); } catch (e) {
            e.message = 'while fetching: ' + e.message;
            throw e;
        }"#;
    let run = run(
        program,
        &[("t", "")],
        Tools::new().failing("t", FailureKind::Transient, "timeout"),
    );
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Transient);
    assert!(error.contains("while fetching: timeout"), "{error}");
}

#[test]
fn calls_and_bytes_are_reported_as_the_transport_counted_them() {
    let tools = Tools::new()
        .tool("t", |_| Ok("\"12345\"".to_owned()))
        .failing("f", FailureKind::Unknown, "x");
    let program = "await t(); await t(); try { await f(); } catch {} return 1;";
    let run = run(program, &[("t", ""), ("f", "")], tools);
    assert_eq!((run.result.calls, run.result.bytes), (3, 14));
}

#[test]
fn a_closed_call_channel_fails_the_calls_in_flight_as_cancelled() {
    let program = r#"
        const first = await t('a');
        const rest = await Promise.allSettled([t('b'), t('c')]);
        let late;
        try { await t('d'); } catch (e) { late = e.kind; }
        return [first, rest.map(r => r.status + ':' + (r.reason && r.reason.kind)), late];"#;
    let run = run(program, &[("t", "")], Tools::new().echo("t").close_after(1));
    assert_eq!(
        run.value(),
        r#"["a",["rejected:cancelled","rejected:cancelled"],"cancelled"]"#
    );
}

#[test]
fn an_uncaught_cancellation_ends_as_cancelled() {
    let run = run(
        "await t('a'); await t('b');",
        &[("t", "")],
        Tools::new().echo("t").close_after(1),
    );
    assert_eq!(run.failure().0, FailureKind::Cancelled);
}

#[test]
fn a_protocol_violation_ends_the_run_without_a_kind() {
    let run = run(
        "await t('a');",
        &[("t", "")],
        Tools::new().echo("t").protocol_error_after(0),
    );
    assert!(!run.result.ok);
    assert_eq!(run.result.kind, None);
    assert!(
        run.result.error.contains("unknown id"),
        "{}",
        run.result.error
    );
}

#[test]
fn calls_made_but_not_awaited_are_still_sent() {
    let run = run(
        "t('fire and forget');\nreturn 1;",
        &[("t", "")],
        Tools::new().echo("t"),
    );
    assert_eq!(run.value(), "1");
    assert_eq!(run.tools.args_sent(), ["fire and forget"]);
}

#[test]
fn replacing_promise_then_does_not_stop_calls_from_settling() {
    let program = r#"
        Promise.prototype.then = function () { throw new Error('hijacked'); };
        Object.prototype.then = undefined;
        return await t('x');"#;
    let run = run(program, &[("t", "")], Tools::new().echo("t"));
    assert_eq!(run.value(), r#""x""#);
}
