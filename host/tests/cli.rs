//! The `wasmwire` command line, run as a real process.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::io::Write;
use std::process::{Command, Output, Stdio};
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

/// Every case of tests/hostile/ through the real CLI: one Result line, the
/// stated kind, and the exit code that goes with it.
#[test]
fn every_hostile_program_ends_in_one_result_line_through_the_cli() {
    let cases = hostile::cases();
    assert!(cases.len() >= 20);
    let mut failures = Vec::new();
    for case in &cases {
        let wall = format!("{}ms", case.wall_clock_ms);
        let mem = format!("{}MiB", case.max_memory_mib);
        let (code, result, _) = run(
            &[
                "--wall-clock",
                &wall,
                "--max-memory",
                &mem,
                "--tool",
                "echo=cat",
                "--tool",
                "never=sleep 600",
            ],
            &case.program,
        );
        let want_code = if case.kind.is_none() { 0 } else { 1 };
        let kind = result
            .get("kind")
            .and_then(Value::as_str)
            .map(str::to_string);
        if code != want_code || kind != case.kind {
            failures.push(format!(
                "{}: exit {code}, kind {kind:?}, result {result}",
                case.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
