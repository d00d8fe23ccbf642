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
//!
//! The scripts' own text is embedded deflated ([`Script`]): it is data of
//! the component, and the component's data is linear memory that every
//! execution starts with, although the text is read only here, once.

use std::ffi::{CStr, CString};

use rquickjs::{Ctx, FromJs, Value, qjs};

/// A set-up script as `build.rs` embeds it: its text's length in bytes (4
/// bytes, little-endian), then the text deflated. Inflated only for the
/// moment it is compiled, into heap that the objects made after it reuse,
/// rather than kept in the component's data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Script(&'static [u8]);

impl Script {
    pub(crate) const fn deflated(bytes: &'static [u8]) -> Self {
        Script(bytes)
    }

    /// Bytes of the deflated text, which orders scripts by size.
    pub(crate) fn deflated_len(self) -> usize {
        self.0.len()
    }

    /// The script's text, with the NUL QuickJS reads up to: one allocation
    /// of its exact size.
    pub(crate) fn text(self) -> rquickjs::Result<CString> {
        let corrupt = |why: &str| {
            rquickjs::Error::new_from_js_message("embedded script", "text", why.to_owned())
        };
        let (length, deflated) = self
            .0
            .split_first_chunk::<4>()
            .ok_or_else(|| corrupt("no length"))?;
        let length =
            usize::try_from(u32::from_le_bytes(*length)).map_err(|_| corrupt("too long"))?;
        let mut text = vec![0; length + 1];
        let inflated = miniz_oxide::inflate::decompress_slice_iter_to_slice(
            &mut text[..length],
            std::iter::once(deflated),
            false,
            true,
        )
        .map_err(|status| corrupt(&format!("not inflated: {status:?}")))?;
        if inflated != length {
            return Err(corrupt("shorter than its length"));
        }
        CString::from_vec_with_nul(text).map_err(|_| corrupt("a NUL in the text"))
    }

    /// Runs the script as [`run`] does, named `file`.
    pub(crate) fn run<'js, V: FromJs<'js>>(
        self,
        ctx: &Ctx<'js>,
        file: &str,
    ) -> rquickjs::Result<V> {
        load(ctx, &compile(ctx, file, &self.text()?, Lines::Keep)?)
    }
}

/// Runs the script `source` in strict mode, as if by `eval` with the file
/// name `file`, and converts what it evaluates to.
pub(crate) fn run<'js, V: FromJs<'js>>(
    ctx: &Ctx<'js>,
    file: &str,
    source: &str,
) -> rquickjs::Result<V> {
    load(
        ctx,
        &compile(ctx, file, &CString::new(source)?, Lines::Keep)?,
    )
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
    source: &CStr,
    lines: Lines,
) -> rquickjs::Result<Vec<u8>> {
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
            source.as_ptr(),
            source.count_bytes() as _,
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

#[cfg(test)]
mod tests {
    use super::Script;

    /// Each embedded script inflates to its file, line for line: the same
    /// lines, without their indentation, and comment-only lines empty.
    #[test]
    fn an_embedded_script_inflates_to_its_file_line_for_line() {
        for (path, script) in [
            ("console.js", script!("console.js")),
            ("stack.js", script!("stack.js")),
            ("web/numberformat.js", script!("web/numberformat.js")),
            ("web/url.js", script!("web/url.js")),
        ] {
            let file = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("src")
                    .join(path),
            )
            .unwrap();
            let text = script.text().unwrap().into_string().unwrap();
            let (file_lines, text_lines): (Vec<_>, Vec<_>) =
                (file.lines().collect(), text.lines().collect());
            assert_eq!(file_lines.len(), text_lines.len(), "{path}");
            for (i, (f, t)) in file_lines.iter().zip(&text_lines).enumerate() {
                let f = f.trim_start_matches([' ', '\t']);
                let expected = if f.starts_with("//") { "" } else { f };
                assert_eq!(*t, expected, "{path}:{}", i + 1);
            }
        }
    }

    /// Bytes that are not a deflated script are an error, not a panic.
    #[test]
    fn a_corrupt_script_is_an_error() {
        let good = script!("web/intl.js");
        assert!(good.text().is_ok());
        let bad: &[&'static [u8]] = &[
            b"",
            b"\x01\x00",
            b"\x05\x00\x00\x00not deflate",
            // A length longer than the text deflated after it.
            b"\xff\xff\x00\x00\x03\x00",
            // A length shorter than the text: "ab" deflated, said to be 1.
            b"\x01\x00\x00\x00\x4b\x4c\x02\x00",
            // Deflated "ab\0c": a NUL inside the text.
            b"\x04\x00\x00\x00\x4b\x4c\x62\x48\x06\x00",
        ];
        for bytes in bad {
            assert!(Script::deflated(bytes).text().is_err(), "{bytes:?}");
        }
    }
}
