//! The peers users pick instead of wasmwire that run in Node.js
//! (issue 15): quickjs-emscripten and isolated-vm.
//!
//! Each is measured by a driver in `bench/peers/` (installed there by
//! `scripts/bench` with `npm ci`), run as a child process once per figure:
//! `node --expose-gc bench/peers/<driver>.js <figure> '<json>'`. The driver runs the
//! programs of `workload.rs`, with the run counts of the contender's
//! [`Plan`], and prints medians as JSON; the figures are derived here by the
//! same functions as the other contenders' (`figures::per_call`,
//! `figures::calls_per_second`). A peer that cannot run (no Node.js, the
//! packages not installed, a failed figure) reads n/a, with the reason on
//! stderr; it never fails the whole run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::Figures;
use crate::contender::{Kind, node_available};
use crate::figures::{self, Plan};
use crate::workload;

/// Executions each driver thread keeps in flight for the throughput figure
/// (as wasmwire's contenders keep four per core).
const IN_FLIGHT_PER_THREAD: usize = 4;

/// What a probe learnt about a peer.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The npm package.
    pub package: &'static str,
    /// Its version.
    pub version: String,
    /// The version of Node.js.
    pub node: String,
}

/// A peer's driver.
#[derive(Debug, Clone)]
pub struct Peer {
    kind: Kind,
    /// The driver script.
    script: PathBuf,
    /// The npm package it needs.
    package: &'static str,
    /// Arguments every figure of this peer gets (the isolation).
    fixed: Vec<(&'static str, Arg)>,
}

/// A JSON argument of a driver.
#[derive(Debug, Clone)]
enum Arg {
    Text(String),
    Count(usize),
}

impl Peer {
    /// The driver of `kind`, if it is a peer.
    pub fn for_kind(kind: Kind) -> Option<Self> {
        let dir = peers_dir();
        let (script, package, fixed) = match kind {
            Kind::QjsRuntime => (
                "qjs-emscripten.js",
                "quickjs-emscripten",
                vec![("isolation", Arg::Text("runtime".into()))],
            ),
            Kind::QjsModule => (
                "qjs-emscripten.js",
                "quickjs-emscripten",
                vec![("isolation", Arg::Text("module".into()))],
            ),
            Kind::IsolatedVm => ("isolated-vm.js", "isolated-vm", Vec::new()),
            _ => return None,
        };
        Some(Peer {
            kind,
            script: dir.join(script),
            package,
            fixed,
        })
    }

    /// Checks that the peer runs here: Node.js, its package, one `return 1`.
    pub fn probe(&self) -> anyhow::Result<Probe> {
        if !node_available() {
            bail!("no `node` on PATH");
        }
        let installed = peers_dir()
            .join("node_modules")
            .join(self.package)
            .join("package.json");
        if !installed.is_file() {
            bail!(
                "{} is not installed in {} (scripts/bench installs it with npm ci; see its messages)",
                self.package,
                peers_dir().join("node_modules").display()
            );
        }
        let answer = self.call("probe", &[])?;
        Ok(Probe {
            package: self.package,
            version: answer.text("version")?,
            node: answer.text("node")?,
        })
    }

    /// Every selected figure; a figure that fails reads n/a (the reason on
    /// stderr).
    pub async fn measure(&self, plan: &Plan, cores: usize, only: Option<&[String]>) -> Figures {
        let name = self.kind.name();
        let selected = |figure: &str| crate::selects(only, figure);
        let wanted = |figure: &str| crate::wanted(name, only, figure);
        let peer = self.clone();
        let plan = *plan;
        let mut f = Figures {
            memory_at_once: plan.memory_at_once,
            ..Figures::default()
        };
        // Each figure is a blocking child process: run them off the runtime.
        // A figure's answer; None (n/a, the reason on stderr) when the
        // driver failed or answered without `keys`.
        let ask = |figure: &'static str, args: Vec<(&'static str, Arg)>, keys: &'static [&str]| {
            let peer = peer.clone();
            async move {
                let answer = tokio::task::spawn_blocking(move || peer.call(figure, &args))
                    .await
                    .context("a driver thread panicked")
                    .and_then(|answer| answer)
                    .and_then(|answer| {
                        keys.iter()
                            .map(|key| answer.number(key))
                            .collect::<anyhow::Result<Vec<f64>>>()
                    });
                match answer {
                    Ok(values) => Some(values),
                    Err(e) => {
                        eprintln!("bench: {name}: {figure} failed, n/a: {e:#}");
                        None
                    }
                }
            }
        };
        let run = |figure: &'static str, args: Vec<(&'static str, Arg)>| {
            let answer = ask(figure, args, &["median"]);
            async move { answer.await.map(|values| values[0]) }
        };
        let timed = |program: &'static str, runs: usize, tools: &'static str| {
            run(
                "timed",
                vec![
                    ("program", Arg::Text(program.into())),
                    ("expected", Arg::Text(workload::expected(program).into())),
                    ("runs", Arg::Count(runs)),
                    ("warm_up", Arg::Count(plan.warm_up)),
                    // One untimed run of the program itself, as
                    // `figures::warm_up` runs the round trip once.
                    ("warm_program", Arg::Text(program.into())),
                    (
                        "warm_expected",
                        Arg::Text(workload::expected(program).into()),
                    ),
                    ("tools", Arg::Text(tools.into())),
                ],
            )
        };

        // The call and compute figures subtract the overhead.
        let needs_overhead = selected("round-trip")
            || selected("round-trip-awaiting")
            || selected("fan-out")
            || selected("compute");
        if wanted("overhead") || needs_overhead {
            f.overhead = timed(workload::TRIVIAL, plan.overhead, "async").await;
        }
        // Without the overhead the call figures cannot be derived.
        if let Some(overhead) = f.overhead {
            if wanted("round-trip") {
                f.round_trip = timed(workload::SEQUENTIAL, plan.calls, "async")
                    .await
                    .map(|total| figures::per_call(total, overhead));
                f.round_trip_sync = timed(workload::SEQUENTIAL, plan.calls, "sync")
                    .await
                    .map(|total| figures::per_call(total, overhead));
            }
            if wanted("round-trip-awaiting") {
                f.round_trip_awaiting = timed(workload::SEQUENTIAL_AWAITING, plan.calls, "async")
                    .await
                    .map(|total| figures::per_call(total, overhead));
            }
            if wanted("fan-out") {
                f.fan_out = timed(workload::FAN_OUT, plan.calls, "async")
                    .await
                    .map(|total| figures::calls_per_second(total, overhead));
            }
        }
        if wanted("throughput") {
            f.throughput = run(
                "throughput",
                vec![
                    ("program", Arg::Text(workload::TRIVIAL.into())),
                    (
                        "expected",
                        Arg::Text(workload::expected(workload::TRIVIAL).into()),
                    ),
                    ("threads", Arg::Count(cores)),
                    ("per_thread", Arg::Count(IN_FLIGHT_PER_THREAD)),
                    ("rounds", Arg::Count(plan.throughput_rounds)),
                    ("per_round", Arg::Count(plan.throughput_per_round)),
                    ("warm_up", Arg::Count(plan.warm_up)),
                ],
            )
            .await;
        }
        if wanted("memory") {
            // One round per driver process: memory an earlier round freed
            // is not always given back to the system (a disposed wasm
            // instance's memory, the shared module's grown linear memory),
            // and the next round would reuse it and read as free.
            let mut rounds = Vec::with_capacity(plan.memory_rounds);
            let mut pss_rounds = Vec::with_capacity(plan.memory_rounds);
            for _ in 0..plan.memory_rounds {
                let round = ask(
                    "memory",
                    vec![
                        ("program", Arg::Text(workload::HELD.into())),
                        (
                            "expected",
                            Arg::Text(workload::expected(workload::HELD).into()),
                        ),
                        ("at_once", Arg::Count(plan.memory_at_once)),
                        ("rounds", Arg::Count(1)),
                        ("warm_up", Arg::Count(plan.warm_up)),
                    ],
                    &["median", "pss"],
                )
                .await;
                match round.as_deref() {
                    Some(&[rss, pss]) => {
                        rounds.push(rss);
                        pss_rounds.push(pss);
                    }
                    _ => {
                        rounds.clear();
                        break;
                    }
                }
            }
            if !rounds.is_empty() {
                f.memory = Some(figures::median(&mut rounds));
                f.memory_pss = Some(figures::median(&mut pss_rounds));
            }
        }
        if wanted("compute")
            && let Some(overhead) = f.overhead
        {
            let computing = |total| figures::computing(total, overhead);
            f.fib = timed(workload::FIB, plan.compute, "async")
                .await
                .map(computing);
            f.json = timed(workload::JSON_ROUND_TRIPS, plan.compute, "async")
                .await
                .map(computing);
        }
        // `cli` is wasmwire's own CLI: the peers have none (n/a).
        f
    }

    /// Runs the driver for one figure; its answer.
    fn call(&self, figure: &str, args: &[(&'static str, Arg)]) -> anyhow::Result<Answer> {
        let json = to_json(self.fixed.iter().chain(args));
        // --expose-gc: the memory figure collects Node's heap before each
        // reading (peers/common.js).
        let output = Command::new("node")
            .arg("--expose-gc")
            .arg(&self.script)
            .arg(figure)
            .arg(&json)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("running node {}", self.script.display()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            bail!(
                "node {} {figure}: {}: {}",
                self.script.display(),
                output.status,
                stderr.trim()
            );
        }
        let line = stdout.lines().last().unwrap_or_default();
        Ok(Answer(line.to_string()))
    }
}

/// `bench/peers`.
fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// A JSON object of `args`.
fn to_json<'a>(args: impl Iterator<Item = &'a (&'static str, Arg)>) -> String {
    let fields: Vec<String> = args
        .map(|(key, value)| {
            let value = match value {
                Arg::Text(text) => quote(text),
                Arg::Count(n) => n.to_string(),
            };
            format!("{}:{value}", quote(key))
        })
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// `text` as a JSON string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A driver's answer: one flat JSON object of numbers and strings (the
/// drivers write nothing else), read without a JSON library.
#[derive(Debug)]
struct Answer(String);

impl Answer {
    /// Where the value of `key` starts.
    fn value(&self, key: &str) -> anyhow::Result<&str> {
        let needle = format!("{}:", quote(key));
        let at = self
            .0
            .find(&needle)
            .with_context(|| format!("no {key:?} in the driver's answer {:?}", self.0))?;
        Ok(&self.0[at + needle.len()..])
    }

    fn number(&self, key: &str) -> anyhow::Result<f64> {
        let rest = self.value(key)?;
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        let value: f64 = rest[..end]
            .trim()
            .parse()
            .with_context(|| format!("{key:?} is not a number in {:?}", self.0))?;
        if !value.is_finite() {
            bail!("{key:?} is not finite in {:?}", self.0);
        }
        Ok(value)
    }

    fn text(&self, key: &str) -> anyhow::Result<String> {
        let rest = self.value(key)?;
        let body = rest
            .strip_prefix('"')
            .with_context(|| format!("{key:?} is not a string in {:?}", self.0))?;
        let mut out = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Ok(out),
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => break,
                },
                c => out.push(c),
            }
        }
        bail!("{key:?} is not a closed string in {:?}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_json() {
        let args = [
            ("program", Arg::Text("let s = \"a\\b\";\n\treturn 1".into())),
            ("runs", Arg::Count(3)),
        ];
        assert_eq!(
            to_json(args.iter()),
            r#"{"program":"let s = \"a\\b\";\n\treturn 1","runs":3}"#
        );
    }

    #[test]
    fn answers_are_read() {
        let answer =
            Answer(r#"{"median":0.00125,"runs":300,"version":"0.32.0","node":"v20.20.2"}"#.into());
        assert_eq!(answer.number("median").unwrap(), 0.00125);
        assert_eq!(answer.number("runs").unwrap(), 300.0);
        assert_eq!(answer.text("version").unwrap(), "0.32.0");
        assert_eq!(answer.text("node").unwrap(), "v20.20.2");
        assert!(answer.number("missing").is_err());
        assert!(
            Answer(r#"{"median":null}"#.into())
                .number("median")
                .is_err()
        );
    }
}
