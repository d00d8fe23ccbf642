//! `ToolError`: how a failed call reaches the program.
//!
//! A ToolError carries `name`, `kind`, `retryable`, `message` and `tool`, so a
//! program can branch on the failure class (`if (e.retryable) ...`). Its
//! stack is the call site, made when the program called the tool, so an
//! uncaught one still points at the line that called.
//!
//! The evaluator remembers every ToolError it hands out. An uncaught
//! rejection ends the execution with the ToolError's own kind only when it is
//! one of those objects: a program cannot claim a class by building a
//! look-alike or by editing `kind` (which is read-only anyway).

use rquickjs::object::Property;
use rquickjs::{Ctx, Object, Value};
use wire::FailureKind;

use crate::calls::Call;
use crate::intrinsics::site_error;
use crate::session::Session;

/// Fails `call` with a ToolError of class `kind`.
pub(crate) fn reject<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    call: Call<'js>,
    kind: FailureKind,
    message: &str,
) {
    call.done(session);
    let error = match site_error(ctx, &call.site) {
        Ok(error) => error,
        Err(e) => {
            // Out of memory for the error object: the call still fails,
            // with whatever QuickJS threw.
            let thrown = caught(ctx, e);
            call.promise.reject(thrown);
            return;
        }
    };
    let dressed = match session.intrinsics() {
        Some(intrinsics) => intrinsics.as_tool_error(&error),
        None => Ok(()),
    };
    if let Err(e) = dressed.and_then(|()| dress(&error, kind, message, &call.tool)) {
        // Out of memory while defining a few properties: the call still
        // fails, with whatever QuickJS threw.
        let thrown = caught(ctx, e);
        call.promise.reject(thrown);
        return;
    }
    if let Err(e) = issue(session, &error, kind, &call.tool) {
        // Out of memory (the mark's few bytes): the call still fails, with
        // whatever QuickJS threw.
        let thrown = caught(ctx, e);
        call.promise.reject(thrown);
        return;
    }
    call.promise.reject(error.into_value());
}

/// Whether an exception is pending on `ctx`: one QuickJS set and did not
/// throw (a reaction it had no memory to queue, in the program's own
/// promises too).
pub(crate) fn exception_pending(ctx: &Ctx<'_>) -> bool {
    // SAFETY: a live context.
    unsafe { rquickjs::qjs::JS_HasException(ctx.as_raw().as_ptr()) }
}

/// Gives the call-site error its ToolError fields.
fn dress(error: &Object<'_>, kind: FailureKind, message: &str, tool: &str) -> rquickjs::Result<()> {
    error.prop(
        "name",
        Property::from("ToolError").writable().configurable(),
    )?;
    error.prop(
        "message",
        Property::from(message)
            .writable()
            .configurable()
            .enumerable(),
    )?;
    error.prop("kind", Property::from(kind.as_str()).enumerable())?;
    error.prop("retryable", Property::from(kind.retryable()).enumerable())?;
    error.prop("tool", Property::from(tool).enumerable())?;
    Ok(())
}

/// The exception behind `error`, or a placeholder when QuickJS has none.
pub(crate) fn caught<'js>(ctx: &Ctx<'js>, error: rquickjs::Error) -> Value<'js> {
    match error {
        rquickjs::Error::Exception => ctx.catch(),
        other => {
            let text = other.to_string();
            rquickjs::String::from_str(ctx.clone(), &text)
                .map(|s| s.into_value())
                .unwrap_or_else(|_| Value::new_undefined(ctx.clone()))
        }
    }
}

/// Records `error` as a ToolError the evaluator issued, in the run's map
/// (made now if this is the run's first).
fn issue<'js>(
    session: &Session<'js>,
    error: &Object<'js>,
    kind: FailureKind,
    tool: &str,
) -> rquickjs::Result<()> {
    let Some(intrinsics) = session.intrinsics() else {
        return Ok(());
    };
    let map = match session.with_calls(|calls| calls.issued()).flatten() {
        Some(map) => map,
        None => {
            let map = intrinsics.issued_map()?;
            session.with_calls(|calls| calls.keep_issued(map.clone()));
            map
        }
    };
    intrinsics.issue(&map, error, kind, tool)
}

/// The class of `value` if it is a ToolError the evaluator issued.
pub(crate) fn issued_kind<'js>(
    session: &Session<'js>,
    value: &Value<'js>,
) -> Option<(FailureKind, String)> {
    let map = session.with_calls(|calls| calls.issued()).flatten()?;
    session.intrinsics()?.issued(&map, value)
}
