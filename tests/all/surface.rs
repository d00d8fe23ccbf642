//! The library's surface as an embedder meets it: safe defaults, values as
//! JSON by contract, typed errors, tool names a program can call, per-tool
//! timeouts and a live console.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::Notify;
use wasmwire::{
    Budget, Call, CancellationToken, Execution, ExecutionError, FailureKind, HandlerError, Json,
    JsonText, Text, Tool, Tools,
};
use wasmwire_tests::sandbox;

async fn run(execution: &Execution, tools: &Tools) -> wasmwire::Outcome {
    sandbox()
        .run(execution, tools, CancellationToken::new())
        .await
        .expect("the execution starts")
}

/// Every global the built-in child gives a program is refused as a tool
/// name, so a tool can never be shadowed by one and unreachable by name.
/// Read from the real guest, so a global added there fails this test until
/// the host refuses it too.
#[tokio::test]
async fn every_global_of_the_child_is_refused_as_a_tool_name() {
    let program = r#"
        const names = new Set();
        for (let o = globalThis; o; o = Object.getPrototypeOf(o)) {
            for (const n of Object.getOwnPropertyNames(o)) names.add(n);
        }
        return [...names];
    "#;
    let outcome = run(&Execution::new(program), &Tools::new()).await;
    let names = outcome.value().expect("lists its globals").clone();
    let names: Vec<String> = serde_json::from_value(names).unwrap();
    assert!(names.len() > 40, "{names:?}");
    for name in names {
        let tool = Tool::new(name.as_str(), |_c: Call| async {
            Ok::<_, HandlerError>(Json(1))
        });
        let refused = Tools::new().register(tool).is_err();
        assert!(
            refused,
            "{name:?} is a global of the child, yet a tool may take it"
        );
    }
}

/// `Execution::new` runs under the default budget: 64 MiB of memory (and a
/// 10 s wall clock), so a program that allocates without end is stopped.
#[tokio::test]
async fn a_new_execution_has_the_safe_default_budget() {
    let execution = Execution::new("const a = []; for (;;) a.push(new Array(1 << 16).fill(7));");
    assert_eq!(execution.budget, Budget::default());
    assert_eq!(
        execution.budget,
        Budget {
            wall_clock: Duration::from_secs(10),
            max_calls: 0,
            max_bytes: 0,
            max_memory: 64 << 20,
        }
    );
    let outcome = run(&execution, &Tools::new()).await;
    let failure = outcome.value().expect_err("stopped by the memory cap");
    assert_eq!(failure.kind, Some(FailureKind::Limit), "{failure}");
    assert!(failure.message.contains("memory"), "{failure}");
    assert!(
        outcome.elapsed < Duration::from_secs(10),
        "the memory cap, not the wall clock"
    );
}

#[tokio::test]
async fn the_value_is_json_and_a_failure_is_a_typed_error() {
    let outcome = run(
        &Execution::new("return {a: [1, 'two', null]}"),
        &Tools::new(),
    )
    .await;
    assert_eq!(outcome.value(), Ok(&json!({"a": [1, "two", null]})));
    let outcome = run(&Execution::new("let x = 1;"), &Tools::new()).await;
    assert_eq!(outcome.into_value(), Ok(json!(null)));
    let outcome = run(&Execution::new("throw new TypeError('bad')"), &Tools::new()).await;
    let failure: ExecutionError = outcome.into_value().unwrap_err();
    assert_eq!(failure.kind, Some(FailureKind::Invalid));
    assert!(failure.message.contains("TypeError: bad"), "{failure}");
    assert!(failure.to_string().starts_with("invalid: "), "{failure}");
    assert!(!failure.is_protocol_violation());
}

/// A text tool that answers `123` hands the program the string "123"; a
/// JSON tool, the number. Nothing is guessed.
#[tokio::test]
async fn text_stays_text_and_json_stays_json() {
    let mut tools = Tools::new();
    tools
        .register(Tool::new("text", |_c: Call| async {
            Ok::<_, HandlerError>(Text("123".into()))
        }))
        .unwrap()
        .register(Tool::new("value", |_c: Call| async {
            Ok::<_, HandlerError>(json!(123))
        }))
        .unwrap()
        .register(Tool::new("typed", |_c: Call| async {
            Ok::<_, HandlerError>(Json(vec![("a", 1)]))
        }))
        .unwrap()
        .register(Tool::new("checked", |_c: Call| async {
            Ok::<_, HandlerError>(JsonText::new("[true]")?)
        }))
        .unwrap();
    let program = "return [await text(), await value(), await typed(), await checked()].map(v => [typeof v, v]);";
    let outcome = run(&Execution::new(program), &tools).await;
    assert_eq!(
        outcome.value(),
        Ok(&json!([
            ["string", "123"],
            ["number", 123],
            ["object", [["a", 1]]],
            ["object", [true]]
        ]))
    );
}

/// A tool's own timeout answers the call `transient` and drops the handler;
/// the program's own deadline, if shorter, still wins.
#[tokio::test]
async fn a_tool_timeout_answers_transient() {
    let dropped = Arc::new(Notify::new());
    let mut tools = Tools::new();
    let on_drop = dropped.clone();
    tools
        .register(
            Tool::new("stuck", move |_c: Call| {
                let guard = NotifyOnDrop(on_drop.clone());
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    Ok::<_, HandlerError>(Json(0))
                }
            })
            .timeout(Duration::from_millis(150)),
        )
        .unwrap();
    let program = r#"
        const out = [];
        for (const opts of [undefined, {deadlineMs: 50}]) {
            try { await host.call("stuck", "", opts); out.push("answered"); }
            catch (e) { out.push([e.kind, e.message]); }
        }
        return out;
    "#;
    let started = Instant::now();
    let notified = dropped.notified();
    let outcome = run(&Execution::new(program), &tools).await;
    assert_eq!(
        outcome.value(),
        Ok(&json!([
            ["transient", "the tool's timeout of 150 ms passed"],
            ["transient", "the call's deadline of 50 ms passed"]
        ]))
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    // The handler's future was dropped at the timeout, not left running.
    tokio::time::timeout(Duration::from_secs(5), notified)
        .await
        .expect("dropped");
}

struct NotifyOnDrop(Arc<Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// A tool whose name cannot be a global is refused, unless registered
/// call-only; then `host.call` reaches it.
#[tokio::test]
async fn a_call_only_tool_is_reached_through_host_call() {
    let tool = || {
        Tool::new("search-docs", |c: Call| async move {
            Ok::<_, HandlerError>(Text(c.args))
        })
    };
    let err = Tools::new().register(tool()).unwrap_err().to_string();
    assert!(
        err.contains("not a plain ASCII JavaScript identifier"),
        "{err}"
    );
    let mut tools = Tools::new();
    tools.register(tool().call_only()).unwrap();
    let outcome = run(
        &Execution::new("return await host.call('search-docs', 'q=1')"),
        &tools,
    )
    .await;
    assert_eq!(outcome.value(), Ok(&json!("q=1")));
}

/// The console sink gets each line while the program runs: the tool the
/// program calls after logging answers only once the sink has seen the
/// line (else it waits out the wall clock).
#[tokio::test]
async fn the_console_sink_hears_lines_as_they_happen() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let heard = Arc::new(Notify::new());
    let mut tools = Tools::new();
    let (waiting_seen, waiting_heard) = (seen.clone(), heard.clone());
    tools
        .register(Tool::new("after_ready", move |_c: Call| {
            let (seen, heard) = (waiting_seen.clone(), waiting_heard.clone());
            async move {
                loop {
                    let notified = heard.notified();
                    if seen.lock().unwrap().iter().any(|l| l == "ready") {
                        return Ok::<_, HandlerError>(Text("went".into()));
                    }
                    notified.await;
                }
            }
        }))
        .unwrap();
    let (sink_seen, sink_heard) = (seen.clone(), heard.clone());
    let execution = Execution::new(
        "console.log('ready'); console.log('a\\x1b[2Jb'); const r = await after_ready(); console.log('done'); process",
    )
    .budget(Budget { wall_clock: Duration::from_secs(5), ..Budget::default() })
    .console_sink(move |line| {
        sink_seen.lock().unwrap().push(line.to_string());
        sink_heard.notify_one();
    });
    let outcome = run(&execution, &tools).await;
    // `process` does not exist: the program fails after its last line.
    assert_eq!(
        outcome.value().unwrap_err().kind,
        Some(FailureKind::Invalid)
    );
    assert_eq!(
        *seen.lock().unwrap(),
        ["ready", "a\\x1b[2Jb", "done"],
        "in order, control characters written out"
    );
    assert_eq!(outcome.console, "ready\na\\x1b[2Jb\ndone\n");
}

/// Past the console cap the sink hears one line saying so, and nothing more.
#[tokio::test]
async fn the_console_sink_stops_at_the_cap() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink_seen = seen.clone();
    let execution = Execution::new("for (let i = 0; i < 100000; i++) console.log('line ' + i);")
        .console_sink(move |line| sink_seen.lock().unwrap().push(line.to_string()));
    let outcome = run(&execution, &Tools::new()).await;
    assert!(outcome.value().is_ok(), "{outcome:?}");
    let seen = seen.lock().unwrap();
    let streamed: usize = seen.iter().map(|l| l.len() + 1).sum();
    assert!(
        streamed <= wasmwire::console::DEFAULT_CONSOLE_CAP + 200,
        "{streamed}"
    );
    assert!(
        seen.last().unwrap().contains("truncated"),
        "{:?}",
        seen.last()
    );
    assert_eq!(seen.iter().filter(|l| l.contains("truncated")).count(), 1);
    assert_eq!(seen[0], "line 0");
}

/// A handler whose every await is ready at once (a channel it fills as it
/// drains, a fast socket) never gives its thread back by itself: tokio's
/// cooperative budget is what makes it yield, so its timeout and the wall
/// clock can fire. Each run here ran for ever when the whole execution was
/// polled outside that budget. Run on a thread of its own, so that a
/// handler that holds its thread fails this test instead of hanging it.
#[test]
fn a_handler_that_never_waits_still_meets_its_timeout_and_the_wall_clock() {
    fn spinning(name: &str) -> Tool {
        Tool::new(name, |_c: Call| async {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1);
            let mut turns = 0u64;
            loop {
                tx.send(turns).await.expect("the receiver is here");
                turns += rx.recv().await.expect("the sender is here") + 1;
            }
            #[allow(unreachable_code)]
            Ok::<_, HandlerError>(Json(turns))
        })
    }
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let outcomes = runtime.block_on(async {
            let mut tools = Tools::new();
            tools
                .register(spinning("timed").timeout(Duration::from_millis(100)))
                .unwrap();
            tools.register(spinning("untimed")).unwrap();
            let timed = run(
                &Execution::new(
                    "try { await timed(); return 'answered'; } catch (e) { return [e.kind, e.message]; }",
                ),
                &tools,
            )
            .await;
            let mut untimed = Execution::new("return await untimed();");
            untimed.budget.wall_clock = Duration::from_millis(300);
            let untimed = run(&untimed, &tools).await;
            (timed, untimed)
        });
        let _ = done.send(outcomes);
        // A spinning handler still running would hold the runtime's drop.
        std::mem::forget(runtime);
    });
    let (timed, untimed) = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("both executions end within a minute: a spinning handler held its thread");
    assert_eq!(
        timed.value(),
        Ok(&json!(["transient", "the tool's timeout of 100 ms passed"]))
    );
    let failure = untimed.value().expect_err("the wall clock ends it");
    assert_eq!(failure.kind, Some(FailureKind::Limit), "{failure:?}");
    assert!(
        failure
            .message
            .contains("wall clock of 300ms ran out with 1 tool call still running: untimed"),
        "{}",
        failure.message
    );
}
