//! A tool call's promise, which the guest alone settles.
//!
//! `Ctx::promise` (QuickJS's `JS_NewPromiseCapability`) makes the promise
//! and its two resolving functions: two more objects, each with its own
//! data and its `length` and `name` properties, of which a call only ever
//! calls one, once. The vendored QuickJS makes the promise alone
//! (`JS_NewPendingPromise`, guest/rquickjs-sys/PATCHES.md) and settles it
//! as a resolving function would (`JS_SettlePromise`: a thenable is
//! followed, only the first settle counts).

use rquickjs::{Ctx, Value, qjs};

unsafe extern "C" {
    fn JS_NewPendingPromise(ctx: *mut qjs::JSContext) -> qjs::JSValue;
    fn JS_SettlePromise(
        ctx: *mut qjs::JSContext,
        promise: qjs::JSValue,
        value: qjs::JSValue,
        is_reject: bool,
    ) -> std::ffi::c_int;
}

/// A pending promise and the right to settle it.
#[derive(Debug)]
pub(crate) struct Pending<'js> {
    promise: Value<'js>,
}

impl<'js> Pending<'js> {
    /// A new pending promise.
    pub(crate) fn new(ctx: &Ctx<'js>) -> rquickjs::Result<Self> {
        // SAFETY: a live context; the new reference is taken by
        // `Value::from_raw`, and an exception value is never wrapped.
        let promise = unsafe {
            let raw = JS_NewPendingPromise(ctx.as_raw().as_ptr());
            if qjs::JS_IsException(raw) {
                return Err(rquickjs::Error::Exception);
            }
            Value::from_raw(ctx.clone(), raw)
        };
        Ok(Self { promise })
    }

    /// The promise, for the program.
    pub(crate) fn promise(&self) -> Value<'js> {
        self.promise.clone()
    }

    /// Resolves the promise with `value`.
    pub(crate) fn resolve(&self, value: Value<'js>) {
        self.settle(value, false);
    }

    /// Rejects the promise with `reason`.
    pub(crate) fn reject(&self, reason: Value<'js>) {
        self.settle(reason, true);
    }

    fn settle(&self, value: Value<'js>, is_reject: bool) {
        let ctx = self.promise.ctx();
        // SAFETY: a live context, and the promise is one
        // `JS_NewPendingPromise` made; both values are borrowed for the call
        // (QuickJS takes its own references).
        let settled = unsafe {
            JS_SettlePromise(
                ctx.as_raw().as_ptr(),
                self.promise.as_raw(),
                value.as_raw(),
                is_reject,
            )
        };
        // QuickJS fails a settle only for want of memory, and may drop a
        // reaction it has no memory to queue without a word (an
        // out-of-memory error left pending): either way its heap refused,
        // which stopped the run, and what is pending is cleared.
        if settled < 0 || crate::tool_error::exception_pending(ctx) {
            let _ = ctx.catch();
        }
    }
}
