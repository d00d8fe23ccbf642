//! Every case of tests/hostile/ through the library: exactly one Result of
//! the stated kind, within the budget plus a small grace, and the same
//! Sandbox healthy afterwards. Prints a table (run with --nocapture).

use std::time::Duration;

use wasmwire::Budget;
use wasmwire_tests::hostile::cases;
use wasmwire_tests::{assert_still_healthy, run_with, sandbox};

/// How far past its wall clock a time-limited case may end. Generous for a
/// loaded 2-core CI machine; the table printed shows the real figure.
const GRACE: Duration = Duration::from_millis(1500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_program_ends_in_its_one_result_and_the_sandbox_survives() {
    let cases = cases();
    assert!(cases.len() >= 30, "found only {} cases", cases.len());
    let mut failures = Vec::new();
    eprintln!(
        "{:<34} {:>10} {:>10} {:>9}  result",
        "case", "budget", "elapsed", "grace"
    );
    for case in &cases {
        let budget = Budget {
            wall_clock: Duration::from_millis(case.wall_clock_ms),
            max_memory: case.max_memory_mib << 20,
            max_bytes: case.max_bytes,
            ..Budget::default()
        };
        // From the Start: building the shared Sandbox (the first case may
        // pay for compiling the guest) is not the child's time.
        let outcome = run_with(&case.program, budget).await;
        let elapsed = outcome.elapsed;
        let grace = elapsed.saturating_sub(budget.wall_clock);
        eprintln!(
            "{:<34} {:>10?} {:>10.1?} {:>9.1?}  {}",
            case.name,
            budget.wall_clock,
            elapsed,
            grace,
            outcome.result.kind.map_or("ok", |k| k.as_str())
        );
        let r = &outcome.result;
        let kind = (!r.ok).then(|| r.kind.map_or("(none)", |k| k.as_str()));
        if let Err(why) = case.check(kind, &r.error, &r.value, &outcome.console) {
            failures.push(format!("{}: {why}", case.name));
        }
        if grace > GRACE {
            failures.push(format!(
                "{}: ended {grace:?} past its wall clock",
                case.name
            ));
        }
        assert_still_healthy(sandbox()).await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
