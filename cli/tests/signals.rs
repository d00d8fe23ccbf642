//! The real `wasmwire run` under signals and runaway tools: SIGTERM and
//! SIGHUP cancel like SIGINT (one Result line, kind `cancelled`, exit 1,
//! nothing it started left running), and a tool that prints more than a
//! frame fails `limit` at once.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Longest the CLI may take to start and reach the tool call (a cold cache
/// compiles the guest first).
const START_WAIT: Duration = Duration::from_secs(60);
/// Longest from the signal to the CLI's exit.
const SIGNAL_GRACE: Duration = Duration::from_secs(3);
/// How long after the CLI exited a killed process may still show as
/// running (the kernel finishing the exit). The CLI waits for its trees to
/// be empty before it exits, so this is slack.
const GONE_GRACE: Duration = Duration::from_millis(500);

const CHILD_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/children/child.py");

/// A fresh, empty directory for one test's pid files.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wasmwire-signals-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tool command that starts a setsid() grandchild (its pid in
/// DIR/grandchild), then writes its own pid to DIR/tool and sleeps.
fn marker_tool(dir: &Path) -> String {
    let script = dir.join("tool.sh");
    std::fs::write(
        &script,
        r#"setsid sh -c 'echo $$ > "$1/grandchild.tmp"; mv "$1/grandchild.tmp" "$1/grandchild"; exec sleep 60' sh "$1" &
while [ ! -e "$1/grandchild" ]; do sleep 0.01; done
echo $$ > "$1/tool.tmp"; mv "$1/tool.tmp" "$1/tool"
exec sleep 60
"#,
    )
    .unwrap();
    format!("slow=sh {} {}", script.display(), dir.display())
}

fn start(args: &[&str], program: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmwire"))
        .arg("run")
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wasmwire starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(program.as_bytes())
        .unwrap();
    child
}

fn wait_for(path: &Path, cli: &mut Child) {
    let deadline = Instant::now() + START_WAIT;
    while !path.exists() {
        if let Some(status) = cli.try_wait().unwrap() {
            let mut stderr = String::new();
            let _ = cli.stderr.take().unwrap().read_to_string(&mut stderr);
            panic!(
                "wasmwire exited ({status}) before {}: {stderr}",
                path.display()
            );
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether `pid` is gone (a zombie runs nothing, so it counts as gone).
fn gone(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim();
        state.starts_with('Z') || state.starts_with('X')
    })
}

fn assert_gone(pid: i32, what: &str) {
    let deadline = Instant::now() + GONE_GRACE;
    while !gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        gone(pid),
        "{what} {pid} is still running after wasmwire exited"
    );
}

/// Sends `signal`, waits (at most SIGNAL_GRACE) for the CLI to exit, and
/// returns its exit code and its one Result line.
fn signal_and_finish(mut cli: Child, signal: libc::c_int) -> (i32, Value, String) {
    let pid = i32::try_from(cli.id()).unwrap();
    let t = Instant::now();
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let status = loop {
        if let Some(status) = cli.try_wait().unwrap() {
            break status;
        }
        if t.elapsed() > SIGNAL_GRACE {
            let _ = cli.kill();
            panic!("wasmwire still running {SIGNAL_GRACE:?} after signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    cli.stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let _ = cli.stderr.take().unwrap().read_to_string(&mut stderr);
    assert_eq!(
        stdout.lines().count(),
        1,
        "exactly one Result line after signal {signal}: {stdout:?} ({status}; stderr {stderr})"
    );
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    eprintln!("signal {signal}: exited {status} after {:?}", t.elapsed());
    (status.code().unwrap_or(-1), result, stderr)
}

fn assert_cancelled(code: i32, result: &Value, stderr: &str) {
    assert_eq!(result["ok"], json!(false), "{result} ({stderr})");
    assert_eq!(result["kind"], json!("cancelled"), "{result} ({stderr})");
    assert_eq!(code, 1, "a not-ok Result exits 1 ({stderr})");
}

/// Sends `signal` while a tool and its `setsid` grandchild run: the run
/// ends `cancelled` and both are gone.
fn cancels_and_kills_the_tool_tree(name: &str, signal: libc::c_int) {
    let dir = temp_dir(&format!("tool-{name}"));
    let tool = marker_tool(&dir);
    let mut cli = start(
        &["--wall-clock", "60s", "--tool", &tool],
        "await slow(); return 1;",
    );
    wait_for(&dir.join("tool"), &mut cli);
    let (tool_pid, grandchild) = (
        read_pid(&dir.join("tool")),
        read_pid(&dir.join("grandchild")),
    );
    let (code, result, stderr) = signal_and_finish(cli, signal);
    assert_cancelled(code, &result, &stderr);
    assert_gone(tool_pid, "the tool");
    assert_gone(grandchild, "the tool's setsid grandchild");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_and_sighup_during_a_tool_call_cancel_and_kill_the_tool_tree() {
    for (name, signal) in [("term", libc::SIGTERM), ("hup", libc::SIGHUP)] {
        cancels_and_kills_the_tool_tree(name, signal);
    }
}

/// Every other signal that asks a process to stop ends the run the same
/// way: each of these ended the CLI with no Result and left the tool and
/// its grandchild running.
#[test]
fn every_signal_that_asks_the_cli_to_stop_cancels_and_kills_the_tool_tree() {
    for (name, signal) in [
        ("quit", libc::SIGQUIT),
        ("usr1", libc::SIGUSR1),
        ("usr2", libc::SIGUSR2),
        ("alrm", libc::SIGALRM),
        ("xcpu", libc::SIGXCPU),
        ("vtalrm", libc::SIGVTALRM),
    ] {
        cancels_and_kills_the_tool_tree(name, signal);
    }
}

#[test]
fn sigterm_and_sighup_with_a_process_child_cancel_and_kill_its_tree() {
    for (name, signal) in [("term", libc::SIGTERM), ("hup", libc::SIGHUP)] {
        let dir = temp_dir(&format!("child-{name}"));
        let marker = dir.join("child");
        let mut cli = start(
            &[
                "--wall-clock",
                "60s",
                "--child",
                &format!("exec python3 {CHILD_SCRIPT}"),
            ],
            &format!("marker {}", marker.display()),
        );
        wait_for(&marker, &mut cli);
        let (child, grandchild) = (read_pid(&marker), read_pid(&dir.join("child.grandchild")));
        let (code, result, stderr) = signal_and_finish(cli, signal);
        assert_cancelled(code, &result, &stderr);
        assert_gone(child, "the process child");
        assert_gone(grandchild, "the child's setsid grandchild");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A tool printing 100 MB on stdout, or on stderr, fails `limit` as soon as
/// it passes the frame cap, and the program catches it: well before the
/// 20 s wall clock (it used to wait for the wall clock, the tool blocked on
/// a pipe nobody read).
#[test]
fn a_tool_printing_100_mb_fails_limit_at_once_and_the_program_catches_it() {
    // A first run fills the compiled-guest cache, so the time below is the
    // calls', not a cold compile's.
    let warm = start(&[], "return 1").wait_with_output().unwrap();
    assert!(warm.status.success(), "{warm:?}");
    let t = Instant::now();
    let mut cli = start(
        &[
            "--wall-clock",
            "20s",
            "--tool",
            "out=head -c 100000000 /dev/zero",
            "--tool",
            "err=head -c 100000000 /dev/zero >&2; exit 1",
        ],
        r#"
        const r = [];
        for (const t of [out, err]) {
            try { await t(); r.push("ok"); }
            catch (e) { r.push([e.name, e.kind, e.message.includes("printed more than")]); }
        }
        return r;
        "#,
    );
    let mut stdout = String::new();
    cli.stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = cli.wait().unwrap();
    let elapsed = t.elapsed();
    let result: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    eprintln!("100 MB tools: {elapsed:?}, {result}");
    assert_eq!(status.code(), Some(0), "{result}");
    assert_eq!(
        serde_json::from_str::<Value>(result["value"].as_str().unwrap()).unwrap(),
        json!([["ToolError", "limit", true], ["ToolError", "limit", true]])
    );
    // The wall clock is 20 s; both calls fail as soon as 16 MiB is read.
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

/// Whether a thread of `pid` is blocked in write(2) on its stdout.
fn writing_stdout(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        // "1 0x1 ...": syscall 1 (write on x86-64), first argument fd 1.
        std::fs::read_to_string(task.path().join("syscall"))
            .is_ok_and(|call| call.starts_with("1 0x1 "))
    })
}

#[test]
#[cfg(target_arch = "x86_64")]
fn a_signal_while_the_result_waits_on_a_reader_that_does_not_read_ends_the_cli() {
    // A Result of 5 MB, more than a pipe holds, to a reader that never
    // reads: the CLI waited on the write for as long as the reader lived,
    // the signal cancelling an execution that was over.
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let mut cli = start(&[], "return 'x'.repeat(5_000_000)");
        let deadline = Instant::now() + START_WAIT;
        while !writing_stdout(cli.id()) {
            assert!(Instant::now() < deadline, "the CLI never wrote its Result");
            assert!(cli.try_wait().unwrap().is_none(), "the CLI ended");
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: kill takes plain integers.
        unsafe { libc::kill(cli.id() as i32, signal) };
        let deadline = Instant::now() + SIGNAL_GRACE;
        let status = loop {
            if let Some(status) = cli.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "signal {signal}: the CLI is still writing"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(status.code(), Some(128 + signal), "signal {signal}");
    }
}
