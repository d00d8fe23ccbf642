//! Containment of a process tree: everything a child or a tool command
//! starts ends with it, whatever the processes do to their group or session.
//!
//! A [`Containment`] is a set of fresh cgroups, one in each hierarchy the
//! host lets us write, made under our own cgroup (read from
//! `/proc/self/cgroup`) and named `wasmwire-<pid>-<n>`:
//!
//! - the cgroup v2 hierarchy, for `cgroup.kill` (one write kills every
//!   process in it, including ones forking at that moment), and, where the
//!   `memory` and `pids` controllers are enabled for our children (a pure-v2
//!   host), `memory.max`, `memory.swap.max`, `memory.oom.group` and
//!   `pids.max`;
//! - the v1 `memory` hierarchy (`memory.limit_in_bytes`, and
//!   `memory.memsw.limit_in_bytes` where swap accounting exists), only when
//!   a memory cap is asked for;
//! - the v1 `pids` hierarchy (`pids.max`; set to 0 when killing, so nothing
//!   in it can fork while it is being emptied);
//! - the v1 `freezer` hierarchy, only when there is no v2 hierarchy: freeze,
//!   kill each, thaw.
//!
//! The child joins them before it execs: the parent opens each
//! `cgroup.procs` and the forked child writes "0" to it in `pre_exec` (an
//! async-signal-safe `write`), so not one instruction of the child runs
//! outside. Killing signals everything, then waits (asynchronously) until
//! every cgroup is empty, then removes the directories; what cannot be
//! removed yet (a process stuck in the kernel) is handed to one background
//! thread that keeps killing and retries. Each containment is independent,
//! so any number of executions in one process can each have their own.
//!
//! Where no cgroup can be made (not root, a read-only cgroupfs), the tree is
//! still killed as far as it can be seen: the process group, plus every
//! descendant of the leader found in `/proc` (stopped first so none can
//! fork, then killed). A process that left both the group and the tree (a
//! double-forked daemon whose parent has exited) is out of reach there; the
//! CLI catches those too by being their subreaper ([`become_subreaper`],
//! [`kill_adopted`]). A memory cap is never claimed without a memory cgroup:
//! [`can_hold_memory`] says whether one can be made.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

/// How many tasks (processes and threads) a contained tree may have at
/// once where the `pids` controller is available, unless set otherwise.
pub const DEFAULT_MAX_TASKS: u64 = 1024;

/// How long a cgroup that could not be emptied is retried in the
/// background before it is left as it is.
const LEFTOVER_RETRY: Duration = Duration::from_secs(30);

/// What a containment holds besides ending its tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Memory of the whole tree, in bytes (0: none). A containment asked for
    /// one is only made when a memory cgroup can be.
    pub max_memory: u64,
    /// Tasks of the whole tree at once (0: none). Held where the `pids`
    /// controller is available, silently not elsewhere.
    pub max_tasks: u64,
}

/// Which kind of cgroup a directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// cgroup v2: `cgroup.kill`, and memory/pids files where enabled.
    V2,
    /// v1 `memory`.
    Memory,
    /// v1 `pids`.
    Pids,
    /// v1 `freezer`.
    Freezer,
}

/// The hierarchies of this host, found once: our own cgroup in each.
#[derive(Debug, Default)]
struct Hierarchies {
    v2: Option<PathBuf>,
    memory: Option<PathBuf>,
    pids: Option<PathBuf>,
    freezer: Option<PathBuf>,
}

fn hierarchies() -> &'static Hierarchies {
    static FOUND: OnceLock<Hierarchies> = OnceLock::new();
    FOUND.get_or_init(|| {
        let (Ok(cgroups), Ok(mounts)) = (
            fs::read_to_string("/proc/self/cgroup"),
            fs::read_to_string("/proc/self/mountinfo"),
        ) else {
            return Hierarchies::default();
        };
        let found = find_hierarchies(&cgroups, &mounts);
        if let Some(v2) = &found.v2 {
            enable_v2_controllers(v2);
        }
        for base in [&found.v2, &found.memory, &found.pids, &found.freezer]
            .into_iter()
            .flatten()
        {
            remove_stale(base);
        }
        found
    })
}

/// Our cgroup directory in each hierarchy, from `/proc/self/cgroup` and
/// `/proc/self/mountinfo`.
fn find_hierarchies(cgroups: &str, mountinfo: &str) -> Hierarchies {
    // hierarchy-id:controllers:path
    let mut ours: HashMap<&str, &str> = HashMap::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            ours.insert("", path);
        } else {
            for c in controllers.split(',') {
                ours.insert(c, path);
            }
        }
    }
    let mut found = Hierarchies::default();
    for line in mountinfo.lines() {
        // id parent major:minor root mount-point options ... - fstype source super-options
        let Some((head, tail)) = line.split_once(" - ") else {
            continue;
        };
        let head: Vec<&str> = head.split(' ').collect();
        let tail: Vec<&str> = tail.split(' ').collect();
        let (Some(root), Some(mount), Some(fstype)) = (head.get(3), head.get(4), tail.first())
        else {
            continue;
        };
        let dir = |path: &str| -> Option<PathBuf> {
            // Our path is relative to the hierarchy's root; the mount may
            // show only a subtree of it.
            let rel = path.strip_prefix(root.trim_end_matches('/'))?;
            let dir = Path::new(mount).join(rel.trim_start_matches('/'));
            dir.is_dir().then_some(dir)
        };
        match *fstype {
            "cgroup2" if found.v2.is_none() => found.v2 = ours.get("").and_then(|p| dir(p)),
            "cgroup" => {
                let options = tail.get(2).copied().unwrap_or("");
                for (name, slot) in [
                    ("memory", &mut found.memory),
                    ("pids", &mut found.pids),
                    ("freezer", &mut found.freezer),
                ] {
                    if slot.is_none() && options.split(',').any(|o| o == name) {
                        *slot = ours.get(name).and_then(|p| dir(p));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// On a v2 host whose memory and pids controllers are available to our
/// cgroup but not yet passed on to its children, passes them on. The
/// kernel refuses (EBUSY) when our cgroup holds processes and is not the
/// root; then memory is not held through v2 here.
fn enable_v2_controllers(ours: &Path) {
    let available = fs::read_to_string(ours.join("cgroup.controllers")).unwrap_or_default();
    let enabled = fs::read_to_string(ours.join("cgroup.subtree_control")).unwrap_or_default();
    let missing: Vec<String> = ["memory", "pids"]
        .into_iter()
        .filter(|c| available.split_whitespace().any(|a| a == *c))
        .filter(|c| !enabled.split_whitespace().any(|e| e == *c))
        .map(|c| format!("+{c}"))
        .collect();
    if !missing.is_empty() {
        let _ = fs::write(ours.join("cgroup.subtree_control"), missing.join(" "));
    }
}

/// Removes the empty cgroups a process of ours that is gone left behind (it
/// was killed before it could clean up). Only empty ones: the owner's pid
/// cannot be told apart from a process in another pid namespace that shares
/// this cgroup, so nothing in them is killed.
fn remove_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix("wasmwire-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if owner != std::process::id() && !Path::new(&format!("/proc/{owner}")).exists() {
            // Fails (EBUSY) unless it is empty.
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// Whether a cgroup that caps memory can be made on this host (probed once,
/// by making one and removing it).
pub fn can_hold_memory() -> bool {
    static CAN: OnceLock<bool> = OnceLock::new();
    *CAN.get_or_init(|| {
        Containment::new(Limits {
            max_memory: 64 << 20,
            max_tasks: 0,
        })
        .is_ok_and(|c| c.caps_memory())
    })
}

/// One cgroup directory of a containment.
#[derive(Debug)]
struct Dir {
    kind: Kind,
    path: PathBuf,
    /// `cgroup.procs`, open for the forked child to write "0" to.
    procs: Option<File>,
}

/// The fds the forked child writes "0" to, copied out so the closure run
/// between fork and exec allocates nothing.
#[derive(Debug, Clone, Copy)]
struct JoinFds {
    fds: [RawFd; 4],
    count: usize,
}

impl JoinFds {
    /// In the forked child: join every cgroup. Async-signal-safe (write).
    fn join(&self) -> io::Result<()> {
        for &fd in &self.fds[..self.count] {
            // SAFETY: fd is an open fd the parent keeps open until the spawn
            // returns; the buffer is a static byte.
            if unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// A process tree's container: see the module's documentation.
///
/// Dropping it kills everything in it (without waiting) and removes its
/// cgroups as soon as they are empty.
#[derive(Debug)]
pub struct Containment {
    dirs: Vec<Dir>,
    /// The tree's first process (its process group's leader), 0 until set.
    leader: AtomicI32,
    /// Whether the leader has been reaped.
    reaped: AtomicBool,
    max_memory: u64,
}

impl Containment {
    /// A new, empty containment. Fails only when `limits.max_memory` is set
    /// and no memory cgroup can be made; without it, it falls back to what
    /// the host allows, down to the process group and `/proc`.
    pub fn new(limits: Limits) -> io::Result<Containment> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        // What earlier trees left to us as subreaper and has ended goes
        // now: the zombies waiting at any time are at most what the trees
        // made in the last `REAP_EVERY` (one a tool call, in the CLI,
        // whose exit reaps the rest: `kill_adopted`).
        reap_adopted_now_and_then();
        let found = hierarchies();
        let name = format!(
            "wasmwire-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut containment = Containment {
            dirs: Vec::new(),
            leader: AtomicI32::new(0),
            reaped: AtomicBool::new(false),
            max_memory: limits.max_memory,
        };
        let wanted = [
            (Kind::V2, found.v2.as_ref()),
            (
                Kind::Memory,
                found.memory.as_ref().filter(|_| limits.max_memory > 0),
            ),
            (Kind::Pids, found.pids.as_ref()),
            (
                Kind::Freezer,
                found.freezer.as_ref().filter(|_| found.v2.is_none()),
            ),
        ];
        for (kind, base) in wanted {
            let Some(base) = base else { continue };
            let path = base.join(&name);
            if fs::create_dir(&path).is_err() {
                continue;
            }
            let dir = Dir {
                kind,
                path,
                procs: None,
            };
            // Pushed first, so a failure below removes it with the rest.
            containment.dirs.push(dir);
            let dir = containment.dirs.last_mut().expect("just pushed");
            let set_up = set_limits(dir, limits).and_then(|()| {
                dir.procs = Some(
                    OpenOptions::new()
                        .write(true)
                        .open(dir.path.join("cgroup.procs"))?,
                );
                Ok(())
            });
            if set_up.is_err() {
                // Not usable: leave it out (it is empty, so it goes at once).
                if let Some(dir) = containment.dirs.pop() {
                    let _ = fs::remove_dir(&dir.path);
                }
            }
        }
        if limits.max_memory > 0 && !containment.caps_memory() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "no cgroup with the memory controller can be made here",
            ));
        }
        Ok(containment)
    }

    /// Whether the tree's memory is capped by a cgroup.
    pub fn caps_memory(&self) -> bool {
        self.max_memory > 0
            && self.dirs.iter().any(|d| match d.kind {
                Kind::Memory => true,
                Kind::V2 => d.path.join("memory.max").exists(),
                _ => false,
            })
    }

    /// Whether any cgroup holds the tree (else only the group and `/proc`).
    pub fn uses_cgroups(&self) -> bool {
        !self.dirs.is_empty()
    }

    /// Makes `command` start its process in this containment: in a process
    /// group of its own, and inside every cgroup before it execs.
    pub fn apply(&self, command: &mut tokio::process::Command) {
        let mut join = JoinFds {
            fds: [-1; 4],
            count: 0,
        };
        for file in self.dirs.iter().filter_map(|d| d.procs.as_ref()) {
            if join.count < join.fds.len() {
                join.fds[join.count] = file.as_raw_fd();
                join.count += 1;
            }
        }
        command.process_group(0);
        // SAFETY: the closure runs in the forked child before exec and only
        // calls write(2) on fds this Containment keeps open (it outlives the
        // spawn, which borrows nothing else).
        unsafe {
            command.pre_exec(move || join.join());
        }
    }

    /// Spawns `command` (made with [`apply`](Containment::apply)) as the
    /// tree's first process. Its exit status is the caller's, to take with
    /// the returned child's `wait` (or tokio's, once the child is dropped):
    /// a process that is the subreaper of what it starts
    /// ([`become_subreaper`]) reaps the orphans of every tree, never a
    /// process spawned here.
    pub fn spawn(
        &self,
        command: &mut tokio::process::Command,
    ) -> io::Result<tokio::process::Child> {
        let spawned = spawned();
        // Shared, so spawns go on at once; the reaper takes it alone, so
        // it never sees a child between its fork and its record here.
        let _gate = spawned.gate.read().unwrap_or_else(|e| e.into_inner());
        let child = command.spawn()?;
        if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
            self.leader.store(pid, Ordering::Relaxed);
            // Only a subreaper reaps, and so needs to know; the record
            // goes once the pid is no child of ours (see `reap_adopted`).
            // Nothing has waited for the child yet, so `/proc` still has
            // it, and its start time tells it from a later process that
            // is given the same pid.
            if SUBREAPER.load(Ordering::Relaxed) {
                let started = stat(pid).map_or(0, |stat| stat.started);
                spawned.pids().insert(pid, started);
            }
        }
        Ok(child)
    }

    /// Says the first process has been reaped: its pid may now be reused, so
    /// without cgroups only its process group is killed from here on (the
    /// `/proc` walk from that pid could reach strangers).
    pub fn leader_reaped(&self) {
        self.reaped.store(true, Ordering::Relaxed);
    }

    /// The leader's pid, if the `/proc` walk from it is still safe, as a
    /// negative number (group only) once it has been reaped.
    fn leader(&self) -> i32 {
        let leader = self.leader.load(Ordering::Relaxed);
        if self.reaped.load(Ordering::Relaxed) {
            -leader
        } else {
            leader
        }
    }

    /// How many processes the kernel's OOM killer ended in this tree because
    /// it went over its memory cap.
    pub fn oom_kills(&self) -> u64 {
        self.dirs
            .iter()
            .filter_map(|d| {
                let (file, keys): (&str, &[&str]) = match d.kind {
                    Kind::Memory => ("memory.oom_control", &["oom_kill"]),
                    Kind::V2 => ("memory.events", &["oom_kill", "oom_group_kill"]),
                    _ => return None,
                };
                let text = fs::read_to_string(d.path.join(file)).ok()?;
                text.lines()
                    .filter_map(|l| l.split_once(' '))
                    .filter(|(k, _)| keys.contains(k))
                    .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
                    .max()
            })
            .sum()
    }

    /// Resolves once the OOM killer has ended a process of the tree; never,
    /// if the tree has no memory cap. Checks every 20 ms.
    pub async fn oom_killed(&self) -> u64 {
        if !self.caps_memory() {
            return std::future::pending().await;
        }
        loop {
            let kills = self.oom_kills();
            if kills > 0 {
                return kills;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends SIGKILL to every process of the tree, without waiting.
    pub fn kill(&self) {
        kill_dirs(&self.dirs, self.leader());
    }

    /// Whether no process of the tree is left (zombies waiting for their
    /// parent to reap them do not count: they run nothing).
    pub fn is_empty(&self) -> bool {
        if self.dirs.is_empty() {
            let leader = self.leader();
            let table = process_table();
            return leader == 0
                || ((leader < 0 || descendants(leader).is_empty())
                    && !table.iter().any(|p| p.pgrp == leader.abs()));
        }
        dirs_empty(&self.dirs)
    }

    /// Kills the whole tree and waits until it is gone, at most `timeout`.
    /// Says whether it is gone.
    pub async fn kill_and_wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_micros(200);
        loop {
            self.kill();
            if self.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }
}

impl Drop for Containment {
    fn drop(&mut self) {
        if self.dirs.is_empty() {
            self.kill();
            return;
        }
        let leader = self.leader();
        let mut dirs = std::mem::take(&mut self.dirs);
        if !remove_dirs(&mut dirs, leader) {
            leftovers().add(Leftover {
                dirs,
                leader,
                until: Instant::now() + LEFTOVER_RETRY,
            });
        }
    }
}

/// The processes a subreaper spawned through a [`Containment`] that may
/// still be its children, by pid, with their start times: their exit
/// status is their spawner's, or tokio's when the spawner dropped them
/// unwaited (it reaps those itself, later). A pid is forgotten only once
/// `/proc` shows it is no child of ours, that is reaped by whoever owned
/// it: forgotten sooner (when its containment is dropped, the first
/// version), the reaper took a leader that tokio was still to kill and
/// reap, and tokio's kill went to a freed pid.
#[derive(Debug, Default)]
struct Spawned {
    /// Held shared by every spawn, alone by the reaper of orphans.
    gate: RwLock<()>,
    pids: Mutex<HashMap<i32, u64>>,
}

impl Spawned {
    fn pids(&self) -> std::sync::MutexGuard<'_, HashMap<i32, u64>> {
        self.pids.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn spawned() -> &'static Spawned {
    static SPAWNED: OnceLock<Spawned> = OnceLock::new();
    SPAWNED.get_or_init(Spawned::default)
}

/// Whether this process made itself the subreaper of what it starts.
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// How often a new containment reaps the orphans ([`reap_adopted`]). A
/// reap reads `/proc` for every process spawned and still running, and the
/// `children` file of every thread: once per tool call, 1,000 calls in
/// flight made each spawn read thousands of files, and tools that answer
/// at once ran past a 2 s timeout waiting to be spawned.
const REAP_EVERY: Duration = Duration::from_millis(50);

/// [`reap_adopted`], unless it ran less than [`REAP_EVERY`] ago.
fn reap_adopted_now_and_then() {
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    {
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < REAP_EVERY) {
            return;
        }
        *last = Some(now);
    }
    reap_adopted();
}

/// For a subreaper: reaps every child of this process that has ended and
/// that it did not spawn through a [`Containment`], that is the orphans the
/// kernel handed it from trees whose processes died after their parents (a
/// tool's `cmd &`, a tree killed at a tool's timeout). Left unreaped, each
/// held a pid and its removed cgroup until the process exited: one a tool
/// call, without bound. Nothing for a process that is no subreaper: it has
/// no orphans, and must not reap children it did not start.
fn reap_adopted() {
    if !SUBREAPER.load(Ordering::Relaxed) {
        return;
    }
    let spawned = spawned();
    let _gate = spawned.gate.write().unwrap_or_else(|e| e.into_inner());
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let mut ours = spawned.pids();
    // Each on what `/proc` says of its pid, never on its absence from the
    // `children` files: they are read in pieces, and a child reaped
    // between two reads shifts the ones after it past the reader.
    ours.retain(|&pid, &mut started| still_ours(stat(pid), me, started));
    let Some(children) = children() else { return };
    for pid in children {
        if !ours.contains_key(&pid) {
            let mut status = 0;
            // SAFETY: waitpid with a valid pointer to an int; WNOHANG
            // leaves a child still running alone.
            unsafe {
                libc::waitpid(pid, &mut status, libc::WNOHANG);
            }
        }
    }
}

/// This process's children, living or unreaped, as its threads' `children`
/// files in `/proc` list them (a child is listed under the thread that
/// started it, or under another of ours once that thread ends); `None`
/// where they cannot be read (a kernel built without them).
fn children() -> Option<Vec<i32>> {
    // A thread that ends while the files are read (the runtime's workers,
    // at exit) hands its children to another, perhaps one already read: a
    // reading that saw a thread go is made again.
    for _ in 0..8 {
        let mut ended = false;
        let mut children = Vec::new();
        let mut text = Vec::with_capacity(16 * 1024);
        for task in fs::read_dir("/proc/self/task").ok()? {
            let task = task.ok()?.path();
            text.clear();
            // One read where it fits: the kernel lists the children afresh
            // at each read, from the count already given.
            match File::open(task.join("children")).and_then(|mut f| f.read_to_end(&mut text)) {
                Ok(_) => {
                    children.extend(
                        text.split(u8::is_ascii_whitespace)
                            .filter_map(|pid| std::str::from_utf8(pid).ok()?.parse::<i32>().ok()),
                    );
                }
                // The thread ended; where it is still there, the kernel
                // has no such files.
                Err(e) if e.kind() == io::ErrorKind::NotFound && !task.exists() => ended = true,
                Err(_) => return None,
            }
        }
        if !ended {
            return Some(children);
        }
    }
    None
}

fn set_limits(dir: &Dir, limits: Limits) -> io::Result<()> {
    let write = |file: &str, value: String| fs::write(dir.path.join(file), value);
    let exists = |file: &str| dir.path.join(file).exists();
    match dir.kind {
        Kind::V2 => {
            if limits.max_memory > 0 && exists("memory.max") {
                write("memory.max", limits.max_memory.to_string())?;
                if exists("memory.swap.max") {
                    write("memory.swap.max", "0".into())?;
                }
                if exists("memory.oom.group") {
                    write("memory.oom.group", "1".into())?;
                }
            }
            if limits.max_tasks > 0 && exists("pids.max") {
                write("pids.max", limits.max_tasks.to_string())?;
            }
            if !exists("cgroup.kill") {
                return Err(io::Error::other("no cgroup.kill"));
            }
        }
        Kind::Memory => {
            write("memory.limit_in_bytes", limits.max_memory.to_string())?;
            if exists("memory.memsw.limit_in_bytes") {
                write("memory.memsw.limit_in_bytes", limits.max_memory.to_string())?;
            }
        }
        Kind::Pids => {
            if limits.max_tasks > 0 {
                write("pids.max", limits.max_tasks.to_string())?;
            }
        }
        Kind::Freezer => {}
    }
    Ok(())
}

/// SIGKILL to everything in `dirs`; without cgroups, to the leader's group
/// and every descendant of it that `/proc` shows (a negative `leader`: it
/// has been reaped, its group only).
fn kill_dirs(dirs: &[Dir], leader: i32) {
    if dirs.is_empty() {
        if leader > 0 {
            kill_tree(leader);
        } else if leader < 0 {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(leader, libc::SIGKILL);
            }
        }
        return;
    }
    // Nothing in the tree may fork while it is being killed.
    for d in dirs.iter().filter(|d| d.kind == Kind::Pids) {
        let _ = fs::write(d.path.join("pids.max"), "0");
    }
    let v2 = dirs.iter().find(|d| d.kind == Kind::V2);
    if let Some(d) = v2 {
        let _ = fs::write(d.path.join("cgroup.kill"), "1");
    } else if let Some(d) = dirs.iter().find(|d| d.kind == Kind::Freezer) {
        let state = d.path.join("freezer.state");
        let _ = fs::write(&state, "FROZEN");
        for pid in read_procs(&d.path) {
            send(pid, libc::SIGKILL);
        }
        let _ = fs::write(&state, "THAWED");
    }
    for d in dirs.iter().filter(|d| d.kind != Kind::V2) {
        for pid in read_procs(&d.path) {
            send(pid, libc::SIGKILL);
        }
    }
}

fn dirs_empty(dirs: &[Dir]) -> bool {
    dirs.iter().all(|d| match d.kind {
        Kind::V2 => fs::read_to_string(d.path.join("cgroup.events"))
            .map(|e| e.lines().any(|l| l == "populated 0"))
            .unwrap_or(true),
        _ => read_procs(&d.path).is_empty(),
    })
}

/// Kills and removes `dirs`; says whether all are gone (what is gone is
/// taken out of `dirs`).
fn remove_dirs(dirs: &mut Vec<Dir>, leader: i32) -> bool {
    kill_dirs(dirs, leader);
    dirs.retain_mut(|d| {
        d.procs = None;
        fs::remove_dir(&d.path).is_err() && d.path.exists()
    });
    dirs.is_empty()
}

/// The pids listed in a cgroup's `cgroup.procs`.
fn read_procs(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

fn send(pid: i32, signal: libc::c_int) {
    if pid > 0 {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Without cgroups: stop every descendant of `leader` that `/proc` shows
/// (again and again until no new one appears, so none can fork away), then
/// kill them all and the leader's group.
fn kill_tree(leader: i32) {
    let mut seen: HashSet<i32> = HashSet::new();
    for _ in 0..16 {
        let found = descendants(leader);
        let new: Vec<i32> = found.into_iter().filter(|p| !seen.contains(p)).collect();
        if new.is_empty() {
            break;
        }
        for &pid in &new {
            send(pid, libc::SIGSTOP);
        }
        seen.extend(new);
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(-leader, libc::SIGKILL);
    }
    send(leader, libc::SIGKILL);
    for pid in seen {
        send(pid, libc::SIGKILL);
    }
}

/// A living process as `/proc` shows it.
#[derive(Debug, Clone, Copy)]
struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
}

/// Every process `/proc` shows, zombies left out.
fn process_table() -> Vec<Proc> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let Stat {
                state, ppid, pgrp, ..
            } = stat(pid).ok()?;
            (state != 'Z' && state != 'X').then_some(Proc { pid, ppid, pgrp })
        })
        .collect()
}

/// What `/proc/PID/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    state: char,
    ppid: i32,
    pgrp: i32,
    /// Clock ticks from boot to its start: with the pid, it names one
    /// process, where a pid alone is reused.
    started: u64,
}

/// A process's [`Stat`]; `NotFound` once it is gone (reaped).
fn stat(pid: i32) -> io::Result<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat"))?;
    parse_stat(&text).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, text))
}

fn parse_stat(text: &str) -> Option<Stat> {
    // pid (comm) state ppid pgrp ... starttime (the 22nd field): comm may
    // hold anything, even ')'.
    let mut fields = text.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let started = fields.nth(16)?.parse().ok()?;
    Some(Stat {
        state,
        ppid,
        pgrp,
        started,
    })
}

/// Whether a process a subreaper spawned, started at `started` (0: not
/// known), may still be its child, by what `/proc` says of its pid: only
/// a pid that is gone, or that another process now has, is no longer.
/// Any other failure to read keeps it: a child forgotten too soon is
/// reaped by the reaper of orphans, and its spawner's wait fails.
fn still_ours(stat: io::Result<Stat>, me: i32, started: u64) -> bool {
    match stat {
        Ok(stat) => stat.ppid == me && (started == 0 || stat.started == started),
        Err(e) => e.kind() != io::ErrorKind::NotFound,
    }
}

/// Every living descendant of `root` (not `root` itself).
fn descendants(root: i32) -> Vec<i32> {
    let table = process_table();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for p in &table {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(p) = queue.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            if c != root && !found.contains(&c) {
                found.push(c);
                queue.push(c);
            }
        }
    }
    found
}

/// A containment whose cgroups could not be removed yet.
#[derive(Debug)]
struct Leftover {
    dirs: Vec<Dir>,
    leader: i32,
    until: Instant,
}

/// The one background thread that keeps killing and removing leftovers.
#[derive(Debug, Default)]
struct Leftovers {
    queue: Mutex<Vec<Leftover>>,
    changed: Condvar,
}

fn leftovers() -> &'static Leftovers {
    static LEFTOVERS: OnceLock<&'static Leftovers> = OnceLock::new();
    LEFTOVERS.get_or_init(|| {
        let leftovers: &'static Leftovers = Box::leak(Box::default());
        let _ = std::thread::Builder::new()
            .name("wasmwire-containment".into())
            .spawn(move || leftovers.run());
        leftovers
    })
}

impl Leftovers {
    fn add(&self, leftover: Leftover) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.push(leftover);
        self.changed.notify_all();
    }

    fn run(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            queue.retain_mut(|l| !remove_dirs(&mut l.dirs, l.leader) && l.until > now);
            self.changed.notify_all();
            queue = if queue.is_empty() {
                self.changed.wait(queue).unwrap_or_else(|e| e.into_inner())
            } else {
                self.changed
                    .wait_timeout(queue, Duration::from_millis(5))
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            };
        }
    }

    fn settle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        while !queue.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            queue = self
                .changed
                .wait_timeout(queue, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

/// Waits (at most `timeout`) until every containment dropped so far has
/// been emptied and removed; for a process about to exit. Says whether
/// all were.
pub fn settle(timeout: Duration) -> bool {
    leftovers().settle(timeout)
}

/// The signals that ask a process to stop, from a user, a supervisor or a
/// limit (SIGXCPU, SIGALRM, SIGVTALRM), each of which ends it by default:
/// a host that starts children and tools handles all of them as it handles
/// SIGTERM (cancels, kills what it started, then exits), since left to
/// their defaults they end it with nothing killed and nothing said.
/// SIGKILL cannot be caught; the signals a fault raises (SIGSEGV, SIGBUS,
/// ...) are no request to stop; SIGPIPE is ignored by Rust programs;
/// SIGPROF is a profiler's.
pub const ENDING_SIGNALS: &[libc::c_int] = &[
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGXCPU,
    libc::SIGVTALRM,
];

/// Makes this process the subreaper of everything it starts: a descendant
/// whose parent exits is handed to us, not to init, so [`kill_adopted`] can
/// still find it. From then on every child of this process that ends and
/// was not spawned through a [`Containment`] is reaped (whenever a
/// containment is made), so that the orphans of
/// tool trees do not pile up as zombies: a process that calls this must
/// spawn every child it waits for through a `Containment`, after the call.
/// For a process that runs one execution (the CLI), never a library's
/// host, which must not reap children it did not start.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer argument.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    SUBREAPER.store(true, Ordering::Relaxed);
    Ok(())
}

/// Kills every process still descending from this one, and reaps the ones
/// handed to it as subreaper. For a process about to exit, after all its
/// executions have ended: nothing it started may outlive it.
pub fn kill_adopted() {
    // Nearly every run started no process, or saw all of them reaped: then
    // it has no descendant either (as subreaper, an orphan of ours is our
    // child), and the scan of every process in `/proc` below (six
    // syscalls for each process on the machine, at every CLI run's end) is
    // skipped.
    if childless() == Some(true) {
        return;
    }
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    for _ in 0..8 {
        let found = descendants(me);
        if found.is_empty() {
            break;
        }
        for &pid in &found {
            send(pid, libc::SIGSTOP);
        }
        for &pid in &found {
            send(pid, libc::SIGKILL);
        }
    }
    // Reap our own children (adopted or not) that have ended.
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid pointer to an int.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 {
            continue;
        }
        if pid < 0 || descendants(me).is_empty() || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether this process has no child, living or unreaped; `None` where
/// [`children`] cannot say.
fn childless() -> Option<bool> {
    children().map(|children| children.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID_CGROUP: &str = "9:name=systemd:/\n8:pids:/\n6:freezer:/\n\
        4:memory:/process_api/abc\n0::/\n";

    #[test]
    fn hierarchies_are_found_from_mountinfo() {
        let mountinfo = "35 31 0:32 / /proc rw - cgroup cgroup rw,memory\n\
            39 31 0:36 / /proc/self rw - cgroup cgroup rw,pids\n\
            41 31 0:38 / /proc rw,relatime - cgroup2 cgroup2 rw\n";
        let found = find_hierarchies(HYBRID_CGROUP, mountinfo);
        // The memory path does not exist under /proc, so it is not usable.
        assert_eq!(found.memory, None);
        assert_eq!(found.pids, Some(PathBuf::from("/proc/self")));
        assert_eq!(found.v2, Some(PathBuf::from("/proc")));
        assert_eq!(found.freezer, None);
    }

    #[test]
    fn a_host_without_cgroups_has_no_hierarchies() {
        let found = find_hierarchies("", "22 1 0:5 / /proc rw - proc proc rw\n");
        assert!(found.v2.is_none() && found.memory.is_none() && found.pids.is_none());
    }

    /// Starts `sh -c "setsid sleep 60 & wait"` in `containment`, waits for
    /// the grandchild, kills the tree, and checks the grandchild is gone.
    async fn kills_a_setsid_grandchild(containment: Containment) {
        let mut command = tokio::process::Command::new("/bin/sh");
        // A grandchild in a new session, then the leader waits.
        command.arg("-c").arg("setsid sleep 60 & wait");
        containment.apply(&mut command);
        let mut child = containment.spawn(&mut command).unwrap();
        let leader = i32::try_from(child.id().unwrap()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while descendants(leader).is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let grandchild = descendants(leader)[0];
        assert!(containment.kill_and_wait(Duration::from_secs(5)).await);
        let _ = child.wait().await;
        // SIGKILL is sent; the exit itself is the kernel's, and a killed
        // process whose parent died first can show as running for a moment
        // after it left the tree. Allow that, and nothing more.
        let gone_by = Instant::now() + Duration::from_millis(500);
        let alive = || process_table().iter().any(|p| p.pid == grandchild);
        while alive() && Instant::now() < gone_by {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(!alive(), "{grandchild} survived");
    }

    #[test]
    fn stat_is_read_past_a_name_that_holds_parentheses() {
        let text = "4242 (a) b (c) S 17 4242 4242 0 -1 4194560 120 0 0 0 1 2 0 0 \
            20 0 1 0 987654 2445312 214 18446744073709551615\n";
        assert_eq!(
            parse_stat(text),
            Some(Stat {
                state: 'S',
                ppid: 17,
                pgrp: 4242,
                started: 987654,
            })
        );
        assert_eq!(parse_stat("4242 (cut) S 17"), None);
        let me = stat(i32::try_from(std::process::id()).unwrap()).unwrap();
        assert!(me.started > 0, "{me:?}");
    }

    #[test]
    fn a_spawned_pid_is_forgotten_only_when_proc_shows_another_owner_or_none() {
        let me = 17;
        let child = |ppid, started| {
            Ok(Stat {
                state: 'S',
                ppid,
                pgrp: 1,
                started,
            })
        };
        let gone = || Err(io::Error::from(io::ErrorKind::NotFound));
        assert!(still_ours(child(me, 500), me, 500), "running, or unreaped");
        assert!(still_ours(child(me, 500), me, 0), "start not known");
        assert!(!still_ours(gone(), me, 500), "reaped");
        assert!(!still_ours(child(99, 500), me, 500), "reaped, pid reused");
        assert!(
            !still_ours(child(me, 900), me, 500),
            "reaped, pid reused by an orphan of ours"
        );
        // Nothing read is no evidence: kept.
        assert!(still_ours(
            Err(io::Error::from(io::ErrorKind::PermissionDenied)),
            me,
            500
        ));
        assert!(still_ours(
            Err(io::Error::from(io::ErrorKind::InvalidData)),
            me,
            500
        ));
    }

    #[test]
    fn a_child_is_seen_after_the_thread_that_started_it_ended() {
        let mut child = std::thread::spawn(|| {
            std::process::Command::new("/bin/sleep")
                .arg("60")
                .spawn()
                .unwrap()
        })
        .join()
        .unwrap();
        let seen = childless();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen, Some(false));
    }

    /// Runs the ignored test `probe` of this module in a test process of its
    /// own; its output (stdout, then stderr).
    fn in_a_process_of_its_own(probe: &str) -> String {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &format!("containment::tests::{probe}")])
            .args(["--ignored", "--nocapture", "--test-threads=1"])
            .output()
            .unwrap();
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    #[test]
    fn a_process_that_started_none_is_childless() {
        // This process has other tests' children at any moment: the probe
        // runs in a test process of its own, which starts none.
        let output = in_a_process_of_its_own("childless_probe");
        assert!(output.contains("childless=Some(true)"), "{output}");
    }

    #[test]
    #[ignore = "run in a process of its own by a_process_that_started_none_is_childless"]
    fn childless_probe() {
        println!("childless={:?}", childless());
    }

    #[test]
    fn a_subreaper_reaps_orphans_but_never_a_child_its_spawner_waits_for() {
        // Being a subreaper, and reaping, are the whole process's: the probe
        // runs in a test process of its own, so that no other test's child
        // can be taken for an orphan.
        let output = in_a_process_of_its_own("subreaper_probe");
        assert!(output.contains("subreaper probe: ok"), "{output}");
    }

    /// This process's children that have ended and wait to be reaped.
    fn zombie_children() -> Vec<i32> {
        children()
            .unwrap()
            .into_iter()
            .filter(|&pid| stat(pid).is_ok_and(|stat| stat.state == 'Z'))
            .collect()
    }

    /// Spawns `sh -c script` in a fresh containment, and waits (at most
    /// 20 s) until `ended` children of this process wait to be reaped;
    /// returns the containment, the child and its pid.
    async fn spawned_until_ended(
        script: &str,
        ended: usize,
    ) -> (Containment, tokio::process::Child, i32) {
        let tree = Containment::new(Limits::default()).unwrap();
        let mut command = tokio::process::Command::new("/bin/sh");
        command.arg("-c").arg(script);
        tree.apply(&mut command);
        let child = tree.spawn(&mut command).unwrap();
        let leader = i32::try_from(child.id().unwrap()).unwrap();
        let by = Instant::now() + Duration::from_secs(20);
        while zombie_children().len() < ended && Instant::now() < by {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(zombie_children().len(), ended, "{script}: not ended");
        (tree, child, leader)
    }

    #[tokio::test]
    #[ignore = "run in a process of its own by a_subreaper_reaps_orphans_but_never_a_child_its_spawner_waits_for"]
    async fn subreaper_probe() {
        become_subreaper().unwrap();
        // The leader leaves a process behind and exits 7 at once; the
        // process it left ends a moment later, an orphan of ours.
        let (tree, mut child, leader) = spawned_until_ended("sh -c 'sleep 0.1' & exit 7", 2).await;
        reap_adopted();
        assert_eq!(
            zombie_children(),
            vec![leader],
            "the orphan reaped, the leader not"
        );
        let status = child.wait().await.unwrap();
        tree.leader_reaped();
        assert_eq!(
            status.code(),
            Some(7),
            "the spawner has the leader's status"
        );
        // A containment dropped before its leader's child (as a tool's is,
        // on an early return) leaves the leader to its spawner too.
        let (tree, mut child, leader) = spawned_until_ended("exit 3", 1).await;
        drop(tree);
        reap_adopted();
        assert_eq!(
            zombie_children(),
            vec![leader],
            "the leader left to its spawner"
        );
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(3));
        println!("subreaper probe: ok");
    }

    #[tokio::test]
    async fn a_containment_kills_a_tree_that_left_its_group_and_session() {
        kills_a_setsid_grandchild(Containment::new(Limits::default()).unwrap()).await;
    }

    #[tokio::test]
    async fn without_cgroups_the_tree_in_proc_is_still_killed() {
        // As on a host where no cgroup can be made: group plus /proc walk.
        let containment = Containment {
            dirs: Vec::new(),
            leader: AtomicI32::new(0),
            reaped: AtomicBool::new(false),
            max_memory: 0,
        };
        assert!(!containment.uses_cgroups());
        kills_a_setsid_grandchild(containment).await;
    }

    #[tokio::test]
    async fn on_this_host_a_memory_cap_gets_a_cgroup_or_is_refused() {
        match Containment::new(Limits {
            max_memory: 32 << 20,
            max_tasks: 8,
        }) {
            Ok(c) => assert!(c.caps_memory() && can_hold_memory()),
            Err(e) => {
                assert_eq!(e.kind(), io::ErrorKind::Unsupported);
                assert!(!can_hold_memory());
            }
        }
    }
}
