//! The set-up scripts, run once before the snapshot, without their text.
//!
//! QuickJS keeps the source text of every function it compiles, for
//! `Function.prototype.toString`. A set-up script's functions that every run
//! keeps (a web class's methods, the console's formatter, `localeCompare`)
//! therefore kept their text in the snapshot's heap, beside the script's
//! own copy in the component's data, and every execution starts with that
//! linear memory, which `max_memory` counts. So each script is compiled,
//! written as bytecode without its source (its line numbers are kept, for
//! stacks), read back and run: its functions print as `[native code]`, as
//! the built-ins they stand beside do.

use std::ffi::CString;

use rquickjs::{Ctx, FromJs, Value, qjs};

/// Runs the script `source` in strict mode, as if by `eval` with the file
/// name `file`, and converts what it evaluates to.
pub(crate) fn run<'js, V: FromJs<'js>>(
    ctx: &Ctx<'js>,
    file: &str,
    source: &str,
) -> rquickjs::Result<V> {
    // QuickJS reads its input up to a NUL.
    let text = CString::new(source)?;
    let file = CString::new(file)?;
    let flags =
        qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_COMPILE_ONLY | qjs::JS_EVAL_FLAG_STRICT;
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is this context's; each value made here is freed once
    // or handed on once (`JS_EvalFunction` takes its argument, and the
    // result goes to `Value::from_raw`), and the written buffer is freed
    // with the context's allocator after it is read.
    let value = unsafe {
        let compiled = qjs::JS_Eval(
            raw,
            text.as_ptr(),
            text.as_bytes().len() as _,
            file.as_ptr(),
            flags as i32,
        );
        if qjs::JS_IsException(compiled) {
            return Err(rquickjs::Error::Exception);
        }
        let mut length = 0;
        let written = qjs::JS_WriteObject(
            raw,
            &mut length,
            compiled,
            (qjs::JS_WRITE_OBJ_BYTECODE | qjs::JS_WRITE_OBJ_STRIP_SOURCE) as i32,
        );
        qjs::JS_FreeValue(raw, compiled);
        if written.is_null() {
            return Err(rquickjs::Error::Exception);
        }
        let function = qjs::JS_ReadObject(raw, written, length, qjs::JS_READ_OBJ_BYTECODE as i32);
        qjs::js_free(raw, written.cast());
        if qjs::JS_IsException(function) {
            return Err(rquickjs::Error::Exception);
        }
        let value = qjs::JS_EvalFunction(raw, function);
        if qjs::JS_IsException(value) {
            return Err(rquickjs::Error::Exception);
        }
        Value::from_raw(ctx.clone(), value)
    };
    V::from_js(ctx, value)
}
