//! Where a thrown value that is not an `Error` was thrown.
//!
//! An `Error` carries its own stack; `throw "boom"` carries nothing, and
//! QuickJS keeps no stack for a string. What it does keep (quickjs-ng's
//! `error_back_trace`, read through `js_std_cmd(2)`, the command
//! quickjs-libc uses to print where such a value was thrown) is the
//! backtrace of the first exception thrown since the last `catch` clause
//! ran, whatever its value. That is tied to a moment, not to a value, so
//! the event loop takes it after every job and keeps it only when that job
//! is the one in which the program's promise was rejected: the backtrace is
//! then of the first throw of that job that no `catch` stopped, which is
//! the throw that rejected the program unless the same job also let
//! another exception escape into a promise first
//! (`(async () => { throw 1 })(); throw "boom";`). A value thrown in one
//! job and passed on by an `await` in another is placed at that `await`,
//! where it entered the program's body.

use rquickjs::{Ctx, Value};

/// Takes QuickJS's backtrace of the first exception thrown since the last
/// `catch` (or since the last take), and clears it so that the next throw
/// gets one of its own. Left a JS string: the event loop takes one after
/// every job, and every tool call's site leaves one (its stack capture is
/// a throw's as far as QuickJS is concerned), while the text is wanted
/// only when the program was rejected ([`text`]).
pub(crate) fn take<'js>(ctx: &Ctx<'js>) -> Option<rquickjs::String<'js>> {
    let mut raw = rquickjs::qjs::JS_UNDEFINED;
    // SAFETY: command 2 (ErrorBackTrace) takes a live context and a pointer
    // to one JSValue; it moves the context's backtrace (a string, null or
    // undefined) into it, leaving undefined behind. The value is then owned
    // here, and `Value::from_raw` takes that ownership.
    let value = unsafe {
        rquickjs::qjs::js_std_cmd(2, ctx.as_raw().as_ptr(), &mut raw as *mut _);
        Value::from_raw(ctx.clone(), raw)
    };
    value.into_string()
}

/// A backtrace [`take`]n, as text (`None` if it is not well-formed).
pub(crate) fn text(backtrace: rquickjs::String<'_>) -> Option<String> {
    backtrace.to_string().ok()
}
