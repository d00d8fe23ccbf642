//! `console`: Node's methods (`log`, `info`, `warn`, `error`, `debug`,
//! `trace`, `dir`, `table`, `assert`, `count`, `time`, `group`, ...), each
//! call one line of output (`table` one per row).
//!
//! Values are shown as Node's `util.inspect` shows them, on one line
//! (`console.js`): `{ a: [ 1, 'x' ] }`, `Map(1) { 'k' => 1 }`,
//! `Promise { <pending> }`, `[Circular *1]`, `%s`/`%d`/`%o` directives.
//! `log` lines are written as they are; the other levels are labelled
//! (`warn: ...`), because every level shares one stream (the child's
//! stderr) and the reader should still tell a warning from a result. Line
//! breaks inside a message are written as `\n` so that one call is always
//! exactly one line: a program cannot forge extra lines, and a parent that
//! caps output by lines counts calls.

use rquickjs::object::Property;
use rquickjs::{Ctx, Function, Object, Value};

use crate::intrinsics::Utf8;
use crate::session::Session;

/// The console levels' labels, by the level number `console.js` writes at.
const LABELS: [&str; 5] = ["", "info: ", "warn: ", "error: ", "debug: "];

/// Defines the global `console` (`console.js`), once with the evaluator:
/// each call writes to the console of the run in progress
/// ([`Session::current`]).
pub(crate) fn install<'js>(ctx: &Ctx<'js>, web: &crate::web::Web) -> rquickjs::Result<()> {
    let native = Object::new(ctx.clone())?;
    native.set(
        "write",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, level: usize, text: Value<'js>| {
                if let Some(session) = Session::current(&ctx) {
                    write(&session, LABELS.get(level).copied().unwrap_or(""), &text);
                }
            },
        )?,
    )?;
    native.set("classId", Function::new(ctx.clone(), crate::web::class_id)?)?;
    native.set("promiseState", Function::new(ctx.clone(), promise_state)?)?;
    native.set("promiseResult", Function::new(ctx.clone(), promise_result)?)?;
    native.set("proxyTarget", Function::new(ctx.clone(), proxy_target)?)?;
    let make: Function = script!("console.js").run(ctx, "<wasmwire:console>")?;
    // `shared.errorFields`: the walk, for the Result's message (`outcome`).
    let console: Object = make.call((native, web.shared(ctx)?))?;
    ctx.globals()
        .prop("console", Property::from(console).writable().configurable())?;
    Ok(())
}

/// Writes one console line: the label, the text, kept on one line.
fn write<'js>(session: &Session<'js>, label: &str, text: &Value<'js>) {
    let Some(intrinsics) = session.intrinsics() else {
        return;
    };
    // Text is written from QuickJS's own UTF-8 copy of it (made in its
    // heap, under its limit), in pieces: 25 MB logged took three copies
    // of the guest's own, past the memory cap, where the parent keeps only
    // its console cap's worth of it anyway.
    if let Some(s) = text.as_string()
        && let Ok(utf8) = Utf8::of(s)
    {
        // A lone surrogate is not UTF-8: such text is made well-formed first.
        if std::str::from_utf8(utf8.bytes()).is_ok() {
            write_in_pieces(label.as_bytes(), utf8.bytes(), |piece| {
                session.write_console(piece)
            });
            return;
        }
    }
    let text = match text.as_string() {
        Some(s) => intrinsics.string(s),
        None => intrinsics.display(text),
    };
    let mut bytes = String::with_capacity(label.len() + text.len() + 1);
    bytes.push_str(label);
    bytes.push_str(&escape_line_breaks(&text));
    bytes.push('\n');
    session.write_console(bytes.as_bytes());
}

/// Bytes of a console line gathered before they are written.
const PIECE: usize = 64 << 10;

/// Writes `label`, `text` with its line breaks escaped (as
/// [`escape_line_breaks`] does) and a line end, with `write`, in pieces of
/// about [`PIECE`] bytes.
fn write_in_pieces(label: &[u8], text: &[u8], mut write: impl FnMut(&[u8])) {
    let mut piece = Vec::with_capacity(PIECE.min(label.len() + text.len() + 1) + 8);
    piece.extend_from_slice(label);
    let mut rest = text;
    while !rest.is_empty() {
        // The next byte that may begin a line break (`\n`, `\r`, or the
        // first of U+2028's and U+2029's three), looked for only as far as
        // the piece has room: a search to the end of the text for every
        // piece made a 20 MB line without one take 8 s.
        let window = &rest[..rest.len().min(PIECE.saturating_sub(piece.len()).max(1))];
        let run = window
            .iter()
            .position(|&b| matches!(b, b'\n' | b'\r' | 0xE2))
            .unwrap_or(window.len());
        piece.extend_from_slice(&rest[..run]);
        rest = &rest[run..];
        if run < window.len() {
            let (escaped, len): (&[u8], usize) = match rest {
                [b'\n', ..] => (b"\\n", 1),
                [b'\r', ..] => (b"\\r", 1),
                [0xE2, 0x80, 0xA8, ..] => (b"\\u2028", 3),
                [0xE2, 0x80, 0xA9, ..] => (b"\\u2029", 3),
                _ => (&rest[..1], 1),
            };
            piece.extend_from_slice(escaped);
            rest = &rest[len..];
        }
        if piece.len() >= PIECE {
            write(&piece);
            piece.clear();
        }
    }
    piece.push(b'\n');
    write(&piece);
}

/// A promise's state: 0 pending, 1 fulfilled, 2 rejected; -1 for what is
/// not a promise.
fn promise_state(ctx: Ctx<'_>, value: Value<'_>) -> i32 {
    // SAFETY: a live context and value; JS_PromiseState only reads.
    let state = unsafe { rquickjs::qjs::JS_PromiseState(ctx.as_raw().as_ptr(), value.as_raw()) };
    state as i32
}

/// A settled promise's value or reason (undefined while pending).
fn promise_result<'js>(ctx: Ctx<'js>, value: Value<'js>) -> Value<'js> {
    // SAFETY: JS_PromiseResult returns a new reference (undefined for a
    // pending promise or what is not a promise), owned by the Value.
    unsafe {
        let raw = rquickjs::qjs::JS_PromiseResult(ctx.as_raw().as_ptr(), value.as_raw());
        Value::from_raw(ctx, raw)
    }
}

/// A proxy's target (shown in its place, so that no trap runs), or
/// undefined for what is not a proxy.
fn proxy_target<'js>(ctx: Ctx<'js>, value: Value<'js>) -> Value<'js> {
    // SAFETY: JS_IsProxy reads the value's class; JS_GetProxyTarget returns
    // a new reference to a live proxy's target (or throws for a revoked
    // one, whose exception is then taken and dropped).
    unsafe {
        if !rquickjs::qjs::JS_IsProxy(value.as_raw()) {
            return Value::new_undefined(ctx);
        }
        let raw = rquickjs::qjs::JS_GetProxyTarget(ctx.as_raw().as_ptr(), value.as_raw());
        let target = Value::from_raw(ctx.clone(), raw);
        if target.is_exception() {
            let _ = ctx.catch();
            return Value::new_undefined(ctx);
        }
        target
    }
}

/// `\r` and `\n` become two-character escapes, and U+2028 and U+2029 (line
/// ends to JavaScript, Python's `splitlines` and many viewers) `\u2028` and
/// `\u2029`; all other text is kept.
pub(crate) fn escape_line_breaks(line: &str) -> String {
    if !line.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return line.to_owned();
    }
    line.replace('\r', "\\r")
        .replace('\n', "\\n")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_written_in_pieces_is_the_line_escaped_whole() {
        let text = "a\nb\r\nc \u{2028}d\u{2029} é \\n".repeat(9000);
        let mut written = Vec::new();
        let mut pieces = 0;
        write_in_pieces(b"warn: ", text.as_bytes(), |piece| {
            assert!(piece.len() <= PIECE + 8, "{}", piece.len());
            written.extend_from_slice(piece);
            pieces += 1;
        });
        assert!(pieces > 2, "{pieces}");
        let whole = format!("warn: {}\n", escape_line_breaks(&text));
        assert_eq!(String::from_utf8(written).unwrap(), whole);
        let mut short = Vec::new();
        write_in_pieces(b"", "\u{2028}x\r".as_bytes(), |piece| {
            short.extend_from_slice(piece)
        });
        assert_eq!(short, b"\\u2028x\\r\n");
    }

    #[test]
    fn line_breaks_are_escaped_and_other_text_kept() {
        assert_eq!(escape_line_breaks("a\nb\r\nc"), "a\\nb\\r\\nc");
        assert_eq!(escape_line_breaks("tab\there é \\n"), "tab\there é \\n");
        assert_eq!(
            escape_line_breaks("ok\u{2028}warn: forged\u{2029}x"),
            "ok\\u2028warn: forged\\u2029x"
        );
    }
}
