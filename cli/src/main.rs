//! `wasmwire`: run a JavaScript program in the sandbox from the command line.
//!
//! stdout gets exactly one line, the final Result as JSON; stderr gets the
//! program's console output and diagnostics. Exit code: 0 when the Result is
//! ok, 1 when it is not, 2 for usage or set-up errors, 3 when the child broke
//! the protocol.

mod args;
mod describe;
mod manifest;
mod output;
mod shell_tool;
mod units;

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use wasmwire::{Execution, ProcessChild, Sandbox, SandboxError};

use args::{Cli, Command, Output, RunArgs};

/// Exit codes, as documented in the README.
const EXIT_OK: u8 = 0;
const EXIT_NOT_OK: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_PROTOCOL: u8 = 3;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with success; usage errors to stderr.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    match cli.command {
        Command::Run(args) => match run(args) {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                eprintln!(
                    "wasmwire: {}",
                    wasmwire::console::neutralise(&format!("{e:#}"))
                );
                ExitCode::from(EXIT_USAGE)
            }
        },
        Command::Describe(args) => match describe::run(&args) {
            Ok(()) => ExitCode::from(EXIT_OK),
            Err(e) => {
                eprintln!(
                    "wasmwire: {}",
                    wasmwire::console::neutralise(&format!("{e:#}"))
                );
                ExitCode::from(EXIT_USAGE)
            }
        },
        Command::Mcp(args) => ExitCode::from(wasmwire_mcp::cli::run(&args)),
    }
}

/// Runs one program; `Err` is a usage or set-up error (exit 2).
fn run(args: RunArgs) -> anyhow::Result<u8> {
    let language = args.language()?;
    let program = read_program(&args.program)?;
    let tools = manifest::tools(&args.tools)?;
    let options = args.limits.sandbox_options();
    // Console lines go to stderr as the program writes them, from a thread
    // of their own: the sink is called on the child's thread and must never
    // wait on our stderr.
    let console = Console::to_stderr();
    let sink = console.clone();
    let execution = Execution {
        language,
        ..Execution::new(program)
    }
    .budget(args.limits.budget())
    .console_sink(move |line| sink.push(line));

    // One execution, polled on this thread by `block_on`; the workers
    // serve the signal handlers and the tools' process output, for which
    // two are ample. The default, a worker per core, started as many
    // threads as the host has cores, and read the cgroup files to count
    // them.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let ran = runtime.block_on(async {
        // Before the sandbox is built: with no cached compile of the guest
        // that takes seconds, and a signal then killed the process with no
        // Result. Caught now, it cancels the execution, which ends
        // `cancelled` as soon as it starts.
        let cancel = wasmwire::CancellationToken::new();
        cancel_on_signals(&cancel)?;
        let sandbox = match (&args.child, &args.child_wasm) {
            (Some(command), _) => {
                Sandbox::with_process(ProcessChild::new(command.clone()), options)
            }
            (None, Some(path)) => {
                let what = format!("the child component {}", path.display());
                let file = std::fs::File::open(path).with_context(|| format!("reading {what}"))?;
                let Some(bytes) = read_bytes_at_most(file, MAX_COMPONENT_BYTES)
                    .with_context(|| format!("reading {what}"))?
                else {
                    anyhow::bail!(
                        "{what} is longer than the {MAX_COMPONENT_BYTES} bytes a component may be"
                    );
                };
                Sandbox::with_component(&bytes, options)?
            }
            (None, None) => Sandbox::new(options)?,
        };
        let outcome = match sandbox.run(&execution, &tools, cancel).await {
            Ok(outcome) => Ok(outcome),
            Err(e @ SandboxError::Unsupported { .. }) => Err(anyhow::Error::new(e)),
            Err(e) => Err(anyhow::Error::new(e).context("could not start the execution")),
        };
        anyhow::Ok((sandbox, outcome))
    });
    let (sandbox, outcome) = match ran {
        Ok((sandbox, outcome)) => (Some(sandbox), outcome),
        Err(e) => (None, Err(e)),
    };
    // From here a signal ends the process (see `cancel_on_signals`); not
    // for a set-up error, whose message is still to be said.
    if outcome.is_ok() {
        WRITING_THE_RESULT.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    // The console thread writes what is left and ends; it is waited for
    // while stderr takes what it writes (for at most CONSOLE_DRAIN), so
    // that a terminal shows the last lines before the Result, and not at
    // all while stderr is a full pipe nobody reads.
    drop(execution);
    console.close_and_drain(CONSOLE_DRAIN);
    // Every process of the execution was sent SIGKILL before `run`
    // returned; the Result goes out now, and then, before this process
    // exits, whatever is left is reaped and its cgroups removed. Nothing
    // this process started may outlive it.
    let code = outcome.and_then(|outcome| print(&outcome, args.output));
    wasmwire::containment::kill_adopted();
    wasmwire::containment::settle(std::time::Duration::from_secs(2));
    // The process exits next, and the kernel takes back the engine's
    // mappings and the runtime's threads in one go. Dropped here instead,
    // each of the engine's unmappings, made while the runtime's other
    // threads lived, stopped every core the process had run on to flush
    // its TLB: a quarter of a `wasmwire run`'s CPU time in profiles.
    std::mem::forget(sandbox);
    std::mem::forget(runtime);
    code
}

/// How long the console's last lines may take to reach stderr.
const CONSOLE_DRAIN: std::time::Duration = std::time::Duration::from_secs(1);

/// The console's lines on their way to stderr, written by a thread of
/// their own: the sink is called on the child's thread and must never wait
/// on our stderr. Kept as one buffer of bytes, so that what waits behind a
/// stderr nobody reads is the console's own bytes (at most its cap), not a
/// `String` and a channel slot for each line: a million empty lines were
/// 32 MiB that way.
#[derive(Clone)]
struct Console(std::sync::Arc<ConsoleShared>);

struct ConsoleShared {
    queue: std::sync::Mutex<ConsoleQueue>,
    /// Lines were queued, or the queue closed.
    changed: std::sync::Condvar,
    /// Heard once the queue is closed and everything is written.
    written: std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

#[derive(Default)]
struct ConsoleQueue {
    bytes: Vec<u8>,
    closed: bool,
}

impl Console {
    /// A console whose lines a new thread writes to stderr.
    fn to_stderr() -> Self {
        let (written, done) = std::sync::mpsc::channel();
        let console = Console(std::sync::Arc::new(ConsoleShared {
            queue: std::sync::Mutex::default(),
            changed: std::sync::Condvar::new(),
            written: std::sync::Mutex::new(Some(done)),
        }));
        let writer = console.clone();
        std::thread::spawn(move || {
            while let Some(bytes) = writer.next_bytes() {
                let _ = std::io::stderr().lock().write_all(&bytes);
            }
            let _ = written.send(());
        });
        console
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, ConsoleQueue> {
        self.0
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues one line.
    fn push(&self, line: &str) {
        let mut queue = self.queue();
        queue.bytes.extend_from_slice(line.as_bytes());
        queue.bytes.push(b'\n');
        drop(queue);
        self.0.changed.notify_one();
    }

    /// What is queued, once there is any; `None` once the queue is closed
    /// and empty.
    fn next_bytes(&self) -> Option<Vec<u8>> {
        let mut queue = self.queue();
        loop {
            if !queue.bytes.is_empty() {
                return Some(std::mem::take(&mut queue.bytes));
            }
            if queue.closed {
                return None;
            }
            queue = self
                .0
                .changed
                .wait(queue)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Closes the queue and waits, for at most `limit`, for the thread to
    /// write what is left, as long as stderr takes it.
    fn close_and_drain(&self, limit: std::time::Duration) {
        self.queue().closed = true;
        self.0.changed.notify_one();
        let Some(done) = self
            .0
            .written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        else {
            return;
        };
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            match done.recv_timeout(std::time::Duration::from_millis(10)) {
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if stderr_takes_writes() => {}
                _ => return,
            }
        }
    }
}

/// Whether a write to stderr would go through now: false for a pipe that
/// is full (nobody reads it) or closed.
fn stderr_takes_writes() -> bool {
    let mut stderr = libc::pollfd {
        fd: 2,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one pollfd, owned here, and a timeout of 0: poll only looks.
    let ready = unsafe { libc::poll(&mut stderr, 1, 0) };
    ready == 1 && stderr.revents & libc::POLLOUT != 0 && stderr.revents & libc::POLLERR == 0
}

/// Prints the one Result line (or, with `--output value`, the value
/// alone, or the error on stderr), then any diagnostic; returns the exit
/// code the Result means. The console has gone to stderr already, as far
/// as it could.
///
/// stdout first, and stderr only after, from a thread given
/// [`CONSOLE_DRAIN`]: a program's console may have filled a stderr pipe
/// nobody reads (the console thread is then stuck holding stderr's lock),
/// and a caller that reads stdout first must still get its Result, and
/// this process must still exit.
fn print(outcome: &wasmwire::Outcome, output: Output) -> anyhow::Result<u8> {
    let mut diagnostics = Vec::new();
    if outcome.counts_disagree
        && let Some((calls, bytes)) = outcome.child_counts
    {
        diagnostics.push(format!(
            "wasmwire: the child counted {calls} calls and {bytes} bytes; the parent counted {} and {} (the parent's counts are reported)",
            outcome.result.calls, outcome.result.bytes
        ));
    }
    // The value is printed as the text it came as, never read into a tree:
    // a tree can take fifty times its text's memory.
    let value = match output {
        Output::Result => None,
        Output::Value => Some(outcome.value_json()),
    };
    let line = match &value {
        None => Some(output::result_line(&outcome.result)),
        Some(Ok(value)) => Some(Ok(output::value_line(value))),
        Some(Err(failure)) => {
            diagnostics.push(format!(
                "wasmwire: {}",
                wasmwire::console::neutralise_line(&failure.to_string())
            ));
            None
        }
    };
    if let Some(line) = line {
        let line = line.context("encoding the output")?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}").context("writing the output")?;
        stdout.flush().context("writing the output")?;
    }
    if !diagnostics.is_empty() {
        let (written, done) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut stderr = std::io::stderr().lock();
            for line in diagnostics {
                let _ = writeln!(stderr, "{line}");
            }
            let _ = written.send(());
        });
        let _ = done.recv_timeout(CONSOLE_DRAIN);
    }
    // With `--output value`, a Result whose value cannot be read (it nests
    // deeper than the parent reads) is no success: nothing went to stdout.
    let value_failed = match value {
        Some(Err(failure)) => Some(failure.is_protocol_violation()),
        _ => None,
    };
    Ok(match value_failed {
        None if outcome.result.ok => EXIT_OK,
        None if outcome.protocol_violation() => EXIT_PROTOCOL,
        Some(true) => EXIT_PROTOCOL,
        _ => EXIT_NOT_OK,
    })
}

/// SIGINT, SIGTERM, SIGHUP and the other signals that ask a process to stop
/// ([`wasmwire::containment::ENDING_SIGNALS`]: SIGQUIT, SIGUSR1, SIGUSR2,
/// SIGALRM, SIGXCPU, SIGVTALRM) cancel the execution: it still ends in its
/// one Result (kind `cancelled`), everything it started is killed, and then
/// the process exits. Left to their defaults, those past the first three
/// ended the process with no Result and left its tools running. The handlers are in place before this returns, so a
/// signal from then on cannot kill the process before its Result. This
/// process also becomes the subreaper of what it starts, so a descendant
/// that double-forks away is still found and killed at the end.
///
/// Once the execution has ended, such a signal ends the process at once,
/// exiting 128 + its number: the Result is being written, and a write to
/// a pipe whose reader is alive and does not read never ends. The signal
/// cancelled an execution that was over, and the CLI waited on the
/// reader for as long as it lived (a `| sleep 15`: 13 s after SIGTERM).
fn cancel_on_signals(cancel: &wasmwire::CancellationToken) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let _ = wasmwire::containment::become_subreaper();
    for &number in wasmwire::containment::ENDING_SIGNALS {
        let mut stream =
            signal(SignalKind::from_raw(number)).context("installing a signal handler")?;
        let cancel = cancel.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if WRITING_THE_RESULT.load(std::sync::atomic::Ordering::SeqCst) {
                    end_while_writing(number);
                }
                cancel.cancel();
            }
        });
    }
    Ok(())
}

/// Set when the execution has ended with a Result, which is to be written
/// (after the console's last lines).
static WRITING_THE_RESULT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Ends the process for `signal`, which came while the Result was being
/// written: what the execution started was killed before it ended, and
/// what is left of it is killed here too; then the process exits without
/// running anything that could wait on the locked stdout.
fn end_while_writing(signal: i32) -> ! {
    wasmwire::containment::kill_adopted();
    wasmwire::containment::settle(std::time::Duration::from_millis(500));
    // SAFETY: _exit ends the process; it takes no pointer.
    unsafe { libc::_exit(128 + signal) }
}

/// Reads the program: at most what a Start can carry (a longer one is
/// refused here, not read whole first: `wasmwire run /dev/zero`, or a
/// generator that never ends on stdin, grew without bound). An empty one
/// is said on stderr (a generator that failed before writing answers
/// `null` as a success) but run: a process child may need none.
fn read_program(path: &std::path::Path) -> anyhow::Result<String> {
    let (program, what) = if path.as_os_str() == "-" {
        let program = read_at_most(std::io::stdin(), MAX_PROGRAM_BYTES)
            .context("reading the program from stdin")?;
        (program, "the program on stdin".to_owned())
    } else {
        let what = format!("the program {}", path.display());
        let file = std::fs::File::open(path).with_context(|| format!("reading {what}"))?;
        let program =
            read_at_most(file, MAX_PROGRAM_BYTES).with_context(|| format!("reading {what}"))?;
        (program, what)
    };
    let Some(program) = program else {
        anyhow::bail!("{what} is longer than the {MAX_PROGRAM_BYTES} bytes a program may be");
    };
    if program.trim().is_empty() {
        // Said, not refused: a process child may take no program at all.
        eprintln!("wasmwire: {what} is empty");
    }
    Ok(program)
}

/// The longest program read: a frame's worth (a Start holds it and more).
const MAX_PROGRAM_BYTES: usize = wire::MAX_FRAME_BYTES;

/// The largest child component `--child-wasm` reads (the built-in guest
/// is 2 MB): `--child-wasm /dev/zero` was read until the machine's memory
/// ran out.
const MAX_COMPONENT_BYTES: usize = 128 << 20;

/// All of `from` as text, if it is at most `max` bytes; `None` if longer
/// (only `max + 1` bytes are read to tell).
pub(crate) fn read_at_most(from: impl Read, max: usize) -> std::io::Result<Option<String>> {
    let Some(bytes) = read_bytes_at_most(from, max)? else {
        return Ok(None);
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// All of `from`, if it is at most `max` bytes; `None` if longer.
fn read_bytes_at_most(from: impl Read, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    from.take(max as u64 + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() <= max).then_some(bytes))
}
