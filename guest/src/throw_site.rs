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
//!
//! QuickJS keeps in that same place the stack of the first `Error` *made*
//! since, thrown or not, and every tool call makes one for its site: so a
//! call made before a `throw "boom"` in the same job took the throw's
//! place. The vendored QuickJS's `JS_CaptureSite` now keeps a site's
//! frames and writes no stack (guest/rquickjs-sys/PATCHES.md), except when
//! the program set `Error.prepareStackTrace`: then the error and its stack
//! are made at once, and noted. A call site is therefore taken
//! [`unnoted`]. A backtrace already waiting when a call is made (an
//! earlier throw of the job that escaped into a promise) is set aside in
//! the session and still comes first.
//! One case reads differently from QuickJS's own rule: such an escaped
//! throw, then a call, then a `catch` clause, then the uncaught throw is
//! placed at the escaped throw (QuickJS's `catch` would have cleared it,
//! and the copy set aside cannot be).

use rquickjs::{Ctx, Value};

use crate::session::Session;

/// A backtrace [`take`]n: one set aside by a call site, else QuickJS's own,
/// left a JS string until its text is wanted.
pub(crate) struct Taken<'js> {
    set_aside: Option<String>,
    pending: Option<rquickjs::String<'js>>,
}

impl Taken<'_> {
    /// The backtrace as text (`None` if there is none, or it is not
    /// well-formed).
    pub(crate) fn text(self) -> Option<String> {
        self.set_aside
            .or_else(|| self.pending.and_then(|s| s.to_string().ok()))
    }
}

/// Takes the backtrace of the first throw since the last take (or
/// `catch`), and clears it so that the next throw gets one of its own.
/// The event loop takes one after every job; its text is made only when
/// the program was rejected.
pub(crate) fn take<'js>(ctx: &Ctx<'js>, session: &Session<'js>) -> Taken<'js> {
    Taken {
        set_aside: session.take_set_aside_backtrace(),
        pending: take_pending(ctx),
    }
}

/// Runs `capture`, which makes an `Error` (and with it a stack), so that
/// its stack is not taken for where the job's next throw was.
pub(crate) fn unnoted<'js, R>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    capture: impl FnOnce() -> R,
) -> R {
    let waiting = take_pending(ctx);
    let made = capture();
    drop(take_pending(ctx));
    if let Some(text) = waiting.and_then(|s| s.to_string().ok()) {
        session.set_aside_backtrace(text);
    }
    made
}

/// Takes QuickJS's own backtrace of the first exception thrown (or error
/// made) since the last `catch` or take, leaving none.
fn take_pending<'js>(ctx: &Ctx<'js>) -> Option<rquickjs::String<'js>> {
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
