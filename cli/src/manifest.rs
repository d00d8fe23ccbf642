//! `--tools FILE`: a manifest of shell tools that describe themselves, in
//! JSON or (for a file ending `.toml`) TOML, and the one place where the
//! command line's tools are put together (`--tool`, `--json-tool` and the
//! manifest, with `--tool-timeout` and `--call-only` applied).
//!
//! ```json
//! {"tools": [{
//!   "name": "get_load",
//!   "description": "The load of one host.",
//!   "params": {"type": "object", "properties": {"host": {"type": "string"}},
//!              "required": ["host"], "additionalProperties": false},
//!   "result": {"type": "object", "properties": {"load": {"type": "number"}}},
//!   "command": "./get_load.sh",
//!   "output": "json",
//!   "timeout": "5s"
//! }]}
//! ```
//!
//! `name` and `command` are required. `output` is `text` (the default: the
//! program gets what the command prints as a string) or `json`.
//! `parameters` (`["host", "count"]`) makes the positional form
//! `get_load(host, count)`; without it the program passes the params as
//! one object. `call_only: true` is `--call-only`. An unknown key is an
//! error, so a misspelt one is not silently ignored.

use std::path::Path;

use anyhow::Context;
use serde::Deserialize;
use serde_json::Value;
use wasmwire::Tools;

use super::args::ToolArgs;
use super::shell_tool::{self, ToolSpec};
use super::units::parse_duration;

/// A manifest file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    tools: Vec<Entry>,
}

/// One tool of a manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    command: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Option<Vec<String>>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    output: Output,
    #[serde(default)]
    timeout: Option<String>,
    #[serde(default)]
    call_only: bool,
}

/// What a manifest tool's command prints.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Output {
    /// Text: the program gets a string.
    #[default]
    Text,
    /// JSON: the program gets the value.
    Json,
}

/// The tools of the command line. A `--tool-timeout` or `--call-only` for
/// no tool, or a name given twice, is an error.
pub fn tools(args: &ToolArgs) -> anyhow::Result<Tools> {
    let mut tools: Vec<_> = args
        .tools
        .iter()
        .chain(&args.json_tools)
        .map(shell_tool::tool)
        .collect();
    if let Some(path) = &args.manifest {
        tools.extend(read(path)?);
    }
    for name in args
        .timeouts
        .iter()
        .map(|(name, _)| name)
        .chain(&args.call_only)
    {
        if !tools.iter().any(|tool| tool.name() == name) {
            anyhow::bail!(
                "no tool named {name:?} (--tool-timeout and --call-only name a --tool, a --json-tool or a tool of --tools)"
            );
        }
    }
    let mut registered = Tools::new();
    for mut tool in tools {
        let name = tool.name().to_string();
        if let Some((_, timeout)) = args.timeouts.iter().rfind(|(n, _)| *n == name) {
            tool = tool.timeout(*timeout);
        }
        if args.call_only.contains(&name) {
            tool = tool.call_only();
        }
        registered.register(tool)?;
    }
    Ok(registered)
}

/// The longest manifest read (`--tools /dev/zero` grew without bound).
const MAX_MANIFEST_BYTES: usize = 16 << 20;

/// The tools of the manifest at `path`.
fn read(path: &Path) -> anyhow::Result<Vec<wasmwire::Tool>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("reading the tool manifest {}", path.display()))?;
    let text = crate::read_at_most(file, MAX_MANIFEST_BYTES)
        .with_context(|| format!("reading the tool manifest {}", path.display()))?
        .with_context(|| {
            format!(
                "the tool manifest {} is longer than {MAX_MANIFEST_BYTES} bytes",
                path.display()
            )
        })?;
    let toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let manifest: Manifest = if toml {
        toml::from_str(&text).map_err(|err| anyhow::Error::msg(toml_error(&text, &err)))
    } else {
        serde_json::from_str(&text).map_err(anyhow::Error::from)
    }
    .with_context(|| format!("the tool manifest {} is not valid", path.display()))?;
    manifest
        .tools
        .into_iter()
        .map(|entry| {
            let name = entry.name.clone();
            tool(entry).with_context(|| format!("{}: tool {name:?}", path.display()))
        })
        .collect()
}

/// The longest line of a manifest a TOML error quotes whole; past it, the
/// error quotes [`EXCERPT`] characters on each side of the place.
const QUOTED_LINE: usize = 200;
const EXCERPT: usize = 40;

/// A TOML error as `toml` writes it (the line, a caret under the place, the
/// reason), unless the line is long: `toml` quotes the whole line and puts
/// as many spaces and carets as the place's column and span, so one bad
/// value in a 250 KB inline table made a 250 KB message. Then: where, an
/// excerpt around the place, and the reason.
fn toml_error(text: &str, err: &toml::de::Error) -> String {
    let Some(span) = err.span() else {
        return err.to_string();
    };
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |nl| nl + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |nl| start + nl);
    if line_end - line_start <= QUOTED_LINE && span.len() <= QUOTED_LINE {
        return err.to_string();
    }
    let line = text[..line_start].matches('\n').count() + 1;
    let before = &text[line_start..start];
    let column = before.chars().count() + 1;
    let from = before
        .char_indices()
        .rev()
        .nth(EXCERPT - 1)
        .map_or(line_start, |(at, _)| line_start + at);
    let to = text[start..line_end]
        .char_indices()
        .nth(EXCERPT)
        .map_or(line_end, |(at, _)| start + at);
    let excerpt = format!(
        "{}{}{}",
        if from > line_start { "..." } else { "" },
        text[from..to].escape_debug(),
        if to < line_end { "..." } else { "" },
    );
    format!(
        "TOML parse error at line {line}, column {column} (of a {} byte line): {}\n  near: {excerpt}",
        line_end - line_start,
        err.message().trim_end(),
    )
}

/// The tool an entry describes.
fn tool(entry: Entry) -> anyhow::Result<wasmwire::Tool> {
    if entry.command.trim().is_empty() {
        anyhow::bail!("the tool has no command");
    }
    let signature = match &entry.parameters {
        Some(names) => format!("{}({})", entry.name, names.join(", ")),
        None => String::new(),
    };
    let spec = ToolSpec {
        name: entry.name,
        signature,
        command: entry.command,
        json: entry.output == Output::Json,
    };
    let mut tool = shell_tool::tool(&spec).description(entry.description);
    if let Some(params) = entry.params {
        tool = tool.params(params);
    }
    if let Some(result) = entry.result {
        tool = tool.result(result);
    }
    if let Some(timeout) = entry.timeout {
        tool = tool.timeout(parse_duration(&timeout).map_err(anyhow::Error::msg)?);
    }
    if entry.call_only {
        tool = tool.call_only();
    }
    Ok(tool)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

    use super::*;

    fn load(name: &str, text: &str) -> anyhow::Result<Tools> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        tools(&ToolArgs {
            manifest: Some(path),
            ..ToolArgs::default()
        })
    }

    #[test]
    fn json_and_toml_manifests_describe_the_same_tool() {
        let json = load(
            "tools.json",
            r#"{"tools": [{"name": "get_load", "description": "The load.",
                "parameters": ["host"],
                "params": {"type": "object", "properties": {"host": {"type": "string"}}},
                "result": {"type": "number"},
                "command": "echo 1", "output": "json", "timeout": "5s"}]}"#,
        )
        .unwrap();
        let toml = load(
            "tools.toml",
            r#"
[[tools]]
name = "get_load"
description = "The load."
parameters = ["host"]
params = { type = "object", properties = { host = { type = "string" } } }
result = { type = "number" }
command = "echo 1"
output = "json"
timeout = "5s"
"#,
        )
        .unwrap();
        for tools in [json, toml] {
            let tool = tools.get("get_load").unwrap();
            assert_eq!(tool.description_text(), "The load.");
            assert_eq!(tool.signature_text(), "get_load(host)");
            assert_eq!(
                tool.result_schema(),
                Some(&serde_json::json!({"type": "number"}))
            );
            assert_eq!(tool.timeout_limit(), Some(Duration::from_secs(5)));
        }
    }

    #[test]
    fn a_bad_manifest_is_refused_with_the_reason() {
        for (text, why) in [
            (r#"{"tools": [{"name": "t"}]}"#, "missing field `command`"),
            (
                r#"{"tools": [{"name": "t", "command": "x", "outptu": "json"}]}"#,
                "unknown field `outptu`",
            ),
            (
                r#"{"tools": [{"name": "t", "command": "x", "output": "xml"}]}"#,
                "unknown variant `xml`",
            ),
            (
                r#"{"tools": [{"name": "t", "command": "x", "timeout": "5"}]}"#,
                "unit",
            ),
            (
                r#"{"tools": [{"name": "t", "command": "x", "params": {"type": "string"}}]}"#,
                "must be an object schema",
            ),
            (
                r#"{"tools": [{"name": "t-1", "command": "x"}]}"#,
                "call_only",
            ),
        ] {
            let err = format!("{:#}", load("tools.json", text).unwrap_err());
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    /// A TOML error quotes its line (with a caret) when the line is short,
    /// and an excerpt around the place when it is long: a bad value deep in
    /// a 300 KB line gives a message of a few hundred bytes that still says
    /// where and why.
    #[test]
    fn a_toml_error_quotes_a_short_line_and_an_excerpt_of_a_long_one() {
        let short = "[[tools]]\nname = \"t\"\ncommand = \"x\"\ntimeout = 5s\n";
        let err = format!("{:#}", load("tools.toml", short).unwrap_err());
        assert!(err.contains("line 4, column"), "{err}");
        assert!(err.contains("timeout = 5s"), "{err}");

        let padding: String = (0..50_000).map(|i| format!("k{i} = 1, ")).collect();
        let long =
            format!("[[tools]]\nname = \"t\"\ncommand = \"x\"\nparams = {{ {padding}b = 2 2 }}\n");
        let err = format!("{:#}", load("tools.toml", &long).unwrap_err());
        assert!(err.len() < 1_000, "{} bytes: {}", err.len(), &err[..1_000]);
        // `2 2` (unquoted text where a value is due), counted from 1.
        let column = "params = { ".len() + padding.len() + "b = ".len() + 1;
        assert!(
            err.contains(&format!("at line 4, column {column} ")),
            "{err}"
        );
        assert!(err.contains("near: ...k"), "{err}");
        assert!(err.contains("k49999 = 1, b = 2 2 }"), "{err}");
    }
}
