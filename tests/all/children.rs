//! The process backend with small hostile children (tests/children/child.py).
//! Each case ends in exactly one Result, and the host goes on.

use std::time::{Duration, Instant};

use serde_json::json;
use wasmwire::{
    Budget, Execution, FailureKind, Outcome, ProcessChild, Sandbox, SandboxError, SandboxOptions,
};
use wasmwire_tests::{budget, tools, value};

fn child(mode: &str) -> Sandbox {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/children/child.py");
    Sandbox::with_process(
        ProcessChild::new(format!("exec python3 {script} {mode}")),
        SandboxOptions::default(),
    )
}

fn short() -> Budget {
    Budget {
        wall_clock: Duration::from_secs(3),
        ..budget()
    }
}

async fn run(mode: &str) -> Outcome {
    let execution = Execution::new("return 1").budget(short());
    child(mode)
        .run(&execution, &tools(), Default::default())
        .await
        .expect("starts")
}

fn assert_protocol_violation(outcome: &Outcome, needle: &str) {
    assert!(outcome.protocol_violation(), "{outcome:#?}");
    assert!(
        outcome.result.error.contains(needle),
        "{:?} lacks {needle:?}",
        outcome.result.error
    );
}

#[tokio::test]
async fn a_well_behaved_process_child_calls_a_tool() {
    let outcome = run("echo").await;
    assert_eq!(value(&outcome)["program"], json!("return 1"));
    assert!(
        value(&outcome)["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("echo"))
    );
    assert!(!outcome.counts_disagree, "{outcome:#?}");
}

#[tokio::test]
async fn oversized_and_garbage_prefixes_are_protocol_violations() {
    for hex in ["ffffffff", "80000000", "01000001", "47455420"] {
        let outcome = run(&format!("raw {hex}")).await;
        assert_protocol_violation(&outcome, "over the maximum");
    }
    let outcome = run("raw 00000000").await;
    assert_protocol_violation(&outcome, "zero-length");
}

#[tokio::test]
async fn a_header_promising_16_mib_then_a_trickle_ends_at_the_wall_clock() {
    let t = Instant::now();
    let outcome = run("promise_then_trickle").await;
    assert_eq!(
        outcome.result.kind,
        Some(FailureKind::Limit),
        "{outcome:#?}"
    );
    assert!(t.elapsed() < Duration::from_secs(6));
}

#[tokio::test]
async fn every_other_version_is_a_protocol_violation_naming_both() {
    for v in [0, 2, 99] {
        let outcome = run(&format!("version {v}")).await;
        assert_protocol_violation(
            &outcome,
            &format!("version {v}, this side speaks version 1"),
        );
    }
}

#[tokio::test]
async fn a_duplicate_in_flight_id_is_a_protocol_violation() {
    assert_protocol_violation(&run("duplicate_id").await, "already in flight");
}

#[tokio::test]
async fn a_silent_child_ends_at_the_wall_clock() {
    let t = Instant::now();
    let outcome = run("silent").await;
    assert_eq!(
        outcome.result.kind,
        Some(FailureKind::Limit),
        "{outcome:#?}"
    );
    assert!(outcome.result.error.contains("wall clock"));
    assert!(t.elapsed() < Duration::from_secs(6));
}

#[tokio::test]
async fn a_result_for_another_start_is_a_protocol_violation() {
    assert_protocol_violation(&run("wrong_result_id").await, "does not match");
}

#[tokio::test]
async fn a_child_lying_about_its_counts_is_reported_not_trusted() {
    let outcome = run("lie_about_counts").await;
    assert!(outcome.counts_disagree);
    assert_eq!(outcome.child_counts, Some((99, 12345)));
    assert_eq!((outcome.result.calls, outcome.result.bytes), (0, 0));
}

#[tokio::test]
async fn a_child_that_ignores_eof_is_killed_after_its_result() {
    let t = Instant::now();
    let outcome = run("ignore_eof").await;
    assert_eq!(value(&outcome), json!(1));
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "took {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn a_child_that_exits_mid_frame_or_without_a_result_is_a_protocol_violation() {
    assert_protocol_violation(&run("exit_mid_frame").await, "stream ended inside a frame");
    assert_protocol_violation(
        &run("exit_without_result").await,
        "without sending a Result",
    );
}

#[tokio::test]
async fn a_budget_item_the_backend_cannot_hold_is_refused_before_start() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/children/child.py");
    let sandbox = Sandbox::with_process(
        ProcessChild::new(format!("exec python3 {script} echo")).without_memory_limit(),
        SandboxOptions::default(),
    );
    let execution = Execution::new("return 1").budget(short());
    match sandbox.run(&execution, &tools(), Default::default()).await {
        Err(SandboxError::Unsupported {
            backend: "process",
            item: "max_memory",
        }) => {}
        other => panic!("{other:?}"),
    }
    // Without that item it runs.
    let execution = Execution::new("return 1").budget(Budget {
        max_memory: 0,
        ..short()
    });
    let outcome = sandbox
        .run(&execution, &tools(), Default::default())
        .await
        .unwrap();
    assert!(outcome.result.ok, "{outcome:#?}");
}
