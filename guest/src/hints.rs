//! Clearer words for three of QuickJS's errors that mislead a program's
//! author, each read off the program's text at the place QuickJS gave:
//!
//! * `TypeError: not a function` names nothing; Node says what was called
//!   (`o.method is not a function`), and so does [`callee`].
//! * `await` in a function that is not `async` parses as a name, so
//!   QuickJS reports the token after it (`expecting ';'`);
//!   [`await_outside_async`] finds the `await` and says what is wrong.
//! * A program cut off inside a bracket (a model's output that hit its
//!   length limit) reaches the wrapper's closing brace, which QuickJS
//!   reports as a stray `}`; [`unbalanced`] finds the bracket that was
//!   never closed, or the `}` that closes nothing, by a scan that skips
//!   strings, template literals, comments and regular expressions.
//!
//! Each is a reading of the text, not a parse: where it is not sure it says
//! nothing, and QuickJS's own message stands.

use crate::program::Position;

/// The longest callee text a message quotes.
const MAX_CALLEE: usize = 80;

/// The most of a line's text either side of a place that a hint reads.
/// A hint names what is at the place; a line of megabytes (a long comment
/// or string before a call) was copied whole, at 16 bytes a character,
/// and its copy ran the guest out of memory (tests/HOSTILE.md item 109).
/// A cut inside a string literal leaves the hint unsure (it reads the
/// quote as opening one), and QuickJS's own message stands.
const NEAR: usize = 2048;

/// The whole line `at` is on.
fn whole_line(source: &str, at: Position) -> Option<&str> {
    source.split('\n').nth(at.line.checked_sub(1)?)
}

/// The line `at` is on, cut to [`NEAR`] bytes either side of the place;
/// the byte offset of the place's column in that text; and how many
/// characters of the line the cut left out before it.
fn line_at(source: &str, at: Position) -> Option<(&str, usize, usize)> {
    let line = whole_line(source, at)?;
    let offset = line
        .char_indices()
        .nth(at.column.checked_sub(1)?)
        .map_or(line.len(), |(i, _)| i);
    let mut from = offset.saturating_sub(NEAR);
    while !line.is_char_boundary(from) {
        from += 1;
    }
    let mut to = offset.saturating_add(NEAR).min(line.len());
    while !line.is_char_boundary(to) {
        to -= 1;
    }
    Some((&line[from..to], offset - from, line[..from].chars().count()))
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// What a call that failed "not a function" at `at` called.
///
/// QuickJS places a call at the last place it noted while compiling it,
/// which is the call's own callee for `o.method()`, but inside its
/// arguments when they hold a call or a function of their own: the place
/// of `results.push(await echo(x))` is `echo`, and of `rows.map(x => 2 * x)`
/// the arrow's `x`. So the place's own call (forward from it, [`called_at`])
/// is one candidate, and the call whose arguments the place is in, on the
/// same line ([`enclosing_call`]), another: when both are there, either can
/// have failed (QuickJS gives both the same place) and both are named, the
/// enclosing one first; when the place starts no call, or starts a
/// function, a `new` or a keyword, it is the enclosing one. `None` when
/// neither can be named.
pub(crate) fn callee(source: &str, at: Position) -> Option<String> {
    let (line, offset, _) = line_at(source, at)?;
    match (called_at(line, offset), enclosing_call(line, offset)) {
        (Some(own), Some(enclosing)) if own != enclosing => {
            Some(format!("{enclosing} (or {own}, called in its arguments)"))
        }
        (Some(own), _) => Some(own),
        (None, enclosing) => enclosing,
    }
}

/// Words that start no call when they stand where a callee would (`if (`
/// and the like open a condition, not arguments).
const NOT_CALLED: &[&str] = &[
    "async",
    "await",
    "catch",
    "class",
    "delete",
    "for",
    "function",
    "if",
    "in",
    "instanceof",
    "new",
    "of",
    "return",
    "switch",
    "typeof",
    "void",
    "while",
    "with",
    "yield",
];

/// The chain of names before `end` of `line`, if it is what a call there
/// calls: not a keyword, nor the class of a `new` or the name a `function`
/// declares.
fn callee_before(line: &str, end: usize) -> Option<String> {
    let (start, chain) = chain_before(line, end)?;
    let word_before = line[..start]
        .trim_end()
        .rsplit(|c: char| !is_name_char(c))
        .next()
        .unwrap_or("");
    let called =
        !NOT_CALLED.contains(&chain.as_str()) && !matches!(word_before, "new" | "function");
    called.then_some(chain)
}

/// `text`'s characters outside its string and template literals, with
/// their offsets, and whether the text ends inside one.
fn outside_strings(text: &str) -> (Vec<(usize, char)>, bool) {
    let mut code = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if matches!(c, '"' | '\'' | '`') {
            quote = Some(c);
        } else {
            code.push((i, c));
        }
    }
    (code, quote.is_some())
}

/// The call that starts at `offset` of `line`: the text up to its `(` (or
/// a tagged template's backquote) must be a name or a chain of them
/// (`o.a.method`, `x?.y`), not a keyword, nor after `new` or `function`.
fn called_at(line: &str, offset: usize) -> Option<String> {
    // Forward to the call's opening: names, dots and spaces only.
    let rest = &line[offset..];
    let open = rest.find(|c: char| !(is_name_char(c) || c == '.' || c == '?' || c == ' '))?;
    if !matches!(rest[open..].chars().next(), Some('(' | '`')) {
        return None;
    }
    // `handlers.get("x")(1)`: what failed is the call of what `get`
    // returned, `handlers.get(...)`, not `get`, which is a function.
    let called_result = rest[open..].starts_with('(')
        && closing_paren(&rest[open..]).is_some_and(|close| {
            rest[open + close + 1..]
                .trim_start()
                .starts_with(['(', '`'])
        });
    let chain = callee_before(line, offset + open)?;
    Some(if called_result {
        format!("{chain}(...)")
    } else {
        chain
    })
}

/// The name chain that ends just before `end` of `line` (spaces between
/// it and `end` allowed), and where it starts.
fn chain_before(line: &str, end: usize) -> Option<(usize, String)> {
    let before = line[..end].trim_end();
    let start = before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_name_char(c) || c == '.' || c == '?')
        .last()
        .map(|(i, _)| i)?;
    let chain = before[start..].trim_start_matches('?');
    let chain = chain.strip_suffix("?.").unwrap_or(chain);
    let valid = !chain.is_empty()
        && chain.chars().count() <= MAX_CALLEE
        && chain.chars().any(is_name_char)
        && !chain.ends_with('.');
    valid.then(|| (start, chain.to_owned()))
}

/// The call whose arguments `offset` of `line` is in, named by the chain
/// before its `(`: only when the place is directly among them, not inside
/// a function given as one (after a `=>` or in a `{` block), whose code
/// runs only once the call has been made.
fn enclosing_call(line: &str, offset: usize) -> Option<String> {
    let (code, in_string) = outside_strings(&line[..offset]);
    if in_string {
        return None;
    }
    let mut open: Vec<(char, usize)> = Vec::new();
    for (i, c) in code {
        match c {
            '(' | '[' | '{' => open.push((c, i)),
            ')' | ']' | '}' => {
                open.pop();
            }
            _ => {}
        }
    }
    let &('(', paren) = open.last()? else {
        return None;
    };
    if line[paren..offset].contains("=>") {
        return None;
    }
    callee_before(line, paren)
}

/// The offset of the `)` that closes the `(` `text` starts with, on its
/// line; strings are skipped. `None` when it is not there.
fn closing_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in outside_strings(text).0 {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Where the `await` is, when a syntax error at `at` is the token after an
/// `await` that was read as a name (so in a function that is not `async`).
pub(crate) fn await_outside_async(source: &str, at: Position) -> Option<Position> {
    let (line, offset, skipped) = line_at(source, at)?;
    let before = line[..offset].trim_end();
    let word = before.strip_suffix("await")?;
    if word.chars().next_back().is_some_and(is_name_char) {
        return None;
    }
    // The token QuickJS stopped at starts a name or an expression.
    if !line[offset..]
        .starts_with(|c: char| is_name_char(c) || matches!(c, '(' | '[' | '{' | '"' | '\'' | '`'))
    {
        return None;
    }
    Some(Position {
        line: at.line,
        column: skipped + word.chars().count() + 1,
    })
}

/// A bracket the scan found out of balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unbalanced {
    /// This opening bracket (`(`, `[`, `{`) is never closed.
    Unclosed(char, Position),
    /// This closing bracket closes nothing of the program's.
    Stray(char, Position),
}

/// Brackets open at once past which the scan gives up: no program nests
/// so deep (QuickJS's parser runs out of stack first), and each costs the
/// scan's table 32 bytes of the guest's memory.
const MAX_OPEN: usize = 1024;

/// The longest word the scan keeps: the longest keyword it looks for
/// (`instanceof`) and more, so a longer word reads as no keyword.
const MAX_WORD: usize = 16;

/// The first bracket out of balance in `source`, if the scan finds one.
/// Strings, template literals (their `${}` scanned as code), comments and
/// regular expressions (a `/` where an expression may start) are skipped.
pub(crate) fn unbalanced(source: &str) -> Option<Unbalanced> {
    // Each open bracket, where, and whether it opened the head of an `if`,
    // a loop or a `with` (after whose `)` a statement, so perhaps a
    // regular expression, starts).
    let mut open: Vec<(char, Position, bool)> = Vec::new();
    // The last token was one of those keywords.
    let mut heads_statement = false;
    // Template literals whose `${` is open: the depth of `open` at each.
    let mut templates: Vec<usize> = Vec::new();
    let mut chars = source.chars().peekable();
    let (mut line, mut column) = (1usize, 0usize);
    // Whether a `/` here would start a regular expression.
    let mut regex_may_start = true;
    let mut last_word = String::new();
    // The last token was a `.` (so a word after it is a property name).
    let mut after_dot = false;
    macro_rules! next {
        () => {{
            let c = chars.next();
            if let Some(c) = c {
                if c == '\n' {
                    line += 1;
                    column = 0;
                } else {
                    column += 1;
                }
            }
            c
        }};
    }
    // Skips a template literal's text up to its end or its next `${`;
    // true at a `${`.
    macro_rules! template_text {
        () => {{
            let mut interpolation = false;
            while let Some(c) = next!() {
                match c {
                    '\\' => {
                        next!();
                    }
                    '`' => break,
                    '$' if chars.peek() == Some(&'{') => {
                        next!();
                        interpolation = true;
                        break;
                    }
                    _ => {}
                }
            }
            interpolation
        }};
    }
    while let Some(c) = next!() {
        let here = Position { line, column };
        let was_dot = after_dot;
        let was_head = heads_statement;
        if !c.is_whitespace() {
            after_dot = false;
            heads_statement = false;
        }
        match c {
            '"' | '\'' => {
                while let Some(d) = next!() {
                    match d {
                        '\\' => {
                            next!();
                        }
                        '\n' => break,
                        _ if d == c => break,
                        _ => {}
                    }
                }
                regex_may_start = false;
            }
            '`' => {
                if template_text!() {
                    templates.push(open.len());
                }
                regex_may_start = false;
            }
            '/' if chars.peek() == Some(&'/') => {
                while chars.peek().is_some_and(|&d| d != '\n') {
                    next!();
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                next!();
                let mut star = false;
                while let Some(d) = next!() {
                    if star && d == '/' {
                        break;
                    }
                    star = d == '*';
                }
            }
            '/' if regex_may_start => {
                let mut class = false;
                while let Some(d) = next!() {
                    match d {
                        '\\' => {
                            next!();
                        }
                        '[' => class = true,
                        ']' => class = false,
                        '/' if !class => break,
                        '\n' => break,
                        _ => {}
                    }
                }
                while chars.peek().is_some_and(|&d| is_name_char(d)) {
                    next!();
                }
                regex_may_start = false;
            }
            '(' | '[' | '{' => {
                if open.len() == MAX_OPEN {
                    return None;
                }
                open.push((c, here, c == '(' && was_head));
                regex_may_start = true;
            }
            ')' | ']' | '}' => {
                if c == '}' && templates.last() == Some(&open.len()) {
                    templates.pop();
                    if template_text!() {
                        templates.push(open.len());
                    }
                    regex_may_start = false;
                    continue;
                }
                let Some((opener, _, head)) = open.pop() else {
                    return Some(Unbalanced::Stray(c, here));
                };
                if !matches!((opener, c), ('(', ')') | ('[', ']') | ('{', '}')) {
                    // Crossed brackets: the scan is not sure which is wrong.
                    return None;
                }
                // After `)` a `/` divides, unless the `)` closed the head
                // of an `if`, a loop or a `with`: a statement starts there
                // (`if (s) /^\(/.test(s)` was read as a division, and its
                // `\(` as a bracket never closed).
                regex_may_start = c == '}' || head;
            }
            '+' | '-' if chars.peek() == Some(&c) => {
                // `i++ / 2` divides: after a postfix `++` or `--` (a prefix
                // one cannot meet a `/`).
                next!();
                regex_may_start = false;
            }
            '.' => {
                after_dot = true;
                regex_may_start = true;
            }
            c if is_name_char(c) => {
                last_word.clear();
                last_word.push(c);
                while chars.peek().is_some_and(|&d| is_name_char(d)) {
                    if let Some(d) = next!()
                        && last_word.len() < MAX_WORD
                    {
                        last_word.push(d);
                    }
                }
                heads_statement =
                    !was_dot && matches!(last_word.as_str(), "if" | "while" | "for" | "with");
                // A property (`obj.in`) is a name, never a keyword.
                regex_may_start = !was_dot
                    && matches!(
                        last_word.as_str(),
                        "return"
                            | "typeof"
                            | "instanceof"
                            | "in"
                            | "of"
                            | "new"
                            | "delete"
                            | "void"
                            | "throw"
                            | "case"
                            | "do"
                            | "else"
                            | "yield"
                            | "await"
                    );
            }
            c if c.is_whitespace() => {}
            _ => regex_may_start = true,
        }
    }
    if !templates.is_empty() {
        return None;
    }
    open.pop().map(|(c, at, _)| Unbalanced::Unclosed(c, at))
}

/// What `import` and `export` meet here: no modules.
pub(crate) const NO_MODULES: &str = "there are no modules: the program is the body of an async \
     function and each tool is a global async function, so there is nothing to import or \
     export (in TypeScript, an import of types alone can be `import type`, which is removed)";

/// Whether the syntax error at `at` is on a line that starts with `import`
/// or `export`: words the language reserves, so such a line is a module's
/// statement, which a function body cannot hold. (QuickJS places the error
/// after the word: `import { A }` at its `{`.)
pub(crate) fn module_statement(source: &str, at: Position) -> bool {
    let Some(line) = whole_line(source, at) else {
        return false;
    };
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("import") {
        // `import x from`, `import { a }`, `import * as`, `import "m"`.
        let after = rest.trim_start();
        return (rest.starts_with(['{', '*', '"', '\'']) || rest.len() > after.len())
            && after.starts_with(|c: char| is_name_char(c) || "{*\"'".contains(c));
    }
    if let Some(rest) = line.strip_prefix("export") {
        let after = rest.trim_start();
        if rest.starts_with(['{', '*']) {
            return true;
        }
        return rest.len() > after.len()
            && (after.starts_with(['{', '*'])
                || [
                    "default",
                    "const",
                    "let",
                    "var",
                    "function",
                    "async",
                    "class",
                    "type",
                    "interface",
                    "enum",
                    "declare",
                    "abstract",
                    "namespace",
                ]
                .iter()
                .any(|word| {
                    after
                        .strip_prefix(word)
                        .is_some_and(|tail| !tail.starts_with(is_name_char))
                }));
    }
    false
}

/// Why a global that model-written code reaches for is missing here, and
/// what to use instead, for `ReferenceError: NAME is not defined`.
pub(crate) fn missing_global(name: &str) -> Option<&'static str> {
    Some(match name {
        "require" | "module" | "exports" => {
            "there are no modules: the program is the body of an async function, and each tool is a global async function"
        }
        "process" => {
            "there is no process: no environment, arguments or exit; the program's answer is what it returns"
        }
        "__dirname" | "__filename" => "there is no file system: reach files through the tools",
        "fetch" | "XMLHttpRequest" | "WebSocket" | "EventSource" | "Headers" | "Request"
        | "Response" => "there is no network: reach the outside through the tools",
        "Blob" | "File" | "FormData" => {
            "there is no Blob: build text with strings, and bytes with TextEncoder and Uint8Array"
        }
        "Buffer" => "there is no Buffer: use TextEncoder, TextDecoder, atob, btoa and Uint8Array",
        "setImmediate" => "use setTimeout(f, 0) or queueMicrotask(f)",
        "window" | "self" | "global" => "use globalThis",
        "document" | "localStorage" | "sessionStorage" | "navigator" => {
            "there is no browser page: no DOM and no storage"
        }
        // How other hosts hand a model its tools.
        "tools" | "functions" | "default_api" | "api" => {
            "each tool is a global async function: call it by its name, as host.NAME, or \
             with host.call(name, args)"
        }
        _ => return None,
    })
}

/// What to use instead of a method that is not there, for `TypeError:
/// OBJECT.METHOD is not a function` where model-written code reaches for
/// Node's.
pub(crate) fn missing_method(callee: &str) -> Option<&'static str> {
    Some(match callee {
        "crypto.createHash" | "crypto.createHmac" => {
            "there is no Node crypto: hash with `await crypto.subtle.digest(\"SHA-256\", \
             new TextEncoder().encode(text))`"
        }
        "crypto.randomBytes" => {
            "there is no Node crypto: use crypto.getRandomValues(new Uint8Array(n))"
        }
        "performance.mark"
        | "performance.measure"
        | "performance.getEntries"
        | "performance.getEntriesByName"
        | "performance.getEntriesByType"
        | "performance.clearMarks"
        | "performance.clearMeasures" => {
            "only performance.now() and performance.timeOrigin are here: time a step as the \
             difference of two performance.now() readings"
        }
        _ => return None,
    })
}

/// What to do about a value JSON cannot write, by the words for why
/// (`JSON.stringify`'s TypeError, in V8's words or a native build's
/// QuickJS's): a BigInt, or a value that holds itself.
pub(crate) fn no_json(why: &str) -> Option<&'static str> {
    if why.contains("BigInt") {
        Some(
            "JSON has no BigInt: convert it first, with String(n), or Number(n) when it is small enough",
        )
    } else if why.contains("circular structure") || why.contains("circular reference") {
        Some("the value holds itself: return a copy with only the fields you need")
    } else {
        None
    }
}

/// What QuickJS's words for using null, undefined or a plain object as
/// what they are not mean in the program's terms (Node names the
/// destructuring and the value; QuickJS says neither), for a `TypeError`
/// headline.
pub(crate) fn not_an_object(headline: &str) -> Option<&'static str> {
    let rest = headline.strip_prefix("TypeError: ")?;
    Some(match rest {
        "Cannot convert undefined or null to object" => {
            "a destructuring such as `const { a } = value`, or `Object.keys(value)`, \
             of a value that is null or undefined"
        }
        // V8's words, which the component's QuickJS uses (c/format.c), and
        // QuickJS's own, which a native build keeps.
        "null is not iterable"
        | "undefined is not iterable"
        | "cannot read property 'Symbol.iterator' of null"
        | "cannot read property 'Symbol.iterator' of undefined" => {
            "a `for...of`, a spread `...value` or an array destructuring \
             `const [a] = value` of a value that is null or undefined"
        }
        "value is not iterable" => {
            "a `for...of`, a spread or an array destructuring of a value that is not \
             iterable: for a plain object, use Object.entries(value)"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, column: usize) -> Position {
        Position { line, column }
    }

    #[test]
    fn a_line_that_starts_with_import_or_export_is_a_module_statement() {
        for line in [
            "import { User } from './types';",
            "  import fs from 'fs'",
            "import{a}from'b'",
            "export async function main() {}",
            "export default 1",
            "export { x }",
        ] {
            assert!(module_statement(line, at(1, 3)), "{line}");
        }
        // `import(...)`, `import.meta` and names that start with the words
        // are other errors.
        for line in [
            "await import('x')",
            "import('x')",
            "import.meta",
            "imported = 1",
            "exports.x = 1",
            "const x = 1",
            "  export: true",
            "export = 1",
            "import\t= 2",
        ] {
            assert!(!module_statement(line, at(1, 3)), "{line}");
        }
    }

    #[test]
    fn a_callee_is_the_chain_before_the_call() {
        assert_eq!(
            callee("const o = {};\no.method();", at(2, 3)).as_deref(),
            Some("o.method")
        );
        assert_eq!(callee("f();", at(1, 1)).as_deref(), Some("f"));
        assert_eq!(
            callee("x.toUpperCase();", at(1, 2)).as_deref(),
            Some("x.toUpperCase")
        );
        assert_eq!(
            callee("await host.nosuch (1)", at(1, 11)).as_deref(),
            Some("host.nosuch")
        );
        assert_eq!(callee("a.map(f).foo();", at(1, 9)).as_deref(), Some(".foo"));
        assert_eq!(callee("o?.f?.();", at(1, 3)).as_deref(), Some("o?.f"));
        assert_eq!(callee("tag`x`;", at(1, 1)).as_deref(), Some("tag"));
        // The call of what a call returned.
        assert_eq!(
            callee("handlers.get(\"a)\")(1);", at(1, 10)).as_deref(),
            Some("handlers.get(...)")
        );
        assert_eq!(callee("make()`x`;", at(1, 1)).as_deref(), Some("make(...)"));
        // Not a call, or nothing to name: nothing said.
        assert_eq!(callee("o[k]();", at(1, 2)), None);
        assert_eq!(callee("function (x) {}", at(1, 1)), None);
        assert_eq!(callee("(a + b)();", at(1, 1)), None);
        assert_eq!(callee("", at(3, 1)), None);
    }

    /// QuickJS places a call that failed inside its arguments when they
    /// hold a call or a function: the names below are what it placed.
    #[test]
    fn a_place_inside_a_calls_arguments_names_that_call() {
        // The place starts no call of its own: the enclosing call failed.
        for (program, column) in [
            ("rows.map(x => x * 2);", 10),
            ("rows.map(   1);", 13),
            ("rows.forEach(function (x) {});", 14),
            ("f(async function g() {});", 18),
            ("rows.map(new Set());", 14),
            ("seen.push(class {});", 11),
        ] {
            let enclosing = program.split('(').next().unwrap();
            assert_eq!(
                callee(program, at(1, column)).as_deref(),
                Some(enclosing),
                "{program}"
            );
        }
        // It starts a call: either failed, and both are named.
        assert_eq!(
            callee("results.push(await echo({host: \"db1\"}));", at(1, 20)).as_deref(),
            Some("results.push (or echo, called in its arguments)")
        );
        assert_eq!(
            callee("rows.map(Math.max(1, 2));", at(1, 10)).as_deref(),
            Some("rows.map (or Math.max, called in its arguments)")
        );
        // Inside a function given as an argument, or after the call's
        // close, or in a condition or a `new`: only the place's own call.
        for (program, column, named) in [
            ("items.map(x => lookup(x));", 16, "lookup"),
            ("items.forEach((x) => { lookup(x) });", 24, "lookup"),
            ("if (check(x)) {}", 5, "check"),
            ("new Thing(make(1));", 11, "make"),
            (
                "log(\"(\", f(1));",
                11,
                "log (or f, called in its arguments)",
            ),
        ] {
            assert_eq!(
                callee(program, at(1, column)).as_deref(),
                Some(named),
                "{program}"
            );
        }
    }

    #[test]
    fn an_await_read_as_a_name_is_found() {
        let program = "xs.forEach((x) => {\n  const r = await fetchIt(x);\n});";
        assert_eq!(await_outside_async(program, at(2, 19)), Some(at(2, 13)));
        assert_eq!(await_outside_async("const awaited = 1 x", at(1, 19)), None);
        assert_eq!(await_outside_async("a b", at(1, 3)), None);
    }

    #[test]
    fn the_bracket_out_of_balance_is_found_past_strings_comments_and_regexps() {
        assert_eq!(
            unbalanced("return Math.max(1, 2"),
            Some(Unbalanced::Unclosed('(', at(1, 16)))
        );
        assert_eq!(
            unbalanced("const a = [1, 2,\n  3,"),
            Some(Unbalanced::Unclosed('[', at(1, 11)))
        );
        assert_eq!(
            unbalanced("if (x) {\n  y();\n}\n}"),
            Some(Unbalanced::Stray('}', at(4, 1)))
        );
        // Brackets inside strings, templates, comments and regexps count
        // for nothing; a template's `${}` is code.
        assert_eq!(
            unbalanced(
                "const s = '(' + \"[\" + `{${f(1)}` // (\n/* [ */ const r = /[(]/g; x = a / b / c;"
            ),
            None
        );
        assert_eq!(unbalanced("const t = `a ${ g(`b${[1]}`) }`;"), None);
        assert_eq!(
            unbalanced("const t = `a ${ g(1"),
            None,
            "an unfinished template is not sure"
        );
        assert_eq!(unbalanced("f(a[0], { b: (1) });"), None);
        assert_eq!(unbalanced("f(a]"), None, "crossed: not sure");
        // A `/` after `i++` or after a property named like a keyword
        // divides; it read as a regular expression, and the scan named a
        // `)` where the `{` was left open.
        assert_eq!(
            unbalanced("let i = 0; const a = i++ / 2, b = Math.max(i / 3); const cfg = {"),
            Some(Unbalanced::Unclosed('{', at(1, 64)))
        );
        assert_eq!(
            unbalanced("const o = {in: 4}; const h = o.in / 2; const z = (1, [2"),
            Some(Unbalanced::Unclosed('[', at(1, 54)))
        );
        // After the head of an `if` or a loop a statement starts, so a `/`
        // there starts a regular expression: its `\(` was read as a
        // bracket never closed, where the program was cut off at line 3.
        // (Read as a division, the `\(` was a bracket never closed.)
        assert_eq!(
            unbalanced("const s = \"(x\";\nif (s) /^\\(/.test(s);\nconst total = 1;"),
            None
        );
        assert_eq!(
            unbalanced("while (go()) /[)]/.exec(t); for (;;) /\\(/.test(u); const z = 1;"),
            None
        );
        // A call's `)` still divides: read as a regular expression, `/
        // g(y) + (z /` would leave the `)` after it closing nothing.
        assert_eq!(
            unbalanced("const q = f(x) / g(y) + (z / 2); const w = {"),
            Some(Unbalanced::Unclosed('{', at(1, 44)))
        );
    }

    #[test]
    fn brackets_nested_past_any_program_leave_the_scan_unsure() {
        let deep = format!("{}1", "(".repeat(MAX_OPEN + 1));
        assert_eq!(unbalanced(&deep), None);
        let shallow = format!("{}1", "(".repeat(MAX_OPEN));
        assert_eq!(
            unbalanced(&shallow),
            Some(Unbalanced::Unclosed('(', at(1, MAX_OPEN)))
        );
    }

    #[test]
    fn a_hint_reads_only_the_text_near_its_place() {
        // A call far into a long line is still named, and the place of an
        // `await` after the cut is still counted from the line's start.
        let pad = "a".repeat(3 * NEAR);
        let source = format!("/*{pad}*/ let f = 1; o.run(f(2));");
        let column = source.find("f(2)").expect("the call") + 1;
        assert_eq!(
            callee(&source, at(1, column)).as_deref(),
            Some("o.run (or f, called in its arguments)")
        );
        let source = format!("/*{pad}*/ function g() {{ await h(); }}");
        let column = source.find("h()").expect("the call") + 1;
        assert_eq!(
            await_outside_async(&source, at(1, column)),
            Some(at(1, column - "await ".len()))
        );
        let (text, offset, skipped) = line_at(&source, at(1, column)).expect("the line");
        assert!(text.len() <= 2 * NEAR, "{}", text.len());
        assert_eq!(skipped + text[..offset].chars().count() + 1, column);
    }

    #[test]
    fn what_a_model_reaches_for_is_named_with_what_to_use() {
        for name in ["fetch", "Headers", "Request", "Response"] {
            assert!(
                missing_global(name).unwrap().contains("through the tools"),
                "{name}"
            );
        }
        for name in ["Blob", "File", "FormData"] {
            assert!(
                missing_global(name).unwrap().contains("TextEncoder"),
                "{name}"
            );
        }
        assert_eq!(missing_global("Map"), None);
        for callee in [
            "performance.mark",
            "performance.measure",
            "performance.getEntriesByName",
        ] {
            assert!(
                missing_method(callee)
                    .unwrap()
                    .contains("performance.now()"),
                "{callee}"
            );
        }
        assert_eq!(missing_method("performance.now"), None);
        for why in [
            "Do not know how to serialize a BigInt",
            "BigInt are forbidden in JSON.stringify",
        ] {
            assert!(no_json(why).unwrap().contains("String(n)"), "{why}");
        }
        for why in [
            "TypeError: Converting circular structure to JSON",
            "TypeError: circular reference",
        ] {
            assert!(no_json(why).unwrap().contains("holds itself"), "{why}");
        }
        assert_eq!(no_json("TypeError: boom"), None);
    }
}
