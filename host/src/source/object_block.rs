//! A program that ends in `{ ... }` that reads as an object literal ends in
//! that object.
//!
//! At the start of a statement `{` opens a block, so a program ending in
//! `{ total, count }` ends in a block (whose value is `count`, and which
//! the last-expression rule leaves alone), and one ending in
//! `{ total: t, avg: 2 }` does not parse at all. Node's REPL tries a line
//! that starts with `{` and ends with `}` as an expression first, in
//! parentheses, and a model that writes its answer last means the same.
//! So when the program's last statement (whitespace, comments and `;`
//! may follow it) is such a `{ ... }`, and the program with it in
//! parentheses parses with that statement an object literal, the
//! parentheses are put in: `completion.rs` then returns it as it returns
//! any `({ ... })`. A real block (`{ x++; }`, `{ let a = 1; }`) is no
//! object literal and stays as it was.
//!
//! The braces are found by a scan that knows strings, template literals,
//! comments and (by the usual guess from the token before a `/`) regular
//! expressions; the parse decides. Where the scan guesses wrong, the
//! program is left as it is.

use swc_ecma_ast::{Expr, GetterProp, MethodProp, ModuleItem, SetterProp, Stmt};
use swc_ecma_parser::error::SyntaxError;
use swc_ecma_parser::{Syntax, TsSyntax};
use swc_ecma_visit::{Visit, VisitWith};

use super::Language;
use super::body::{self, HEAD};
use super::position::{Lines, Step};

/// `program` with its last statement `{ ... }` put in parentheses, when
/// that makes it an object literal; the two insertions, in the order made.
///
/// After anything but `;` (or nothing) the `(` comes with a `;` before it:
/// a statement that ended by ASI before a block would run on into a
/// parenthesis (`f()\n({ a })` is a call). That is done only when the
/// braces are a block statement of their own (not `else {`, `if (x) {`),
/// as the program with them emptied shows.
pub(crate) fn parenthesise(program: &str, language: Language) -> Option<(String, [Step; 2])> {
    let Braces { open, close, ended } = final_braces(program)?;
    let opening = if ended {
        "("
    } else {
        let emptied = format!("{}{{}}{}", &program[..open], &program[close + 1..]);
        let block = |statement: &Stmt, skip: usize| {
            matches!(statement, Stmt::Block(block)
                if body::offset(block.span.lo).checked_sub(skip) == Some(open))
        };
        if !last_statement_is(&emptied, language, block) {
            return None;
        }
        ";("
    };
    let mut text = String::with_capacity(program.len() + opening.len() + 1);
    text.push_str(&program[..open]);
    text.push_str(opening);
    text.push_str(&program[open..=close]);
    text.push(')');
    text.push_str(&program[close + 1..]);
    // In the new text the `}` is at `close + width`, the `)` right after.
    let width = opening.len();
    let paren = (open + width - 1, close + width + 2);
    let object = |statement: &Stmt, skip: usize| is_object_statement(statement, paren, skip);
    if !last_statement_is(&text, language, object) {
        return None;
    }
    let (line, column) = Lines::new(program).position(open);
    let opened = Step::Inserted {
        line,
        column,
        width,
    };
    // The `)`'s place counts what was put before the `{` on its line.
    let (line, column) = Lines::new(&text).position(close + width + 1);
    let closed = Step::Inserted {
        line,
        column,
        width: 1,
    };
    Some((text, [opened, closed]))
}

/// Whether `statement` is `( { ... } )` spanning exactly the byte range
/// `paren` of the text, `skip` bytes before the parser's own offsets, an
/// object literal in JavaScript (TypeScript's parser also takes a method
/// without a body, `{ f() }`, which no object literal has).
fn is_object_statement(statement: &Stmt, paren: (usize, usize), skip: usize) -> bool {
    let Stmt::Expr(statement) = statement else {
        return false;
    };
    let Expr::Paren(inner) = &*statement.expr else {
        return false;
    };
    let Expr::Object(object) = &*inner.expr else {
        return false;
    };
    let at = |pos| body::offset(pos).checked_sub(skip);
    let mut bodiless = Bodiless(false);
    object.visit_with(&mut bodiless);
    !bodiless.0 && at(inner.span.lo) == Some(paren.0) && at(inner.span.hi) == Some(paren.1)
}

/// Finds a method, getter or setter without a body in an object literal.
struct Bodiless(bool);

impl Visit for Bodiless {
    fn visit_method_prop(&mut self, method: &MethodProp) {
        self.0 |= method.function.body.is_none();
        method.visit_children_with(self);
    }

    fn visit_getter_prop(&mut self, getter: &GetterProp) {
        self.0 |= getter.function.body.is_none();
        getter.visit_children_with(self);
    }

    fn visit_setter_prop(&mut self, setter: &SetterProp) {
        self.0 |= setter.function.body.is_none();
        setter.visit_children_with(self);
    }
}

/// Whether `text` parses, and its last statement (but for empty ones)
/// passes `check`, given the statement and how many bytes the parser's
/// offsets run ahead of the text's.
///
/// JavaScript is parsed as the guest runs it; TypeScript as the stripper
/// parses it: a module, its top-level `return`s allowed.
fn last_statement_is(text: &str, language: Language, check: impl Fn(&Stmt, usize) -> bool) -> bool {
    let not_empty = |statement: &&Stmt| !matches!(statement, Stmt::Empty(_));
    match language {
        Language::JavaScript => {
            let Some(script) = body::parse_program(text) else {
                return false;
            };
            let Some((statements, _, _)) = body::function_body(&script) else {
                return false;
            };
            statements
                .iter()
                .rfind(not_empty)
                .is_some_and(|last| check(last, HEAD.len()))
        }
        Language::TypeScript => {
            let mut parser = body::parser(Syntax::Typescript(TsSyntax::default()), text);
            let Ok(module) = parser.parse_module() else {
                return false;
            };
            let recovered = parser
                .take_errors()
                .into_iter()
                .all(|error| matches!(error.into_kind(), SyntaxError::ReturnNotAllowed));
            recovered
                && module
                    .body
                    .iter()
                    .rfind(|item| !matches!(item, ModuleItem::Stmt(Stmt::Empty(_))))
                    .is_some_and(|last| matches!(last, ModuleItem::Stmt(s) if check(s, 0)))
        }
    }
}

/// The braces that end a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Braces {
    /// The byte offset of the `{`.
    open: usize,
    /// The byte offset of the `}`.
    close: usize,
    /// Whether what came before the `{` ended a statement for certain:
    /// it is the program's first token, or comes after a `;`.
    ended: bool,
}

/// What came before a place in the scan, as far as `{` and `/` care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Before {
    /// Nothing: the program's start.
    Start,
    /// A value: a name, a number, a string, a regular expression, `)` or
    /// `]`. A `/` after it divides.
    Value,
    /// A keyword after which an expression starts (`return`, `typeof`):
    /// a `/` after it starts a regular expression.
    Keyword,
    /// Any other punctuator.
    Punctuator(u8),
}

/// What a bracket the scan is inside opened.
#[derive(Debug, Clone, Copy)]
enum Open {
    /// `{`, at this byte offset; whether it may start a statement, and
    /// whether it follows a `;` or nothing.
    Brace {
        at: usize,
        statement: bool,
        ended: bool,
    },
    /// `${` in a template literal.
    Interpolation,
    /// `(` or `[`.
    Other(u8),
}

/// Keywords after which `/` starts a regular expression.
const BEFORE_EXPRESSION: &[&[u8]] = &[
    b"return",
    b"typeof",
    b"instanceof",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"case",
    b"do",
    b"else",
    b"yield",
    b"await",
];

/// The byte offsets of the `{` and the `}` that end `program` (nothing but
/// whitespace, comments and `;` after them), when that `{` is outside any
/// bracket and may start a statement: at the program's start, after `;` or
/// `}`, or on a new line.
fn final_braces(program: &str) -> Option<Braces> {
    let bytes = program.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut before = Before::Start;
    let mut new_line = false;
    let mut last = None;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let next = bytes.get(i + 1).copied();
        match b {
            b'\n' | b'\r' => {
                new_line = true;
                i += 1;
            }
            b' ' | b'\t' | 0x0b | 0x0c => i += 1,
            b'/' if next == Some(b'/') => {
                i = bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n' || c == b'\r')
                    .map_or(bytes.len(), |n| i + n);
            }
            b'/' if next == Some(b'*') => {
                let length = find(&bytes[i + 2..], b"*/")?;
                let comment = &bytes[i + 2..i + 2 + length];
                new_line |= comment.iter().any(|&c| c == b'\n' || c == b'\r');
                i += 2 + length + 2;
            }
            _ => {
                // A token: everything below resets what follows it.
                let token = i;
                let before_token = before;
                let statement_start = stack.is_empty()
                    && (new_line
                        || matches!(
                            before_token,
                            Before::Start | Before::Punctuator(b';' | b'}')
                        ));
                new_line = false;
                if b != b';' {
                    last = None;
                }
                before = Before::Value;
                match b {
                    b'\'' | b'"' => i = skip_string(bytes, i)?,
                    b'`' => i = skip_template(bytes, i + 1, &mut stack)?,
                    b'/' if !matches!(before_token, Before::Value) => {
                        i = skip_regex(bytes, i)?;
                    }
                    b'{' => {
                        stack.push(Open::Brace {
                            at: token,
                            statement: statement_start,
                            ended: matches!(before_token, Before::Start | Before::Punctuator(b';')),
                        });
                        before = Before::Punctuator(b);
                        i += 1;
                    }
                    b'(' | b'[' => {
                        stack.push(Open::Other(b));
                        before = Before::Punctuator(b);
                        i += 1;
                    }
                    b')' | b']' => {
                        let opener = if b == b')' { b'(' } else { b'[' };
                        if !matches!(stack.pop(), Some(Open::Other(o)) if o == opener) {
                            return None;
                        }
                        i += 1;
                    }
                    b'}' => match stack.pop()? {
                        Open::Brace {
                            at,
                            statement,
                            ended,
                        } => {
                            if statement && stack.is_empty() {
                                last = Some(Braces {
                                    open: at,
                                    close: token,
                                    ended,
                                });
                            }
                            before = Before::Punctuator(b);
                            i += 1;
                        }
                        Open::Interpolation => i = skip_template(bytes, i + 1, &mut stack)?,
                        Open::Other(_) => return None,
                    },
                    _ if is_name(b) => {
                        let length = bytes[i..].iter().take_while(|&&c| is_name(c)).count();
                        if BEFORE_EXPRESSION.contains(&&bytes[i..i + length]) {
                            before = Before::Keyword;
                        }
                        i += length;
                    }
                    _ => {
                        before = Before::Punctuator(b);
                        i += 1;
                    }
                }
            }
        }
    }
    if stack.is_empty() { last } else { None }
}

/// Whether `b` is part of a name or a number (any byte of a non-ASCII
/// character counts: such a character outside a string is in a name, or
/// is space that changes nothing here).
fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'\\' | b'.') || !b.is_ascii()
}

/// Where `needle` first starts in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The offset after the string literal whose quote is at `at`; `None`
/// when it does not end on its line.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    let quote = bytes[at];
    let mut i = at + 1;
    loop {
        match *bytes.get(i)? {
            b'\\' => i += 2,
            b'\n' | b'\r' => return None,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The offset after the part of a template literal that starts at `from`:
/// after its closing backquote, or after a `${` (then pushed on `stack`).
fn skip_template(bytes: &[u8], from: usize, stack: &mut Vec<Open>) -> Option<usize> {
    let mut i = from;
    loop {
        match *bytes.get(i)? {
            b'\\' => i += 2,
            b'`' => return Some(i + 1),
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                stack.push(Open::Interpolation);
                return Some(i + 2);
            }
            _ => i += 1,
        }
    }
}

/// The offset after the regular expression whose `/` is at `at` (its
/// flags are scanned as a name); `None` when it does not end on its line.
fn skip_regex(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    let mut class = false;
    loop {
        match *bytes.get(i)? {
            b'\\' => i += 2,
            b'\n' | b'\r' => return None,
            b'[' => {
                class = true;
                i += 1;
            }
            b']' => {
                class = false;
                i += 1;
            }
            b'/' if !class => return Some(i + 1),
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::PositionMap;

    /// The program after the rewrite, or itself when there is none.
    fn rewritten(program: &str, language: Language) -> String {
        parenthesise(program, language).map_or_else(|| program.to_owned(), |(text, _)| text)
    }

    fn both(program: &str) -> [String; 2] {
        [Language::JavaScript, Language::TypeScript].map(|language| rewritten(program, language))
    }

    #[test]
    fn a_last_object_in_braces_is_parenthesised_in_both_languages() {
        for (program, expected) in [
            // A block of `total, count`: it returned `null`.
            (
                "const total = 6, count = 3;\n{ total, count }",
                "const total = 6, count = 3;\n({ total, count })",
            ),
            // A SyntaxError ("expecting ';'") as a block.
            ("{ total: total, avg: 2 }", "({ total: total, avg: 2 })"),
            // A label and a block as a block.
            ("f();\n{ a: { b: 1 } }", "f();\n({ a: { b: 1 } })"),
            ("{}", "({})"),
            (
                "{ s: `${ {a: 1}.a }}`, re: /[}]/g, c: '}' } // done;\n",
                "({ s: `${ {a: 1}.a }}`, re: /[}]/g, c: '}' }) // done;\n",
            ),
            // After a statement that may run on, with a `;`.
            ("if (x) {} {a: 1, b}", "if (x) {} ;({a: 1, b})"),
            (
                "const f = function () {}\n{ f, b: 1 }",
                "const f = function () {}\n;({ f, b: 1 })",
            ),
            ("x = 1 / 2; { a: /}/ }", "x = 1 / 2; ({ a: /}/ })"),
            (
                "return1()\n{ m() { return 1 }, n: 2 };;",
                "return1()\n;({ m() { return 1 }, n: 2 });;",
            ),
        ] {
            assert_eq!(both(program), [expected, expected], "{program}");
        }
        assert_eq!(
            rewritten(
                "const t: number = 1;\n{ t: t as number, u: <string>'x' }",
                Language::TypeScript
            ),
            "const t: number = 1;\n({ t: t as number, u: <string>'x' })"
        );
    }

    #[test]
    fn a_real_block_or_a_brace_not_at_a_statements_start_stays() {
        for program in [
            "{ x++; }",
            "{ let a = 1; }",
            "{ f() }",
            "{ 1 + 2 }",
            "lbl: { break lbl; }",
            "if (x) { a }",
            "if (x)\n{ a, b }",
            "if (x) y; else\n{ a }",
            "for (const a of b) { a }",
            "function g() { a }",
            "const o = { a: 1 }",
            "f = () =>\n{ a: 1, b: 2 }",
            "{ a: 1 }\nf()",
            "{ a: 1 }\n// a comment\nx",
            "`${ {a} }`",
            "const s = '{'; f(s)\n",
            "{ a: 1 } }",
            "{ a: 1",
        ] {
            assert_eq!(both(program), [program, program], "{program}");
        }
    }

    #[test]
    fn places_after_the_parentheses_map_back_to_the_program() {
        let program = "let a = 1;\n  { a,\n  b: c.d }";
        let (text, steps) = parenthesise(program, Language::JavaScript).unwrap();
        assert_eq!(text, "let a = 1;\n  ({ a,\n  b: c.d })");
        let map = PositionMap::new(steps.to_vec());
        // `{` is at column 4 in the text, 3 in the program; on the last
        // line, `)` is inserted and nothing before it moves.
        assert_eq!(map.original(2, 4), (2, 3));
        assert_eq!(map.original(2, 3), (2, 3));
        assert_eq!(map.original(3, 8), (3, 8));
        let (text, steps) = parenthesise("f(); { a: x.y } // c", Language::JavaScript).unwrap();
        assert_eq!(text, "f(); ({ a: x.y }) // c");
        let map = PositionMap::new(steps.to_vec());
        // `.` and the comment, each after one or both parentheses.
        assert_eq!(map.original(1, 13), (1, 12));
        assert_eq!(map.original(1, 19), (1, 17));
    }
}
