//! What a program gets back from an upstream `tools/call`: the value rule
//! and the error rule (both in docs/mcp.md).
//!
//! **Values.** `structuredContent` when the result has it (any JSON value,
//! `null` included). Otherwise the content: exactly one text block is its
//! text, as a string (never parsed: a tool that answers `123` hands the
//! program `"123"`, as wasmwire's text tools do); no content at all is
//! `null`; anything else (several blocks, images, audio, resources) is the
//! content array as MCP writes it, each block an object with its `type`.
//!
//! **Errors.** A result with `isError: true` fails the call. Its kind is
//! named by the tool when it can be: a `structuredContent.kind`, or a first
//! text line holding `kind: CLASS` (the same convention as the CLI's shell
//! tools; an SDK's prefix such as `Error executing tool x: ` may come
//! before it), naming one of wasmwire's failure classes; otherwise
//! `unknown`. The message is the text content (after that line, if any). A JSON-RPC error from the upstream server
//! maps by its code: invalid params `invalid`, method not found `not_found`,
//! resource not found `not_found`, anything else `unknown`. A server that
//! is down, exits, or closes its connection fails the call `transient` (it
//! is restarted for a later call), and so does an upstream timeout.

use rmcp::ServiceError;
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::Value;
use wasmwire::{FailureKind, ToolFailure};

/// The program's value for a successful result, or the failure of an
/// `isError` one.
pub fn value(result: CallToolResult) -> Result<Value, ToolFailure> {
    if result.is_error == Some(true) {
        return Err(tool_error(&result));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    Ok(content_value(result.content))
}

/// The content, by the value rule.
fn content_value(content: Vec<ContentBlock>) -> Value {
    match content.as_slice() {
        [] => Value::Null,
        [ContentBlock::Text(text)] => Value::String(text.text.clone()),
        _ => serde_json::to_value(&content).unwrap_or(Value::Null),
    }
}

/// The failure an `isError` result stands for.
fn tool_error(result: &CallToolResult) -> ToolFailure {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let mut message = text.join("\n");
    let named = result
        .structured_content
        .as_ref()
        .and_then(|s| s.get("kind"))
        .and_then(Value::as_str)
        .and_then(|k| k.parse::<FailureKind>().ok());
    let kind = match named {
        Some(kind) => kind,
        None => match kind_line(&message) {
            Some((kind, rest)) => {
                message = rest;
                kind
            }
            None => FailureKind::Unknown,
        },
    };
    if message.is_empty() {
        message = match &result.structured_content {
            Some(s) => s.to_string(),
            None => "the tool reported an error and said nothing more".into(),
        };
    }
    ToolFailure::new(kind, message)
}

/// A first line that names a failure class (`kind: not_found`, perhaps
/// after an SDK's own prefix such as `Error executing tool x: `), and the
/// text after that line.
fn kind_line(text: &str) -> Option<(FailureKind, String)> {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let (_, named) = first.split_once("kind:")?;
    let kind = named.trim().parse::<FailureKind>().ok()?;
    Some((kind, rest.to_string()))
}

/// The failure a call that got no result stands for.
pub fn service_error(server: &str, error: &ServiceError) -> ToolFailure {
    let (kind, why) = match error {
        ServiceError::McpError(e) => {
            let kind = match e.code {
                ErrorCode::INVALID_PARAMS => FailureKind::Invalid,
                ErrorCode::METHOD_NOT_FOUND | ErrorCode::RESOURCE_NOT_FOUND => {
                    FailureKind::NotFound
                }
                // An answer too long to read, replaced by the filter.
                ErrorCode(crate::deep::TOO_LONG)
                    if e.message.starts_with(crate::deep::TOO_LONG_WORDS) =>
                {
                    FailureKind::Limit
                }
                _ => FailureKind::Unknown,
            };
            (kind, format!("error {}: {}", e.code.0, e.message))
        }
        ServiceError::TransportSend(sent) if let Some(http) = sent.error.downcast_ref() => {
            http_failure(http)
        }
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => (
            FailureKind::Transient,
            "the connection closed (the server exited?); it is restarted for a later call"
                .to_string(),
        ),
        ServiceError::Timeout { .. } => (FailureKind::Transient, error.to_string()),
        ServiceError::Cancelled { .. } => (FailureKind::Cancelled, error.to_string()),
        _ => (FailureKind::Unknown, error.to_string()),
    };
    ToolFailure::new(kind, format!("upstream server {server:?}: {why}"))
}

/// The failure an upstream's HTTP answer to a call stands for, in rmcp's
/// words: every one read `transient`, "the connection closed", and a model
/// retried a 401 or a body too long as if the server had restarted.
fn http_failure(error: &StreamableHttpError<reqwest::Error>) -> (FailureKind, String) {
    let kind = match error {
        StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_) => {
            FailureKind::Denied
        }
        StreamableHttpError::HttpStatus(status) => status_kind(status.status),
        StreamableHttpError::ResponseBodyTooLarge { .. } => FailureKind::Limit,
        // A status rmcp read no more of than its words: `HTTP 401 ...`.
        StreamableHttpError::UnexpectedServerResponse(text) => text
            .strip_prefix("HTTP ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
            .map_or(FailureKind::Unknown, status_kind),
        StreamableHttpError::Deserialize(_) | StreamableHttpError::UnexpectedContentType(_) => {
            FailureKind::Unknown
        }
        // The connection itself: refused, reset, a stream cut short, a
        // session the server forgot.
        _ => FailureKind::Transient,
    };
    // What rmcp keeps of the answer beside its own few words.
    let more = match error {
        StreamableHttpError::HttpStatus(status) => status
            .retry_after
            .as_deref()
            .map(|after| format!(" (Retry-After: {after})"))
            .unwrap_or_default(),
        StreamableHttpError::AuthRequired(e) => {
            format!(
                " (HTTP 401, WWW-Authenticate: {})",
                e.www_authenticate_header
            )
        }
        StreamableHttpError::InsufficientScope(e) => {
            format!(
                " (HTTP 403, WWW-Authenticate: {})",
                e.www_authenticate_header
            )
        }
        _ => String::new(),
    };
    (kind, format!("over HTTP: {error}{more}"))
}

/// The class of an HTTP status an upstream answered a call with.
fn status_kind(status: u16) -> FailureKind {
    match status {
        401 | 403 => FailureKind::Denied,
        413 => FailureKind::Limit,
        429 => FailureKind::RateLimited,
        500..=599 => FailureKind::Transient,
        _ => FailureKind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(t: &str) -> ContentBlock {
        ContentBlock::text(t)
    }

    #[test]
    fn structured_content_wins_then_one_text_is_a_string() {
        let mut r = CallToolResult::success(vec![text("ignored")]);
        r.structured_content = Some(json!({"n": 1}));
        assert_eq!(value(r).unwrap(), json!({"n": 1}));
        let r = CallToolResult::success(vec![text("123")]);
        assert_eq!(value(r).unwrap(), json!("123"));
        let r = CallToolResult::success(vec![]);
        assert_eq!(value(r).unwrap(), Value::Null);
        let r = CallToolResult::success(vec![text("a"), text("b")]);
        assert_eq!(
            value(r).unwrap(),
            json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
        );
    }

    #[test]
    fn an_error_result_is_unknown_unless_it_names_its_kind() {
        let r = CallToolResult::error(vec![text("boom")]);
        let f = value(r).unwrap_err();
        assert_eq!((f.kind, f.message.as_str()), (FailureKind::Unknown, "boom"));
        let r = CallToolResult::error(vec![text("kind: not_found\nno row 7")]);
        let f = value(r).unwrap_err();
        assert_eq!(
            (f.kind, f.message.as_str()),
            (FailureKind::NotFound, "no row 7")
        );
        let r = CallToolResult::structured_error(json!({"kind": "rate_limited", "after": 3}));
        assert_eq!(value(r).unwrap_err().kind, FailureKind::RateLimited);
        let r = CallToolResult::error(vec![text("Error executing tool t: kind: invalid\nbad id")]);
        let f = value(r).unwrap_err();
        assert_eq!(
            (f.kind, f.message.as_str()),
            (FailureKind::Invalid, "bad id")
        );
        let r = CallToolResult::error(vec![text("kind: bogus\nx")]);
        assert_eq!(value(r).unwrap_err().kind, FailureKind::Unknown);
    }

    #[test]
    fn protocol_errors_map_by_code() {
        let e = ServiceError::McpError(rmcp::ErrorData::invalid_params("bad", None));
        assert_eq!(service_error("s", &e).kind, FailureKind::Invalid);
        let e =
            ServiceError::McpError(rmcp::ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "x", None));
        assert_eq!(service_error("s", &e).kind, FailureKind::NotFound);
        let e = ServiceError::McpError(rmcp::ErrorData::internal_error("x", None));
        assert_eq!(service_error("s", &e).kind, FailureKind::Unknown);
        let f = service_error("s", &ServiceError::TransportClosed);
        assert_eq!(f.kind, FailureKind::Transient);
        assert!(f.message.contains("\"s\""), "{}", f.message);
    }
}
