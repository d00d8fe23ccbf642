//! The hostile-program cases of `tests/hostile/*.js`, read from their headers.
//!
//! Each file starts with `//` comment lines; those of the form `key: value`
//! say what must happen:
//!
//! - `expect: ok` or `expect: KIND` (a failure class);
//! - `error: TEXT`: the Result's error contains TEXT;
//! - `value: JSON`: the Result's value equals JSON;
//! - `console: TEXT`: the console output contains TEXT;
//! - `budget: wall_clock_ms=N max_memory_mib=N max_bytes=N`: the budget
//!   (defaults: 10 s, 64 MiB and no byte quota).
//!
//! The tools a case may call are the standard ones of the library suite
//! (`echo`, `never`, `bytes(n)`: see `tools()` in lib.rs); the CLI suite
//! registers shell commands that behave the same.
//!
//! This file is shared, as a module, by the library suite and the CLI suite.

use std::path::{Path, PathBuf};

/// One hostile program and what must come of it.
#[derive(Debug, Clone)]
pub struct Case {
    /// The file's stem.
    pub name: String,
    /// The whole file.
    pub program: String,
    /// `None` for `expect: ok`, else the failure class's name.
    pub kind: Option<String>,
    /// Text the error must contain.
    pub error: Option<String>,
    /// The value, as JSON text.
    pub value: Option<String>,
    /// Text the console must contain.
    pub console: Option<String>,
    /// The wall clock in milliseconds.
    pub wall_clock_ms: u64,
    /// The memory cap in MiB.
    pub max_memory_mib: u64,
    /// The byte quota on tool values (0 = none).
    pub max_bytes: u64,
}

/// The folder of cases.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/hostile")
}

/// Every case, in name order.
pub fn cases() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("tests/hostile exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "js"))
        .collect();
    paths.sort();
    paths.iter().map(|p| parse(p)).collect()
}

fn parse(path: &Path) -> Case {
    let program = std::fs::read_to_string(path).expect("readable case");
    let mut case = Case {
        name: path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        program: program.clone(),
        kind: None,
        error: None,
        value: None,
        console: None,
        wall_clock_ms: 10_000,
        max_memory_mib: 64,
        max_bytes: 0,
    };
    let mut expect = None;
    for line in program.lines().map_while(|l| l.strip_prefix("//")) {
        let Some((key, rest)) = line.trim().split_once(':') else {
            continue;
        };
        let rest = rest.trim().to_string();
        match key {
            "expect" => expect = Some(rest),
            "error" => case.error = Some(rest),
            "value" => case.value = Some(rest),
            "console" => case.console = Some(rest),
            "budget" => {
                for item in rest.split_whitespace() {
                    let (k, v) = item.split_once('=').expect("budget items are key=value");
                    let v: u64 = v.parse().expect("budget values are integers");
                    match k {
                        "wall_clock_ms" => case.wall_clock_ms = v,
                        "max_memory_mib" => case.max_memory_mib = v,
                        "max_bytes" => case.max_bytes = v,
                        other => panic!("{}: unknown budget item {other}", path.display()),
                    }
                }
            }
            // A header key this runner does not know is a typo that would
            // silently drop a check; prose that happens to hold a colon is
            // not a key (a key is one lowercase word).
            key if key.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
                panic!("{}: unknown header key {key:?}", path.display())
            }
            _ => {}
        }
    }
    let expect = expect.unwrap_or_else(|| panic!("{} has no `// expect:` line", path.display()));
    case.kind = (expect != "ok").then_some(expect);
    case
}

impl Case {
    /// Checks how an execution ended against what the header says: the
    /// kind (`None` = ok), the error text, the value (JSON text) and the
    /// console. `Err` says what differs.
    pub fn check(
        &self,
        kind: Option<&str>,
        error: &str,
        value: &str,
        console: &str,
    ) -> Result<(), String> {
        if kind != self.kind.as_deref() {
            return Err(format!(
                "expected {}, got {} (error {error:?})",
                self.kind.as_deref().unwrap_or("ok"),
                kind.unwrap_or("ok")
            ));
        }
        if let Some(needle) = &self.error
            && !error.contains(needle.as_str())
        {
            return Err(format!("error {error:?} lacks {needle:?}"));
        }
        if let Some(want) = &self.value {
            let want: serde_json::Value = serde_json::from_str(want).map_err(|e| e.to_string())?;
            let got: serde_json::Value =
                serde_json::from_str(value).map_err(|e| format!("{e}: {value:?}"))?;
            if got != want {
                return Err(format!("value {got} != {want}"));
            }
        }
        if let Some(needle) = &self.console
            && !console.contains(needle.as_str())
        {
            return Err(format!("console lacks {needle:?}"));
        }
        Ok(())
    }
}
