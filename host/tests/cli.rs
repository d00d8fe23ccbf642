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
            "--tool",
            "upper(text)=tr a-z A-Z",
            "--tool",
            "who=printf %s \"$WASMWIRE_TOOL\"",
        ],
        "console.log('hi from js'); const r = await upper('abc'); return [r, await who()];",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["ok"], json!(true));
    assert_eq!(result["v"], json!(1));
    // `upper` got {"text":"abc"} on stdin and uppercased it: valid JSON back.
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
        for (const t of [missing, badargs, later, forbidden, slowdown, crash]) {
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
            "unknown:the tool exited with code 3"
        ])
    );
}

#[test]
fn a_tool_past_its_deadline_is_killed_and_answered_transient() {
    let t = Instant::now();
    let (code, result, stderr) = run(
        &["--max-call-deadline", "200ms", "--tool", "slow=sleep 30"],
        "try { await slow(); } catch (e) { return e.kind; }",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["value"], json!("\"transient\""));
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
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
        &["--max-calls", "2", "--tool", "t=echo 1"],
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

#[test]
fn usage_errors_exit_2_without_a_result_line() {
    for args in [
        vec!["run", "--wall-clock", "5parsecs", "-"],
        vec!["run", "--max-memory", "lots", "-"],
        vec!["run", "--tool", "nocommand", "-"],
        vec!["run", "/no/such/program.js"],
        vec!["run", "--bogus", "-"],
        vec!["run", "--child-wasm", "/no/such.wasm", "-"],
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
#[path = "../../buildsupport/nested_cargo.rs"]
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
            "--tool",
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
        let bytes = case.max_bytes.to_string();
        let t = Instant::now();
        let (code, result, stderr) = run(
            &[
                "--wall-clock",
                &wall,
                "--max-memory",
                &mem,
                "--max-bytes",
                &bytes,
                "--tool",
                "echo=cat",
                "--tool",
                "never=sleep 600",
                "--tool",
                // n bytes of "x", like the library suite's `bytes(n)`.
                "bytes(n)=head -c \"$(tr -dc 0-9)\" /dev/zero | tr '\\0' x",
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
        if code != want_code || kind != case.kind {
            failures.push(format!(
                "{}: exit {code}, kind {kind:?}, result {result}",
                case.name
            ));
            continue;
        }
        let error = result["error"].as_str().unwrap_or("");
        if let Some(needle) = &case.error
            && !error.contains(needle.as_str())
        {
            failures.push(format!("{}: error {error:?} lacks {needle:?}", case.name));
        }
        if let Some(want) = &case.value {
            let want: Value = serde_json::from_str(want).unwrap();
            let got = result["value"]
                .as_str()
                .and_then(|v| serde_json::from_str::<Value>(v).ok());
            if got.as_ref() != Some(&want) {
                failures.push(format!("{}: value {got:?} != {want}", case.name));
            }
        }
        if let Some(needle) = &case.console
            && !stderr.contains(needle.as_str())
        {
            failures.push(format!("{}: console lacks {needle:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
