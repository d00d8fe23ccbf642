//! Building the server from a config ([`build`]) and serving it on stdio
//! or streamable HTTP ([`serve`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rmcp::ServiceExt;
use rmcp::model::Tool as McpTool;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;
use wasmwire::json::HeldReadError;
use wasmwire::wire::Holdings;
use wasmwire::{
    Call, FailureKind, HandlerError, Sandbox, SandboxOptions, Text, Tool, ToolFailure, Tools,
};

use crate::Error;
use crate::config::Config;
use crate::held::{Counted, HeldBody, Slot};
use crate::naming;
use crate::server::{Binding, CodeMode, MAX_VALUE_DEPTH};
use crate::upstream::Upstream;

/// Where `wasmwire mcp` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// On this process's stdin and stdout (what an MCP client that starts
    /// the server expects).
    Stdio,
    /// Streamable HTTP on this address (port 0: any free port); the bound
    /// address is printed on stderr as `listening on http://ADDR/mcp`.
    Http(SocketAddr),
}

/// Starts every upstream server (all at once), lists their tools, binds
/// those the config admits, and builds the sandbox. An upstream server
/// that cannot be started or listed is an error naming it.
pub async fn build(config: &Config) -> Result<CodeMode, Error> {
    let limits = config.limits().map_err(|why| Error::Config {
        path: "(given)".into(),
        why,
    })?;
    let options = SandboxOptions {
        max_call_deadline: limits.call_timeout,
        ..SandboxOptions::default()
    };
    let sandbox = Sandbox::new(options.clone())?;
    // A budget the backend cannot hold (over its ceiling), or under which
    // nothing can start (a memory cap below what the guest's memory starts
    // at), would fail every call: it is the config's mistake, said once at
    // start, before any upstream starts. One trivial run tells both (the
    // run checks the budget before it starts). Its wall clock is at least
    // 10 s, so that a short one on a loaded machine does not refuse the
    // config some of the time.
    let mut trial = limits.budget;
    if !trial.wall_clock.is_zero() {
        trial.wall_clock = trial.wall_clock.max(Duration::from_secs(10));
    }
    let tried = sandbox
        .run(
            &wasmwire::Execution::new("1").budget(trial),
            &Tools::new(),
            wasmwire::CancellationToken::new(),
        )
        .await
        .map_err(|e| Error::Config {
            path: "(given)".into(),
            why: format!("budget: {e}"),
        })?;
    if !tried.result.ok {
        return Err(Error::Config {
            path: "(given)".into(),
            why: format!(
                "budget: a trivial program cannot run under it: {}",
                tried.result.error
            ),
        });
    }
    let connecting = config.servers.iter().map(|(name, server)| async move {
        Upstream::connect(name, server)
            .await
            .map_err(|why| Error::Upstream {
                server: name.clone(),
                why,
            })
    });
    let mut upstreams = Vec::new();
    let mut listed = Vec::new();
    for connected in futures::future::join_all(connecting).await {
        let (upstream, tools) = connected?;
        let upstream = Arc::new(upstream);
        listed.push((upstream.clone(), tools));
        upstreams.push(upstream);
    }
    let (tools, bindings) = bind(&listed, config);
    Ok(CodeMode::new(
        sandbox, options, tools, bindings, upstreams, limits,
    ))
}

/// Binds the admitted upstream tools, named by the naming rule, in the
/// order of (server, tool).
fn bind(listed: &[(Arc<Upstream>, Vec<McpTool>)], config: &Config) -> (Tools, Vec<Binding>) {
    let mut all: Vec<(&Arc<Upstream>, &McpTool)> = listed
        .iter()
        .flat_map(|(up, tools)| tools.iter().map(move |t| (up, t)))
        .filter(|(up, t)| config.tools.admits(&up.name, &t.name))
        .collect();
    all.sort_by(|a, b| (&a.0.name, &a.1.name).cmp(&(&b.0.name, &b.1.name)));
    // Names are judged by wasmwire itself: a scratch registry of plain
    // tools refuses a reserved word, a global, or a name taken already.
    let mut taken = Tools::new();
    let mut tools = Tools::new();
    let mut bindings = Vec::new();
    for (upstream, mcp_tool) in all {
        // Shown cut: a name of megabytes was written whole on each line.
        let said = format!("{}.{}", upstream.name, naming::shown(&mcp_tool.name));
        let base = naming::base_name(&upstream.name, &mcp_tool.name);
        // No candidate of a name too long can be one (and each try copied
        // it, a thousand times).
        if base.len() > wasmwire::wire::MAX_TOOL_NAME_BYTES {
            say!(
                "{said}: its name is longer than the {} bytes a tool's name may be; left out",
                wasmwire::wire::MAX_TOOL_NAME_BYTES
            );
            continue;
        }
        let Some(js_name) = naming::candidates(&base)
            .take(1000)
            .find(|name| taken.register(noop(name)).is_ok())
        else {
            say!("no name for {said}; left out");
            continue;
        };
        let described = |params: Option<Value>| {
            let mut tool = Tool::new(
                js_name.clone(),
                handler(upstream.clone(), mcp_tool.name.to_string()),
            );
            if let Some(d) = &mcp_tool.description {
                tool = tool.description(d.to_string());
            }
            if let Some(params) = params {
                tool = tool.params(params);
                if let Some(out) = &mcp_tool.output_schema {
                    tool = tool.result(Value::Object((**out).clone()));
                }
            }
            tool
        };
        let params = Value::Object((*mcp_tool.input_schema).clone());
        let Err(e) = tools.register(described(Some(params.clone()))) else {
            bindings.push(Binding {
                js_name,
                server: upstream.name.clone(),
                tool: mcp_tool.name.to_string(),
            });
            continue;
        };
        // A schema wasmwire cannot compile. Most often for a pattern only a
        // backtracking engine matches (a lookahead: what wasmwire refuses
        // to run on args a program writes): the tool is bound with its
        // schema less those patterns. Otherwise it is bound without its
        // schemas. Either way the upstream server still checks its args.
        let mut loose = params;
        let taken_out = without_refused_patterns(&mut loose);
        if taken_out > 0 && tools.register(described(Some(loose))).is_ok() {
            say!(
                "{said}: {taken_out} pattern(s) of its params schema need a backtracking \
                 regular expression engine, which wasmwire does not run on a program's args; \
                 bound with those patterns left to the upstream server"
            );
        } else {
            say!("{said}: {e}; bound without its schemas");
            if let Err(e) = tools.register(described(None)) {
                say!("{said}: {e}; left out");
                continue;
            }
        }
        bindings.push(Binding {
            js_name,
            server: upstream.name.clone(),
            tool: mcp_tool.name.to_string(),
        });
    }
    (tools, bindings)
}

/// Takes out of `schema` every `pattern` keyword wasmwire refuses to
/// match (see [`Tool::params`]); how many it took out. Values of `const`,
/// `enum`, `default` and `examples` are data, not schemas, and are left
/// as they are.
fn without_refused_patterns(schema: &mut Value) -> usize {
    let refused = |pattern: &str| {
        let probe = serde_json::json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": pattern}},
        });
        Tools::new().register(noop("p").params(probe)).is_err()
    };
    let mut taken_out = 0;
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if map
                    .get("pattern")
                    .and_then(Value::as_str)
                    .is_some_and(refused)
                {
                    map.remove("pattern");
                    taken_out += 1;
                }
                stack.extend(
                    map.iter_mut()
                        .filter(|(key, _)| {
                            !matches!(key.as_str(), "const" | "enum" | "default" | "examples")
                        })
                        .map(|(_, value)| value),
                );
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    taken_out
}

fn noop(name: &str) -> Tool {
    Tool::new(name, |_call: Call| async {
        Ok::<_, HandlerError>(Text(String::new()))
    })
}

/// The handler of one upstream tool: the call's args (one object) go
/// upstream as `tools/call` arguments.
fn handler(
    upstream: Arc<Upstream>,
    tool: String,
) -> impl Fn(
    Call,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, HandlerError>> + Send>>
+ Send
+ Sync
+ 'static {
    move |call: Call| {
        let upstream = upstream.clone();
        let tool = tool.clone();
        Box::pin(async move {
            // The arguments are a tree until the upstream call has written
            // them out: held against the execution's cap while they are.
            let (args, _tree) = match call.args.trim() {
                "" => (serde_json::Map::new(), None),
                text => match wasmwire::json::read_held::<Value>(&call.holdings, text) {
                    Ok((Value::Object(map), held, survey)) => {
                        let depth = survey.depth;
                        if depth > MAX_VALUE_DEPTH {
                            let why = format!(
                                "{}: the arguments nest {depth} levels deep; an MCP call carries at most {MAX_VALUE_DEPTH}",
                                call.tool
                            );
                            return Err(ToolFailure::new(FailureKind::Invalid, why).into());
                        }
                        (map, Some(held))
                    }
                    Ok((Value::Null, _, _)) => (serde_json::Map::new(), None),
                    Err(HeldReadError::TooLarge(e)) => {
                        let why = format!("{}: the arguments cannot be read: {e}", call.tool);
                        return Err(ToolFailure::new(FailureKind::Limit, why).into());
                    }
                    Err(HeldReadError::Read(e @ wasmwire::json::ReadError::TooDeep { .. })) => {
                        let why = format!("{}: the arguments cannot be read: {e}", call.tool);
                        return Err(ToolFailure::new(FailureKind::Invalid, why).into());
                    }
                    _ => {
                        let why = format!("{}: the arguments must be one object", call.tool);
                        return Err(ToolFailure::new(FailureKind::Invalid, why).into());
                    }
                },
            };
            upstream.call(&tool, args).await.map_err(HandlerError::from)
        })
    }
}

/// Serves `code` until the client goes (stdio: stdin closes) or the
/// process is told to stop (SIGINT, SIGTERM), then closes the upstream
/// connections (a stdio upstream's process ends with its connection).
///
/// On stdio, stdin closing is the client's way to end the session (MCP's
/// stdio shutdown), and a signal the process's: either way every call
/// still running or waiting is cancelled at once (a run ends `cancelled`,
/// a waiting call is not run), and what answers there are get at most
/// [`EXIT_FLUSH`] to be written, however the client treats stdout (one
/// that reads nothing can hold no answer's write for longer).
pub async fn serve(code: CodeMode, transport: Transport) -> Result<(), Error> {
    serve_until(code, transport, stop_signal()).await
}

/// [`serve`], stopping when `stopped` ends as on a signal: the signals'
/// handlers of a caller that started the upstream servers under them
/// (`wasmwire mcp`), so that none is lost between the two.
pub async fn serve_until(
    code: CodeMode,
    transport: Transport,
    stopped: impl std::future::Future<Output = ()>,
) -> Result<(), Error> {
    tokio::pin!(stopped);
    let served = match transport {
        Transport::Stdio => {
            // stdin and stdout through the filter that answers a request
            // too deep for rmcp to read (`deep`).
            let (io, out, stdin_closed) =
                crate::deep::stdio(crate::held::max_unanswered(code.limits()));
            let running = code
                .clone()
                .serve(io)
                .await
                .map_err(|e| Error::Serve(e.to_string()))?;
            let signalled = tokio::select! {
                () = stdin_closed.cancelled() => false,
                () = &mut stopped => true,
            };
            // Every run is cancelled and every waiting call answered now
            // (`stopping`), not after rmcp's own wait for its handlers
            // (5 s); a call read after this is answered that it was not
            // run.
            code.stopping();
            // On stdin's end, rmcp still reads the lines the filter passed
            // on before its end (its token, cancelled now, dropped those
            // not yet read: they were never answered), then drains its
            // handlers' answers. On a signal stdin is still open: its
            // token ends its service once their answers are out.
            if signalled {
                running.cancellation_token().cancel();
            }
            // rmcp sends the answers it has and lets go of its end, then
            // the last lines go out; an answer stuck behind a stdout nobody
            // reads held this for ever. On a signal too: the client, still
            // reading, saw its stdout close with its calls unanswered.
            let _ = tokio::time::timeout(EXIT_FLUSH, async {
                let _ = running.waiting().await;
                let _ = out.await;
            })
            .await;
            // (Past the bound, dropping the service cancels its token.)
            Ok(())
        }
        Transport::Http(addr) => serve_http(code.clone(), addr, stopped).await,
    };
    // Bounded as a whole too: each upstream's close is (`upstream.rs`).
    let _ = tokio::time::timeout(EXIT_FLUSH, code.close()).await;
    served
}

async fn serve_http(
    code: CodeMode,
    addr: SocketAddr,
    mut stopped: std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
) -> Result<(), Error> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Serve(format!("listening on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::Serve(e.to_string()))?;
    let mut config = StreamableHttpServerConfig::default();
    // Loopback names are allowed by default; the address served on too.
    config.allowed_hosts.push(bound.ip().to_string());
    let stop = config.cancellation_token.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let limits = *code.limits();
    let opening = Arc::new(Opening {
        sessions: sessions.clone(),
        max: limits.max_sessions,
        lock: tokio::sync::Mutex::new(()),
        header_timeout: limits.header_timeout,
        trees: Holdings::new(READ_TREES),
    });
    let service = StreamableHttpService::new(
        // A session is a client: places of its own for unread answers.
        {
            let code = code.clone();
            move || Ok(code.for_client())
        },
        sessions,
        config,
    );
    // A place per connection, taken before it is accepted: past
    // `max_connections` open, more wait in the listen backlog, holding no
    // descriptor and no memory of this process.
    let places = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    // The connections, so that a stop can wait for their last answers.
    let connections = tokio_util::task::TaskTracker::new();
    let closing = wasmwire::CancellationToken::new();
    let mut full_said = false;
    say!("listening on http://{bound}/mcp");
    loop {
        let place = match places.clone().try_acquire_owned() {
            Ok(place) => place,
            Err(_) => {
                if !full_said {
                    full_said = true;
                    say!(
                        "{} connections open (max_connections); more wait until \
                         one closes",
                        limits.max_connections
                    );
                }
                tokio::select! {
                    place = places.clone().acquire_owned() => match place {
                        Ok(place) => place,
                        Err(_) => break,
                    },
                    _ = &mut stopped => break,
                }
            }
        };
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(
                        stream,
                        service.clone(),
                        opening.clone(),
                        place,
                        closing.clone(),
                    ));
                }
                // One connection's own failure (reset or aborted before it
                // was taken): the next is taken at once, so that a client
                // sending such connections cannot slow the others.
                Err(e) if lost_connection(&e) => {}
                // Out of file descriptors (a client holding connections
                // open past `ulimit -n`) or memory: the listener stays
                // ready, so accepting again at once spun a core until a
                // connection closed. The pending connections wait instead.
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
            _ = &mut stopped => break,
        }
    }
    drop(listener);
    // Every run cancelled and every waiting call answered that it was not
    // run; each connection finishes the responses it has begun (those
    // answers) and closes, an idle one at once. A stream that never ends
    // (a client's standing GET) is given up after EXIT_FLUSH.
    code.stopping();
    closing.cancel();
    connections.close();
    let _ = tokio::time::timeout(EXIT_FLUSH, connections.wait()).await;
    stop.cancel();
    Ok(())
}

/// How long answers have to be written once stdin has closed: rmcp's
/// last answers (of the calls just cancelled among them) and the lines
/// still on their way to stdout.
pub const EXIT_FLUSH: Duration = Duration::from_secs(2);

/// How long the listener rests after an accept that failed for want of a
/// resource.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Whether a failed accept failed for its connection alone, not for the
/// listener's want of a resource.
fn lost_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionRefused
            | ErrorKind::Interrupted
    )
}

/// Where new streamable-HTTP sessions are opened, one at a time, and
/// refused past [`Limits::max_sessions`](crate::config::Limits) open.
struct Opening {
    sessions: Arc<LocalSessionManager>,
    max: usize,
    /// Held while a request that may open a session is answered, so that
    /// the count read before it is still true when rmcp adds the session.
    lock: tokio::sync::Mutex<()>,
    /// How long a client has to send a request's headers, and a request's
    /// body (`header_timeout`).
    header_timeout: Option<Duration>,
    /// The requests being read into trees by rmcp ([`READ_TREES`]).
    trees: Holdings,
}

impl Opening {
    /// Whether `request` may open a session: a POST with no session id
    /// (rmcp opens one for an `initialize`, and answers anything else
    /// without one with an error).
    fn opens(request: &hyper::Request<Incoming>) -> bool {
        request.method() == hyper::Method::POST && !request.headers().contains_key("mcp-session-id")
    }

    /// Answers a request that may open a session. Its body is read first,
    /// with no lock held (a client that sends it slowly holds up only its
    /// own connection); then, one request at a time, the sessions open are
    /// counted and the request goes to rmcp, which opens the session before
    /// it answers, or is refused.
    async fn answer(&self, request: hyper::Request<Incoming>, service: &impl Rmcp) -> Answered {
        let (parts, body) = request.into_parts();
        let body = match self
            .collect(
                body,
                OPENING_BODY,
                "a request without a session (an initialize)",
            )
            .await
        {
            Ok(body) => body,
            Err(refusal) => return Ok(refusal),
        };
        let _one_at_a_time = self.lock.lock().await;
        if self.sessions.sessions.read().await.len() >= self.max {
            let id = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|message| message.get("id").cloned())
                .filter(|id| id.is_string() || id.is_number())
                .unwrap_or(Value::Null);
            let why = format!(
                "this server keeps at most {} streamable-HTTP sessions open (max_sessions); close \
                 one (DELETE /mcp with its mcp-session-id) or wait for one to be idle for 5 \
                 minutes",
                self.max
            );
            return Ok(refused(hyper::StatusCode::SERVICE_UNAVAILABLE, id, &why));
        }
        service
            .call(hyper::Request::from_parts(parts, Full::new(body)))
            .await
    }

    /// Answers a POST of a session: its body is read here first (within
    /// the header timeout, at most what rmcp reads), and goes on to rmcp,
    /// which reads it into a tree, only while that tree's estimate
    /// ([`wasmwire::json::tree_bytes`]) is held among [`READ_TREES`]: a
    /// tree can take sixty times its text (4 MiB of `[{"":0},...]`,
    /// about 240 MiB), and every connection could send one at once.
    async fn read_then_answer(
        &self,
        request: hyper::Request<Incoming>,
        service: &impl Rmcp,
    ) -> Answered {
        let (parts, body) = request.into_parts();
        let body = match self.collect(body, REQUEST_BODY, "a request").await {
            Ok(body) => body,
            Err(refusal) => return Ok(refusal),
        };
        let text = String::from_utf8_lossy(&body);
        let tree = wasmwire::json::tree_bytes(&text);
        let Ok(_tree) = self.trees.try_hold(tree) else {
            let id = crate::deep::id_of(&text).unwrap_or(Value::Null);
            let (status, why) = if tree > READ_TREES {
                (
                    hyper::StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the request's {} bytes of JSON would take about {tree} bytes read as a \
                         tree, more than the {READ_TREES} this server reads requests into",
                        body.len()
                    ),
                )
            } else {
                (
                    hyper::StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the request's {} bytes of JSON would take about {tree} bytes read as a \
                         tree, and the server is reading other requests into {} of its \
                         {READ_TREES}: send it again",
                        body.len(),
                        self.trees.used()
                    ),
                )
            };
            return Ok(refused(status, id, &why));
        };
        service
            .call(hyper::Request::from_parts(parts, Full::new(body)))
            .await
    }

    /// A request's body, at most `limit` bytes and within the header
    /// timeout, or the answer that refuses it.
    async fn collect(
        &self,
        body: Incoming,
        limit: usize,
        what: &str,
    ) -> Result<Bytes, hyper::Response<BoxBody<Bytes, Infallible>>> {
        let collect = http_body_util::Limited::new(body, limit).collect();
        let collected = match self.header_timeout {
            Some(within) => match tokio::time::timeout(within, collect).await {
                Ok(collected) => collected,
                Err(_) => {
                    return Err(refused(
                        hyper::StatusCode::REQUEST_TIMEOUT,
                        Value::Null,
                        &format!(
                            "the body of {what} did not arrive within {within:?} (header_timeout)"
                        ),
                    ));
                }
            },
            None => collect.await,
        };
        match collected {
            Ok(body) => Ok(body.to_bytes()),
            Err(_) => Err(refused(
                hyper::StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                &format!(
                    "{what} is at most {limit} bytes here, and this one was longer or was cut off"
                ),
            )),
        }
    }
}

type Answered = Result<hyper::Response<BoxBody<Bytes, Infallible>>, Infallible>;

/// rmcp's service, as a connection calls it with a body read here.
trait Rmcp:
    hyper::service::Service<
        hyper::Request<Full<Bytes>>,
        Response = hyper::Response<BoxBody<Bytes, Infallible>>,
        Error = Infallible,
    >
{
}

impl<S> Rmcp for S where
    S: hyper::service::Service<
            hyper::Request<Full<Bytes>>,
            Response = hyper::Response<BoxBody<Bytes, Infallible>>,
            Error = Infallible,
        >
{
}

/// An answer of `status` with a JSON-RPC error under `id` that says `why`.
fn refused(
    status: hyper::StatusCode,
    id: Value,
    why: &str,
) -> hyper::Response<BoxBody<Bytes, Infallible>> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32000, "message": why },
    });
    let mut response = hyper::Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// The longest body of a request that may open a session (an
/// `initialize` is a few hundred bytes).
const OPENING_BODY: usize = 1 << 20;

/// The longest body of any other request: rmcp's own limit.
const REQUEST_BODY: usize = 4 << 20;

/// The most the server lets rmcp read requests into at once, as trees
/// ([`wasmwire::json::tree_bytes`]): room for a few dozen requests of
/// the longest code at once, and for no request of 4 MiB of tiny objects.
const READ_TREES: usize = 256 << 20;

/// Serves one HTTP connection, holding its place among `max_connections`
/// until it ends. Each request carries a [`Slot`] for the places of the
/// answer it carries, given back once its response has left on the
/// connection ([`crate::held`]). A request that may open a session goes
/// through [`Opening`]. A client that does not send a request's headers
/// within the header timeout (an idle kept-alive connection included) is
/// disconnected.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    service: StreamableHttpService<CodeMode, LocalSessionManager>,
    opening: Arc<Opening>,
    _place: tokio::sync::OwnedSemaphorePermit,
    closing: wasmwire::CancellationToken,
) {
    let header_timeout = opening.header_timeout;
    let stream = Counted::new(stream);
    let count = stream.count();
    let service = hyper_util::service::TowerToHyperService::new(service);
    let held = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        let slot = Slot::default();
        request.extensions_mut().insert(slot.clone());
        let opening = opening.clone();
        let service = service.clone();
        let count = count.clone();
        async move {
            let response = if Opening::opens(&request) {
                opening.answer(request, &service).await?
            } else if request.method() == hyper::Method::POST {
                opening.read_then_answer(request, &service).await?
            } else {
                hyper::service::Service::call(&service, request).await?
            };
            Ok::<_, Infallible>(response.map(|body| HeldBody::new(body, slot, count)))
        }
    });
    let io = hyper_util::rt::TokioIo::new(stream);
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(io, held);
    tokio::pin!(connection);
    tokio::select! {
        _ = &mut connection => return,
        () = closing.cancelled() => connection.as_mut().graceful_shutdown(),
    }
    let _ = connection.await;
}

/// SIGINT, SIGTERM or another signal that asks the process to stop
/// ([`wasmwire::containment::ENDING_SIGNALS`]; never, when the handlers
/// cannot be installed). Left to its default, SIGHUP or SIGQUIT ended the
/// server without cancelling a running execution or stopping the upstream
/// servers.
/// The handlers are in place when this returns, before it is awaited.
pub(crate) fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let streams = wasmwire::containment::ENDING_SIGNALS
        .iter()
        .map(|&number| signal(SignalKind::from_raw(number)))
        .collect::<Result<Vec<_>, _>>();
    async move {
        let Ok(mut streams) = streams else {
            return std::future::pending().await;
        };
        let received = streams.iter_mut().map(|stream| Box::pin(stream.recv()));
        futures::future::select_all(received).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_patterns_wasmwire_refuses_are_taken_out_of_a_schema() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {
                "user": {"type": "string", "pattern": "^(?!admin)[a-z]+$"},
                "tags": {"type": "array", "items": {"type": "string", "pattern": "(a)\\1"}},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "pattern": {"type": "string"},
                "mode": {"const": {"pattern": "(?=data)"}},
            },
        });
        assert_eq!(without_refused_patterns(&mut schema), 2);
        let props = &schema["properties"];
        assert_eq!(props["user"], serde_json::json!({"type": "string"}));
        assert_eq!(
            props["tags"]["items"],
            serde_json::json!({"type": "string"})
        );
        assert_eq!(props["code"]["pattern"], "^[A-Z]{3}$");
        assert_eq!(props["pattern"], serde_json::json!({"type": "string"}));
        assert_eq!(
            props["mode"]["const"]["pattern"], "(?=data)",
            "data, not a schema"
        );
        assert!(Tools::new().register(noop("t").params(schema)).is_ok());
    }

    /// HUP or QUIT ended the server with its default action, nothing
    /// cancelled and the upstream servers left to their pipes closing.
    #[tokio::test]
    async fn each_signal_that_asks_a_process_to_stop_stops_the_server() {
        for &number in wasmwire::containment::ENDING_SIGNALS {
            let stopped = stop_signal();
            let sent = std::process::Command::new("kill")
                .arg(format!("-{number}"))
                .arg(std::process::id().to_string())
                .status()
                .expect("kill runs");
            assert!(sent.success(), "kill -{number}");
            tokio::time::timeout(Duration::from_secs(30), stopped)
                .await
                .unwrap_or_else(|_| panic!("signal {number} did not stop the server"));
        }
    }

    #[test]
    fn only_a_want_of_resources_makes_the_listener_rest() {
        use std::io::{Error, ErrorKind};
        assert!(lost_connection(&Error::from(ErrorKind::ConnectionAborted)));
        assert!(lost_connection(&Error::from(ErrorKind::ConnectionReset)));
        // EMFILE, ENFILE, ENOBUFS, ENOMEM on Linux.
        for errno in [24, 23, 105, 12] {
            assert!(
                !lost_connection(&Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
    }
}
