//! How a run ends, and the one Result each ending becomes.
//!
//! A fulfilled program ends with the JSON text of its value (`undefined`
//! becomes `null`; a value JSON has no text for, or cannot serialise, is
//! kind `invalid`). A rejected one ends with the class of its reason:
//!
//! | reason                                   | kind      |
//! |------------------------------------------|-----------|
//! | a ToolError the evaluator issued         | its own   |
//! | QuickJS's stack overflow, or the guard   | `limit`   |
//! | QuickJS's out-of-memory error, or the    | `limit`   |
//! | `null` it throws when it has no memory   |           |
//! | left for one (under a memory budget)     |           |
//! | QuickJS's cap on one string or buffer    | `limit`   |
//! | anything else (syntax error, exception)  | `invalid` |
//!
//! The message names the error and, when the reason is an error thrown in
//! the program, its line and column in the program.

use rquickjs::{Ctx, Type, Value};
use wire::FailureKind;

use crate::intrinsics::Intrinsics;
use crate::limits::StackGuard;
use crate::program;
use crate::session::Session;
use crate::tool_error;

/// How one run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The program returned; the JSON text of its value.
    Finished(String),
    /// The run failed with a class.
    Failed(FailureKind, String),
    /// The parent broke the protocol on the call channel.
    Protocol(String),
}

impl Ending {
    /// A failure of class `kind`.
    pub(crate) fn failed(kind: FailureKind, message: impl Into<String>) -> Self {
        Ending::Failed(kind, message.into())
    }

    /// The Result message for this ending.
    pub(crate) fn into_result(self, result_id: &str, calls: u64, bytes: u64) -> wire::Result {
        let mut result = match self {
            Ending::Finished(value) => wire::Result::success(result_id, value),
            Ending::Failed(kind, error) => wire::Result::failure(result_id, kind, shorten(error)),
            Ending::Protocol(error) => wire::Result::protocol_error(result_id, shorten(error)),
        };
        result.calls = calls;
        result.bytes = bytes;
        result
    }
}

/// The longest error text a Result carries. An error message is the
/// program's to choose (`throw new Error(hugeString)`), and the Result must
/// still fit in a frame; a person reads the start of it anyway.
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// `error`, cut to [`MAX_ERROR_BYTES`] at a character boundary.
fn shorten(mut error: String) -> String {
    if error.len() <= MAX_ERROR_BYTES {
        return error;
    }
    let total = error.len();
    let mut end = MAX_ERROR_BYTES;
    while !error.is_char_boundary(end) {
        end -= 1;
    }
    error.truncate(end);
    error.push_str(&format!("... ({total} bytes in all)"));
    error
}

/// What the evaluator knows when it judges an ending.
#[derive(Debug)]
pub(crate) struct Judge<'a, 'js> {
    /// The captured intrinsics, to read values without the program's help.
    pub(crate) intrinsics: &'a Intrinsics<'js>,
    /// The run's session, to recognise issued ToolErrors.
    pub(crate) session: &'a Session<'js>,
    /// The program's text, to place errors in it.
    pub(crate) source: &'a str,
    /// Tells whether an interrupt was the stack guard's.
    pub(crate) guard: &'a StackGuard,
    /// Whether QuickJS runs under a memory limit.
    pub(crate) memory_limited: bool,
    /// Tells whether memory ran out inside a promise job.
    pub(crate) out_of_memory: &'a crate::limits::OutOfMemoryWatch,
}

impl<'js> Judge<'_, 'js> {
    /// The ending of a program that returned `value`.
    pub(crate) fn fulfilled(&self, ctx: &Ctx<'js>, value: &Value<'js>) -> Ending {
        if value.is_undefined() {
            return Ending::Finished("null".to_owned());
        }
        match ctx.json_stringify(value.clone()) {
            Ok(Some(json)) => Ending::Finished(self.intrinsics.string(&json)),
            Ok(None) => Ending::failed(
                FailureKind::Invalid,
                format!(
                    "the program returned a {}, which has no JSON form",
                    Intrinsics::type_name(value)
                ),
            ),
            Err(e) => match self.error(ctx, e) {
                Ending::Failed(FailureKind::Invalid, why) => Ending::failed(
                    FailureKind::Invalid,
                    format!("the program's return value cannot be serialised as JSON: {why}"),
                ),
                other => other,
            },
        }
    }

    /// The ending of a program that failed with a Rust-side error (an
    /// exception pending in `ctx`, or something rquickjs refused).
    pub(crate) fn error(&self, ctx: &Ctx<'js>, error: rquickjs::Error) -> Ending {
        match error {
            rquickjs::Error::Exception => self.rejected(&ctx.catch()),
            rquickjs::Error::Allocation => Ending::failed(
                FailureKind::Limit,
                "memory limit: QuickJS could not allocate",
            ),
            other => Ending::failed(FailureKind::Unknown, format!("evaluator error: {other}")),
        }
    }

    /// The ending of a program rejected with `reason` (or a compile error).
    pub(crate) fn rejected(&self, reason: &Value<'js>) -> Ending {
        if let Some((kind, tool)) = tool_error::issued_kind(self.session, reason) {
            let message = self
                .intrinsics
                .property(reason, "message")
                .unwrap_or_default();
            return Ending::failed(
                kind,
                format!("ToolError from {tool}: {message}{}", self.place(reason)),
            );
        }
        if reason.type_of() != Type::Exception {
            if reason.is_null() && self.guard.tripped() {
                return self.stack_limit("the program recursed too deeply");
            }
            if reason.is_null() && self.memory_limited {
                // QuickJS throws null when it cannot allocate even the error
                // object for "out of memory". A program that throws null on
                // purpose under a budget is misread here, and that is the
                // cheaper mistake.
                return Ending::failed(
                    FailureKind::Limit,
                    "memory limit: QuickJS ran out of memory (it threw null, having none left for an error)",
                );
            }
            return Ending::failed(
                FailureKind::Invalid,
                format!("uncaught exception: {}", self.intrinsics.display(reason)),
            );
        }
        let headline = self.intrinsics.error_headline(reason);
        let place = self.place(reason);
        match headline.as_str() {
            "RangeError: Maximum call stack size exceeded" => {
                self.stack_limit(&format!("{headline}{place}"))
            }
            "InternalError: interrupted" if self.guard.tripped() => {
                self.stack_limit(&format!("the program recursed too deeply{place}"))
            }
            "InternalError: out of memory" => Ending::failed(
                FailureKind::Limit,
                format!("memory limit: {headline}{place}"),
            ),
            // QuickJS's caps on one object's size: a string of 2^30
            // characters, an ArrayBuffer over 2^31 - 1 bytes (or a resizable
            // one past its own maximum). A negative count or length has
            // messages of its own, so these mean "too large".
            "InternalError: string too long"
            | "RangeError: invalid string length"
            | "RangeError: invalid array buffer length" => {
                Ending::failed(FailureKind::Limit, format!("size limit: {headline}{place}"))
            }
            _ => Ending::failed(FailureKind::Invalid, format!("{headline}{place}")),
        }
    }

    fn stack_limit(&self, why: &str) -> Ending {
        Ending::failed(FailureKind::Limit, format!("stack limit: {why}"))
    }

    /// ` at line L, column C` when the error's stack passes through the program.
    fn place(&self, error: &Value<'js>) -> String {
        self.intrinsics
            .property(error, "stack")
            .and_then(|stack| program::locate(&stack, self.source))
            .map(|at| format!(" at {at}"))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_error_is_cut_at_a_character_boundary() {
        let error = "é".repeat(MAX_ERROR_BYTES);
        let short = shorten(error.clone());
        assert!(short.len() < MAX_ERROR_BYTES + 64);
        assert!(short.ends_with(&format!("... ({} bytes in all)", error.len())));
        assert_eq!(shorten("short".to_owned()), "short");
    }
}
