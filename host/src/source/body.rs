//! The program parsed as the guest runs it: the body of an async function.
//!
//! The guest compiles `(async function () {<program>\n})`, so top-level
//! `await` and `return` are the program's to use. Parsing the same text
//! here, with the head on the program's first line, gives the parser the
//! same view: an offset in the wrapped text is the program's own, less the
//! head's length.

use swc_common::BytePos;
use swc_ecma_ast::{EsVersion, Expr, Script, Stmt};
use swc_ecma_parser::error::SyntaxError;
use swc_ecma_parser::{EsSyntax, Parser, StringInput, Syntax, lexer::Lexer};

/// Opens the async function, on the same line as the program's first line
/// (the guest's own head, `guest/src/program.rs`).
pub(crate) const HEAD: &str = "(async function () {";

/// Closes it on a line of its own, so that a program ending in a `//`
/// comment does not swallow it.
pub(crate) const TAIL: &str = "\n})";

/// Where the parser's byte positions start: swc keeps 0 for "no position".
pub(crate) const BASE: u32 = 1;

/// `program` inside the async function.
pub(crate) fn wrap(program: &str) -> String {
    let mut text = String::with_capacity(HEAD.len() + program.len() + TAIL.len());
    text.push_str(HEAD);
    text.push_str(program);
    text.push_str(TAIL);
    text
}

/// A parser over `text`, positions starting at [`BASE`].
pub(crate) fn parser(syntax: Syntax, text: &str) -> Parser<Lexer<'_>> {
    let end = u32::try_from(text.len())
        .unwrap_or(u32::MAX - BASE)
        .saturating_add(BASE);
    let input = StringInput::new(text, BytePos(BASE), BytePos(end));
    Parser::new_from(Lexer::new(syntax, EsVersion::latest(), input, None))
}

/// The byte offset in the parsed text of a parser position.
pub(crate) fn offset(pos: BytePos) -> usize {
    pos.0.saturating_sub(BASE) as usize
}

/// The statements of the async function in a parsed wrapped `script`, with
/// the byte offset of its `{` and of its `}`, if the script is one
/// parenthesised async function and nothing else.
pub(crate) fn function_body(script: &Script) -> Option<(&[Stmt], usize, usize)> {
    let [Stmt::Expr(statement)] = script.body.as_slice() else {
        return None;
    };
    let Expr::Paren(paren) = &*statement.expr else {
        return None;
    };
    let Expr::Fn(function) = &*paren.expr else {
        return None;
    };
    let body = function.function.body.as_ref()?;
    let close = offset(body.span.hi).checked_sub(1)?;
    Some((&body.stmts, offset(body.span.lo), close))
}

/// Parses `program` (JavaScript) as the guest will run it; `None` when it
/// does not parse, errors the parser recovered from included, but for
/// those the guest's QuickJS does not make (see [`guest_accepts`]).
pub(crate) fn parse_program(program: &str) -> Option<Script> {
    let wrapped = wrap(program);
    let syntax = Syntax::Es(EsSyntax {
        // `using` and `await using` declarations, which QuickJS runs.
        explicit_resource_management: true,
        ..Default::default()
    });
    let mut parser = parser(syntax, &wrapped);
    let script = parser.parse_script().ok()?;
    parser
        .take_errors()
        .iter()
        .all(|error| guest_accepts(error.kind()))
        .then_some(script)
}

/// Errors swc recovers from in a program QuickJS runs as it is: a function
/// declared as the body of an `if` (sloppy mode allows it, Annex B.3.4).
fn guest_accepts(error: &SyntaxError) -> bool {
    matches!(error, SyntaxError::DeclNotAllowed)
}
