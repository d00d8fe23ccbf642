//! Shared set-up for the end-to-end suites: one Sandbox per test binary (the
//! guest is compiled once), a standard set of tools, and run helpers.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

pub mod hostile;
pub mod icu;
pub mod probe;

use std::sync::OnceLock;
use std::time::Duration;

use wasmwire::{
    Budget, CancellationToken, Execution, FailureKind, JsonText, Outcome, Sandbox, SandboxOptions,
    Text, Tool, ToolFailure, Tools,
};
use wire::{Call, HandlerError};

/// The Sandbox every test of a binary shares, built once.
pub fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX
        .get_or_init(|| Sandbox::new(SandboxOptions::default()).expect("the built-in guest loads"))
}

/// The process child of the suites, `tests/children/child.py`: well-behaved
/// or hostile, by the words of its program (see the script).
pub const CHILD_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/children/child.py");

/// The Sandbox of process children every test of a binary shares: each
/// execution's program names the child's mode.
pub fn children() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        Sandbox::with_process(
            wasmwire::ProcessChild::new(format!("exec python3 {CHILD_SCRIPT}")),
            SandboxOptions::default(),
        )
    })
}

/// The default budget of the tests: generous, but every item set.
pub fn budget() -> Budget {
    Budget {
        wall_clock: Duration::from_secs(10),
        max_calls: 0,
        max_bytes: 0,
        max_memory: 64 << 20,
    }
}

/// The default budget with a wall clock no loaded machine reaches, for
/// programs that do seconds of work on purpose (tens of thousands of
/// comparisons or formats), where a test is about answers and memory, not
/// time.
pub fn roomy() -> Budget {
    Budget {
        wall_clock: Duration::from_secs(120),
        ..budget()
    }
}

/// What Node.js (installed by scripts/setup, with full ICU: the oracle of
/// the locale tests) writes as JSON when it runs `script`.
pub fn node_json(script: &str) -> serde_json::Value {
    let node = std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("node"))
                .find(|node| node.is_file())
        })
        .expect("Node.js is not on PATH: run scripts/setup");
    let out = std::process::Command::new(node)
        .arg("-e")
        .arg(script)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("node's JSON")
}

/// Runs `program` in the sandbox and in Node (in UTC, as the body of an
/// async function), checks that both give the same value, and returns it.
pub async fn same_as_node(program: &str) -> serde_json::Value {
    let outcome = run(program).await;
    let want = node_json(&format!(
        "process.env.TZ = \"UTC\"; (async () => {{ {program} }})().then((v) => process.stdout.write(JSON.stringify(v)));"
    ));
    assert_eq!(value(&outcome), want, "{:?}", outcome.result);
    want
}

/// The args as the value: as they are when they are JSON, else as a string.
pub fn echoed(args: String) -> JsonText {
    match JsonText::new(args.clone()) {
        Ok(json) => json,
        Err(_) => JsonText::from(Text(args)),
    }
}

fn args_json(call: &Call) -> Result<serde_json::Value, HandlerError> {
    serde_json::from_str(&call.args)
        .map_err(|e| ToolFailure::new(FailureKind::Invalid, format!("bad args: {e}")).into())
}

/// The standard tools:
/// - `echo(x)`: returns its args: as they are when they are JSON, else as a
///   JSON string (a binding without a signature sends a string argument as
///   it is);
/// - `delay(ms, value)`: sleeps `ms`, then returns `value` as JSON;
/// - `fail(kind, message)`: fails with that failure class;
/// - `plain_error()`: fails with a plain (unclassified) error;
/// - `never()`: never answers;
/// - `bytes(n)`: returns a string whose JSON text is exactly `n` bytes
///   (`n - 2` characters and its quotes; `n` below 2 is `invalid`);
/// - `raw()`: a text tool whose text is not JSON (the program gets a string).
pub fn tools() -> Tools {
    let standard = [
        Tool::new("echo", |call: Call| async move { Ok(echoed(call.args)) }),
        Tool::new("delay", |call: Call| async move {
            let args = args_json(&call)?;
            tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
            Ok(args["value"].clone())
        })
        .signature("delay(ms, value)"),
        Tool::new("fail", |call: Call| async move {
            let args = args_json(&call)?;
            let kind: FailureKind = args["kind"].as_str().unwrap_or("").parse()?;
            Err::<Text, HandlerError>(
                ToolFailure::new(kind, args["message"].as_str().unwrap_or("")).into(),
            )
        })
        .signature("fail(kind, message)"),
        Tool::new("plain_error", |_call: Call| async move {
            Err::<Text, HandlerError>("the disk is on fire".into())
        })
        .signature("plain_error()"),
        Tool::new("never", |_call: Call| async move {
            std::future::pending::<()>().await;
            Ok(Text(String::new()))
        })
        .signature("never()"),
        Tool::new("bytes", |call: Call| async move {
            let n = args_json(&call)?["n"].as_u64().unwrap_or(0);
            let chars = usize::try_from(n)
                .ok()
                .and_then(|n| n.checked_sub(2))
                .ok_or_else(|| {
                    ToolFailure::new(FailureKind::Invalid, "bytes(n): n must be at least 2")
                })?;
            Ok(Text("x".repeat(chars)))
        })
        .signature("bytes(n)"),
        Tool::new("raw", |_call: Call| async move {
            Ok(Text("not json {".to_string()))
        })
        .signature("raw()"),
    ];
    let mut tools = Tools::new();
    for tool in standard {
        tools.register(tool).expect("the standard tools are valid");
    }
    tools
}

/// Runs `program` on the shared sandbox with the standard tools and budget.
pub async fn run(program: &str) -> Outcome {
    run_with(program, budget()).await
}

/// Runs `program` with `budget`.
pub async fn run_with(program: &str, budget: Budget) -> Outcome {
    run_on(sandbox(), program, budget, &tools()).await
}

/// Runs `program` on `sandbox` with `tools`.
pub async fn run_on(sandbox: &Sandbox, program: &str, budget: Budget, tools: &Tools) -> Outcome {
    let execution = Execution::new(program).budget(budget);
    sandbox
        .run(&execution, tools, CancellationToken::new())
        .await
        .expect("the execution starts")
}

/// Runs `program`, written in `language`, as [`run`] does: the Sandbox
/// prepares it and the child names places as the program's own.
pub async fn run_in(program: &str, language: wasmwire::source::Language) -> Outcome {
    let mut execution = Execution::new(program).budget(budget());
    execution.language = Some(language);
    sandbox()
        .run(&execution, &tools(), CancellationToken::new())
        .await
        .expect("the execution starts")
}

/// The Result's value parsed as JSON, or a panic that shows the whole outcome.
pub fn value(outcome: &Outcome) -> serde_json::Value {
    assert!(outcome.result.ok, "expected ok, got {outcome:#?}");
    serde_json::from_str(&outcome.result.value)
        .unwrap_or_else(|e| panic!("value is not JSON ({e}): {outcome:#?}"))
}

/// Asserts the outcome failed with `kind` and an error containing `needle`.
pub fn assert_failed(outcome: &Outcome, kind: FailureKind, needle: &str) {
    assert!(!outcome.result.ok, "expected {kind}, got ok: {outcome:#?}");
    assert_eq!(outcome.result.kind, Some(kind), "{outcome:#?}");
    assert!(
        outcome.result.error.contains(needle),
        "error {:?} does not contain {needle:?}",
        outcome.result.error
    );
}

/// After a hostile case: the same sandbox still runs a normal program correctly.
pub async fn assert_still_healthy(sandbox: &Sandbox) {
    let outcome = run_on(
        sandbox,
        "const a = await echo({n: 20}); const b = await delay(1, [a.n, 22]); return b[0] + b[1];",
        budget(),
        &tools(),
    )
    .await;
    assert_eq!(value(&outcome), serde_json::json!(42), "{outcome:#?}");
}

/// Fixes glibc's thresholds for serving a large allocation with its own
/// mapping and for giving back the free top of a heap, at their defaults
/// (128 KiB), for the rest of the process. Called by [`rss_bytes`]; a test
/// that measures RSS calls it before its first round too.
///
/// Left to itself glibc raises both after it frees a large block (the
/// mmap threshold up to 32 MiB, the trim threshold to twice that), and from
/// then on a thread arena keeps up to 64 MiB of free memory at its top,
/// which `malloc_trim` does not give back (it trims only the main arena's
/// top). Measured in the soak: one arena held 55 MiB after a trim, and which
/// round it grew in moved the RSS reading by 45 MiB, up or down, with
/// nothing leaked. With the thresholds fixed, freed memory goes back and
/// RSS follows what is live.
pub fn steady_allocator() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: mallopt only sets allocator parameters; it has no
        // preconditions and may be called at any time.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
        }
    });
}

/// This process's resident set size in bytes (`VmRSS` of /proc/self/status).
///
/// The whole process: in a test binary that runs other tests at the same
/// time, it counts their memory too, so bounds on it must allow for that.
/// glibc's allocator is first asked to hand back the free memory it holds
/// (`malloc_trim`), so that the figure is what is live, not what the
/// allocator happened to keep after a peak.
pub fn rss_bytes() -> u64 {
    steady_allocator();
    // SAFETY: malloc_trim only releases free heap memory; it has no
    // preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|n| n.trim().parse().ok())
        .expect("VmRSS in kB");
    kib * 1024
}

/// Where this process's resident memory is, for a figure that moved: the
/// resident bytes of /proc/self/smaps summed by kind of mapping, largest
/// first, with how many mappings of each kind. Files by their name;
/// anonymous mappings as those of at least 1 GiB (wasmtime's pooled memory
/// slots, 4 GiB each), those at a 64 MiB boundary and no larger (glibc's
/// thread arenas), and the rest (stacks, large allocations).
pub fn rss_breakdown() -> String {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut kinds: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    let mut kind = String::new();
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if let Some((start, end)) = first.split_once('-') {
            // A mapping's header: range, perms, offset, dev, inode, [path].
            let hex = |n| u64::from_str_radix(n, 16).unwrap_or(0);
            let (start, size) = (hex(start), hex(end).saturating_sub(hex(start)));
            kind = match fields.nth(4) {
                Some(path) => path.to_string(),
                None if size >= 1 << 30 => "anon, 1 GiB or more (pool slots)".to_string(),
                None if start % (64 << 20) == 0 && size <= 64 << 20 => {
                    "anon at 64 MiB (thread arenas)".to_string()
                }
                None => "anon, other (stacks, large blocks)".to_string(),
            };
        } else if first == "Rss:" {
            let kib: u64 = fields.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            let entry = kinds.entry(kind.clone()).or_default();
            entry.0 += kib * 1024;
            entry.1 += 1;
        }
    }
    let mut kinds: Vec<_> = kinds.into_iter().filter(|(_, (rss, _))| *rss > 0).collect();
    kinds.sort_by_key(|(_, (rss, _))| std::cmp::Reverse(*rss));
    kinds
        .iter()
        .take(8)
        .map(|(kind, (rss, n))| format!("{kind} ({n}): {}", mib(*rss)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Bytes as MiB with one decimal, for the figures tests print.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// Whether process `pid` is gone: no `/proc/<pid>`, or a zombie or dead
/// entry (it runs nothing; its parent has not reaped it yet).
pub fn process_gone(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim();
        state.starts_with('Z') || state.starts_with('X')
    })
}

/// Asserts process `pid` is gone, polling for at most `grace`: a SIGKILL is
/// delivered at once, but the exit itself is the kernel's to finish.
pub async fn assert_process_gone(pid: u64, what: &str, grace: Duration) {
    let deadline = std::time::Instant::now() + grace;
    while !process_gone(pid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        process_gone(pid),
        "{what} {pid} is still running {grace:?} after the execution"
    );
}
