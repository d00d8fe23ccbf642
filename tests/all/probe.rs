//! The probe child (tests/probe-child): a component that is not the QuickJS
//! guest and that tries every way out from inside, at the WASI level. It
//! proves isolation below JavaScript (the JS-level tests can only show that
//! JS has no APIs) and that any component implementing the `child` world
//! runs, limited and served like the guest.
//!
//! The same probe built natively and run as a process child finds every
//! door open: that checks that the probe and the checker can see one.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};
use wasmwire::{Budget, Execution, Outcome, ProcessChild, Sandbox, SandboxOptions};
use wasmwire_tests::probe::{
    Listeners, STD_ATTEMPTS, STD_HANDED, WASI_ATTEMPTS, WASI_HANDED, missing_controls, violations,
};
use wasmwire_tests::{budget, tools, value};

/// Built from source by tests/build.rs.
const PROBE_WASM: &str = env!("WASMWIRE_PROBE_WASM");
const PROBE_NATIVE: &str = env!("WASMWIRE_PROBE_NATIVE");

fn probe_component() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        let bytes = std::fs::read(PROBE_WASM).expect("the probe component was built");
        Sandbox::with_component(&bytes, SandboxOptions::default()).expect("the probe is a child")
    })
}

async fn run_probe(sandbox: &Sandbox, listeners: &Listeners, budget: Budget) -> (Outcome, Value) {
    let execution = Execution::new(listeners.program()).budget(budget);
    let outcome = sandbox
        .run(&execution, &tools(), Default::default())
        .await
        .expect("the probe starts");
    let report = value(&outcome);
    (outcome, report)
}

#[tokio::test]
async fn the_probe_component_finds_every_way_out_shut_from_inside() {
    // Twice on the same Sandbox: the second run proves it still works.
    for run in 0..2 {
        let listeners = Listeners::bind();
        let (outcome, report) = run_probe(probe_component(), &listeners, budget()).await;
        let shut = violations(&report, true);
        assert!(shut.is_empty(), "run {run}: {shut:#?}\n{report:#}");
        let controls = missing_controls(&report, true);
        assert!(controls.is_empty(), "run {run}: {controls:#?}\n{report:#}");
        assert_eq!(listeners.arrivals(), Vec::<String>::new(), "run {run}");
        // A foreign child is served like the guest: one call, counted by
        // the parent, reconciled with the child's own counts.
        assert_eq!(outcome.result.calls, 1);
        assert!(!outcome.counts_disagree, "{outcome:#?}");
        assert!(outcome.console.contains("attempts made"), "{outcome:#?}");
    }
}

/// Every field the checker reads can make it fail: a report from the real
/// component, with one way out at a time shown open, one list at a time
/// handed something, or one attempt left out.
#[tokio::test]
async fn the_checker_flags_each_way_out_shown_open() {
    let listeners = Listeners::bind();
    let (_, clean) = run_probe(probe_component(), &listeners, budget()).await;
    assert!(violations(&clean, true).is_empty());
    for name in STD_ATTEMPTS.iter().chain(WASI_ATTEMPTS) {
        let mut open = clean.clone();
        open["attempts"][*name] = json!({"ok": true, "detail": "made up"});
        let found = violations(&open, true);
        assert_eq!(found, vec![format!("{name} got through: \"made up\"")]);
        let mut skipped = clean.clone();
        skipped["attempts"].as_object_mut().unwrap().remove(*name);
        assert_eq!(
            violations(&skipped, true),
            vec![format!("{name} was not attempted")]
        );
    }
    for name in STD_HANDED.iter().chain(WASI_HANDED) {
        let mut handed = clean.clone();
        handed["handed"][*name] = json!(["SECRET=1"]);
        assert_eq!(violations(&handed, true).len(), 1, "{name}");
    }
    let mut not_wasi = clean.clone();
    not_wasi["wasi"] = json!(false);
    assert_eq!(violations(&not_wasi, true).len(), 1);
}

/// The same probe, native, as a process child: the doors it found shut in
/// the component are open on the real machine, and the checker says so for
/// every one of them (and the listeners see the connection and datagram).
#[tokio::test]
async fn the_native_probe_finds_the_doors_open() {
    let sandbox = Sandbox::with_process(
        ProcessChild::new(PROBE_NATIVE).without_memory_limit(),
        SandboxOptions::default(),
    );
    let listeners = Listeners::bind();
    let budget = Budget {
        wall_clock: Duration::from_secs(20),
        max_memory: 0,
        ..budget()
    };
    let (_, report) = run_probe(&sandbox, &listeners, budget).await;
    let open = violations(&report, false);
    for name in STD_ATTEMPTS {
        assert!(
            open.iter()
                .any(|v| v.starts_with(&format!("{name} got through"))),
            "{name} did not get through natively: {open:#?}\n{report:#}"
        );
    }
    // The process backend clears the environment but for PATH.
    assert!(
        open.iter().any(|v| v.starts_with("std_env was handed")),
        "{open:#?}"
    );
    let arrived = listeners.arrivals();
    assert!(
        arrived.iter().any(|a| a.starts_with("a TCP connection"))
            && arrived.iter().any(|a| a.contains("datagram")),
        "{arrived:?}"
    );
    assert!(missing_controls(&report, false).is_empty(), "{report:#}");
}

/// A child that traps while it writes a Request leaves a frame cut short on
/// the call channel: the verdict is how it ended (its trap), never a
/// protocol violation. In the component the trap comes first and the cut
/// frame is read after it; as a process the two come in either order.
/// The case met: an honest guest stopped by its own wall clock's epoch
/// while writing a 2 MB Request, just before the parent's timer fired.
#[tokio::test]
async fn a_child_that_traps_mid_request_is_a_trap_not_a_protocol_violation() {
    // `exec`, so that the signal that ends the probe is the child's own end
    // (`sh -c` would turn it into an exit code).
    let native = Sandbox::with_process(
        ProcessChild::new(format!("exec {PROBE_NATIVE}")).without_memory_limit(),
        SandboxOptions::default(),
    );
    let unlimited = Budget {
        max_memory: 0,
        ..budget()
    };
    for (sandbox, budget, trapped) in [
        (probe_component(), budget(), "wasm trap: wasm `unreachable`"),
        (&native, unlimited, "killed by signal 6"),
    ] {
        for _ in 0..3 {
            let execution = Execution::new("cut a Request short, then trap").budget(budget);
            let outcome = sandbox
                .run(&execution, &tools(), Default::default())
                .await
                .expect("the probe starts");
            assert!(!outcome.protocol_violation(), "{outcome:#?}");
            assert_eq!(
                outcome.result.kind,
                Some(wasmwire::FailureKind::Unknown),
                "{outcome:#?}"
            );
            assert!(outcome.result.error.contains(trapped), "{outcome:#?}");
            assert_eq!(outcome.result.calls, 0, "{outcome:#?}");
        }
    }
}
