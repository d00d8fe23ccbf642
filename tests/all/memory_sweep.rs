//! A sweep of `max_memory` from a cap too small to hold the guest at all up
//! to the default 64 MiB: at every cap, every memory bomb ends in one clean
//! Result of kind `limit` (never a trap, `unknown`, or a host crash), the
//! same Sandbox then runs a normal program, and the host's RSS stays
//! bounded. Prints one line per cap (run with --nocapture).

use std::time::Duration;

use wasmwire::{Budget, FailureKind};
use wasmwire_tests::{assert_still_healthy, mib, rss_bytes, run_with, sandbox};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Programs that each grow memory until refused, in a different way.
const BOMBS: &[(&str, &str)] = &[
    // Many small objects: QuickJS's own allocator, page by page.
    (
        "push_loop",
        "const a = []; for (;;) a.push({ i: a.length, s: 'item ' + a.length });",
    ),
    // 1 MiB blocks kept alive: large mallocs, memory.grow in big steps.
    (
        "array_buffers",
        "const keep = []; for (;;) keep.push(new ArrayBuffer(1 << 20));",
    ),
    // Flat strings doubling: one ever larger allocation, copied each time.
    ("flat_strings", "let s = 'x'; for (;;) s = [s, s].join('');"),
];

/// The caps: tiny ones the guest cannot even start in, every wasm page
/// (64 KiB) across the range where the guest's own start-up needs run out
/// (4 to 8 MiB), then every 2 MiB up to the default.
fn caps() -> Vec<u64> {
    let mut caps = vec![1, 64 * KIB, MIB, 4 * MIB];
    caps.extend((4 * MIB + 64 * KIB..8 * MIB).step_by(64 * KIB as usize));
    caps.extend((8 * MIB..=64 * MIB).step_by(2 * MIB as usize));
    caps
}

/// RSS may rise this far above where the sweep started, at any moment. One
/// run holds at most 64 MiB of linear memory; another test of this binary
/// may be running at the same time (the largest holds ~150 MiB); a Store
/// leaked per run would pass this bound within a few dozen runs.
const RSS_HEADROOM: u64 = 512 * MIB;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cap_from_tiny_to_the_default_ends_memory_bombs_in_limit() {
    let caps = caps();
    // The Sandbox built and one run done, so that neither counts as growth.
    assert_still_healthy(sandbox()).await;
    let before = rss_bytes();
    let mut peak = before;
    let mut failures = Vec::new();
    let mut runs = 0;
    eprintln!(
        "memory sweep: {} caps x {} bombs, RSS before {}",
        caps.len(),
        BOMBS.len(),
        mib(before)
    );
    for &cap in &caps {
        let mut line = format!("{:>10}:", cap);
        for (name, program) in BOMBS {
            let budget = Budget {
                wall_clock: Duration::from_secs(20),
                max_memory: cap,
                ..Budget::default()
            };
            let outcome = run_with(program, budget).await;
            runs += 1;
            let r = &outcome.result;
            if r.ok || r.kind != Some(FailureKind::Limit) {
                failures.push(format!(
                    "{name} at {cap} bytes: ok={} kind={:?} error={:?}",
                    r.ok, r.kind, r.error
                ));
            }
            line.push_str(&format!(" {name} {:>6.1?}", outcome.elapsed));
            peak = peak.max(rss_bytes());
        }
        assert_still_healthy(sandbox()).await;
        let now = rss_bytes();
        peak = peak.max(now);
        eprintln!("{line}  RSS {}", mib(now));
    }
    let after = rss_bytes();
    eprintln!(
        "memory sweep: {runs} runs; RSS before {}, peak {}, after {}",
        mib(before),
        mib(peak),
        mib(after)
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        peak < before + RSS_HEADROOM,
        "RSS rose from {} to {} during the sweep",
        mib(before),
        mib(peak)
    );
}

/// The Result's error names memory whatever the cap, so that a caller can
/// tell a memory limit from the other limits by its text ("the outcome says
/// memory limit"). Swept over the caps
/// where the guest's own set-up runs out (up to 8 MiB), with one bomb.
#[tokio::test]
async fn a_memory_limit_names_memory_at_every_cap() {
    let mut unnamed = Vec::new();
    for cap in caps().into_iter().filter(|&cap| cap <= 8 * MIB) {
        let budget = Budget {
            wall_clock: Duration::from_secs(20),
            max_memory: cap,
            ..Budget::default()
        };
        let outcome = run_with(BOMBS[0].1, budget).await;
        let r = &outcome.result;
        // Unconditional: every one of these runs is a memory limit (the
        // bomb cannot end otherwise), so each must say so, kind and text.
        if r.ok || r.kind != Some(FailureKind::Limit) || !r.error.to_lowercase().contains("memory")
        {
            unnamed.push(format!(
                "{cap} bytes: ok={} kind={:?} error={:?}",
                r.ok, r.kind, r.error
            ));
        }
    }
    assert!(
        unnamed.is_empty(),
        "memory limits whose error does not name memory:\n{}",
        unnamed.join("\n")
    );
}
