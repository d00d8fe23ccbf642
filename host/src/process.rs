//! The process backend: any executable as the child.
//!
//! The call channel is the child's stdin (Responses in) and stdout (Requests
//! out); the start channel is fd 3 (the child reads its Start) and fd 4 (the
//! child writes its Result); stderr is captured like console output. The
//! child runs `sh -c COMMAND` with an empty environment (only `PATH`), in a
//! [`Containment`] of its own: its whole process tree, whatever it does to
//! its process group or session, is killed when the execution ends (its
//! Result, wall clock, cancel, or its first process exiting). With
//! `max_memory` set, the cap is on the whole tree (a memory cgroup), and a
//! tree that goes over it is killed at once and ends `limit`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Stdio;
use std::time::Duration;

use tokio::net::unix::pipe;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::backend::{Holds, Spawned};
use crate::console::Console;
use crate::containment::{self, Containment, DEFAULT_MAX_TASKS, Limits};
use crate::wasm::{ChildEnd, ChildFailure, Refusal};
use crate::{Budget, SandboxError};

/// How long the parent waits for a killed tree to be gone.
const KILL_WAIT: Duration = Duration::from_secs(1);
/// How long the parent reads what a dead tree left in its console pipe.
const DRAIN_WAIT: Duration = Duration::from_millis(200);

/// The fd a process child reads its Start from.
pub const START_FD: RawFd = 3;
/// The fd a process child writes its Result to.
pub const RESULT_FD: RawFd = 4;

/// An executable to run as the child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessChild {
    command: String,
    memory_limit: bool,
    max_tasks: u64,
}

impl ProcessChild {
    /// A child started as `sh -c COMMAND`.
    pub fn new(command: impl Into<String>) -> Self {
        ProcessChild {
            command: command.into(),
            memory_limit: cfg!(target_os = "linux"),
            max_tasks: DEFAULT_MAX_TASKS,
        }
    }

    /// Do not cap the child's memory. The backend then no longer holds
    /// `max_memory`, and an execution that asks for it is refused.
    pub fn without_memory_limit(mut self) -> Self {
        self.memory_limit = false;
        self
    }

    /// The most tasks (processes and threads) the child's tree may have at
    /// once, where the host's `pids` cgroup controller allows holding it
    /// (default [`DEFAULT_MAX_TASKS`]; 0: no cap).
    pub fn max_tasks(mut self, tasks: u64) -> Self {
        self.max_tasks = tasks;
        self
    }

    /// The command.
    pub fn command(&self) -> &str {
        &self.command
    }

    pub(crate) fn holds(&self) -> Holds {
        Holds {
            wall_clock: true,
            max_calls: true,
            max_bytes: true,
            // A cap on the whole tree needs a memory cgroup; an address-space
            // limit per process is not one (a child that forks gets one each).
            max_memory: self.memory_limit && containment::can_hold_memory(),
        }
    }

    pub(crate) fn spawn(
        &self,
        console: Console,
        budget: &Budget,
        stop: CancellationToken,
    ) -> Result<Spawned, SandboxError> {
        let spawn_error = |source| SandboxError::Spawn {
            command: self.command.clone(),
            source,
        };
        let (start_child, start_parent) = pipe_pair().map_err(spawn_error)?;
        let (result_parent, result_child) = pipe_pair().map_err(spawn_error)?;
        let max_memory = if self.memory_limit {
            budget.max_memory
        } else {
            0
        };
        let tree = Containment::new(Limits {
            max_memory,
            max_tasks: self.max_tasks,
        })
        .map_err(spawn_error)?;
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(&self.command)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        tree.apply(&mut command);
        let (start_fd, result_fd) = (start_child.as_raw_fd(), result_child.as_raw_fd());
        // SAFETY: the closure runs in the forked child before exec and only
        // makes async-signal-safe calls (fcntl, dup2).
        unsafe {
            command.pre_exec(move || place_fds(start_fd, result_fd));
        }
        let mut child = tree.spawn(&mut command).map_err(spawn_error)?;
        // The child has its ends now; ours must close so EOF can be seen.
        drop((start_child, result_child));
        let missing = || spawn_error(io::Error::other("a child stdio pipe is missing"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let mut stderr = child.stderr.take().ok_or_else(missing)?;
        let start_writer = pipe::Sender::from_owned_fd(start_parent).map_err(spawn_error)?;
        let start_reader = pipe::Receiver::from_owned_fd(result_parent).map_err(spawn_error)?;
        let mut sink = console;
        let mut drain = tokio::spawn(async move {
            let _ = tokio::io::copy(&mut stderr, &mut sink).await;
        });
        let exit = async move {
            let over_memory = |oom_kills| {
                ChildEnd::Failed(ChildFailure::MemoryLimit {
                    refusal: Refusal::ProcessTree { oom_kills },
                    max_memory,
                })
            };
            let end = tokio::select! {
                status = child.wait() => match status {
                    Ok(status) => {
                        tree.leader_reaped();
                        exit_end(status)
                    }
                    Err(e) => ChildEnd::Failed(ChildFailure::Trap { message: format!("waiting for the child failed: {e}") }),
                },
                () = stop.cancelled() => ChildEnd::Failed(ChildFailure::Cancelled),
                // Over the memory cap the whole tree goes, as a wasm child
                // does: a tree that lost a process to the OOM killer is not
                // left to carry on.
                kills = tree.oom_killed() => over_memory(kills),
            };
            // Kill the whole tree (sh and anything it started, wherever it
            // went), wait until it is gone, then reap our child.
            tree.kill_and_wait(KILL_WAIT).await;
            let _ = child.wait().await;
            tree.leader_reaped();
            // Nothing writes the console any more: take what is left in it.
            let _ = tokio::time::timeout(DRAIN_WAIT, &mut drain).await;
            drain.abort();
            // A tree the kernel cut for memory at any point went over its
            // cap, however it ended afterwards: on its own, or stopped
            // because its Result came in (a Result written after the OOM
            // killer ended one of its processes is not an ok one).
            let oom_kills = tree.oom_kills();
            drop(tree);
            if oom_kills > 0 {
                over_memory(oom_kills)
            } else {
                end
            }
        };
        Ok(Spawned {
            call_reader: Box::new(stdout),
            call_writer: Box::new(stdin),
            start_reader: Box::new(start_reader),
            start_writer: Box::new(start_writer),
            exit: Box::pin(exit),
        })
    }
}

fn exit_end(status: std::process::ExitStatus) -> ChildEnd {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ChildEnd::Exited { code },
        (None, Some(signal)) => ChildEnd::Failed(ChildFailure::Trap {
            message: format!("the child was killed by signal {signal}"),
        }),
        (None, None) => ChildEnd::Failed(ChildFailure::Trap {
            message: format!("the child ended with {status}"),
        }),
    }
}

/// A pipe as (read end, write end), both close-on-exec; the parent's end is
/// made non-blocking by tokio when wrapped.
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid 2-element array for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are open fds that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// In the forked child: put the start channel on fds 3 and 4. Only
/// async-signal-safe calls.
fn place_fds(start_fd: RawFd, result_fd: RawFd) -> io::Result<()> {
    let check = |r: libc::c_int| {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    };
    // First move both out of the way, in case either already is 3 or 4.
    // SAFETY: plain fd syscalls on fds this process owns.
    unsafe {
        let high_start = check(libc::fcntl(start_fd, libc::F_DUPFD_CLOEXEC, 10))?;
        let high_result = check(libc::fcntl(result_fd, libc::F_DUPFD_CLOEXEC, 10))?;
        // dup2 clears close-on-exec on the new fd.
        check(libc::dup2(high_start, START_FD))?;
        check(libc::dup2(high_result, RESULT_FD))?;
    }
    Ok(())
}
