//! `console.log/info/warn/error/debug`: one line of output per call.
//!
//! Arguments are joined by spaces, as in browsers and Node. `log` lines are
//! written as they are; the other levels are labelled (`warn: ...`), because
//! every level shares one stream (the child's stderr) and the reader should
//! still tell a warning from a result. Line breaks inside a message are
//! written as `\n` so that one call is always exactly one line: a program
//! cannot forge extra lines, and a parent that caps output by lines counts
//! calls.

use rquickjs::function::Rest;
use rquickjs::object::Property;
use rquickjs::{Ctx, Function, Object, Value};

use crate::session::Session;

/// The console levels and the label each line carries.
const LEVELS: [(&str, &str); 5] = [
    ("log", ""),
    ("info", "info: "),
    ("warn", "warn: "),
    ("error", "error: "),
    ("debug", "debug: "),
];

/// Defines the global `console`, once with the evaluator: each call writes
/// to the console of the run in progress ([`Session::current`]).
pub(crate) fn install<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
    let console = Object::new(ctx.clone())?;
    for (level, label) in LEVELS {
        let function = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            if let Some(session) = Session::current(&ctx) {
                write(&session, label, &args.0);
            }
        })?
        .with_name(level)?;
        console.set(level, function)?;
    }
    ctx.globals()
        .prop("console", Property::from(console).writable().configurable())?;
    Ok(())
}

/// Formats and writes one console call.
fn write<'js>(session: &Session<'js>, label: &str, args: &[Value<'js>]) {
    let Some(intrinsics) = session.intrinsics() else {
        return;
    };
    let mut line = String::from(label);
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        line.push_str(&intrinsics.display(arg));
    }
    let mut bytes = escape_line_breaks(&line).into_bytes();
    bytes.push(b'\n');
    session.write_console(&bytes);
}

/// `\r` and `\n` become two-character escapes; all other text is kept.
fn escape_line_breaks(line: &str) -> String {
    if !line.contains(['\n', '\r']) {
        return line.to_owned();
    }
    line.replace('\r', "\\r").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_are_escaped_and_other_text_kept() {
        assert_eq!(escape_line_breaks("a\nb\r\nc"), "a\\nb\\r\\nc");
        assert_eq!(escape_line_breaks("tab\there é \\n"), "tab\there é \\n");
    }
}
