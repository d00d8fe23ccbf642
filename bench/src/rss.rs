//! Resident memory of this process and every process it started (Linux).

use std::collections::HashMap;

/// RSS in bytes of this process plus all its descendants, from `/proc`.
pub fn tree_bytes() -> u64 {
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
    let mut total = 0;
    let mut todo = vec![me];
    while let Some(pid) = todo.pop() {
        total += rss(pid);
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

/// `VmRSS` of `pid` in bytes; 0 when it is gone or has none (a zombie).
fn rss(pid: u32) -> u64 {
    status_bytes(&pid.to_string(), "VmRSS:")
}

/// This process's peak RSS so far (`VmHWM`), in bytes.
pub fn own_peak() -> u64 {
    status_bytes("self", "VmHWM:")
}

/// A `kB` field of `/proc/PROCESS/status`, in bytes; 0 when there is none.
fn status_bytes(process: &str, field: &str) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{process}/status")) else {
        return 0;
    };
    status
        .lines()
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
