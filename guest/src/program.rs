//! The program as the body of an async function, and places in it.
//!
//! The program is compiled as `\n(async function () {\n<program>\n})`, its
//! first line numbered -1, so that the head sits on lines -1 and 0 and the
//! program's own lines are numbered as the program's author numbers them:
//! every place QuickJS reports, in a Result and in an `error.stack` the
//! program reads, is the program's own line and column. (A head on the
//! program's first line shifted that line's columns, and not all alike:
//! QuickJS counts some first-line columns from 0 and others from 1.)
//! QuickJS counts columns in bytes; [`Position`] counts characters, as an
//! editor does.
//!
//! **Line endings.** Lines are counted at LF, and CRLF is one line end. A
//! lone CR is turned into an LF before the program is compiled (one byte
//! for one, so every offset stays): QuickJS counts a lone CR as a line end
//! in code but not inside a block comment, and a place in a program whose
//! lines all end in CR would otherwise be "line 1, column 131". This
//! changes no value: the language treats a lone CR as a line terminator
//! wherever it stands, and template literals normalise CR and CRLF to LF
//! in both their cooked and raw text. U+2028 and U+2029 are left alone:
//! they may stand inside a string literal, where they are text. So they
//! start no new line in a reported place, which holds for a program that
//! has them inside strings, template literals or comments (QuickJS does
//! not count them there either); one standing between two tokens, where
//! QuickJS does count it, puts the places after it on the wrong line.
//!
//! **The wrapper's tail.** A syntax error that QuickJS finds in the closing
//! `})` means the program ended too early (an unclosed bracket, a dangling
//! operator): it is reported as "unexpected end of the program" at the
//! program's end, never as a brace the program does not have.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;

use rquickjs::{Ctx, Value, qjs};
use wire::places::PlaceStep;

/// The file name QuickJS reports for the program. Its `<>` cannot appear in
/// a URL-like name a program would choose, so a search for it in a stack
/// finds the program's frames only.
pub(crate) const FILE: &str = "<program>";
const FILE_C: &std::ffi::CStr = c"<program>";

/// How a frame of the program's ends in QuickJS's stack text: `    at f
/// (<program>:3:7)`; and how a syntax error's place is a frame of its own:
/// `    at <program>:3:7`.
const FRAME_OPEN: &str = "(<program>:";
const FRAME_AT: &str = "at <program>:";

/// Opens the async function on lines of its own, before the program's.
const HEAD: &str = "\n(async function () {\n";

/// The line number of the head's first line: the head's two lines are
/// numbered -1 and 0, so that the program starts on line 1. (QuickJS takes
/// 0 for "no number given", so the head cannot be one line numbered 0.)
const HEAD_FIRST_LINE: i32 = -1;

/// Closes it on a line of its own, so that a program ending in a `//`
/// comment does not swallow it.
const TAIL: &str = "\n})";

/// A place in the program: 1-based line and 1-based column in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    /// The line, counting from 1.
    pub(crate) line: usize,
    /// The column in characters (Unicode scalar values), counting from 1.
    pub(crate) column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// The program with every lone CR (one not followed by LF) made an LF:
/// what is compiled, and what places are counted in. Same length, byte for
/// byte.
pub(crate) fn normalize(source: &str) -> Cow<'_, str> {
    if !source.contains('\r') {
        return Cow::Borrowed(source);
    }
    let bytes = source.as_bytes();
    let mut text = String::with_capacity(source.len());
    for (i, c) in source.char_indices() {
        if c == '\r' && bytes.get(i + 1) != Some(&b'\n') {
            text.push('\n');
        } else {
            text.push(c);
        }
    }
    Cow::Owned(text)
}

/// Compiles the program into its async function (not yet called). `source`
/// is the program as [`normalize`] leaves it.
///
/// Sloppy mode, as a classic script is: a program written for a browser
/// console or Node behaves the same here.
pub(crate) fn compile<'js>(ctx: &Ctx<'js>, source: &str) -> rquickjs::Result<Value<'js>> {
    let mut text = Vec::with_capacity(HEAD.len() + source.len() + TAIL.len() + 1);
    text.extend_from_slice(HEAD.as_bytes());
    text.extend_from_slice(source.as_bytes());
    text.extend_from_slice(TAIL.as_bytes());
    let length = text.len();
    // QuickJS reads to `length` but wants a NUL after it.
    text.push(0);
    let mut options = qjs::JSEvalOptions {
        version: qjs::JS_EVAL_OPTIONS_VERSION as _,
        // A classic script, not strict.
        eval_flags: qjs::JS_EVAL_TYPE_GLOBAL as _,
        filename: FILE_C.as_ptr(),
        line_num: HEAD_FIRST_LINE,
    };
    // SAFETY: the context is live for 'js; `text` is `length` bytes and a
    // NUL, and `options` and the file name outlive the call. `from_raw`
    // takes the new reference; an exception value is never wrapped (it
    // stays pending in the context, for the caller to catch).
    unsafe {
        let raw = qjs::JS_Eval2(
            ctx.as_raw().as_ptr(),
            text.as_ptr().cast(),
            length as _,
            &mut options,
        );
        if qjs::JS_IsException(raw) {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Value::from_raw(ctx.clone(), raw))
    }
}

/// Where in the program a place QuickJS reported is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// In the program's own text.
    In(Position),
    /// In the wrapper's closing `})`: the program ended too early. The
    /// position is just past the program's end.
    End(Position),
}

impl Place {
    /// The position, wherever it is.
    pub(crate) fn position(self) -> Position {
        match self {
            Place::In(at) | Place::End(at) => at,
        }
    }
}

/// Where each line of `source` starts (lines end at LF, as QuickJS counts
/// them once [`normalize`] has run).
fn line_starts(source: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(source.match_indices('\n').map(|(at, _)| at + 1))
        .collect()
}

/// Turns QuickJS's line and byte column in the wrapped text into a place in
/// the program (`starts`: where each of its lines starts); none for a place
/// in the head.
fn place_in(source: &str, starts: &[usize], line: usize, byte_column: usize) -> Option<Place> {
    let Some(index) = line.checked_sub(1) else {
        // Line 0 is the head's: the program wrote nothing there.
        return None;
    };
    let Some(&start) = starts.get(index) else {
        // The wrapper's closing line: the program ended too early (an
        // unclosed brace, a dangling operator). Point just past its end.
        let last = starts.last().map_or("", |&start| &source[start..]);
        return Some(Place::End(Position {
            line: starts.len().max(1),
            column: last.chars().count() + 1,
        }));
    };
    let end = starts.get(index + 1).map_or(source.len(), |&next| next - 1);
    let text = &source[start..end];
    let mut offset = byte_column.saturating_sub(1).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    Some(Place::In(Position {
        line,
        column: text[..offset].chars().count() + 1,
    }))
}

/// The program as the child was sent it, and how its places map back to
/// the program its author wrote (the Start's `places`): every place the
/// child reports, in a Result and in a stack the program reads, is the
/// author's.
#[derive(Debug)]
pub(crate) struct Sent {
    /// The text sent, as [`normalize`] leaves it: what is compiled.
    source: String,
    /// The parent's edits, in the order made.
    places: Vec<PlaceStep>,
    /// Where each line of `source` starts, found on first need.
    starts: OnceCell<Vec<usize>>,
}

impl Sent {
    /// The program of a Start, and the Start's `places`.
    pub(crate) fn new(program: &str, places: Vec<PlaceStep>) -> Self {
        Sent {
            source: normalize(program).into_owned(),
            places,
            starts: OnceCell::new(),
        }
    }

    /// The text compiled.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    fn starts(&self) -> &[usize] {
        self.starts.get_or_init(|| line_starts(&self.source))
    }

    /// The place of QuickJS's `line` and byte `column`, in the text sent.
    fn place(&self, line: usize, byte_column: usize) -> Option<Place> {
        place_in(&self.source, self.starts(), line, byte_column)
    }

    /// The program's innermost place in a QuickJS stack trace, if any
    /// frame is the program's, in the text sent. Frames read `    at f
    /// (<program>:3:7)`, or for a syntax error `    at <program>:3:7`.
    pub(crate) fn locate(&self, stack: &str) -> Option<Place> {
        stack.lines().enumerate().find_map(|(index, frame)| {
            let (line, column) = frame_place(frame, index == 0)?;
            self.place(line, column)
        })
    }

    /// A place in the text sent as the author's.
    pub(crate) fn shown(&self, at: Position) -> Position {
        if self.places.is_empty() {
            return at;
        }
        let (line, column) = wire::places::original(&self.places, at.line, at.column);
        Position { line, column }
    }

    /// The author's place for QuickJS's `line` and byte `column` (a
    /// CallSite's), or `None` for a place in the wrapper's head.
    pub(crate) fn original(&self, line: i64, byte_column: i64) -> Option<Position> {
        let line = usize::try_from(line).ok()?;
        let column = usize::try_from(byte_column).ok()?;
        self.place(line, column).map(|at| self.shown(at.position()))
    }
}

/// The line and byte column of a frame of the program's in QuickJS's
/// stack text: at the end of the line, `(<program>:L:C)`, or, as the
/// text's `first` line only (a syntax error's place), a whole line `at
/// <program>:L:C`. A function's name, which the program chooses, is never
/// read as one where it stands before its frame's place; nor are numbers
/// past what a place can be. (A name holding a line break can still make
/// a line that reads as a frame of its own: the program misplaces only
/// its own error.)
fn frame_place(frame: &str, first: bool) -> Option<(usize, usize)> {
    let numbers = if let Some(inner) = frame.strip_suffix(')') {
        &inner[inner.rfind(FRAME_OPEN)? + FRAME_OPEN.len()..]
    } else if !first {
        return None;
    } else {
        let at = frame.find(FRAME_AT)?;
        if !frame[..at].bytes().all(|b| b == b' ') {
            return None;
        }
        &frame[at + FRAME_AT.len()..]
    };
    let (line, column) = numbers.split_once(':')?;
    if !line
        .bytes()
        .chain(column.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((line.parse().ok()?, column.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(source: &str, line: usize, byte_column: usize) -> Option<Place> {
        Sent::new(source, Vec::new()).place(line, byte_column)
    }

    fn locate(stack: &str, source: &str) -> Option<Place> {
        Sent::new(source, Vec::new()).locate(stack)
    }

    /// The last expression `f()` of line 2 made `__wasmwire_last = f()`.
    fn returned_on_line_2() -> Vec<PlaceStep> {
        vec![PlaceStep::Inserted {
            line: 2,
            column: 1,
            width: 18,
        }]
    }

    #[test]
    fn a_frames_place_is_read_at_its_end_only() {
        assert_eq!(frame_place("    at f (<program>:3:7)", false), Some((3, 7)));
        assert_eq!(frame_place("    at <program>:3:7", true), Some((3, 7)));
        // A whole-line place is a syntax error's, and only ever first.
        assert_eq!(frame_place("    at <program>:3:7", false), None);
        // A name the program chose is never taken for a place.
        assert_eq!(
            frame_place("    at x (<program>:2:30) (<program>:2:19)", false),
            Some((2, 19))
        );
        assert_eq!(
            frame_place("    at (<program>:2:30)y (native)", false),
            None
        );
        assert_eq!(frame_place("x at <program>:1:1", true), None);
        assert_eq!(frame_place("    at f (<program>:-1:3)", false), None);
        assert_eq!(
            frame_place("    at f (<program>:99999999999999999999999:3)", false),
            None
        );
        // The innermost frame of the program's, past a spoofed one.
        let sent = Sent::new("a\nbbbbbbbbbb\n", Vec::new());
        assert_eq!(
            sent.locate("    at x\n    at y (<program>:1:1) (native)\n    at f (<program>:2:4)\n"),
            Some(Place::In(Position { line: 2, column: 4 }))
        );
    }

    #[test]
    fn one_place_maps_as_the_author_wrote_it() {
        let sent = Sent::new("let a;\n__wasmwire_last = a.b", returned_on_line_2());
        assert_eq!(sent.original(2, 20), Some(Position { line: 2, column: 2 }));
        assert_eq!(sent.original(0, 3), None);
        assert_eq!(sent.original(-1, 3), None);
        assert_eq!(
            sent.shown(Position {
                line: 2,
                column: 19
            }),
            Position { line: 2, column: 1 }
        );
    }

    #[test]
    fn first_line_columns_are_the_programs_own() {
        let at = position("let x = ;", 1, 9);
        assert_eq!(at, Some(Place::In(Position { line: 1, column: 9 })));
        // The head's lines, 0 and -1 (which no frame parses as a number).
        assert_eq!(position("let x = ;", 0, 3), None);
        assert_eq!(locate("    at f (<program>:-1:3)\n", "x"), None);
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // "é" is two bytes: QuickJS's byte column 5 is the fourth character.
        let at = position("a\néé;x", 2, 6);
        assert_eq!(at, Some(Place::In(Position { line: 2, column: 4 })));
    }

    #[test]
    fn a_place_in_the_closing_line_is_the_end_of_the_program() {
        let at = position("return 1 +\n  (2", 3, 1);
        assert_eq!(at, Some(Place::End(Position { line: 2, column: 5 })));
    }

    #[test]
    fn locate_takes_the_innermost_program_frame() {
        let stack =
            "    at get (native)\n    at f (<program>:3:7)\n    at <anonymous> (<program>:9:1)\n";
        let source = "a\nb\nccccccc\n";
        assert_eq!(
            locate(stack, source),
            Some(Place::In(Position { line: 3, column: 7 }))
        );
        assert_eq!(locate("    at <wasmwire>:1:1\n", source), None);
    }

    #[test]
    fn a_lone_cr_becomes_an_lf_and_nothing_else_changes() {
        assert_eq!(normalize("a\rb\r\nc\n\r"), "a\nb\r\nc\n\n");
        assert_eq!(normalize("é\r€"), "é\n€");
        assert!(matches!(normalize("no cr\n"), Cow::Borrowed(_)));
        let text = "x\u{2028}y\r";
        assert_eq!(normalize(text).len(), text.len());
    }
}
