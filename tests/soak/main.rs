//! The soak: mixed hostile executions, 50 at once, for at least two minutes
//! (`WASMWIRE_SOAK_SECONDS`, default 120), on the product's defaults (the
//! pooling allocator on). Every class of hostile input the parent must hold
//! against is in the mix: every program of tests/hostile/, and process
//! children that flood without end, never read their answers, pin args the
//! parent would hold, leave their process group, start daemons in a session
//! of their own, fork past their memory cap, answer ok after the kernel
//! cut them for memory, or lie in their Result.
//!
//! It must give exactly one Result of the expected kind for each execution,
//! leave no process behind (the processes of tests/children are listed
//! before and after), and keep the parent's RSS flat from round to round
//! once warm. Its own test binary, because it measures the whole process.
//! Prints its figures (run with --nocapture); tests/HOSTILE.md records them.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use wasmwire::Budget;
use wasmwire_tests::hostile::{Case, cases};
use wasmwire_tests::{
    children, mib, rss_breakdown, rss_bytes, run_on, sandbox, steady_allocator, tools,
};

const AT_ONCE: usize = 50;

/// How far the peak RSS of the later warm rounds may rise above the peak of
/// the earlier ones (see the end of the test for why peaks, and what leak
/// this catches).
const RSS_MARGIN: u64 = 16 << 20;

/// One entry of the mix: what to run, where, and what must come of it.
struct Entry {
    case: Case,
    process: bool,
}

/// A process child's case, in the same shape as a hostile program's.
fn child(mode: &str, kind: Option<&str>, error: Option<&str>, wall_ms: u64, mem_mib: u64) -> Entry {
    Entry {
        case: Case {
            name: format!("child {}", mode.split_whitespace().next().unwrap_or(mode)),
            program: mode.to_string(),
            kind: kind.map(str::to_string),
            error: error.map(str::to_string),
            value: None,
            console: None,
            wall_clock_ms: wall_ms,
            max_memory_mib: mem_mib,
            max_bytes: 0,
        },
        process: true,
    }
}

/// Hostile programs the mix leaves to the solo runners (`tests/all`'s and
/// the CLI's hostile suites): each needs seconds of a core alone, which
/// fifty at once on two cores do not give it within its own wall clock.
/// The two deep ones take 3-4.5 s before their `limit`, because QuickJS's
/// `JSON.stringify` looks for a cycle in the whole chain above each level
/// it enters, so the cost grows with the square of the depth the 8 MiB
/// wasm stack lets it reach; `echo_flood_1mib` copies 200 MiB through the
/// call channel (2.7 s alone). In the mix their wall clocks ran out
/// before their stack or their answers came, in every other round.
const SOLO_ONLY: &[&str] = &["deep_tool_args", "json_stringify_deep", "echo_flood_1mib"];

fn mix(round: usize) -> Vec<Entry> {
    let mut mix: Vec<Entry> = cases()
        .into_iter()
        .filter(|case| !SOLO_ONLY.contains(&case.name.as_str()))
        .map(|case| Entry {
            case,
            process: false,
        })
        .collect();
    let daemon = std::env::temp_dir().join(format!("wasmwire-soak-{}-{round}", std::process::id()));
    let _ = std::fs::remove_file(&daemon);
    mix.extend([
        child("echo", None, None, 5_000, 64),
        child(
            "flood_no_result 20000 echo",
            Some("limit"),
            Some("wall clock"),
            1_000,
            0,
        ),
        child(
            "flood_forever echo",
            Some("limit"),
            Some("wall clock"),
            1_000,
            0,
        ),
        child("flood_unread 20000", None, None, 20_000, 0),
        child("big_calls_unread 16 never 15", None, None, 20_000, 0),
        child("leave_group", None, None, 5_000, 64),
        child(
            &format!("setsid_daemon {}", daemon.display()),
            None,
            None,
            5_000,
            64,
        ),
        child(
            "fork_memory 8 36",
            Some("limit"),
            Some("memory"),
            10_000,
            64,
        ),
        child("oom_then_ok 66", Some("limit"), Some("memory"), 10_000, 64),
        child(
            "result_ok_with_kind",
            Some("(none)"),
            Some("carries a failure kind"),
            5_000,
            64,
        ),
        child(
            "result_not_json",
            Some("(none)"),
            Some("is not JSON"),
            5_000,
            64,
        ),
        child(
            "result_huge_error 15",
            Some("invalid"),
            Some("more bytes cut"),
            5_000,
            64,
        ),
        child("silent", Some("limit"), Some("wall clock"), 500, 64),
        child(
            "exit_without_result",
            Some("(none)"),
            Some("without sending a Result"),
            5_000,
            64,
        ),
    ]);
    mix
}

/// One round: every entry of the mix, `AT_ONCE` at a time. Returns the
/// failures and how many ran.
async fn round(r: usize) -> (Vec<String>, usize) {
    let mix = Arc::new(mix(r));
    let tools = Arc::new(tools());
    let gate = Arc::new(Semaphore::new(AT_ONCE));
    let mut runs = tokio::task::JoinSet::new();
    for i in 0..mix.len() {
        let (mix, tools, gate) = (mix.clone(), tools.clone(), gate.clone());
        runs.spawn(async move {
            let _permit = gate.acquire_owned().await.unwrap();
            let entry = &mix[i];
            let budget = Budget {
                wall_clock: Duration::from_millis(entry.case.wall_clock_ms),
                max_memory: entry.case.max_memory_mib << 20,
                max_bytes: entry.case.max_bytes,
                ..Budget::default()
            };
            let on = if entry.process { children() } else { sandbox() };
            (i, run_on(on, &entry.case.program, budget, &tools).await)
        });
    }
    let mut failures = Vec::new();
    let mut ran = 0;
    while let Some(done) = runs.join_next().await {
        let (i, outcome) = done.unwrap();
        ran += 1;
        let r = &outcome.result;
        let kind = (!r.ok).then(|| r.kind.map_or("(none)", |k| k.as_str()));
        if let Err(why) = mix[i]
            .case
            .check(kind, &r.error, &r.value, &outcome.console)
        {
            failures.push(format!("{}: {why}", mix[i].case.name));
        }
    }
    (failures, ran)
}

/// The processes running the children of this suite, anywhere on the machine.
fn child_processes() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains("children/child.py") {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_hostile_executions_for_two_minutes_end_in_one_result_each_and_leave_nothing() {
    let seconds: u64 = std::env::var("WASMWIRE_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let before = child_processes();
    assert!(before.is_empty(), "children already running: {before:#?}");
    steady_allocator();
    let t = Instant::now();
    let mut failures = Vec::new();
    let mut rss = Vec::new();
    let mut executions = 0;
    let mut r = 0;
    while t.elapsed() < Duration::from_secs(seconds) || r < 8 {
        let started = Instant::now();
        let (round_failures, ran) = round(r).await;
        executions += ran;
        rss.push(rss_bytes());
        eprintln!(
            "soak: round {r}: {ran} executions in {:.1?}, {} failures, RSS {}",
            started.elapsed(),
            round_failures.len(),
            mib(*rss.last().unwrap())
        );
        failures.extend(
            round_failures
                .into_iter()
                .map(|f| format!("round {r}: {f}")),
        );
        r += 1;
    }
    // The Sandbox ends each child before its Result is returned; what is
    // left now would be a process that escaped.
    let after = child_processes();
    eprintln!(
        "soak: {executions} executions in {r} rounds over {:.1?}; RSS after each round: {}",
        t.elapsed(),
        rss.iter().map(|b| mib(*b)).collect::<Vec<_>>().join(", ")
    );
    let held = rss_breakdown();
    eprintln!("soak: RSS at the end, by mapping: {held}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{failures:#?}",
        failures.len()
    );
    assert!(after.is_empty(), "processes left behind: {after:#?}");
    // The first rounds bring the process to its working size: the pool
    // fills its warm slots (up to 64, each keeping up to 640 KiB resident)
    // and the allocator its arenas. After that warm-up (a quarter of the
    // rounds, at least 4) RSS stays within a band, not up. With glibc's
    // thresholds left to adjust themselves, which round freed a large value
    // to which arena moved one reading by 45 MiB (105-159 MiB over 28 warm
    // rounds, and a CI run that stepped from 96 to 141 MiB and stayed);
    // `steady_allocator` fixes them, and the band measured 48.3-51.1 MiB.
    // One reading is still no baseline: the band's top is. The peak of the
    // later half of the warm rounds may not rise over the peak of the
    // earlier half. A leak lifts the band by its rate times the rounds
    // between the two peaks, about a quarter of the rounds: in a two-minute
    // soak (37 rounds of 60) a leak of 20 KiB per execution fails it (a
    // guest heap is several MiB).
    let warm = (r / 4).max(4);
    let mid = warm + (r - warm) / 2;
    let peak = |rounds: &[u64]| rounds.iter().copied().max().unwrap();
    let (earlier, later) = (peak(&rss[warm..mid]), peak(&rss[mid..]));
    assert!(
        later < earlier + RSS_MARGIN,
        "RSS rose: its peak over rounds {warm}..{mid} was {}, over rounds {mid}..{r} {}; \
         at the end, by mapping: {held}",
        mib(earlier),
        mib(later)
    );
}
