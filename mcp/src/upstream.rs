//! One upstream MCP server, reached as a client: started (or connected to)
//! once, its tools listed once, and started again when it has died.
//!
//! A call that finds the connection closed (the server exited, or closed
//! its end) starts the server again and goes on; the calls in flight when
//! it died have failed `transient` already (the SDK fails every pending
//! request when its transport closes, so none waits for an answer that
//! cannot come). A start that fails is not tried again for
//! [`RESTART_BACKOFF`]: until then calls fail at once with its reason.
//! Starting is bounded by [`CONNECT_TIMEOUT`] and, inside an execution, by
//! the call's own deadline.

use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, PaginatedRequestParams, Tool as McpTool};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::Mutex;
use wasmwire::{CancellationToken, FailureKind, ToolFailure};

use crate::config::ServerConfig;
use crate::deep::ChildTransport;
use crate::peer_requests::Bounded;
use crate::values;

/// The longest starting a server and its `initialize` may take (`npx` may
/// have to unpack a package first).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a failed start is remembered: calls in that time fail at once
/// instead of each trying again (a server that cannot start costs one
/// attempt per interval, not one per call).
pub const RESTART_BACKOFF: Duration = Duration::from_secs(2);

/// An upstream server and its connection.
#[derive(Debug)]
pub struct Upstream {
    /// Its name in the config.
    pub name: String,
    config: ServerConfig,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    service: Option<RunningService<RoleClient, ()>>,
    /// A stdio server's end of output ([`ChildTransport::ended`]), seen
    /// before rmcp's transport is closed.
    ended: Option<CancellationToken>,
    /// The last failed start: when, and why.
    failed: Option<(Instant, String)>,
}

impl Upstream {
    /// Starts the server, and lists its tools.
    pub async fn connect(
        name: &str,
        config: &ServerConfig,
    ) -> Result<(Upstream, Vec<McpTool>), String> {
        let (service, ended) = start(name, config).await?;
        let tools = tokio::time::timeout(CONNECT_TIMEOUT, list_tools(service.peer()))
            .await
            .map_err(|_| format!("listing its tools took more than {CONNECT_TIMEOUT:?}"))??;
        let upstream = Upstream {
            name: name.to_string(),
            config: config.clone(),
            state: Mutex::new(State {
                service: Some(service),
                ended,
                failed: None,
            }),
        };
        Ok((upstream, tools))
    }

    /// Calls `tool` with `arguments`; the program's value, or the failure.
    /// Dropping the future (the call's deadline passed, the execution
    /// ended) cancels the request upstream (`notifications/cancelled`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, ToolFailure> {
        let peer = self.peer().await?;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        match peer.call_tool(params).await {
            Ok(result) => values::value(result),
            Err(e) => Err(values::service_error(&self.name, &e)),
        }
    }

    /// The live connection, started again if it had closed.
    async fn peer(&self) -> Result<Peer<RoleClient>, ToolFailure> {
        let mut state = self.state.lock().await;
        let ended = state.ended.as_ref().is_some_and(|e| e.is_cancelled());
        if let Some(service) = &state.service
            && !service.peer().is_transport_closed()
            && !ended
        {
            return Ok(service.peer().clone());
        }
        if let Some((at, why)) = &state.failed
            && at.elapsed() < RESTART_BACKOFF
        {
            return Err(self.down(why));
        }
        // The old connection's task (and process) goes before a new one starts.
        if let Some(old) = state.service.take() {
            // Bounded: a transport stuck handing a message to a service that
            // no longer reads held this (and the lock) for ever.
            let _ = tokio::time::timeout(CLOSE_WAIT, old.cancel()).await;
        }
        say!(
            "upstream server {:?} had closed; starting it again",
            self.name
        );
        // Marked failed until it has started: a call that ends while the
        // start waits (its deadline, its execution's wall clock) drops this
        // future, and the calls after it must meet the backoff, not each
        // start the server again and wait as long.
        state.failed = Some((
            Instant::now(),
            "starting it again did not finish before the call that started it ended".to_string(),
        ));
        match start(&self.name, &self.config).await {
            Ok((service, ended)) => {
                let peer = service.peer().clone();
                state.service = Some(service);
                state.ended = ended;
                state.failed = None;
                Ok(peer)
            }
            Err(why) => {
                say!("upstream server {:?}: {why}", self.name);
                let failure = self.down(&why);
                state.failed = Some((Instant::now(), why));
                Err(failure)
            }
        }
    }

    fn down(&self, why: &str) -> ToolFailure {
        ToolFailure::new(
            FailureKind::Transient,
            format!("upstream server {:?} is down: {why}", self.name),
        )
    }

    /// Closes the connection (and ends a stdio server's process).
    pub async fn close(&self) {
        if let Some(service) = self.state.lock().await.service.take() {
            let _ = tokio::time::timeout(CLOSE_WAIT, service.cancel()).await;
        }
    }
}

/// How long a connection's close is waited for. rmcp's HTTP worker, once
/// an upstream's requests have filled the channel to a service that has
/// stopped reading, waits on that channel for ever, and the service's close
/// waits on the worker: `wasmwire mcp` then ignored stdin's end and SIGTERM
/// alike. The connection is dropped after this (its task ends with it, a
/// stdio server's process is killed).
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The most tools one upstream server may list.
const MAX_LISTED_TOOLS: usize = 10_000;

/// The most memory one upstream server's tools may take as they are kept
/// (each tool's JSON as a tree, [`wasmwire::json::tree_bytes`], which
/// counts a string twice over): 64 MiB, about 32 MB of descriptions,
/// hundreds of times what a real server lists (a hundred tools with long
/// descriptions and schemas take a few hundred KiB). The count alone let
/// pages of one tool with a 15 MB description each grow the server past
/// 4 GB before the 10,000th.
pub(crate) const MAX_LISTED_BYTES: usize = 64 << 20;

/// Every page of the server's tools, at most [`MAX_LISTED_TOOLS`] of them
/// and [`MAX_LISTED_BYTES`] between them: a server whose `nextCursor`
/// never ends grew this process by about 120 MB a second until the connect
/// timeout (rmcp's `list_all_tools` follows the cursor as long as the
/// server gives one).
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<McpTool>, String> {
    let mut listed = Listed::default();
    let mut cursor = None;
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|e| format!("listing its tools: {e}"))?;
        listed.extend(page.tools)?;
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(listed.tools),
        }
    }
}

/// The tools listed so far, and what they take.
#[derive(Debug, Default)]
struct Listed {
    tools: Vec<McpTool>,
    bytes: usize,
}

impl Listed {
    /// Keeps `page`, or says which bound it would pass.
    fn extend(&mut self, page: Vec<McpTool>) -> Result<(), String> {
        for tool in page {
            let text = serde_json::to_string(&tool).unwrap_or_default();
            self.bytes = self
                .bytes
                .saturating_add(wasmwire::json::tree_bytes(&text).max(text.len()));
            if self.bytes > MAX_LISTED_BYTES {
                return Err(format!(
                    "listing its tools: they take more than {} MiB (after {} tools; the last, {}, is {} bytes of JSON): \
                     this server keeps at most that of one server's tools",
                    MAX_LISTED_BYTES >> 20,
                    self.tools.len() + 1,
                    crate::naming::shown(&tool.name),
                    text.len(),
                ));
            }
            self.tools.push(tool);
            if self.tools.len() > MAX_LISTED_TOOLS {
                return Err(format!(
                    "listing its tools: it listed more than {MAX_LISTED_TOOLS}"
                ));
            }
        }
        Ok(())
    }
}

/// Starts a server and completes `initialize`, within [`CONNECT_TIMEOUT`];
/// for a stdio server, with its end of output ([`ChildTransport::ended`]).
async fn start(
    name: &str,
    config: &ServerConfig,
) -> Result<(RunningService<RoleClient, ()>, Option<CancellationToken>), String> {
    let starting = async {
        match config {
            ServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let command = tokio::process::Command::new(command).configure(|c| {
                    c.args(args).envs(env).kill_on_drop(true);
                    if let Some(cwd) = cwd {
                        c.current_dir(cwd);
                    }
                });
                // Through the filter that turns an answer too deep for
                // rmcp into an error under its id (`deep`).
                let transport = ChildTransport::spawn(command).map_err(|e| {
                    // The kernel says "no such file" of a missing working
                    // directory as of a missing command.
                    match cwd {
                        Some(cwd) if !std::path::Path::new(cwd).is_dir() => format!(
                            "could not start {:?}: its cwd {cwd:?} is not a directory ({e})",
                            config_command(config)
                        ),
                        _ => format!("could not start {:?}: {e}", config_command(config)),
                    }
                })?;
                let ended = transport.ended();
                let service =
                    ().serve(Bounded::new(transport, name))
                        .await
                        .map_err(|e| format!("initialize failed: {e}"))?;
                Ok((service, Some(ended)))
            }
            ServerConfig::Http { url, headers } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let name = name.parse().map_err(|e| format!("header {name:?}: {e}"))?;
                    let value = value
                        .parse()
                        .map_err(|e| format!("header value of {name}: {e}"))?;
                    custom.insert(name, value);
                }
                let mut transport_config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str());
                transport_config.custom_headers = custom;
                let transport = StreamableHttpClientTransport::from_config(transport_config);
                let service = ()
                    .serve(Bounded::new(transport, name))
                    .await
                    .map_err(|e| format!("initialize with {url} failed: {e}"))?;
                Ok((service, None))
            }
        }
    };
    tokio::time::timeout(CONNECT_TIMEOUT, starting)
        .await
        .map_err(|_| format!("it did not complete initialize within {CONNECT_TIMEOUT:?}"))?
}

fn config_command(config: &ServerConfig) -> String {
    match config {
        ServerConfig::Stdio { command, .. } => command.clone(),
        ServerConfig::Http { url, .. } => url.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: usize) -> McpTool {
        let schema = serde_json::json!({"type": "object"});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        McpTool::new(name.to_owned(), "d".repeat(description), schema)
    }

    /// Only the count was bounded: pages of one tool with a 15 MB
    /// description each grew the server past 4 GB before the 10,000th.
    #[test]
    fn a_listing_past_its_bytes_is_refused_though_its_count_is_small() {
        let mut listed = Listed::default();
        let mut pages = 0;
        let err = loop {
            match listed.extend(vec![tool(&format!("t{pages}"), 4 << 20)]) {
                Ok(()) => pages += 1,
                Err(e) => break e,
            }
            assert!(pages < 100, "never refused");
        };
        // Each counted as at least its text, at most its tree (a string
        // twice over).
        let most = MAX_LISTED_BYTES / (4 << 20);
        assert!((most / 2 - 1..most).contains(&pages), "{pages}: {err}");
        assert!(err.contains("more than 64 MiB"), "{err}");
        assert!(err.contains(&format!("the last, t{pages}, is")), "{err}");
        // Many small tools are no trouble.
        let mut listed = Listed::default();
        for page in 0..100 {
            let tools = (0..10)
                .map(|i| tool(&format!("t{page}_{i}"), 2000))
                .collect();
            listed.extend(tools).unwrap();
        }
        assert_eq!(listed.tools.len(), 1000);
        // The count still holds.
        let mut listed = Listed::default();
        let many = (0..=MAX_LISTED_TOOLS)
            .map(|i| tool(&format!("t{i}"), 0))
            .collect();
        let err = listed.extend(many).unwrap_err();
        assert!(err.contains("more than 10000"), "{err}");
    }
}
