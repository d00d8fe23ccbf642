//! Resident memory of this process and every process it started (Linux).

use std::collections::HashMap;

/// Resident memory of a process tree, in bytes, counted two ways.
#[derive(Debug, Clone, Copy, Default)]
pub struct Resident {
    /// `VmRSS`: every page mapped, counted once for each mapping of it. A
    /// page of a file (a wasm memory image, a shared library) mapped by 500
    /// pool slots counts 500 times.
    pub rss: u64,
    /// `Pss`: each page divided among the mappings that share it, so that
    /// what the whole tree holds counts once: the memory the machine gives.
    pub pss: u64,
}

/// The resident memory of this process plus all its descendants, from
/// `/proc`.
pub fn tree() -> Resident {
    let me = std::process::id();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            if let Some(ppid) = parent(pid) {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut total = Resident::default();
    let mut todo = vec![me];
    while let Some(pid) = todo.pop() {
        total.rss += kib_field(&format!("/proc/{pid}/status"), "VmRSS:");
        total.pss += kib_field(&format!("/proc/{pid}/smaps_rollup"), "Pss:");
        if let Some(kids) = children.get(&pid) {
            todo.extend(kids);
        }
    }
    total
}

/// The parent of `pid`: the fourth field of `/proc/PID/stat`, after the
/// command name (which may itself contain spaces and parentheses).
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// This process's peak RSS so far (`VmHWM`), in bytes.
pub fn own_peak() -> u64 {
    kib_field("/proc/self/status", "VmHWM:")
}

/// A `kB` field of a `/proc` file (`status`, `smaps_rollup`), in bytes; 0
/// when the process is gone or the file has no such field (a zombie).
fn kib_field(path: &str, field: &str) -> u64 {
    let Ok(text) = std::fs::read_to_string(path) else {
        return 0;
    };
    text.lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}
