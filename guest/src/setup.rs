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
    load(ctx, &compile(ctx, file, source, Lines::Keep)?)
}

/// Whether a script's bytecode keeps where each of its instructions came
/// from (its functions' lines and columns, and their variables' names).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lines {
    /// For the scripts [`run`] runs: the console, the stack's capture and
    /// the prelude, whose positions the guest reads back.
    Keep,
    /// For the web surface's files: a program's stack never needs their
    /// frames (a program's error names its own line), and their many small
    /// functions each carry the table: `numberformat.js`'s alone took 128
    /// KiB of the memory every execution starts with.
    Strip,
}

impl Lines {
    fn flag(self) -> u32 {
        match self {
            Lines::Keep => 0,
            Lines::Strip => qjs::JS_WRITE_OBJ_STRIP_DEBUG,
        }
    }
}

/// The bytecode of the script `source` (strict mode, file name `file`),
/// without its source text.
///
/// Compiling takes far more memory for a while than the bytecode keeps (the
/// parser's tables for the whole script), and the snapshot's linear memory
/// never shrinks: so a caller with several scripts compiles them all before
/// it runs any, each compile's peak then falls in memory the next reuses,
/// rather than above the objects the scripts made.
pub(crate) fn compile(
    ctx: &Ctx<'_>,
    file: &str,
    source: &str,
    lines: Lines,
) -> rquickjs::Result<Vec<u8>> {
    // QuickJS reads its input up to a NUL.
    let text = CString::new(source)?;
    let file = CString::new(file)?;
    let flags =
        qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_COMPILE_ONLY | qjs::JS_EVAL_FLAG_STRICT;
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is this context's; the compiled value is freed once, and
    // the written buffer is copied and then freed with the context's
    // allocator.
    unsafe {
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
            (qjs::JS_WRITE_OBJ_BYTECODE | qjs::JS_WRITE_OBJ_STRIP_SOURCE | lines.flag()) as i32,
        );
        qjs::JS_FreeValue(raw, compiled);
        if written.is_null() {
            return Err(rquickjs::Error::Exception);
        }
        let bytes =
            std::slice::from_raw_parts(written, usize::try_from(length).unwrap_or(0)).to_vec();
        qjs::js_free(raw, written.cast());
        Ok(bytes)
    }
}

/// Runs bytecode from [`compile`] and converts what it evaluates to.
pub(crate) fn load<'js, V: FromJs<'js>>(ctx: &Ctx<'js>, bytecode: &[u8]) -> rquickjs::Result<V> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is this context's; `JS_EvalFunction` takes the function
    // read, and its result goes to `Value::from_raw`, once.
    let value = unsafe {
        let function = qjs::JS_ReadObject(
            raw,
            bytecode.as_ptr(),
            bytecode.len() as _,
            qjs::JS_READ_OBJ_BYTECODE as i32,
        );
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
