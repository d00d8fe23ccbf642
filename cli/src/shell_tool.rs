//! `--tool NAME=COMMAND`: a tool answered by a shell command.
//!
//! A call runs COMMAND with `sh -c`, the args text on its stdin and
//! `WASMWIRE_TOOL=NAME` in its environment. Exit 0: the value is its stdout
//! with one trailing newline removed, handed to the program as a string
//! (`--tool`) or, for a tool declared with `--json-tool`, as the JSON value
//! it prints (text that is not JSON then fails the call). Otherwise the error is its stderr, and
//! the kind is the one named by a first stderr line `kind: CLASS`, else the
//! exit code's (sysexits.h): 64/65 invalid, 66 not_found, 69/75 transient,
//! 77 denied, anything else unknown. A command that prints more than a
//! frame can carry on stdout or on stderr fails `limit` at once. Each call's
//! command runs in a [`Containment`] of its own: its whole process tree,
//! wherever it moves in groups and sessions, is killed when the command
//! exits, when it prints too much, when the call's deadline passes, or when
//! the execution ends (the handler's future is dropped).

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use wasmwire::containment::{Containment, Limits};
use wasmwire::wire::{Call, Held, Holdings};
use wasmwire::{FailureKind, JsonText, Text, Tool, ToolFailure};

/// How long a call waits for its command's killed tree to be gone.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// The most a tool command may print; past it the call fails with `limit`.
const MAX_OUTPUT: usize = wire::MAX_FRAME_BYTES;

/// Bytes read from a tool's pipe at a time: a pipe's usual buffer.
const READ_CHUNK: usize = 64 << 10;

/// A parsed `--tool` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: String,
    pub signature: String,
    pub command: String,
    /// Whether stdout is JSON (`--json-tool`) rather than text (`--tool`).
    pub json: bool,
}

impl ToolSpec {
    /// `--json-tool`: [`ToolSpec::parse`], for a command that prints JSON.
    pub fn parse_json(spec: &str) -> Result<ToolSpec, String> {
        Ok(ToolSpec {
            json: true,
            ..Self::parse(spec)?
        })
    }

    /// `NAME=COMMAND` or `NAME(PARAM, ...)=COMMAND`.
    pub fn parse(spec: &str) -> Result<ToolSpec, String> {
        let paren = spec.find('(');
        let eq = spec
            .find('=')
            .ok_or_else(|| format!("{spec:?} is not NAME=COMMAND or NAME(PARAM, ...)=COMMAND"))?;
        let (head, command) = match paren {
            Some(p) if p < eq => {
                let close = spec[p..]
                    .find(')')
                    .map(|c| p + c)
                    .ok_or_else(|| format!("{spec:?}: the parameter list has no ')'"))?;
                let rest = spec[close + 1..].trim_start();
                let command = rest
                    .strip_prefix('=')
                    .ok_or_else(|| format!("{spec:?}: expected '=' after the parameter list"))?;
                (&spec[..=close], command)
            }
            _ => (&spec[..eq], &spec[eq + 1..]),
        };
        let head = head.trim();
        let name = head
            .split('(')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        if name.is_empty() {
            return Err(format!("{spec:?}: the tool has no name"));
        }
        if command.trim().is_empty() {
            return Err(format!("{spec:?}: the tool has no command"));
        }
        let signature = if head.contains('(') {
            head.to_string()
        } else {
            String::new()
        };
        Ok(ToolSpec {
            name,
            signature,
            command: command.to_string(),
            json: false,
        })
    }
}

/// The tool a spec describes.
pub fn tool(spec: &ToolSpec) -> Tool {
    let (name, command, json) = (spec.name.clone(), spec.command.clone(), spec.json);
    Tool::new(spec.name.clone(), move |call: Call| {
        let (name, command) = (name.clone(), command.clone());
        async move {
            let out = run(&name, &command, call).await?;
            if json {
                JsonText::new(out).map_err(|e| {
                    ToolFailure::new(
                        FailureKind::Unknown,
                        format!("`{command}` printed text that is not JSON (it is declared --json-tool): {e}"),
                    )
                    .into()
                })
            } else {
                Ok(JsonText::string(Text(out))?)
            }
        }
    })
    .signature(spec.signature.clone())
}

async fn run(name: &str, command: &str, call: Call) -> Result<String, wire::HandlerError> {
    let could_not_start = |e: std::io::Error| {
        ToolFailure::new(
            FailureKind::Unknown,
            format!("could not start `{command}`: {e}"),
        )
    };
    // Making the cgroups and forking happen on a blocking thread, not inside
    // the Server's connection loop that polls this future first.
    let spawning = {
        let (name, command) = (name.to_string(), command.to_string());
        tokio::task::spawn_blocking(move || {
            let tree = Containment::new(Limits::default())?;
            let mut child = Command::new("/bin/sh");
            child
                .arg("-c")
                .arg(&command)
                .env("WASMWIRE_TOOL", &name)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            tree.apply(&mut child);
            let child = tree.spawn(&mut child)?;
            Ok::<_, std::io::Error>((child, tree))
        })
    };
    let (mut child, tree) = spawning
        .await
        .map_err(|e| could_not_start(std::io::Error::other(e)))?
        .map_err(could_not_start)?;
    // From here, dropping this future (deadline, end of execution) drops
    // `tree`, which kills the whole tree.
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let args = call.args;
    let feed = async move {
        if let Some(stdin) = stdin.as_mut() {
            // A command that does not read its stdin is fine.
            let _ = stdin.write_all(args.as_bytes()).await;
        }
        drop(stdin);
    };
    let holdings = call.holdings.clone();
    let reading_out = read_held(stdout.as_mut(), &holdings, command, "stdout");
    let reading_err = read_held(stderr.as_mut(), &holdings, command, "stderr");
    tokio::pin!(feed, reading_out, reading_err);
    let (mut fed, mut out, mut err, mut status) = (false, None, None, None);
    while out.is_none() || err.is_none() || status.is_none() {
        tokio::select! {
            () = &mut feed, if !fed => fed = true,
            // Over a cap: fail now; the tree dies with `tree`.
            read = &mut reading_out, if out.is_none() => out = Some(read?),
            read = &mut reading_err, if err.is_none() => err = Some(read?),
            exited = child.wait(), if status.is_none() => {
                status = Some(exited.map_err(|e| {
                    ToolFailure::new(FailureKind::Unknown, format!("waiting for `{command}`: {e}"))
                })?);
                tree.leader_reaped();
                // The command is done: what it left running goes now, so
                // that nothing it started can hold its pipes open.
                tree.kill_and_wait(KILL_WAIT).await;
            }
        }
    }
    tree.kill_and_wait(KILL_WAIT).await;
    drop(tree);
    // The output stays held against the execution's cap until the value
    // is handed to the Server, which holds its frame from then on.
    let (Some((out, mut out_held)), Some((err, mut err_held))) = (out, err) else {
        return Err(
            ToolFailure::new(FailureKind::Unknown, format!("`{command}` did not end")).into(),
        );
    };
    let Some(status) = status else {
        return Err(
            ToolFailure::new(FailureKind::Unknown, format!("`{command}` did not end")).into(),
        );
    };
    if status.success() {
        let mut value = text(out, &mut out_held, command, "stdout")?;
        if value.ends_with('\n') {
            value.pop();
        }
        return Ok(value);
    }
    let stderr = text(err, &mut err_held, command, "stderr")?;
    Err(failure(status, &stderr).into())
}

/// A command's output as text, bytes that are not UTF-8 as U+FFFD: moved,
/// not copied, when it is UTF-8 (a value can be 16 MiB); otherwise the
/// text is held before it is made, beside the bytes, since each byte that
/// is not UTF-8 becomes three (16 MiB of 0xFF took 48 MiB more, unheld).
fn text(
    bytes: Vec<u8>,
    held: &mut Held,
    command: &str,
    stream: &str,
) -> Result<String, ToolFailure> {
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e.into_bytes(),
    };
    let len: usize = bytes
        .utf8_chunks()
        .map(|chunk| {
            let replaced = if chunk.invalid().is_empty() { 0 } else { 3 };
            chunk.valid().len() + replaced
        })
        .sum();
    held.try_grow(len).map_err(|over| {
        ToolFailure::new(
            FailureKind::Limit,
            format!(
                "the output of `{command}` on {stream} is not UTF-8: as text (each byte that is \
                 not, U+FFFD) it is {len} bytes, which cannot be held: {over}"
            ),
        )
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The failure of a command that printed more than a frame can carry.
fn too_much(command: &str, stream: &str) -> ToolFailure {
    ToolFailure::new(
        FailureKind::Limit,
        format!("`{command}` printed more than {MAX_OUTPUT} bytes on {stream}"),
    )
}

/// The failure a non-zero exit (or a signal) means.
fn failure(status: std::process::ExitStatus, stderr: &str) -> ToolFailure {
    let code = status.code();
    let (first, rest) = stderr.split_once('\n').unwrap_or((stderr, ""));
    if let Some(kind) = first
        .strip_prefix("kind:")
        .and_then(|k| k.trim().parse::<FailureKind>().ok())
    {
        // `kind: denied` alone: the exit still says something.
        return ToolFailure::new(kind, said_or_exit(rest, status));
    }
    let kind = match code {
        Some(64 | 65) => FailureKind::Invalid,
        Some(66) => FailureKind::NotFound,
        Some(69 | 75) => FailureKind::Transient,
        Some(77) => FailureKind::Denied,
        _ => FailureKind::Unknown,
    };
    ToolFailure::new(kind, said_or_exit(stderr, status))
}

/// What the tool said on stderr, or, when it said nothing, how it exited.
fn said_or_exit(said: &str, status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (said.trim_end(), status.code(), status.signal()) {
        ("", Some(code), _) => format!("the tool exited with code {code}"),
        ("", None, Some(signal)) => format!("the tool was killed by signal {signal}"),
        ("", None, None) => format!("the tool ended: {status}"),
        (said, _, _) => said.to_string(),
    }
}

/// Reads all of a pipe, holding what it keeps against the execution's cap
/// on what the parent holds for the child (64 calls each printing 12 MiB
/// must not make the parent hold 768 MiB). Fails `limit` past
/// [`MAX_OUTPUT`] bytes, or as soon as the output cannot be held.
async fn read_held<R: tokio::io::AsyncRead + Unpin>(
    pipe: Option<&mut R>,
    holdings: &Holdings,
    command: &str,
    stream: &str,
) -> Result<(Vec<u8>, Held), ToolFailure> {
    let mut held = holdings.hold_anyway(0);
    let mut kept = Vec::new();
    let Some(pipe) = pipe else {
        return Ok((kept, held));
    };
    let mut chunk = vec![0; READ_CHUNK];
    loop {
        // A read error ends the output as EOF would; the exit status says
        // how the command ended.
        let n = pipe.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return Ok((kept, held));
        }
        if kept.len() + n > MAX_OUTPUT {
            return Err(too_much(command, stream));
        }
        // The buffer grows only after its new size is held: holding after
        // the allocation would let many readers at once allocate (and
        // briefly keep) far more than the cap.
        let needed = kept.len() + n;
        if needed > kept.capacity() {
            let target = needed.max(kept.capacity() * 2).min(MAX_OUTPUT);
            let cannot_hold = |over| {
                ToolFailure::new(
                    FailureKind::Limit,
                    format!("the output of `{command}` on {stream} cannot be held: {over}"),
                )
            };
            held.try_grow(target.saturating_sub(held.bytes()))
                .map_err(cannot_hold)?;
            kept.reserve_exact(target - kept.len());
            held.try_grow(kept.capacity().saturating_sub(held.bytes()))
                .map_err(cannot_hold)?;
        }
        kept.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_signature_specs_parse() {
        assert_eq!(
            ToolSpec::parse("echo=cat"),
            Ok(ToolSpec {
                name: "echo".into(),
                signature: String::new(),
                command: "cat".into(),
                json: false,
            })
        );
        assert_eq!(
            ToolSpec::parse("get_logs(host, count)=./logs.sh --x=1"),
            Ok(ToolSpec {
                name: "get_logs".into(),
                signature: "get_logs(host, count)".into(),
                command: "./logs.sh --x=1".into(),
                json: false,
            })
        );
        assert_eq!(ToolSpec::parse("x=a=b").unwrap().command, "a=b");
        assert!(ToolSpec::parse_json("n=echo 1").unwrap().json);
    }

    #[test]
    fn bad_specs_say_why() {
        assert!(
            ToolSpec::parse("nocommand")
                .unwrap_err()
                .contains("NAME=COMMAND")
        );
        assert!(ToolSpec::parse("=cat").unwrap_err().contains("no name"));
        assert!(ToolSpec::parse("x=").unwrap_err().contains("no command"));
        assert!(ToolSpec::parse("f(a=cat").unwrap_err().contains("no ')'"));
        assert!(ToolSpec::parse("f(a) cat").is_err());
    }

    use std::os::unix::process::ExitStatusExt;

    /// The status of a process that exited with `code`.
    fn exited(code: i32) -> std::process::ExitStatus {
        std::process::ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn exit_codes_map_to_kinds() {
        let kind = |code| failure(exited(code), "").kind;
        assert_eq!(kind(64), FailureKind::Invalid);
        assert_eq!(kind(65), FailureKind::Invalid);
        assert_eq!(kind(66), FailureKind::NotFound);
        assert_eq!(kind(69), FailureKind::Transient);
        assert_eq!(kind(75), FailureKind::Transient);
        assert_eq!(kind(77), FailureKind::Denied);
        assert_eq!(kind(1), FailureKind::Unknown);
        // Killed by a signal: which one is said.
        let killed = failure(std::process::ExitStatus::from_raw(9), "");
        assert_eq!(
            (killed.kind, killed.message.as_str()),
            (FailureKind::Unknown, "the tool was killed by signal 9")
        );
    }

    #[test]
    fn a_kind_line_wins_over_the_exit_code() {
        let f = failure(exited(66), "kind: rate_limited\nslow down\n");
        assert_eq!(
            (f.kind, f.message.as_str()),
            (FailureKind::RateLimited, "slow down")
        );
        // An unknown class on the first line is just text.
        let f = failure(exited(77), "kind: sideways\nno\n");
        assert_eq!(f.kind, FailureKind::Denied);
        assert!(f.message.contains("kind: sideways"));
    }

    #[tokio::test]
    async fn a_command_gets_args_on_stdin_and_its_name_in_the_environment() {
        let call = Call {
            id: "1".into(),
            tool: "t".into(),
            args: "{\"a\":1}".into(),
            deadline: None,
            holdings: wire::Holdings::new(usize::MAX),
        };
        let out = run("t", "printf '%s|' \"$WASMWIRE_TOOL\"; cat", call)
            .await
            .unwrap();
        assert_eq!(out, "t|{\"a\":1}");
    }

    #[tokio::test]
    async fn output_that_is_not_utf8_is_held_as_the_text_it_becomes() {
        // 1,000 bytes of 0xFF become 3,000 of U+FFFD, held beside the
        // 1,000 read (in a buffer of at most 1,024): 4,024 bytes fit, and
        // 3,500, room for the bytes but not for the text, do not.
        let call = |holdings| Call {
            id: "1".into(),
            tool: "t".into(),
            args: String::new(),
            deadline: None,
            holdings,
        };
        let command = "head -c 1000 /dev/zero | tr '\\0' '\\377'";
        let out = run("t", command, call(wire::Holdings::new(1024 + 3000)))
            .await
            .unwrap();
        assert_eq!(out, "\u{fffd}".repeat(1000));
        let refused = run("t", command, call(wire::Holdings::new(3500)))
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("is not UTF-8: as text"), "{refused}");
        assert!(
            refused.contains("3000 bytes, which cannot be held"),
            "{refused}"
        );
    }

    #[tokio::test]
    async fn exactly_one_trailing_newline_is_removed() {
        let call = Call {
            id: "1".into(),
            tool: "t".into(),
            args: String::new(),
            deadline: None,
            holdings: wire::Holdings::new(usize::MAX),
        };
        assert_eq!(run("t", "printf 'x\\n\\n'", call).await.unwrap(), "x\n");
    }
}
