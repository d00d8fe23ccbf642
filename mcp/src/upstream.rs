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
use wasmwire::{FailureKind, ToolFailure};

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
    /// The last failed start: when, and why.
    failed: Option<(Instant, String)>,
}

impl Upstream {
    /// Starts the server, and lists its tools.
    pub async fn connect(
        name: &str,
        config: &ServerConfig,
    ) -> Result<(Upstream, Vec<McpTool>), String> {
        let service = start(name, config).await?;
        let tools = tokio::time::timeout(CONNECT_TIMEOUT, list_tools(service.peer()))
            .await
            .map_err(|_| format!("listing its tools took more than {CONNECT_TIMEOUT:?}"))??;
        let upstream = Upstream {
            name: name.to_string(),
            config: config.clone(),
            state: Mutex::new(State {
                service: Some(service),
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
        if let Some(service) = &state.service
            && !service.peer().is_transport_closed()
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
            Ok(service) => {
                let peer = service.peer().clone();
                state.service = Some(service);
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

/// Every page of the server's tools, at most [`MAX_LISTED_TOOLS`] of them:
/// a server whose `nextCursor` never ends grew this process by about 120
/// MB a second until the connect timeout (rmcp's `list_all_tools` follows
/// the cursor as long as the server gives one).
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<McpTool>, String> {
    let mut tools = Vec::new();
    let mut cursor = None;
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|e| format!("listing its tools: {e}"))?;
        tools.extend(page.tools);
        if tools.len() > MAX_LISTED_TOOLS {
            return Err(format!(
                "listing its tools: it listed more than {MAX_LISTED_TOOLS}"
            ));
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
}

/// Starts a server and completes `initialize`, within [`CONNECT_TIMEOUT`].
async fn start(
    name: &str,
    config: &ServerConfig,
) -> Result<RunningService<RoleClient, ()>, String> {
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
                ().serve(Bounded::new(transport, name))
                    .await
                    .map_err(|e| format!("initialize failed: {e}"))
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
                ().serve(Bounded::new(transport, name))
                    .await
                    .map_err(|e| format!("initialize with {url} failed: {e}"))
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
