//! [`CodeMode`]: the MCP server `wasmwire mcp` runs. Two tools:
//! `run_javascript` runs a program in wasmwire's sandbox whose bindings are
//! the upstream servers' tools, and `describe_tools` gives their TypeScript
//! declarations.
//!
//! Every `run_javascript` call ends in exactly one answer: the program's
//! value, or its failure class and message (with the console either way),
//! unless the client cancelled it, in which case the execution ends
//! `cancelled`, its upstream calls are cancelled, and (as MCP asks) no
//! answer is sent. Limits a call asks for may only be lower than the
//! configured ones: a higher one is refused, never clamped (a program
//! written for 60 s should not silently get 10).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, InitializeResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, SemaphorePermit};
use wasmwire::CancellationToken;
use wasmwire::source::Language;
use wasmwire::{Budget, Execution, FailureKind, Sandbox, SandboxOptions, Tools};

use crate::config::Limits;
use crate::held::Hold;
use crate::progress::Progress;
use crate::upstream::Upstream;
use crate::waiting::Waiting;

/// One upstream tool as the program knows it.
#[derive(Debug, Clone)]
pub struct Binding {
    /// Its name in the program (docs/mcp.md, the naming rule).
    pub js_name: String,
    /// The upstream server's name.
    pub server: String,
    /// The tool's name upstream.
    pub tool: String,
}

/// The MCP server: cheap to clone; every clone shares the sandbox, the
/// tools, the upstream connections and the places of running executions,
/// and its client's places for unread answers (each streamable-HTTP
/// session gets places of its own).
#[derive(Debug, Clone)]
pub struct CodeMode {
    inner: Arc<Inner>,
    unread: Arc<Unread>,
}

/// The places of one client's answers not yet out ([`crate::held`]):
/// [`Limits::max_running`] for run_javascript's answers, as many for
/// describe_tools's (which may be long too), so that a client that does
/// not read makes the server hold at most that many answers, its later
/// calls waiting, before they start, for one to be read.
#[derive(Debug)]
struct Unread {
    runs: Arc<Semaphore>,
    descriptions: Arc<Semaphore>,
}

impl Unread {
    fn new(limits: &Limits) -> Arc<Self> {
        Arc::new(Unread {
            runs: Arc::new(Semaphore::new(limits.max_running)),
            descriptions: Arc::new(Semaphore::new(limits.max_running)),
        })
    }
}

/// A call's places, taken before it starts ([`CodeMode::admit`]): one of
/// its client's for its answer, held until the answer is out; a run's
/// place among the executions running, given back when it ends.
type Admitted<'a> = (Hold, Option<SemaphorePermit<'a>>);

#[derive(Debug)]
struct Inner {
    sandbox: Sandbox,
    tools: Tools,
    bindings: Vec<Binding>,
    upstreams: Vec<Arc<Upstream>>,
    limits: Limits,
    /// A place per execution running ([`Limits::max_running`]), of any
    /// client.
    running: Semaphore,
    /// The calls waiting for a place ([`Limits::max_waiting`]), of any
    /// client.
    waiting: Waiting,
    /// Cancelled when the server stops (stdin closed, a signal): a call
    /// cancelled then is the server's doing, not its client's.
    stopping: CancellationToken,
    /// run_javascript and describe_tools, as listed.
    listed: Vec<McpTool>,
    /// What the server holds for one execution at most
    /// ([`SandboxOptions::max_held`]); an answer's value too.
    max_held: usize,
}

impl CodeMode {
    /// The server over `tools` (the upstream tools, bound), each execution
    /// held to `limits`.
    pub fn new(
        sandbox: Sandbox,
        options: SandboxOptions,
        tools: Tools,
        bindings: Vec<Binding>,
        upstreams: Vec<Arc<Upstream>>,
        limits: Limits,
    ) -> Self {
        let listed = vec![
            run_javascript_tool(&tools, &bindings, &limits, &options),
            describe_tools_tool(),
        ];
        CodeMode {
            unread: Unread::new(&limits),
            inner: Arc::new(Inner {
                sandbox,
                tools,
                bindings,
                upstreams,
                running: Semaphore::new(limits.max_running),
                waiting: Waiting::new(limits.max_waiting, limits.max_waiting_bytes),
                stopping: CancellationToken::new(),
                limits,
                listed,
                max_held: options.max_held,
            }),
        }
    }

    /// The same server for another client: places of its own for its
    /// unread answers.
    pub(crate) fn for_client(&self) -> Self {
        CodeMode {
            inner: self.inner.clone(),
            unread: Unread::new(&self.inner.limits),
        }
    }

    /// The ceilings it holds every execution and client to.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The upstream tools, as bound.
    pub fn bindings(&self) -> &[Binding] {
        &self.inner.bindings
    }

    /// The server is stopping: every run is cancelled, every call waiting
    /// for a place is answered that it was not run, and so is every call
    /// that comes after.
    pub(crate) fn stopping(&self) {
        self.inner.stopping.cancel();
    }

    /// The places a call needs before it starts: one of `answers` (its
    /// client's, for its answer), and with `run` a place among the
    /// executions running. Taken at once when free; otherwise the call
    /// waits for them in order, holding a ticket among the waiting calls
    /// ([`crate::waiting`]) for `bytes` (what its arguments hold) and its
    /// `_meta`, and is refused at once, "server busy", when there is none.
    /// A call cancelled by its client, by the server stopping, or whose
    /// HTTP response stream is gone (its connection closed) stops waiting
    /// and never runs. None of this counts against its wall clock.
    async fn admit(
        &self,
        answers: &Arc<Semaphore>,
        run: bool,
        bytes: usize,
        context: &RequestContext<RoleServer>,
    ) -> Result<Admitted<'_>, CallToolResult> {
        if self.inner.stopping.is_cancelled() {
            return Err(refused(STOPPING));
        }
        let mut answer = None;
        if let Ok(place) = answers.clone().try_acquire_owned() {
            if !run {
                return Ok((Hold::new(place, context), None));
            }
            if let Ok(running) = self.inner.running.try_acquire() {
                return Ok((Hold::new(place, context), Some(running)));
            }
            answer = Some(Hold::new(place, context));
        }
        let meta = crate::waiting::json_len(&context.meta);
        let _ticket = self
            .inner
            .waiting
            .enter(bytes.saturating_add(meta))
            .map_err(|why| failed(FailureKind::Transient, &why))?;
        let gone = crate::held::stream_gone(context);
        let stop = async {
            let went = async {
                match &gone {
                    Some(gone) => gone.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = self.inner.stopping.cancelled() => STOPPING,
                () = context.ct.cancelled() => "cancelled while waiting for a place to run; not run",
                () = went => "its HTTP response stream closed (the connection went) while it waited \
                              for a place to run; not run: send it again",
            }
        };
        // One line on stderr for a call that stops waiting, as for a run
        // that ends (not for a refusal: a client could send those without
        // end).
        let stop = async {
            let why = stop.await;
            say!("a call (id {}) was not run: {why}", context.id);
            why
        };
        tokio::pin!(stop);
        let answer = match answer {
            Some(answer) => answer,
            None => tokio::select! {
                place = answers.clone().acquire_owned() => match place {
                    Ok(place) => Hold::new(place, context),
                    // The semaphores are never closed; were one, its calls
                    // would be refused, never run unheld.
                    Err(_) => return Err(refused("no place for its answer")),
                },
                why = &mut stop => return Err(refused(why)),
            },
        };
        if !run {
            return Ok((answer, None));
        }
        // The stop first: a place is given back when its run ends, and the
        // server stopping ends every run at once, so a call waiting then
        // could take a place its stop had already refused it (and run, to
        // be cancelled, where it was to be told it was not run).
        tokio::select! {
            biased;
            why = &mut stop => Err(refused(why)),
            running = self.inner.running.acquire() => match running {
                Ok(_) if self.inner.stopping.is_cancelled() => {
                    say!("a call (id {}) was not run: {STOPPING}", context.id);
                    Err(refused(STOPPING))
                }
                Ok(running) => Ok((answer, Some(running))),
                Err(_) => Err(refused("no place to run")),
            },
        }
    }

    /// Closes every upstream connection.
    pub async fn close(&self) {
        // All at once: each may wait a while for its process to exit.
        futures::future::join_all(self.inner.upstreams.iter().map(|u| u.close())).await;
    }

    /// `run_javascript`.
    async fn run_javascript(
        &self,
        args: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let request = match RunRequest::read(args, &self.inner.limits) {
            Ok(request) => request,
            Err(why) => return refused(&why),
        };
        // A run takes one of its client's places for unread answers, held
        // until its answer is out (`held`), and past `max_running` of them
        // waits for an answer to be read; then, past `max_running`
        // executions of any client, it waits its turn (in order). Both
        // before its wall clock starts, and bounded (`waiting`).
        let (_held, running) = match self
            .admit(&self.unread.runs, true, request.code.len(), context)
            .await
        {
            Ok(admitted) => admitted,
            Err(refusal) => return refusal,
        };
        // Console lines go out as progress notifications as they happen,
        // when the client asked for progress: gathered, a notification per
        // batch (`progress`), the sink never blocking.
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| Progress::start(context.peer.clone(), token));
        let mut execution = Execution::new(request.code).budget(request.budget);
        execution.language = Some(request.language);
        if let Some(progress) = &progress {
            execution = execution.console_sink(progress.sink());
        }
        // Cancelled by its client, or by the server stopping (which, over
        // HTTP, is no cancel of the call's own: its answer must still go).
        let cancel = self.inner.stopping.child_token();
        let ran = {
            let run = self
                .inner
                .sandbox
                .run(&execution, &self.inner.tools, cancel.clone());
            tokio::pin!(run);
            tokio::select! {
                ran = &mut run => ran,
                () = context.ct.cancelled() => {
                    cancel.cancel();
                    run.await
                }
            }
        };
        drop(execution);
        // The execution is over: its place goes to the next run now, not
        // once its lines are out (a flood of them held it 50 s, and every
        // run of every client waited behind it).
        drop(running);
        if let Some(progress) = progress {
            // The lines go out before the answer, but the answer waits for
            // them only so long: the answer's console has every one.
            let unsent = progress.finish(crate::progress::DRAIN).await;
            if unsent > 0 {
                say!(
                    "run_javascript (id {}): {unsent} console lines not sent as progress within {:?} of its end (its answer's console has them)",
                    context.id,
                    crate::progress::DRAIN
                );
            }
        }
        let outcome = match ran {
            Ok(outcome) => outcome,
            Err(e) => return refused(&format!("the execution could not start: {e}")),
        };
        let mut answer = json!({
            "ok": outcome.result.ok,
            "console": outcome.console,
            "calls": outcome.result.calls,
            "bytes": outcome.result.bytes,
            "elapsed_ms": outcome.elapsed.as_secs_f64() * 1000.0,
        });
        let (elapsed, calls) = (outcome.elapsed, outcome.result.calls);
        let (value_len, console_len) = (outcome.result.value.len(), outcome.console.len());
        let text = &outcome.result.value;
        // The value goes out as structured content, a tree, which can take
        // fifty times its text: read only when that fits what the server
        // holds for one execution.
        let wasmwire::json::Shape {
            depth,
            tree_bytes: tree,
        } = wasmwire::json::shape(text);
        let value = match outcome.result.ok {
            true if depth > MAX_VALUE_DEPTH => Err((
                FailureKind::Invalid,
                format!(
                    "the program's value nests {depth} levels deep; an MCP answer carries at most {MAX_VALUE_DEPTH} (return JSON.stringify(value) to send it as text)"
                ),
            )),
            true if tree > self.inner.max_held => Err((
                FailureKind::Limit,
                format!(
                    "the program's value is {} bytes of JSON, which would take about {tree} bytes of the server's memory as an answer's structured content, more than the {} it holds for one execution (return less, or JSON.stringify(value) to send it as text)",
                    text.len(),
                    self.inner.max_held
                ),
            )),
            _ => Ok(outcome.into_value()),
        };
        let ok = match value {
            Err((kind, why)) => {
                answer["kind"] = json!(kind.as_str());
                answer["error"] = json!(why);
                false
            }
            Ok(Ok(value)) => {
                answer["value"] = value;
                true
            }
            Ok(Err(failure)) => {
                answer["kind"] = json!(failure.kind.map_or("protocol_violation", |k| k.as_str()));
                answer["error"] = json!(failure.message);
                false
            }
        };
        // A Result whose value cannot be read (nested deeper than the parent
        // reads) is no success, though the child's Result says ok.
        answer["ok"] = json!(ok);
        let mut result = CallToolResult::structured(answer);
        result.is_error = Some(!ok);
        // A value alone can make an answer longer than a client reads.
        if value_len + console_len > MAX_ANSWER_BYTES / 4 {
            // The client's id goes in the envelope too (it may be long).
            let id = serde_json::to_vec(&context.id).map_or(0, |id| id.len());
            let len = serde_json::to_vec(&result)
                .map_or(usize::MAX, |line| line.len().saturating_add(id));
            if len > MAX_ANSWER_BYTES {
                let mut answer = result.structured_content.take().unwrap_or_default();
                if let Some(fields) = answer.as_object_mut() {
                    fields.remove("value");
                }
                answer["ok"] = json!(false);
                answer["kind"] = json!(FailureKind::Limit.as_str());
                answer["error"] = json!(format!(
                    "the program's value of {value_len} bytes makes an answer of {len} bytes, past the \
                     {MAX_ANSWER_BYTES} an MCP answer may be (the value goes twice: as structured \
                     content and as text); return less, or a part per run"
                ));
                result = CallToolResult::structured(answer);
                result.is_error = Some(true);
            }
        }
        // Logged as answered: an answer too long for the client ends
        // `limit`, whatever the run did.
        say!(
            "run_javascript ended {} in {:?} ({} upstream calls){}",
            result
                .structured_content
                .as_ref()
                .and_then(|answer| answer.get("kind"))
                .and_then(Value::as_str)
                .unwrap_or("ok"),
            elapsed,
            calls,
            match (cancel.is_cancelled(), self.inner.stopping.is_cancelled()) {
                (true, true) => ", cancelled: the server is stopping",
                (true, false) => ", cancelled by the client",
                _ => "",
            },
        );
        result
    }

    /// `describe_tools`.
    fn describe_tools(
        &self,
        args: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let result = self.declarations(args);
        // Upstream descriptions are as long as their servers make them:
        // three of 6 MB made an answer of 18 MB, which a client reading
        // 16 MiB lines (rmcp's) drops, and then waits for ever.
        let text_len = result
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.len())
            .sum::<usize>();
        // JSON escapes a character in at most 6 bytes.
        if text_len.saturating_mul(6) <= MAX_ANSWER_BYTES {
            return result;
        }
        let id = serde_json::to_vec(&context.id).map_or(0, |id| id.len());
        let len =
            serde_json::to_vec(&result).map_or(usize::MAX, |line| line.len().saturating_add(id));
        if len <= MAX_ANSWER_BYTES {
            return result;
        }
        let mut names: Vec<String> = self
            .names()
            .iter()
            .take(SUMMARY_NAMES)
            .map(|n| crate::naming::shown(n))
            .collect();
        if self.inner.bindings.len() > SUMMARY_NAMES {
            names.push("...".into());
        }
        failed(
            FailureKind::Limit,
            &format!(
                "the declarations asked for make an answer of {len} bytes, past the \
                 {MAX_ANSWER_BYTES} an MCP answer may be (the upstream servers' descriptions are \
                 long): ask for fewer, naming them in `tools` ({} tools in all: {})",
                self.inner.bindings.len(),
                names.join(", ")
            ),
        )
    }

    /// `describe_tools`'s answer, of any length.
    fn declarations(&self, args: JsonObject) -> CallToolResult {
        let patterns: Option<Vec<String>> = match args.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let names: Option<Vec<String>> = items
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect();
                match names {
                    Some(names) => Some(names),
                    None => return refused("tools: a list of names (strings)"),
                }
            }
            Some(_) => return refused("tools: a list of names (strings)"),
        };
        for key in args.keys() {
            if key != "tools" {
                return refused(&format!(
                    "unknown argument {key:?}: describe_tools takes only `tools`"
                ));
            }
        }
        let Some(patterns) = patterns else {
            return CallToolResult::success(vec![ContentBlock::text(
                self.inner.tools.typescript(),
            )]);
        };
        let mut chosen = Tools::new();
        let mut unmatched = Vec::new();
        for pattern in &patterns {
            let mut any = false;
            for b in &self.inner.bindings {
                if crate::config::glob(pattern, &b.js_name)
                    || crate::config::glob(pattern, &format!("{}.{}", b.server, b.tool))
                {
                    any = true;
                    if chosen.get(&b.js_name).is_none()
                        && let Some(tool) = self.inner.tools.get(&b.js_name)
                    {
                        // Registered once already, so it registers again.
                        let _ = chosen.register(tool.clone());
                    }
                }
            }
            if !any {
                unmatched.push(pattern.as_str());
            }
        }
        let mut text = chosen.typescript();
        if !unmatched.is_empty() {
            text = format!(
                "// No tool matched: {}. The tools are: {}.\n\n{text}",
                unmatched.join(", "),
                self.names().join(", ")
            );
        }
        CallToolResult::success(vec![ContentBlock::text(text)])
    }

    fn names(&self) -> Vec<&str> {
        self.inner
            .bindings
            .iter()
            .map(|b| b.js_name.as_str())
            .collect()
    }
}

/// A refused call: `isError`, kind `invalid`, and why.
fn refused(why: &str) -> CallToolResult {
    failed(FailureKind::Invalid, why)
}

/// A call that did not run: `isError`, `kind`, and why.
fn failed(kind: FailureKind, why: &str) -> CallToolResult {
    let mut result = CallToolResult::structured(json!({
        "ok": false,
        "kind": kind.as_str(),
        "error": why,
        "console": "",
        "calls": 0,
        "bytes": 0,
    }));
    result.is_error = Some(true);
    result
}

/// `run_javascript`'s arguments, checked against the ceilings.
#[derive(Debug)]
struct RunRequest {
    code: String,
    language: Language,
    budget: Budget,
}

impl RunRequest {
    fn read(mut args: JsonObject, limits: &Limits) -> Result<RunRequest, String> {
        let code = match args.remove("code") {
            Some(Value::String(code)) => code,
            Some(_) => return Err("code: the program, as a string".into()),
            None => return Err("code is required: the program to run".into()),
        };
        let language = match args.remove("language") {
            None | Some(Value::Null) => Language::JavaScript,
            Some(Value::String(l)) if l == "js" || l == "javascript" => Language::JavaScript,
            Some(Value::String(l)) if l == "ts" || l == "typescript" => Language::TypeScript,
            Some(other) => return Err(format!("language: \"js\" or \"ts\", not {other}")),
        };
        let mut budget = limits.budget;
        match args.remove("limits") {
            None | Some(Value::Null) => {}
            Some(Value::Object(asked)) => {
                for (key, value) in asked {
                    let n = value.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                        format!("limits.{key}: a whole number above 0, not {value}")
                    })?;
                    // Compared whole: a wall clock of 0.5 ms read in
                    // whole milliseconds was 0, "none", and any client
                    // could ask for an hour.
                    let (over, ceiling) = match key.as_str() {
                        "wall_clock_ms" => {
                            let ceiling = limits.budget.wall_clock;
                            let over = !ceiling.is_zero() && Duration::from_millis(n) > ceiling;
                            let said = match ceiling.subsec_nanos() % 1_000_000 {
                                0 => format!("{}ms", ceiling.as_millis()),
                                _ => format!("{ceiling:?}"),
                            };
                            (over, said)
                        }
                        "max_calls" => over(n, limits.budget.max_calls, ""),
                        "max_bytes" => over(n, limits.budget.max_bytes, " bytes"),
                        "max_memory_bytes" => over(n, limits.budget.max_memory, " bytes"),
                        _ => {
                            return Err(format!(
                                "limits.{key}: unknown; the limits are wall_clock_ms, max_calls, max_bytes and max_memory_bytes"
                            ));
                        }
                    };
                    if over {
                        let unit = match key.as_str() {
                            "wall_clock_ms" => "ms",
                            "max_calls" => "",
                            _ => " bytes",
                        };
                        return Err(format!(
                            "limits.{key}: {n}{unit} is more than this server allows ({ceiling}); ask for at most that"
                        ));
                    }
                    match key.as_str() {
                        "wall_clock_ms" => budget.wall_clock = Duration::from_millis(n),
                        "max_calls" => budget.max_calls = n,
                        "max_bytes" => budget.max_bytes = n,
                        _ => budget.max_memory = n,
                    }
                }
            }
            Some(other) => return Err(format!("limits: an object, not {other}")),
        }
        if let Some(key) = args.keys().next() {
            return Err(format!(
                "unknown argument {key:?}: run_javascript takes code, language and limits"
            ));
        }
        Ok(RunRequest {
            code,
            language,
            budget,
        })
    }
}

/// Whether `n` is above `ceiling` (0: none), and the ceiling as said.
fn over(n: u64, ceiling: u64, unit: &str) -> (bool, String) {
    (ceiling != 0 && n > ceiling, format!("{ceiling}{unit}"))
}

/// The most names `run_javascript`'s description lists.
const SUMMARY_NAMES: usize = 40;

/// Why a call was not run: the server is stopping.
const STOPPING: &str =
    "the server is stopping (its client closed stdin, or it was signalled); not run";

/// The deepest value (or upstream call's args) a message carries, its own
/// envelope's three levels aside: the depth most JSON readers take
/// (serde_json's limit; the official Python SDK refuses a message nested
/// past 201 levels, and a client that cannot read an answer waits for it
/// until it gives up).
pub(crate) const MAX_VALUE_DEPTH: usize = 128;

/// The longest answer `run_javascript` gives: one line of JSON-RPC, which
/// rmcp (and the official SDKs) read only up to 16 MiB and otherwise drop,
/// the client then waiting for ever; 64 KiB is left for the envelope.
pub(crate) const MAX_ANSWER_BYTES: usize =
    rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH - (64 << 10);

fn run_javascript_tool(
    tools: &Tools,
    bindings: &[Binding],
    limits: &Limits,
    options: &SandboxOptions,
) -> McpTool {
    // The sandbox's rules and limits, as wasmwire writes them for a model,
    // without its declarations: those are what describe_tools is for.
    let prompt = Tools::new().prompt(&limits.budget, options);
    let rules = prompt
        .split("\nThe tools, as TypeScript declarations:")
        .next()
        .unwrap_or_default();
    let mut servers: Vec<&str> = bindings.iter().map(|b| b.server.as_str()).collect();
    servers.dedup();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name()).take(SUMMARY_NAMES).collect();
    if tools.len() > SUMMARY_NAMES {
        names.push("...");
    }
    let description = format!(
        "Run a JavaScript (or TypeScript) program in a sandbox where the tools of other MCP \
         servers ({servers}) are async functions. Use it to make many tool calls, or to filter \
         and join their results, in one step: the program's value is returned, with its console \
         output. Tools: {names} ({count} in all). Call describe_tools first for their TypeScript \
         declarations (argument and result types): every tool takes its arguments as one object, \
         e.g. `await {example}({{...}})`.\n\n{rules}",
        servers = if servers.is_empty() {
            "none configured".to_string()
        } else {
            servers.join(", ")
        },
        names = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        },
        count = tools.len(),
        example = tools.iter().next().map_or("some_tool", |t| t.name()),
    );
    let input = json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "The program: the body of an async function (top-level await and return work; a last expression is the value)."
            },
            "language": {
                "type": "string",
                "enum": ["js", "ts"],
                "description": "js (the default) or ts: TypeScript has its types stripped before it runs."
            },
            "limits": {
                "type": "object",
                "description": "Lower limits for this run; none may be above the server's own.",
                "properties": {
                    "wall_clock_ms": {"type": "integer", "minimum": 1},
                    "max_calls": {"type": "integer", "minimum": 1},
                    "max_bytes": {"type": "integer", "minimum": 1},
                    "max_memory_bytes": {"type": "integer", "minimum": 1}
                },
                "additionalProperties": false
            }
        },
        "required": ["code"],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": {
            "ok": {"type": "boolean", "description": "Whether the program finished with a value."},
            "value": {"description": "What the program returned (null for nothing)."},
            "kind": {"type": "string", "description": "How it failed: a wasmwire failure class (limit, invalid, transient, ...)."},
            "error": {"type": "string", "description": "Why it failed, with the program's line and column where known."},
            "console": {"type": "string", "description": "The program's console output."},
            "calls": {"type": "integer", "description": "Upstream tool calls made."},
            "bytes": {"type": "integer", "description": "Bytes of tool values the program received."},
            "elapsed_ms": {"type": "number"}
        },
        "required": ["ok", "console", "calls", "bytes"]
    });
    McpTool::new("run_javascript", description, object(input))
        .with_raw_output_schema(Arc::new(object(output)))
}

fn describe_tools_tool() -> McpTool {
    let input = json!({
        "type": "object",
        "properties": {
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Which tools: names as the program calls them (files_read_file), or upstream names (files.read_file); * matches any run of characters. All of them when left out."
            }
        },
        "additionalProperties": false
    });
    McpTool::new(
        "describe_tools",
        "The TypeScript declarations of the tools run_javascript's programs can call (all of them, or those named), with ToolError, console and host.call.",
        object(input),
    )
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

impl ServerHandler for CodeMode {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "wasmwire-mcp",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "run_javascript runs a program that calls other MCP servers' tools as async \
                 functions; describe_tools gives their TypeScript declarations.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.listed.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.inner.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "run_javascript" => self.run_javascript(args, &context).await,
            "describe_tools" => {
                // Its answer may be long (every declaration): held as a run's.
                let bytes = crate::waiting::json_len(&args);
                match self
                    .admit(&self.unread.descriptions, false, bytes, &context)
                    .await
                {
                    Ok(_held) => self.describe_tools(args, &context),
                    Err(refusal) => refusal,
                }
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "no tool named {other:?}: the tools are run_javascript and describe_tools"
                    ),
                    None,
                ));
            }
        };
        Ok(CallToolResponse::Complete(result))
    }

    /// rmcp hands here every request it could not read as one of MCP's,
    /// and a `tools/call` whose params do not fit (no `name`, `arguments`
    /// that are no object) is one: answered "method not found" by default,
    /// which sends a client looking for the wrong mistake.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unread_request(&request))
    }
}

/// What a request rmcp could not read is answered with: invalid params for
/// a method this server serves, naming what does not fit; method not found
/// for any other.
fn unread_request(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    // Params that read here, as rmcp keeps them, were not read by rmcp as
    // the method's all the same: a member given twice (kept once here).
    const TWICE: &str = "a member is given twice";
    let unfit = match method {
        "tools/call" => Some(
            request
                .params_as::<CallToolRequestParams>()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| match request.params {
                    None => "no params".to_owned(),
                    Some(_) => TWICE.to_owned(),
                }),
        ),
        "tools/list" => Some(
            request
                .params_as::<PaginatedRequestParams>()
                .err()
                .map_or_else(|| TWICE.to_owned(), |e| e.to_string()),
        ),
        _ => None,
    };
    match unfit {
        Some(why) => ErrorData::invalid_params(
            format!(
                "the params of {method} do not fit MCP's schema ({why}); tools/call takes \
                 {{\"name\": \"run_javascript\", \"arguments\": {{\"code\": \"...\"}}}}"
            ),
            None,
        ),
        None => ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("no method {method:?}: this server serves tools/list and tools/call"),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            budget: Budget {
                max_calls: 10,
                ..Budget::default()
            },
            call_timeout: None,
            max_running: 1,
            max_waiting: 1,
            max_waiting_bytes: 1 << 20,
            max_sessions: 1,
            max_connections: 1,
            header_timeout: None,
        }
    }

    fn args(value: Value) -> JsonObject {
        object(value)
    }

    #[test]
    fn lower_limits_are_taken_and_higher_ones_refused() {
        let r = RunRequest::read(
            args(json!({"code": "1", "limits": {"wall_clock_ms": 500, "max_calls": 3, "max_bytes": 100}})),
            &limits(),
        )
        .unwrap();
        assert_eq!(r.budget.wall_clock, Duration::from_millis(500));
        assert_eq!((r.budget.max_calls, r.budget.max_bytes), (3, 100));
        assert_eq!(r.budget.max_memory, Budget::default().max_memory);
        for (asked, why) in [
            (
                json!({"wall_clock_ms": 60_000}),
                "more than this server allows (10000ms)",
            ),
            (json!({"max_calls": 11}), "allows (10)"),
            (
                json!({"max_memory_bytes": 1u64 << 40}),
                "more than this server allows",
            ),
            (json!({"max_calls": 0}), "above 0"),
            (json!({"speed": 1}), "unknown"),
        ] {
            let err = RunRequest::read(args(json!({"code": "1", "limits": asked})), &limits())
                .unwrap_err();
            assert!(err.contains(why), "{asked}: {err}");
        }
        // A ceiling of 0 (none) takes any number.
        let r = RunRequest::read(
            args(json!({"code": "1", "limits": {"max_bytes": 1u64 << 40}})),
            &limits(),
        );
        assert_eq!(r.unwrap().budget.max_bytes, 1 << 40);
    }

    /// A configured wall clock under a millisecond was read in whole
    /// milliseconds, 0, "none": a client could ask for an hour.
    #[test]
    fn a_wall_clock_under_a_millisecond_is_still_a_ceiling() {
        let mut limits = limits();
        limits.budget.wall_clock = Duration::from_micros(500);
        for ms in [1, 3_600_000] {
            let err = RunRequest::read(
                args(json!({"code": "1", "limits": {"wall_clock_ms": ms}})),
                &limits,
            )
            .unwrap_err();
            assert!(
                err.contains(&format!("{ms}ms is more than this server allows (500µs)")),
                "{err}"
            );
        }
        // Left out, the run gets the configured half millisecond.
        let r = RunRequest::read(args(json!({"code": "1"})), &limits).unwrap();
        assert_eq!(r.budget.wall_clock, Duration::from_micros(500));
        // A ceiling of 1.5 ms takes 1 ms, not 2.
        limits.budget.wall_clock = Duration::from_micros(1500);
        let take = |ms: u64| {
            RunRequest::read(
                args(json!({"code": "1", "limits": {"wall_clock_ms": ms}})),
                &limits,
            )
        };
        assert_eq!(take(1).unwrap().budget.wall_clock, Duration::from_millis(1));
        assert!(take(2).is_err());
    }

    #[test]
    fn bad_arguments_are_named() {
        for (a, why) in [
            (json!({}), "code is required"),
            (json!({"code": 1}), "as a string"),
            (json!({"code": "1", "language": "py"}), "language"),
            (
                json!({"code": "1", "extra": true}),
                "unknown argument \"extra\"",
            ),
        ] {
            let err = RunRequest::read(args(a.clone()), &limits()).unwrap_err();
            assert!(err.contains(why), "{a}: {err}");
        }
        let r = RunRequest::read(args(json!({"code": "1", "language": "ts"})), &limits()).unwrap();
        assert_eq!(r.language, Language::TypeScript);
    }

    #[test]
    fn the_description_names_the_tools_and_points_at_describe_tools() {
        let tools = Tools::new();
        let tool = run_javascript_tool(&tools, &[], &limits(), &SandboxOptions::default());
        let d = tool.description.unwrap_or_default();
        assert!(d.contains("describe_tools"), "{d}");
        assert!(d.contains("- wall clock: 10s"), "{d}");
        assert!(!d.contains("declare function"), "{d}");
        // The declarations are not below the rules here: the rules point
        // nowhere (they said "each tool below" once).
        assert!(!d.contains("below"), "{d}");
    }
}
