//! The config file of `wasmwire mcp`: the `mcpServers` map MCP clients
//! already use, plus the budget of each execution and which upstream tools
//! a program may call.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "files": { "command": "npx", "args": ["-y", "some-server"], "env": { "ROOT": "/srv" } },
//!     "search": { "url": "http://127.0.0.1:8931/mcp" }
//!   },
//!   "budget": { "wall_clock": "10s", "max_memory": "64MiB", "max_calls": 200, "max_bytes": "8MiB" },
//!   "tools": { "allow": ["files.*", "search.query"], "deny": ["files.delete_file"] },
//!   "max_running": 16,
//!   "max_waiting": 64,
//!   "max_waiting_bytes": "64MiB",
//!   "max_sessions": 64,
//!   "max_connections": 512,
//!   "header_timeout": "30s"
//! }
//! ```
//!
//! An unknown key is an error (a misspelt `"alow"` must not open every
//! tool). Durations and sizes are written with their unit (`250ms`, `10s`,
//! `512KiB`, `64MiB`), or `0` for none; a bare number is milliseconds or
//! bytes.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use wasmwire::Budget;

use crate::Error;

/// The whole config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The upstream MCP servers, by the name that prefixes their tools.
    #[serde(rename = "mcpServers")]
    pub servers: BTreeMap<String, ServerConfig>,
    /// The most one execution may spend; a `run_javascript` call may ask
    /// for less, never more. Items left out keep [`Budget::default`].
    #[serde(default)]
    pub budget: BudgetConfig,
    /// Which upstream tools become bindings.
    #[serde(default)]
    pub tools: ToolFilter,
    /// Executions run at once, and answers a client may leave unread; more
    /// wait their turn ([`DEFAULT_MAX_RUNNING`]).
    pub max_running: Option<usize>,
    /// Calls waiting for a place to run, of every client together
    /// ([`DEFAULT_MAX_WAITING`]; `0`: none wait).
    pub max_waiting: Option<usize>,
    /// Bytes of programs and `_meta` the waiting calls hold together
    /// ([`DEFAULT_MAX_WAITING_BYTES`]).
    pub max_waiting_bytes: Option<Amount>,
    /// Streamable-HTTP sessions open at once ([`DEFAULT_MAX_SESSIONS`]).
    pub max_sessions: Option<usize>,
    /// HTTP connections open at once ([`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: Option<usize>,
    /// How long an HTTP client has to send a request's headers, and its
    /// body ([`DEFAULT_HEADER_TIMEOUT`]; `0`: for ever).
    pub header_timeout: Option<Amount>,
}

/// Executions `wasmwire mcp` runs at once unless the config says: what a
/// client can make the server hold is this many times the memory cap
/// (1 GiB at the default 64 MiB), not the pool's thousand slots.
///
/// It bounds too the answers a client has not read: a `run_javascript`
/// call holds one of its client's `max_running` places (the stdio
/// client's; each streamable-HTTP session's) from before it starts until
/// its answer has left the process (written to stdout; on HTTP, written
/// out on its connection), or, cancelled, until it ends. So a client that
/// sends many calls and reads nothing makes the server hold at most this
/// many answers (each a line of at most 16 MiB), its other calls waiting
/// unstarted, each holding only its request (at most
/// [`DEFAULT_MAX_WAITING`] of them; the rest are refused at once).
/// `describe_tools` answers have as many places of their own.
pub const DEFAULT_MAX_RUNNING: usize = 16;

/// Calls that may wait for a place to run (past `max_running` executions,
/// or past `max_running` answers their client has not read), of every
/// client together, unless the config says. rmcp starts a task for every
/// request it reads, and a waiting call holds its program there: unbounded,
/// 100 waiting programs of 4 MB held 528 MB (over HTTP, with their
/// connections closed, 300 held 1.31 GB). A call past this many is refused
/// at once, "server busy" (`transient`), holding nothing.
pub const DEFAULT_MAX_WAITING: usize = 64;

/// Bytes of programs (and requests' `_meta`) the waiting calls may hold
/// together unless the config says: a call whose program would take the
/// waiting past it is refused at once, "server busy". Four programs of
/// the longest a stdio line carries (16 MiB) fit; with the rest of each
/// waiting task (about 8 KiB), waiting calls hold at most this and
/// [`DEFAULT_MAX_WAITING`] times that.
pub const DEFAULT_MAX_WAITING_BYTES: u64 = 64 << 20;

/// Streamable-HTTP sessions `wasmwire mcp --listen` keeps open at once
/// unless the config says. Each is a client with its own `max_running`
/// places for unread answers, and an idle one costs about 53 KiB until it
/// is closed (DELETE) or has been idle for 5 minutes (rmcp's keep-alive):
/// unbounded, one client opening sessions in a loop grew the server by
/// 1 GiB in 7 s. A new session past this many is refused (HTTP 503) until
/// one ends.
pub const DEFAULT_MAX_SESSIONS: usize = 64;

/// HTTP connections `wasmwire mcp --listen` holds open at once unless the
/// config says; more wait in the listen backlog until one closes. Each
/// costs a file descriptor and about 16 KiB: unbounded, a client opening
/// connections that never finish a request held 10,000 descriptors and
/// 157 MiB. 512 is eight for each of the default 64 sessions (a stream of
/// its own and calls in flight), and leaves room under a file limit of
/// 1,024 for the tools' own processes.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// How long an HTTP client has to send a request's headers (counted from
/// the first read of them, so an idle kept-alive connection is closed after
/// this long too), and an `initialize`'s body: hyper's own default for the
/// headers. Without it a connection that never finished its request was
/// held for ever.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest `header_timeout` a config may give, short of `0` (for ever).
pub const MAX_HEADER_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// `n` of the limit `name` if a semaphore can hold that many permits (each
/// such limit is one), else the error that says so.
fn countable(name: &str, n: usize) -> Result<usize, String> {
    let most = tokio::sync::Semaphore::MAX_PERMITS;
    if n > most {
        return Err(format!(
            "{name}: {n} is more than can be counted; at most {most}"
        ));
    }
    Ok(n)
}

/// One upstream server: a command spoken to on stdio, or a streamable-HTTP URL.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ServerConfig {
    /// `{"command": .., "args": [..], "env": {..}}`.
    Stdio {
        /// The program to run (looked up on `PATH`).
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Variables added to its environment.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// Its working directory; this process's by default.
        #[serde(default)]
        cwd: Option<String>,
    },
    /// `{"url": "http://.."}`: a streamable-HTTP server.
    Http {
        /// The server's MCP endpoint.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

/// `budget` in the config: each item a ceiling for every execution.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Wall clock of one execution (`10s`).
    pub wall_clock: Option<Amount>,
    /// Memory cap of the child (`64MiB`).
    pub max_memory: Option<Amount>,
    /// Tool calls one execution may make.
    pub max_calls: Option<u64>,
    /// Bytes of tool values one execution may receive (`8MiB`).
    pub max_bytes: Option<Amount>,
    /// Longest one upstream call may take (`30s`); none by default.
    pub call_timeout: Option<Amount>,
}

/// A duration or a size: a string with its unit, or a bare number
/// (milliseconds, bytes).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Amount {
    /// A bare number.
    Number(u64),
    /// `250ms`, `64MiB`, `0`.
    Text(String),
}

/// `tools`: patterns over `server.tool` (upstream names), `*` matching any
/// run of characters. A tool is bound when it matches some `allow` pattern
/// (or `allow` is absent) and no `deny` pattern.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFilter {
    /// Only these (absent: all).
    pub allow: Option<Vec<String>>,
    /// Never these.
    #[serde(default)]
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether tool `tool` of server `server` is bound.
    pub fn admits(&self, server: &str, tool: &str) -> bool {
        let full = format!("{server}.{tool}");
        let allowed = self
            .allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|p| glob(p, &full)));
        allowed && !self.deny.iter().any(|p| glob(p, &full))
    }
}

/// `*` matches any run of characters; everything else itself.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(mut text) = text.strip_prefix(head) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('*').collect();
    let (last, middle) = parts.split_last().unwrap_or((&"", &[]));
    for part in middle {
        match text.find(part) {
            Some(at) => text = &text[at + part.len()..],
            None => return false,
        }
    }
    text.len() >= last.len() && text.ends_with(last)
}

/// The ceilings every execution is held to, and how many run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The budget of an execution that asks for nothing less.
    pub budget: Budget,
    /// Longest one upstream call may take, if the config says.
    pub call_timeout: Option<Duration>,
    /// Executions run at once (at least 1), and answers a client may leave
    /// unread ([`DEFAULT_MAX_RUNNING`]); more wait their turn.
    pub max_running: usize,
    /// Calls that may wait for a place to run, of every client together
    /// ([`DEFAULT_MAX_WAITING`]; 0: none wait, a call finding no place is
    /// refused at once).
    pub max_waiting: usize,
    /// Bytes of programs and `_meta` the waiting calls may hold together
    /// (at least 1 MiB, [`DEFAULT_MAX_WAITING_BYTES`]).
    pub max_waiting_bytes: usize,
    /// Streamable-HTTP sessions open at once (at least 1,
    /// [`DEFAULT_MAX_SESSIONS`]).
    pub max_sessions: usize,
    /// HTTP connections open at once (at least 1,
    /// [`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// How long a client has to send a request's headers, and its body;
    /// `None`: for ever ([`DEFAULT_HEADER_TIMEOUT`]).
    pub header_timeout: Option<Duration>,
}

impl Config {
    /// Reads and checks the config file at `path`.
    pub fn load(path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        Config::parse(&text).map_err(|why| Error::Config {
            path: path.display().to_string(),
            why,
        })
    }

    /// Parses and checks a config's text.
    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = serde_json::from_str(text).map_err(|e| {
            if e.to_string()
                .contains("did not match any variant of untagged enum ServerConfig")
            {
                format!(
                    "{e}: each server is {{\"command\": .., \"args\": [..], \"env\": {{..}}}} \
                     or {{\"url\": \"http://..\"}}, with no other keys"
                )
            } else {
                e.to_string()
            }
        })?;
        for (name, server) in &config.servers {
            if name.is_empty() {
                return Err("a server's name is empty".into());
            }
            match server {
                ServerConfig::Stdio { command, .. } if command.is_empty() => {
                    return Err(format!("server {name:?}: the command is empty"));
                }
                ServerConfig::Http { url, .. } if !url.starts_with("http://") => {
                    return Err(format!(
                        "server {name:?}: url {url:?} is not http://.. (https is not built in)"
                    ));
                }
                _ => {}
            }
        }
        config.limits()?;
        Ok(config)
    }

    /// The ceilings of every execution.
    pub fn limits(&self) -> Result<Limits, String> {
        let b = &self.budget;
        let mut budget = Budget::default();
        if let Some(a) = &b.wall_clock {
            budget.wall_clock = duration(a).map_err(|e| format!("budget.wall_clock: {e}"))?;
        }
        if let Some(a) = &b.max_memory {
            budget.max_memory = size(a).map_err(|e| format!("budget.max_memory: {e}"))?;
            if budget.max_memory != 0 && budget.max_memory < 1 << 20 {
                return Err("budget.max_memory: less than 1MiB, which no execution fits in".into());
            }
        }
        if let Some(n) = b.max_calls {
            budget.max_calls = n;
        }
        if let Some(a) = &b.max_bytes {
            budget.max_bytes = size(a).map_err(|e| format!("budget.max_bytes: {e}"))?;
        }
        let call_timeout = match &b.call_timeout {
            None => None,
            Some(a) => match duration(a).map_err(|e| format!("budget.call_timeout: {e}"))? {
                d if d.is_zero() => None,
                d => Some(d),
            },
        };
        let max_running = match self.max_running {
            None => DEFAULT_MAX_RUNNING,
            Some(0) => return Err("max_running: 0 would run nothing; at least 1".into()),
            Some(n) => countable("max_running", n)?,
        };
        let max_waiting = match self.max_waiting {
            None => DEFAULT_MAX_WAITING,
            Some(n) => countable("max_waiting", n)?,
        };
        let max_waiting_bytes = match &self.max_waiting_bytes {
            None => DEFAULT_MAX_WAITING_BYTES,
            Some(a) => match size(a).map_err(|e| format!("max_waiting_bytes: {e}"))? {
                n if n < 1 << 20 => {
                    return Err(format!(
                        "max_waiting_bytes: {n} bytes is less than 1MiB, which would refuse \
                         most programs that must wait; at least 1MiB (max_waiting: 0 lets none \
                         wait)"
                    ));
                }
                n => n,
            },
        };
        let max_waiting_bytes = usize::try_from(max_waiting_bytes).unwrap_or(usize::MAX);
        let max_sessions = match self.max_sessions {
            None => DEFAULT_MAX_SESSIONS,
            Some(0) => return Err("max_sessions: 0 would serve no client; at least 1".into()),
            Some(n) => n,
        };
        let max_connections = match self.max_connections {
            None => DEFAULT_MAX_CONNECTIONS,
            Some(0) => return Err("max_connections: 0 would serve no client; at least 1".into()),
            Some(n) => countable("max_connections", n)?,
        };
        let header_timeout = match &self.header_timeout {
            None => Some(DEFAULT_HEADER_TIMEOUT),
            Some(a) => match duration(a).map_err(|e| format!("header_timeout: {e}"))? {
                d if d.is_zero() => None,
                // hyper adds it to the time each connection opens, which
                // overflows (a panic in every connection) past about 292
                // billion years; a day is longer than any client needs.
                d if d > MAX_HEADER_TIMEOUT => {
                    return Err(format!(
                        "header_timeout: {d:?} is longer than a day; at most 24h, or 0 for ever"
                    ));
                }
                d => Some(d),
            },
        };
        Ok(Limits {
            budget,
            call_timeout,
            max_running,
            max_waiting,
            max_waiting_bytes,
            max_sessions,
            max_connections,
            header_timeout,
        })
    }
}

/// `250ms`, `10s`, `2m`, a bare number of milliseconds, or `0`.
fn duration(amount: &Amount) -> Result<Duration, String> {
    let text = match amount {
        Amount::Number(ms) => return Ok(Duration::from_millis(*ms)),
        Amount::Text(text) => text.trim(),
    };
    let (number, unit) = split_unit(text)?;
    let per: f64 = match unit {
        "" if number == 0.0 => 0.0,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "{text:?}: write a duration such as 250ms, 10s or 2m"
            ));
        }
    };
    Duration::try_from_secs_f64(number * per).map_err(|e| format!("{text:?}: {e}"))
}

/// `64MiB`, `512KiB`, `1GiB`, `4096B`, a bare number of bytes, or `0`.
fn size(amount: &Amount) -> Result<u64, String> {
    let text = match amount {
        Amount::Number(bytes) => return Ok(*bytes),
        Amount::Text(text) => text.trim(),
    };
    let (number, unit) = split_unit(text)?;
    let per: f64 = match unit {
        "" if number == 0.0 => 0.0,
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("{text:?}: write a size such as 512KiB or 64MiB")),
    };
    let bytes = number * per;
    if bytes.fract() != 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

fn split_unit(text: &str) -> Result<(f64, &str), String> {
    let at = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(at);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} does not start with a number"))?;
    Ok((number, unit.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_style_config_reads_with_budget_and_filter() {
        let config = Config::parse(
            r#"{"mcpServers": {
                 "a": {"command": "python3", "args": ["s.py"], "env": {"X": "1"}},
                 "b": {"url": "http://127.0.0.1:9/mcp"}},
               "budget": {"wall_clock": "2s", "max_memory": "32MiB", "max_calls": 5, "max_bytes": 4096},
               "tools": {"allow": ["a.*"], "deny": ["a.rm*"]}}"#,
        )
        .unwrap();
        assert!(matches!(config.servers["a"], ServerConfig::Stdio { .. }));
        assert!(matches!(config.servers["b"], ServerConfig::Http { .. }));
        let limits = config.limits().unwrap();
        assert_eq!(limits.budget.wall_clock, Duration::from_secs(2));
        assert_eq!(limits.budget.max_memory, 32 << 20);
        assert_eq!(
            (limits.budget.max_calls, limits.budget.max_bytes),
            (5, 4096)
        );
        assert!(config.tools.admits("a", "read"));
        assert!(!config.tools.admits("a", "rmdir"));
        assert!(!config.tools.admits("b", "read"));
    }

    #[test]
    fn a_missing_budget_is_the_cli_default() {
        let config = Config::parse(r#"{"mcpServers": {}}"#).unwrap();
        assert_eq!(config.limits().unwrap().budget, Budget::default());
        assert_eq!(config.limits().unwrap().max_running, DEFAULT_MAX_RUNNING);
        let config = Config::parse(r#"{"mcpServers": {}, "max_running": 2}"#).unwrap();
        assert_eq!(config.limits().unwrap().max_running, 2);
        assert_eq!(config.limits().unwrap().max_sessions, DEFAULT_MAX_SESSIONS);
        let config = Config::parse(r#"{"mcpServers": {}, "max_sessions": 3}"#).unwrap();
        assert_eq!(config.limits().unwrap().max_sessions, 3);
    }

    #[test]
    fn the_waiting_limits_have_defaults_and_take_their_units() {
        let limits = Config::parse(r#"{"mcpServers": {}}"#)
            .unwrap()
            .limits()
            .unwrap();
        assert_eq!(limits.max_waiting, DEFAULT_MAX_WAITING);
        assert_eq!(limits.max_waiting_bytes as u64, DEFAULT_MAX_WAITING_BYTES);
        let limits =
            Config::parse(r#"{"mcpServers": {}, "max_waiting": 0, "max_waiting_bytes": "2MiB"}"#)
                .unwrap()
                .limits()
                .unwrap();
        assert_eq!((limits.max_waiting, limits.max_waiting_bytes), (0, 2 << 20));
        let limits = Config::parse(r#"{"mcpServers": {}, "max_waiting_bytes": 1048576}"#)
            .unwrap()
            .limits()
            .unwrap();
        assert_eq!(limits.max_waiting_bytes, 1 << 20);
    }

    #[test]
    fn the_http_limits_have_defaults_and_take_their_units() {
        let limits = Config::parse(r#"{"mcpServers": {}}"#)
            .unwrap()
            .limits()
            .unwrap();
        assert_eq!(limits.max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(limits.header_timeout, Some(DEFAULT_HEADER_TIMEOUT));
        let limits = Config::parse(
            r#"{"mcpServers": {}, "max_connections": 8, "header_timeout": "1500ms"}"#,
        )
        .unwrap()
        .limits()
        .unwrap();
        assert_eq!(limits.max_connections, 8);
        assert_eq!(limits.header_timeout, Some(Duration::from_millis(1500)));
        let limits = Config::parse(r#"{"mcpServers": {}, "header_timeout": 0}"#)
            .unwrap()
            .limits()
            .unwrap();
        assert_eq!(limits.header_timeout, None);
    }

    #[test]
    fn bad_configs_say_what_is_wrong() {
        for (text, why) in [
            (r#"{"mcpServers": {"a": {"cmd": "x"}}}"#, "each server is"),
            (
                r#"{"mcpServers": {"a": {"command": ""}}}"#,
                "command is empty",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "https://x"}}}"#,
                "https is not built in",
            ),
            (
                r#"{"mcpServers": {}, "budget": {"wall_clock": "10"}}"#,
                "budget.wall_clock",
            ),
            (
                r#"{"mcpServers": {}, "budget": {"max_memory": "1KiB"}}"#,
                "less than 1MiB",
            ),
            (
                r#"{"mcpServers": {}, "tools": {"alow": []}}"#,
                "unknown field",
            ),
            (r#"{"servers": {}}"#, "mcpServers"),
            (
                r#"{"mcpServers": {}, "max_running": 0}"#,
                "max_running: 0 would run nothing",
            ),
            (
                r#"{"mcpServers": {}, "max_sessions": 0}"#,
                "max_sessions: 0 would serve no client",
            ),
            (
                r#"{"mcpServers": {}, "max_connections": 0}"#,
                "max_connections: 0 would serve no client",
            ),
            (
                r#"{"mcpServers": {}, "header_timeout": "soon"}"#,
                "header_timeout",
            ),
            (
                r#"{"mcpServers": {}, "max_waiting_bytes": "512KiB"}"#,
                "max_waiting_bytes: 524288 bytes is less than 1MiB",
            ),
            (
                r#"{"mcpServers": {}, "max_waiting_bytes": 0}"#,
                "max_waiting_bytes: 0 bytes is less than 1MiB",
            ),
            (
                r#"{"mcpServers": {}, "max_waiting_bytes": "lots"}"#,
                "max_waiting_bytes",
            ),
            (r#"{"mcpServers": {}, "max_waiting": -1}"#, "expected usize"),
            (
                r#"{"mcpServers": {}, "max_waiting": 18446744073709551615}"#,
                "max_waiting: 18446744073709551615 is more than can be counted",
            ),
            // Each made a semaphore that panicked at start (tokio's
            // `MAX_PERMITS`), and a header timeout past the clock's range
            // panicked in hyper at every connection.
            (
                r#"{"mcpServers": {}, "max_running": 18446744073709551615}"#,
                "max_running: 18446744073709551615 is more than can be counted",
            ),
            (
                r#"{"mcpServers": {}, "max_connections": 2305843009213693952}"#,
                "max_connections: 2305843009213693952 is more than can be counted",
            ),
            (
                r#"{"mcpServers": {}, "header_timeout": "10000000000000000000s"}"#,
                "header_timeout: 10000000000000000000s is longer than a day",
            ),
            (
                r#"{"mcpServers": {}, "header_timeout": "25h"}"#,
                "header_timeout: 90000s is longer than a day",
            ),
        ] {
            let err = Config::parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn globs_match_runs_of_characters() {
        assert!(glob("*", "a.b"));
        assert!(glob("a.*", "a.b"));
        assert!(glob("*.get_*", "x.get_load"));
        assert!(glob("a*b*c", "a__b__c"));
        assert!(!glob("a*b*c", "a__c"));
        assert!(!glob("a.b", "a.bc"));
        assert!(!glob("*x", "x.y"));
    }
}
