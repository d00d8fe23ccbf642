//! The `wasmwire` command line, run as a real process.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn wasmwire(args: &[&str], program: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wasmwire starts");
    // A CLI that fails before reading its program closes stdin early: fine.
    let _ = child.stdin.take().unwrap().write_all(program.as_bytes());
    child.wait_with_output().unwrap()
}

fn run(extra: &[&str], program: &str) -> (i32, Value, String) {
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    args.push("-");
    let out = wasmwire(&args, program);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        stdout.lines().count(),
        1,
        "exactly one line on stdout: {stdout:?} (stderr {stderr})"
    );
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    (out.status.code().unwrap(), result, stderr)
}

#[test]
fn a_program_calls_a_shell_tool_and_prints_one_result_line() {
    let (code, result, stderr) = run(
        &[
            "--json-tool",
            "upper(text)=tr a-z A-Z",
            "--tool",
            "who=printf %s \"$WASMWIRE_TOOL\"",
        ],
        "console.log('hi from js'); const r = await upper('abc'); return [r, await who()];",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["ok"], json!(true));
    assert_eq!(result["v"], json!(1));
    // `upper` got {"text":"abc"} on stdin and uppercased it: JSON back, and
    // declared so; `who` is a text tool.
    assert_eq!(
        serde_json::from_str::<Value>(result["value"].as_str().unwrap()).unwrap(),
        json!([{"TEXT": "ABC"}, "who"])
    );
    assert_eq!(result["calls"], json!(2));
    assert!(stderr.contains("hi from js"), "{stderr}");
}

#[test]
fn a_failing_program_exits_1_with_its_kind() {
    let (code, result, _) = run(&[], "throw new Error('nope');");
    assert_eq!(code, 1);
    assert_eq!(
        (result["ok"].clone(), result["kind"].clone()),
        (json!(false), json!("invalid"))
    );
    assert!(result["error"].as_str().unwrap().contains("nope"));
}

#[test]
fn tool_exit_codes_and_kind_lines_become_failure_classes() {
    let program = r#"
        const out = [];
        for (const t of [missing, badargs, later, forbidden, slowdown, crash, bare]) {
            try { await t(); out.push("ok"); } catch (e) { out.push(e.kind + ":" + e.message); }
        }
        return out;
    "#;
    let (code, result, stderr) = run(
        &[
            "--tool",
            "missing=echo gone >&2; exit 66",
            "--tool",
            "badargs=exit 64",
            "--tool",
            "later=exit 75",
            "--tool",
            "forbidden=exit 77",
            "--tool",
            "slowdown=printf 'kind: rate_limited\\nback off\\n' >&2; exit 1",
            "--tool",
            "crash=exit 3",
            "--tool",
            "bare=echo 'kind: denied' >&2; exit 1",
        ],
        program,
    );
    assert_eq!(code, 0, "{stderr}");
    let value: Value = serde_json::from_str(result["value"].as_str().unwrap()).unwrap();
    assert_eq!(
        value,
        json!([
            "not_found:gone",
            "invalid:the tool exited with code 64",
            "transient:the tool exited with code 75",
            "denied:the tool exited with code 77",
            "rate_limited:back off",
            "unknown:the tool exited with code 3",
            // A kind line alone: the exit still says something.
            "denied:the tool exited with code 1"
        ])
    );
}

/// Whether process `pid` is gone (a zombie runs nothing: it counts as gone).
fn process_gone(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim();
        state.starts_with('Z') || state.starts_with('X')
    })
}

/// A fresh path in the temp directory.
fn temp_path(what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "wasmwire-cli-{}-{what}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The tool is killed at its deadline, not when the execution ends: the
/// program itself, after the deadline, asks a second tool whether the first
/// (which writes its pid, then sleeps 30 s) is still running, up to 40
/// times ~20 ms apart (each ask well within the 200 ms deadline it is under
/// too); and after the CLI exited the test checks again.
#[test]
fn a_tool_past_its_deadline_is_killed_and_answered_transient() {
    let pid_file = temp_path("slow-pid");
    let pid_path = pid_file.display();
    let slow = format!("slow=echo $$ > {pid_path}; exec sleep 30");
    let gone = format!(
        "gone=p=$(cat {pid_path}); s=$(cat /proc/$p/stat 2>/dev/null) || {{ echo true; exit; }}; \
         case \"$s\" in *') Z'*|*') X'*) echo true;; *) sleep 0.02; echo false;; esac"
    );
    let t = Instant::now();
    let (code, result, stderr) = run(
        &[
            "--max-call-deadline",
            "200ms",
            "--tool",
            &slow,
            "--tool",
            &gone,
        ],
        "let kind = 'answered';
         try { await slow(); } catch (e) { kind = e.kind; }
         for (let i = 0; i < 40; i++) { if (await gone()) return [kind, true]; }
         return [kind, false];",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        result["value"],
        json!("[\"transient\",true]"),
        "the tool still ran after its deadline: {result}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    let pid: u64 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_gone(pid), "the tool {pid} outlived the CLI");
    let _ = std::fs::remove_file(&pid_file);
}

#[test]
fn the_wall_clock_flag_stops_an_endless_loop() {
    let (code, result, _) = run(&["--wall-clock", "300ms"], "for(;;){}");
    assert_eq!(code, 1);
    assert_eq!(result["kind"], json!("limit"));
    assert!(result["error"].as_str().unwrap().contains("wall clock"));
}

#[test]
fn the_call_quota_flag_holds() {
    let (_, result, _) = run(
        &["--max-calls", "2", "--json-tool", "t=echo 1"],
        "const r = []; for (let i = 0; i < 3; i++) { try { r.push(await t()); } catch (e) { r.push(e.kind); } } return r;",
    );
    assert_eq!(result["value"], json!("[1,1,\"limit\"]"));
    assert_eq!(result["calls"], json!(2));
}

#[test]
fn a_protocol_violation_by_a_process_child_exits_3() {
    let (code, result, _) = run(
        &["--child", "printf '\\377\\377\\377\\377'; sleep 5"],
        "return 1",
    );
    assert_eq!(code, 3);
    assert_eq!(result["ok"], json!(false));
    assert!(result.get("kind").is_none(), "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("over the maximum")
    );
}

/// A process child gets none of the parent's environment: a secret set on
/// the wasmwire process does not reach it; only PATH does, plus what `sh`
/// and Python set for themselves (PWD, SHLVL, _, LC_CTYPE). The interpreter
/// is named by its real path: a `python3` on PATH may be a version
/// manager's shim, which sets variables of its own (pyenv: PYENV_*).
#[test]
fn a_process_child_sees_none_of_the_parents_environment() {
    let python = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8(python.stdout).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/children/child.py");
    let child_command = format!("exec {} {} environ", python.trim(), script.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .args(["run", "--child", &child_command, "-"])
        .env("WASMWIRE_TEST_SECRET", "hunter2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wasmwire starts");
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout} {stderr}");
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    let environ: Value = serde_json::from_str(result["value"].as_str().unwrap()).unwrap();
    let environ = environ.as_object().unwrap();
    assert!(
        !stdout.contains("hunter2"),
        "the secret leaked: {environ:#?}"
    );
    let allowed = ["PATH", "PWD", "SHLVL", "_", "LC_CTYPE"];
    let extra: Vec<&String> = environ
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "the child was handed {extra:?}: {environ:#?}"
    );
    assert_eq!(
        environ.get("PATH").and_then(Value::as_str),
        std::env::var("PATH").ok().as_deref()
    );
}

#[test]
fn usage_errors_exit_2_without_a_result_line() {
    for args in [
        vec!["run", "--wall-clock", "5parsecs", "-"],
        vec!["run", "--max-memory", "lots", "-"],
        vec!["run", "--max-memory", "10", "-"],
        vec!["run", "--max-memory", "10B", "-"],
        vec!["run", "--max-bytes", "100", "-"],
        vec!["run", "--tool-timeout", "t=1s", "-"],
        vec!["run", "--tool", "t=true", "--tool-timeout", "t=0", "-"],
        vec!["run", "--tool", "search-docs=true", "-"],
        vec!["run", "--tool", "JSON=true", "-"],
        vec!["run", "--output", "yaml", "-"],
        vec!["run", "--tool", "nocommand", "-"],
        vec!["run", "/no/such/program.js"],
        vec!["run", "--bogus", "-"],
        vec!["run", "--child-wasm", "/no/such.wasm", "-"],
        // Read up to a bound, not until memory runs out.
        vec!["run", "--child-wasm", "/dev/zero", "-"],
    ] {
        let out = wasmwire(&args, "return 1");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?} says why");
    }
}

#[test]
fn a_file_that_is_not_a_child_component_is_a_setup_error() {
    let dir = std::env::temp_dir().join(format!("wasmwire-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bogus = dir.join("bogus.wasm");
    std::fs::write(&bogus, b"\0asm not really").unwrap();
    let out = wasmwire(
        &["run", "--child-wasm", bogus.to_str().unwrap(), "-"],
        "return 1",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

// Shared with the library suite, which reads every field.
#[allow(dead_code)]
#[path = "../../tests/src/hostile.rs"]
mod hostile;

// The probe child (tests/probe-child) and its checker, shared likewise.
#[allow(dead_code)]
#[path = "../../host/buildsupport/nested_cargo.rs"]
mod nested_cargo;
#[allow(dead_code)]
#[path = "../../tests/src/probe.rs"]
mod probe;
#[allow(dead_code)]
#[path = "../../tests/src/probe_build.rs"]
mod probe_build;

/// The probe component, built from source on first use (a no-op once built:
/// the library suite's build script builds it into the same directory).
fn probe_component() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
            let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .unwrap()
                .join("probe-wasm");
            probe_build::build(
                OsStr::new(env!("CARGO")),
                workspace,
                &target_dir,
                &[probe_build::WASM_TARGET],
            )
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0)
        })
        .clone()
}

/// `--child-wasm` runs any component that implements the `child` world: the
/// probe, which calls a tool through the CLI's shell tools and, from inside,
/// finds every way out shut (see tests/all/probe.rs for the library side and
/// for the checks that the checker can fail).
#[test]
fn child_wasm_runs_a_foreign_component_that_finds_every_way_out_shut() {
    let probe = probe_component();
    let listeners = probe::Listeners::bind();
    let (code, result, stderr) = run(
        &[
            "--child-wasm",
            probe.to_str().unwrap(),
            "--json-tool",
            "echo=cat",
        ],
        &listeners.program(),
    );
    assert_eq!(code, 0, "{result} {stderr}");
    let report: Value = serde_json::from_str(result["value"].as_str().unwrap()).unwrap();
    let shut = probe::violations(&report, true);
    assert!(shut.is_empty(), "{shut:#?}\n{report:#}");
    let controls = probe::missing_controls(&report, true);
    assert!(controls.is_empty(), "{controls:#?}\n{report:#}");
    assert_eq!(listeners.arrivals(), Vec::<String>::new());
    assert_eq!(result["calls"], json!(1));
    assert!(stderr.contains("attempts made"), "{stderr}");
}

/// Every case of tests/hostile/ through the real CLI: one Result line, the
/// stated kind, error, value and console, and the exit code that goes with
/// the kind. Prints a table (run with --nocapture): elapsed includes the
/// CLI's own start-up (loading the compiled guest from its cache).
#[test]
fn every_hostile_program_ends_in_one_result_line_through_the_cli() {
    let cases = hostile::cases();
    assert!(cases.len() >= 30, "found only {} cases", cases.len());
    let mut failures = Vec::new();
    eprintln!("{:<34} {:>10} {:>10}  result", "case", "budget", "elapsed");
    for case in &cases {
        let wall = format!("{}ms", case.wall_clock_ms);
        let mem = format!("{}MiB", case.max_memory_mib);
        let bytes = format!("{}B", case.max_bytes);
        let t = Instant::now();
        let (code, result, stderr) = run(
            &[
                "--wall-clock",
                &wall,
                "--max-memory",
                &mem,
                "--max-bytes",
                &bytes,
                // The args back as JSON: as they are when they look like
                // JSON (the CLI checks they are), else as a JSON string
                // (the hostile programs echo only plain "x" strings), like
                // the library suite's `echo`.
                "--json-tool",
                r#"echo=d=$(cat); case "$d" in '['*|'{'*|'"'*|[0-9-]*|true|false|null) printf %s "$d";; *) printf '"%s"' "$d";; esac"#,
                "--tool",
                "never=sleep 600",
                "--tool",
                // A string whose JSON text is n bytes, like the library
                // suite's `bytes(n)`: n - 2 of "x" (a text tool adds the quotes).
                "bytes(n)=head -c \"$(($(tr -dc 0-9) - 2))\" /dev/zero | tr '\\0' x",
            ],
            &case.program,
        );
        let elapsed = t.elapsed();
        let kind = result
            .get("kind")
            .and_then(Value::as_str)
            .map(str::to_string);
        eprintln!(
            "{:<34} {:>8}ms {:>10.1?}  {}",
            case.name,
            case.wall_clock_ms,
            elapsed,
            kind.as_deref().unwrap_or("ok")
        );
        let want_code = if case.kind.is_none() { 0 } else { 1 };
        if code != want_code {
            failures.push(format!("{}: exit {code}, result {result}", case.name));
            continue;
        }
        let text = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or("");
        if let Err(why) = case.check(kind.as_deref(), text("error"), text("value"), &stderr) {
            failures.push(format!("{}: {why}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `wasmwire ARGS` with `program` on stdin and returns its exit code,
/// stdout, stderr and its peak resident set size in KiB: the largest
/// `VmHWM` (the kernel's high-water mark of its own memory) read from
/// `/proc/PID/status` while it ran.
///
/// Not `wait4`'s `ru_maxrss`: std spawns with a vfork-style clone, so the
/// child starts in this test process's memory, and the exec that leaves it
/// records this process's high-water mark as the child's. With the other
/// tests of this binary running beside it, that read 264 MiB for a CLI
/// whose own peak was a third of it.
///
/// `VmHWM` only grows, so what the reads can miss is growth in the last
/// millisecond before exit, while the CLI is tearing down.
fn run_measuring_peak(args: &[&str], program: &str) -> (i32, String, String, u64) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wasmwire starts");
    let _ = child.stdin.take().unwrap().write_all(program.as_bytes());
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let mut peak_kib = 0;
    let status = loop {
        // Read before asking whether it ended: a read after the exit finds
        // no memory (a zombie has none), never a smaller mark.
        if let Some(kib) = high_water_kib(child.id()) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait().expect("the child is waited for") {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert!(peak_kib > 0, "no VmHWM was read for {args:?}");
    let code = status.code().unwrap_or(-1);
    (code, out.join().unwrap(), err.join().unwrap(), peak_kib)
}

/// The `VmHWM` of process `pid` in KiB, if it is there to read.
fn high_water_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The process child of the end-to-end suites (tests/children/child.py).
fn child_script() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/children/child.py");
    format!("exec python3 {}", script.display())
}

/// A shell tool that prints 12 MiB.
const PRINTS_12_MIB: &str = "big=head -c 12582912 /dev/zero | tr '\\0' a";

/// The most the parent may reach in the three shapes below: the CLI's own
/// (about 40 MiB with the guest loaded), the 64 MiB it may hold for the
/// child, and a frame or two in flight (16 MiB each), with room to spare.
/// Each shape reached 0.7 to 1.5 GiB before the parent held a bounded
/// amount per execution.
const PARENT_PEAK_BOUND_MIB: u64 = 256;

fn assert_parent_peak(shape: &str, peak_kib: u64) {
    eprintln!("{shape}: parent peak RSS {} MiB", peak_kib / 1024);
    assert!(
        peak_kib / 1024 < PARENT_PEAK_BOUND_MIB,
        "{shape}: the parent peaked at {} MiB",
        peak_kib / 1024
    );
}

#[test]
fn the_parent_stays_bounded_when_a_value_or_args_are_made_of_small_objects() {
    // 15 MB of `[{"":0},...]` read as a tree took over 600 MiB: the CLI
    // read every value into one to print the Result, and a tool's params
    // schema read the args into one to check them.
    let value = "return new Array(1400000).fill({'': 0})";
    for output in ["result", "value"] {
        let (code, stdout, stderr, peak) = run_measuring_peak(
            &["run", "--max-memory", "256MiB", "--output", output, "-"],
            value,
        );
        assert_eq!((code, stdout.lines().count()), (0, 1), "{stderr}");
        assert!(stdout.len() > 9_000_000, "{}", stdout.len());
        assert_parent_peak(
            &format!("a value of small objects (--output {output})"),
            peak,
        );
    }
    let manifest = temp_path("small-objects.json");
    std::fs::write(
        &manifest,
        r#"{"tools": [{"name": "put", "params": {"type": "object"}, "command": "wc -c"}]}"#,
    )
    .unwrap();
    let (code, stdout, stderr, peak) = run_measuring_peak(
        &[
            "run",
            "--tools",
            manifest.to_str().unwrap(),
            "--max-memory",
            "256MiB",
            "-",
        ],
        "try { return await put({items: new Array(1400000).fill({'': 0})}) }\n\
         catch (e) { return [e.kind, e.message] }",
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    let value: Value = serde_json::from_str(result["value"].as_str().unwrap()).unwrap();
    assert_eq!(value[0], json!("limit"), "{value}");
    let message = value[1].as_str().unwrap();
    assert!(
        message.contains("the args cannot be checked against its params schema")
            && message.contains("would take about"),
        "{message}"
    );
    assert_parent_peak("args of small objects for a params schema", peak);
}

#[test]
fn the_parent_stays_bounded_when_64_calls_each_get_12_mib() {
    let program = "const r = await Promise.allSettled(Array.from({length: 64}, () => big()));
                   return r.filter(x => x.status === 'fulfilled').length;";
    let (code, stdout, stderr, peak) = run_measuring_peak(
        &[
            "run",
            "--tool",
            PRINTS_12_MIB,
            "--max-memory",
            "64MiB",
            "--wall-clock",
            "20s",
            "-",
        ],
        program,
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}{stderr}");
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    assert_parent_peak("64 calls x 12 MiB (wasm)", peak);
}

/// A text tool's output goes to the program as a JSON string, and escaping
/// makes six bytes of a control character (`\u0000`): 16 MB of them were
/// made into 96 MB, then a frame of that, before the Server refused it,
/// none of it held (64 such calls peaked at 329 MiB).
#[test]
fn the_parent_stays_bounded_when_64_calls_each_get_16_mb_of_control_characters() {
    // Each call fails `limit`: as a JSON string its value is over a frame,
    // or its output could not be held while others held theirs.
    let program = "const r = await Promise.allSettled(Array.from({length: 64}, () => big()));
                   return [r.filter(x => x.status === 'fulfilled').length,
                           r.every(x => x.status === 'rejected' && x.reason.kind === 'limit'),
                           r.filter(x => x.reason && x.reason.message.includes(
                             '16000000 bytes of text, is 96000002 bytes as a JSON string')).length > 0];";
    let (code, stdout, stderr, peak) = run_measuring_peak(
        &[
            "run",
            "--tool",
            "big=head -c 16000000 /dev/zero",
            "--max-memory",
            "64MiB",
            "--wall-clock",
            "20s",
            "-",
        ],
        program,
    );
    assert_eq!((code, stdout.lines().count()), (0, 1), "{stdout}{stderr}");
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    let value: Value = serde_json::from_str(result["value"].as_str().unwrap()).unwrap();
    assert_eq!(value, json!([0, true, true]));
    assert_parent_peak("64 calls x 16 MB of NUL (wasm)", peak);
}

#[test]
fn the_parent_stays_bounded_when_a_child_never_reads_12_mib_answers() {
    let child = child_script();
    let (code, stdout, stderr, peak) = run_measuring_peak(
        &[
            "run",
            "--child",
            &format!("{child} flood_no_result 64 big"),
            "--tool",
            PRINTS_12_MIB,
            "--max-memory",
            "0",
            "--wall-clock",
            "6s",
            "-",
        ],
        "",
    );
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    assert_eq!(
        (code, &result["kind"]),
        (1, &json!("limit")),
        "{result} {stderr}"
    );
    // Nothing was read by the child, so nothing is counted as sent.
    assert_eq!(result.get("bytes"), None, "{result}");
    assert_parent_peak("64 unread answers x 12 MiB (process child)", peak);
}

#[test]
fn the_parent_stays_bounded_when_tools_never_read_15_mib_args() {
    let child = child_script();
    let (code, stdout, stderr, peak) = run_measuring_peak(
        &[
            "run",
            "--child",
            &format!("{child} big_calls_unread 64 sink 15"),
            "--tool",
            "sink=sleep 60",
            "--max-memory",
            "256MiB",
            "--wall-clock",
            "40s",
            "-",
        ],
        "",
    );
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    assert_eq!(code, 0, "{result} {stderr}");
    assert_eq!(
        result["calls"],
        json!(4),
        "four 15 MiB args fit in 64 MiB: {result}"
    );
    assert_parent_peak(
        "64 calls x 15 MiB args to tools that never read (process child)",
        peak,
    );
}

#[test]
fn the_result_line_is_one_line_for_every_line_splitter() {
    let (code, result, _) = run(&[], r#"return "a\u2028b\u2029c\u0085d""#);
    assert_eq!(code, 0);
    assert_eq!(result["value"], json!("\"a\u{2028}b\u{2029}c\u{85}d\""));
    let out = wasmwire(&["run", "-"], r#"return "a\u2028b\u2029c\u0085d""#);
    let raw = String::from_utf8(out.stdout).unwrap();
    assert!(!raw.contains(['\u{2028}', '\u{2029}', '\u{85}']), "{raw:?}");
}

/// What the CLI prints itself, not the console: the failure `--output
/// value` puts on stderr, and the Result line, carried the program's
/// escape sequences raw.
#[test]
fn an_error_or_result_the_cli_prints_cannot_drive_the_operators_terminal() {
    let program = r#"throw new Error("evil \x1b]0;TITLE\x07 \x1b[2J\x9b31m\x7f\r\nforged line")"#;
    let out = wasmwire(&["run", "--output", "value", "-"], program);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(
        !stderr.trim_end().contains(|c: char| c.is_control()),
        "{stderr:?}"
    );
    assert!(stderr.contains(r"evil \x1b]0;TITLE\x07"), "{stderr:?}");
    let out = wasmwire(&["run", "-"], r#"return "\x9b2J\x7f""#);
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        !line.trim_end().contains(|c: char| c.is_control()),
        "{line:?}"
    );
    let result: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(result["value"], json!("\"\u{9b}2J\u{7f}\""));
}

#[test]
fn console_escapes_never_reach_the_operators_terminal() {
    let (code, _, stderr) = run(
        &[],
        r#"console.log("\x1b[2J\x1b]0;pwned\x07\r\x9bred"); return 1"#,
    );
    assert_eq!(code, 0);
    assert!(
        !stderr.contains(['\x1b', '\x07', '\r', '\u{9b}']),
        "{stderr:?}"
    );
    assert!(stderr.contains(r"\x1b[2J\x1b]0;pwned\x07"), "{stderr:?}");
}

#[test]
fn a_program_too_large_to_send_is_a_usage_error() {
    let program = format!("return {:?}.length", "p".repeat(17 << 20));
    let out = wasmwire(&["run", "-"], &program);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Refused once past what a program may be, not read whole first.
    assert!(
        stderr.contains("the program on stdin is longer than the 16777216 bytes a program may be"),
        "{stderr}"
    );
}

/// A program whose console filled a stderr pipe nobody reads still gets
/// its Result on stdout, and the process exits: the Result was written only
/// after the stuck console thread let go of stderr's lock, so a caller
/// reading stdout first waited for ever.
#[test]
fn the_result_reaches_stdout_while_nobody_reads_stderr() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .args(["run", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"for (let i = 0; i < 5000; i++) console.log('x'.repeat(100)); return 1")
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (line, read) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
        let _ = line.send(out);
    });
    // Only a deadline that turns a hang into a failure; stderr is left
    // unread until stdout has ended (the process exited).
    let out = read.recv_timeout(Duration::from_secs(60));
    let _ = child.kill();
    let out = out.expect("stdout ended while stderr was unread");
    let result: Value = serde_json::from_str(out.trim_end()).unwrap();
    assert_eq!(result["value"], "1");
    let _ = child.wait();
}

/// The CLI's peak memory (KiB, `VmHWM`) and stdout for `program`, with
/// stderr a pipe nobody reads until the process has exited.
fn peak_with_stderr_unread(program: &str) -> (u64, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .args(["run", "--wall-clock", "60s", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(program.as_bytes());
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let mut peak_kib = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(kib) = high_water_kib(child.id()) {
            peak_kib = peak_kib.max(kib);
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        // Only a deadline that turns a hang into a failure.
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the CLI did not end with its stderr unread");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    (peak_kib, out.join().unwrap())
}

/// Behind a stderr nobody reads, the console waiting to be written costs
/// its own bytes (at most the console's cap), not a `String` and a channel
/// slot for each line: a million empty lines were 32 MiB that way.
#[test]
fn console_lines_behind_an_unread_stderr_cost_their_bytes() {
    let program = "for (let i = 0; i < 1_100_000; i++) console.log(); return 1";
    let (unread, stdout) = peak_with_stderr_unread(program);
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    assert_eq!(result["value"], "1", "{stdout}");
    let (code, _, _, read) = run_measuring_peak(&["run", "--wall-clock", "60s", "-"], program);
    assert_eq!(code, 0);
    eprintln!("peak with stderr unread {unread} KiB, read {read} KiB");
    assert!(
        unread < read + 8 * 1024,
        "with stderr unread the CLI peaked at {unread} KiB, against {read} KiB with it read"
    );
}

/// An in-flight cap of 0 could only refuse every call: a usage error. An
/// empty program (a generator that failed upstream) is said on stderr,
/// and still run (a process child may take none).
#[test]
fn an_empty_program_is_said_and_an_in_flight_cap_of_0_is_a_usage_error() {
    let out = wasmwire(&["run", "--max-inflight", "0", "-"], "return 1");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0 would refuse every call"), "{stderr}");
    for program in ["", "  \n"] {
        let (code, result, stderr) = run(&[], program);
        assert_eq!((code, &result["value"]), (0, &json!("null")), "{result}");
        assert!(stderr.contains("the program on stdin is empty"), "{stderr}");
    }
    // A call deadline of 0 is none, as every 0 duration here is.
    let (code, result, _) = run(
        &["--max-call-deadline", "0", "--tool", "t=echo hi"],
        "return await t()",
    );
    assert_eq!((code, &result["value"]), (0, &json!("\"hi\"")), "{result}");
}

#[test]
fn max_memory_over_what_the_backend_holds_is_a_usage_error() {
    let out = wasmwire(&["run", "--max-memory", "2GiB", "-"], "return 1");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("only up to"), "{stderr}");
}

#[test]
fn without_home_the_cache_falls_back_to_a_private_temporary_directory() {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let dir = std::env::temp_dir().join(format!("wasmwire-{uid}"));
    for _ in 0..2 {
        let out = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
            .args(["run", "-"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(b"return 1")?;
                child.wait_with_output()
            })
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(!stderr.contains("not using"), "{stderr}");
    }
    let cached = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.path().extension() == Some(OsStr::new("cwasm")));
    assert!(cached, "no compiled component in {}", dir.display());
}

/// A signal while the CLI compiles the guest (no cached compile: seconds)
/// cancels the execution, which still ends in its one Result: the handlers
/// were installed only after the sandbox was built, and the signal killed
/// the process with nothing on stdout.
#[test]
fn a_signal_while_the_guest_is_compiled_still_gets_a_result() {
    let cache = temp_path("cold-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .args(["run", "-"])
        .env("XDG_CACHE_HOME", &cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"await new Promise((r) => setTimeout(r, 60000)); return 1")
        .unwrap();
    // Compiling: the process has used 200 ms of CPU (its start before the
    // compile takes a few), and no compiled component is cached yet.
    let cpu_ms = |pid: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
        // utime and stime, fields 14 and 15, in clock ticks (100 a second).
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(0)
        };
        (ticks(11) + ticks(12)) * 10
    };
    let compiled = || {
        walk(&cache)
            .iter()
            .any(|path| path.extension() == Some(OsStr::new("cwasm")))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while cpu_ms(child.id()) < 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "the CLI never started compiling"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !compiled(),
        "the guest was compiled before it could be signalled"
    );
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.trim_end())
        .unwrap_or_else(|e| panic!("no Result ({e}): {stdout:?}, exit {:?}", out.status));
    assert_eq!(result["kind"], "cancelled", "{result}");
    assert_eq!(out.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&cache);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The flood seen in the field: a process child writing 100,000 Requests
/// without reading, to a tool that is a shell command, used to end a 3 s
/// wall clock after 56 s (spawning each tool inside the server's loop
/// starved the timer). Now the Result line comes at the wall clock, plus the
/// CLI's own start and the kill of the tree.
#[test]
fn a_flood_to_a_shell_tool_ends_at_the_wall_clock() {
    // Measured about 30 ms past the wall clock; the bound allows for a
    // loaded two-core machine.
    const GRACE: Duration = Duration::from_millis(500);
    let child = child_script();
    for mode in ["flood_no_result 100000 echo", "flood_forever echo"] {
        let t = Instant::now();
        let (code, result, stderr) = run(
            &[
                "--child",
                &format!("{child} {mode}"),
                "--tool",
                "echo=cat",
                "--max-memory",
                "0",
                "--wall-clock",
                "2s",
            ],
            "",
        );
        let elapsed = t.elapsed();
        eprintln!("{mode}: Result line after {elapsed:.1?}: {result}");
        assert_eq!((code, &result["kind"]), (1, &json!("limit")), "{stderr}");
        assert!(
            elapsed < Duration::from_secs(2) + GRACE,
            "{mode}: {elapsed:?}"
        );
    }
}

#[test]
fn a_text_tool_hands_the_program_a_string_and_a_json_tool_a_value() {
    let (code, result, stderr) = run(
        &["--tool", "text=echo 123", "--json-tool", "json=echo 123"],
        "return [await text(), await json()];",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["value"], json!(r#"["123",123]"#));
    // A JSON tool that prints text fails its call, naming why.
    let (code, result, _) = run(
        &["--json-tool", "bad=echo not json"],
        "try { await bad(); } catch (e) { return [e.kind, e.message]; }",
    );
    assert_eq!(code, 0);
    let value: Value = serde_json::from_str(result["value"].as_str().unwrap()).unwrap();
    assert_eq!(value[0], json!("unknown"));
    assert!(value[1].as_str().unwrap().contains("not JSON"), "{value}");
}

#[test]
fn output_value_prints_only_the_value_with_the_same_exit_codes() {
    let out = wasmwire(
        &["run", "--output", "value", "-"],
        "return {a: [1, 'x\u{2028}y']}",
    );
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value, json!({"a": [1, "x\u{2028}y"]}));
    // Nothing returned: null.
    let out = wasmwire(&["run", "--output", "value", "-"], "const x = 1;");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "null\n");
    // A failure: nothing on stdout, the error on stderr, exit 1.
    let out = wasmwire(
        &["run", "--output", "value", "-"],
        "throw new Error('nope')",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid: ") && stderr.contains("nope"),
        "{stderr}"
    );
}

#[test]
fn output_value_prints_values_javascript_makes_that_serde_would_refuse() {
    // Half of a surrogate pair (a cut emoji) reads as U+FFFD; 300 levels
    // of nesting (serde_json's own limit is 128) are printed whole.
    let out = wasmwire(
        &["run", "--output", "value", "-"],
        "let v = 1; for (let i = 0; i < 300; i++) v = [v];\n\
         return {cut: 'Status \u{1F600} ok'.slice(0, 8), v}",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut value: Value = wasmwire::json::from_str(&stdout).expect("the value is JSON");
    assert_eq!(value["cut"], json!("Status \u{fffd}"));
    let mut depth = 0;
    let mut level = value["v"].take();
    while let Value::Array(mut inner) = level {
        level = inner.pop().unwrap_or(Value::Null);
        depth += 1;
    }
    assert_eq!((depth, level), (300, json!(1)));
    // Deeper than the parent reads: an `invalid` failure that says so, on
    // stderr, exit 1, and nothing on stdout.
    let out = wasmwire(
        &["run", "--output", "value", "-"],
        "let v = 1; for (let i = 0; i < 3000; i++) v = [v]; return v",
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid: ") && stderr.contains("3000 levels deep"),
        "{stderr}"
    );
}

#[test]
fn a_tool_timeout_fails_the_call_transient_and_kills_the_command() {
    let pid_file = temp_path("tool-timeout.pid");
    let spec = format!("slow=echo $$ > {}; exec sleep 30", pid_file.display());
    let t = Instant::now();
    let (code, result, stderr) = run(
        &["--tool", &spec, "--tool-timeout", "slow=200ms"],
        "try { await slow(); return 'answered'; } catch (e) { return [e.kind, e.message]; }",
    );
    assert_eq!(code, 0, "{stderr}");
    let value: Value = serde_json::from_str(result["value"].as_str().unwrap()).unwrap();
    assert_eq!(value[0], json!("transient"), "{value}");
    assert!(value[1].as_str().unwrap().contains("200 ms"), "{value}");
    assert!(t.elapsed() >= Duration::from_millis(200));
    let pid: u64 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_gone(pid), "the timed-out command was killed");
    let _ = std::fs::remove_file(&pid_file);
}

/// The CLI is the subreaper of what its tools start, so what a tool leaves
/// running (`cmd &`) or a timed-out tool's command left behind comes to it
/// when the tool's tree is killed. Each such process used to stay a zombie
/// of the CLI until it exited: one a call, holding a pid and its removed
/// cgroup, so a long run could use up the machine's pids. The count is
/// polled, since a timed-out tree dies a moment after its call fails; the
/// code before never got below one zombie a call.
#[test]
fn what_tools_leave_behind_is_reaped_as_the_run_goes_on() {
    let zombies = "zombies=n=0; for p in $(cat /proc/$PPID/task/*/children); do \
        [ \"$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)\" = Z ] && n=$((n+1)); done; echo $n";
    let (code, result, stderr) = run(
        &[
            "--tool",
            "bg=sleep 100 & echo started",
            "--tool",
            "slow=sleep 100; echo late",
            "--tool-timeout",
            "slow=10ms",
            "--tool",
            zombies,
            "--wall-clock",
            "60s",
        ],
        "for (let i = 0; i < 40; i++) await bg();
         for (let i = 0; i < 40; i++) { try { await slow(); } catch {} }
         let left;
         for (let i = 0; i < 200; i++) {
           left = Number(await zombies());
           if (left === 0) break;
           await new Promise(r => setTimeout(r, 25));
         }
         return left;",
    );
    assert_eq!(code, 0, "{result} {stderr}");
    assert_eq!(
        result["value"],
        json!("0"),
        "zombies of the CLI left: {result}"
    );
}

#[test]
fn a_call_only_tool_is_reached_through_host_call() {
    let (code, result, stderr) = run(
        &[
            "--tool",
            "search-docs=echo found",
            "--call-only",
            "search-docs",
        ],
        "return [typeof globalThis['search-docs'], await host.call('search-docs', 'q')];",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["value"], json!(r#"["undefined","found"]"#));
}

/// The console reaches stderr while the program runs, not after: the tool
/// the program calls after logging answers only once the test has read the
/// line from the CLI's stderr (else it waits out the wall clock).
#[test]
fn the_console_streams_to_stderr_while_the_program_runs() {
    use std::io::{BufRead, BufReader};
    let go = temp_path("console-go");
    let _ = std::fs::remove_file(&go);
    let spec = format!(
        "wait_for_go=while [ ! -e {} ]; do sleep 0.01; done; echo went",
        go.display()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .args(["run", "--wall-clock", "20s", "--tool", &spec, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"console.log('ready'); return await wait_for_go();")
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(
        line, "ready\n",
        "the first console line, before the program ends"
    );
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["value"], json!(r#""went""#), "{result}");
    let _ = std::fs::remove_file(&go);
}

/// A `--tools` manifest whose one tool has a strict params schema; its
/// command counts its calls in a file (one line each) and echoes its args.
fn counted_manifest(toml: bool) -> (PathBuf, PathBuf) {
    let counter = temp_path("calls");
    let _ = std::fs::remove_file(&counter);
    let command = format!("echo call >> {}; cat", counter.display());
    let path = temp_path("tools").with_extension(if toml { "toml" } else { "json" });
    let text = if toml {
        format!(
            r#"
[[tools]]
name = "get_logs"
description = "The newest log lines of one host."
command = {command:?}
output = "json"
timeout = "5s"
params = {{ type = "object", required = ["host"], additionalProperties = false, properties = {{ host = {{ type = "string" }}, count = {{ type = "integer" }} }} }}
"#
        )
    } else {
        json!({"tools": [{
            "name": "get_logs",
            "description": "The newest log lines of one host.",
            "command": command,
            "output": "json",
            "timeout": "5s",
            "params": {
                "type": "object",
                "properties": {"host": {"type": "string"}, "count": {"type": "integer"}},
                "required": ["host"],
                "additionalProperties": false,
            },
        }]})
        .to_string()
    };
    std::fs::write(&path, text).unwrap();
    (path, counter)
}

fn calls_made(counter: &Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

/// Through the CLI, a call whose args break the manifest's params schema
/// (a wrong type, a missing required field, a field it forbids) fails
/// `invalid` with the field and the rule, and the command never runs; a
/// call that fits runs it. The same for a JSON and a TOML manifest.
#[test]
fn tools_manifest_args_are_checked_before_the_command_runs() {
    for toml in [false, true] {
        let (manifest, counter) = counted_manifest(toml);
        let manifest = manifest.to_str().unwrap();
        for (args, needle) in [
            (
                r#"{host: "db1", count: "ten"}"#,
                r#"get_logs: invalid args: args.count: \"ten\" is not of type \"integer\" (rule `type`)"#,
            ),
            (
                r#"{count: 5}"#,
                r#"get_logs: invalid args: args: \"host\" is a required property (rule `required`)"#,
            ),
            (
                r#"{host: "db1", verbose: true}"#,
                "Additional properties are not allowed ('verbose' was unexpected) (rule `additionalProperties`)",
            ),
        ] {
            let program = format!("return await get_logs({args});");
            let (code, result, stderr) = run(&["--tools", manifest], &program);
            assert_eq!(code, 1, "{result} {stderr}");
            assert_eq!(result["kind"], "invalid", "{result}");
            let error = result["error"].as_str().unwrap();
            let needle = needle.replace("\\\"", "\"");
            assert!(error.contains(&needle), "{needle:?} not in {error:?}");
        }
        assert_eq!(calls_made(&counter), 0, "the command ran for a bad call");
        let (code, result, stderr) = run(
            &["--tools", manifest],
            r#"return await get_logs({host: "db1", count: 2});"#,
        );
        assert_eq!(code, 0, "{result} {stderr}");
        assert_eq!(result["value"], json!(r#"{"host":"db1","count":2}"#));
        assert_eq!(calls_made(&counter), 1);
        let _ = std::fs::remove_file(&counter);
        let _ = std::fs::remove_file(manifest);
    }
}

/// A manifest that is not valid is a usage error that says why.
#[test]
fn a_bad_tools_manifest_is_a_usage_error() {
    let path = temp_path("bad.json");
    std::fs::write(&path, r#"{"tools": [{"name": "t", "comand": "true"}]}"#).unwrap();
    let out = wasmwire(&["run", "--tools", path.to_str().unwrap(), "-"], "return 1");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown field `comand`"), "{stderr}");
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_file(&path);
}

/// `wasmwire describe` prints the declarations of the same tools `run`
/// takes, and with `--prompt` the rules and limits before them.
#[test]
fn describe_prints_the_declarations_or_the_prompt() {
    let (manifest, _) = counted_manifest(false);
    let manifest = manifest.to_str().unwrap();
    let out = wasmwire(
        &[
            "describe",
            "--tools",
            manifest,
            "--tool",
            "ping=echo pong",
            "--json-tool",
            "add(a, b)=true",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    let dts = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "/**\n * The newest log lines of one host.",
        // The schema's properties in the order the manifest gives them.
        "declare function get_logs(args: {\n  host: string;\n  count?: number;\n}): Promise<unknown>;",
        "declare function ping(args?: unknown): Promise<unknown>;",
        "declare function add(a: unknown, b: unknown): Promise<unknown>;",
        "declare class ToolError extends Error",
        "| \"rate_limited\"",
    ] {
        assert!(dts.contains(needle), "{needle:?} not in:\n{dts}");
    }
    let out = wasmwire(
        &[
            "describe",
            "--tools",
            manifest,
            "--prompt",
            "--wall-clock",
            "30s",
            "--max-calls",
            "7",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    let prompt = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "body of an async function",
        "wall clock: 30s",
        "tool calls: 7",
        "```ts\n",
    ] {
        assert!(prompt.contains(needle), "{needle:?} not in:\n{prompt}");
    }
    assert!(prompt.contains("declare function get_logs("), "{prompt}");
    let _ = std::fs::remove_file(manifest);
}

/// A file whose extension is `.TS` is TypeScript, as `.ts` is (it ran as
/// JavaScript, and failed with a SyntaxError at its first type).
#[test]
fn a_typescript_extension_is_read_in_any_case() {
    for extension in ["TS", "Mts"] {
        let program = temp_path("upper").with_extension(extension);
        std::fs::write(
            &program,
            "const a: number = 20;
a * 2 + 2
",
        )
        .unwrap();
        let out = wasmwire(&["run", "--output", "value", program.to_str().unwrap()], "");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n", "{out:?}");
        let _ = std::fs::remove_file(&program);
    }
}

/// A .tsx or .jsx program is refused before it runs, saying that JSX is
/// not supported (it ran as JavaScript and failed with a SyntaxError that
/// said nothing of it); `--lang` still runs such a file as told, and a
/// decorator in TypeScript is refused as not supported, at its place.
#[test]
fn jsx_files_and_decorators_are_refused_as_not_supported() {
    // In any case: `.TSX` ran as JavaScript, as `.TS` did.
    for extension in ["tsx", "jsx", "TSX", "Jsx"] {
        let program = temp_path("component").with_extension(extension);
        std::fs::write(&program, "const a = <div>{1}</div>;\na\n").unwrap();
        let out = wasmwire(&["run", program.to_str().unwrap()], "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty(), "{stderr}");
        assert!(
            stderr.contains("JSX is not supported") && stderr.contains(".ts file"),
            "{stderr}"
        );
        // Without JSX in it, `--lang ts` runs it.
        std::fs::write(&program, "const a: number = 1;\na + 1\n").unwrap();
        let out = wasmwire(
            &[
                "run",
                "--lang",
                "ts",
                "--output",
                "value",
                program.to_str().unwrap(),
            ],
            "",
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n", "{out:?}");
        let _ = std::fs::remove_file(&program);
    }
    let (code, result, _) = run(
        &["--lang", "ts"],
        "function log(f: unknown) { return f; }\n@log class C {}\nreturn 1;\n",
    );
    assert_eq!(code, 1);
    assert_eq!(result["kind"], json!("invalid"));
    let error = result["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "TypeScript syntax error at line 2, column 1: decorators are not supported (`@log`)"
        ),
        "{error}"
    );
}

/// A model's TypeScript program through the CLI: types stripped (a .ts
/// file is TypeScript), calls paced past the in-flight cap, a backoff
/// with setTimeout, and a last expression as the value.
#[test]
fn a_typescript_program_with_paced_calls_and_timers_runs_from_a_ts_file() {
    let program = temp_path("model").with_extension("ts");
    std::fs::write(
        &program,
        r#"interface Doc { id: number }
const ids: number[] = Array.from({ length: 200 }, (_, i) => i);
const docs = await Promise.all(ids.map((id) => fetch_doc(id))) as Doc[];
await new Promise<void>((r) => setTimeout(r, 20));
docs.length satisfies number
"#,
    )
    .unwrap();
    let out = wasmwire(
        &[
            "run",
            "--max-inflight",
            "8",
            "--output",
            "value",
            "--json-tool",
            "fetch_doc(id)=cat",
            program.to_str().unwrap(),
        ],
        "",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "200\n", "{stderr}");
    // A TypeScript syntax error names the program's own place.
    let (code, result, _) = run(&["--lang", "ts"], "const a = 1;\nconst b: = 2;\n");
    assert_eq!(code, 1);
    assert_eq!(result["kind"], json!("invalid"));
    let error = result["error"].as_str().unwrap();
    assert!(
        error.starts_with("TypeScript syntax error at line 2, column 10"),
        "{error}"
    );
    let _ = std::fs::remove_file(&program);
}
