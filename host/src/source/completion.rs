//! A program whose last statement is an expression returns its value.
//!
//! A model writes `await search("x")` and expects the answer, as a REPL or
//! a notebook cell would give it; the body of an async function returns
//! `undefined` instead. When the program's last top-level statement is an
//! expression statement `E;`, it becomes `__wasmwire_last = E;`, and
//! `;return __wasmwire_last;` (with the `var` that declares it) is added on
//! lines of its own after the program (a program that writes that name
//! itself gets one it does not write: `__wasmwire_last$`, with as many `$`
//! as it takes). A last `if`, `try` or block whose branches end in
//! expressions answers as `eval` would, the last expression of the branch
//! that ran: each such expression statement is assigned the same way
//! (`try { await f() } catch (e) { e.kind }`). Nothing else changes: not
//! an expression inside a loop or a `switch`, not a branch ending in a
//! sequence expression `a, b` (such an ending is named,
//! [`Ending::InBranches`], for a hint), not a program that already ends
//! with `return`. (A last `{ ... }` that reads as an object
//! literal was put in parentheses before, by `object_block.rs`, and is
//! returned as any `({ ... })` is.) A program that is only string literals
//! (`'abc'`, or `"use strict"; "x"`) returns the last, as `eval` would:
//! that one stops being a directive, and no code follows it for the
//! directive to govern.
//! Empty statements after the expression (`E;;`, and the `;` the TypeScript
//! stripper leaves where an `interface` was) do not count as the last, nor
//! does a `var` without initialisers (`E; var n;`: JavaScript gives such a
//! statement no value, and TypeScript's `namespace` transform ends in one).
//!
//! Why an assignment and not `return E;`: QuickJS names the place of an
//! error by the statement it was in, and it records places for expression
//! statements but not for `return` (an error in `return null.boom` is put
//! at the program's line 1, column 1). The assignment is an expression
//! statement, so an error in `E` is still put at `E`. A sequence
//! expression (`a, b`) would bind looser than `=`, so it gets `return `.
//!
//! The inserted characters move the rest of that one line to the right;
//! the [`Step`] says so, for the position map (which the child is sent: it
//! names every place, in a Result and in a stack the program reads, as the
//! program's own). What is added after the
//! program is on lines of its own, after every place of the program.

use swc_ecma_ast::{Decl, Expr, ExprStmt, MemberProp, Pat, Stmt, VarDeclKind};

use super::body::{HEAD, offset, parse_program};
use super::position::{Lines, Step};

/// The variable the value goes through, unless the program writes it.
const VARIABLE: &str = "__wasmwire_last";

/// A variable `program` does not write anywhere: [`VARIABLE`], or it
/// followed by one `$` more than the most that follow it in the program.
/// One pass, however often the program writes the name.
fn variable(program: &str) -> String {
    let mut dollars = None;
    let mut rest = program;
    while let Some(at) = rest.find(VARIABLE) {
        rest = &rest[at + VARIABLE.len()..];
        let run = rest.len() - rest.trim_start_matches('$').len();
        dollars = dollars.max(Some(run));
    }
    match dollars {
        None => VARIABLE.to_owned(),
        Some(most) => format!("{VARIABLE}{}", "$".repeat(most + 1)),
    }
}

/// What is put before the expression: an assignment to `variable`.
fn assign(variable: &str) -> String {
    format!("{variable} = ")
}

/// What is added after the program: the return of `variable`, and its
/// declaration (a `var`, hoisted, so it is declared before the assignment
/// runs, in sloppy and strict mode alike).
fn return_it(variable: &str) -> String {
    format!("\n;return {variable};\nvar {variable};")
}

/// What is put before a sequence expression, which cannot be assigned
/// without parentheses.
const RETURN: &str = "return ";

/// Statements after the last expression that do not make it the last: an
/// empty one, and a `var` without initialisers (which JavaScript gives no
/// value either; TypeScript's `namespace N` transform ends in `var N;`).
fn gives_no_value(statement: &Stmt) -> bool {
    match statement {
        Stmt::Empty(_) => true,
        Stmt::Decl(Decl::Var(var)) => {
            var.kind == VarDeclKind::Var && var.decls.iter().all(|decl| decl.init.is_none())
        }
        _ => false,
    }
}

/// Whether the last statement of `statements` (a block's) that gives a
/// value ends in an expression ([`ends_in_expression`]).
fn last_ends_in_expression(statements: &[Stmt]) -> bool {
    statements
        .iter()
        .rev()
        .find(|s| !gives_no_value(s))
        .is_some_and(ends_in_expression)
}

/// Whether `statement` is an expression statement, or an `if` (either
/// branch), a `try` (its block or its `catch`; a `finally` gives no value)
/// or a block one of whose branches ends in one: what `eval` would answer.
fn ends_in_expression(statement: &Stmt) -> bool {
    match statement {
        Stmt::Expr(_) => true,
        Stmt::Block(block) => last_ends_in_expression(&block.stmts),
        Stmt::If(branch) => {
            ends_in_expression(&branch.cons)
                || branch.alt.as_deref().is_some_and(ends_in_expression)
        }
        Stmt::Try(attempt) => {
            last_ends_in_expression(&attempt.block.stmts)
                || attempt
                    .handler
                    .as_ref()
                    .is_some_and(|handler| last_ends_in_expression(&handler.body.stmts))
        }
        _ => false,
    }
}

/// How a program ends, as far as its answer goes.
#[derive(Debug)]
pub(crate) enum Ending {
    /// In an expression, or in branches that end in expressions: the
    /// program, its value returned, and the insertions made, in order; and
    /// when the expression is a call of the console's (`console.log(total)`),
    /// which answers `undefined`, its callee.
    Returned(String, Vec<Step>, Option<String>),
    /// In a declaration of a variable with a value (`const total = ...`),
    /// named here: a program that was meant to answer it forgot to, and
    /// answers `null`.
    Declared(String),
    /// In a function declaration (named here), with no `return` among the
    /// program's own statements: `async function main() { ... }` written
    /// as a script's entry point and never called answers `null`.
    DeclaredFunction(String),
    /// A call of an `async function` the program declares (named here),
    /// made as a statement of its own and not awaited (`main();` above
    /// `async function main() {...}`, or `main().catch(...)`), with no
    /// `return` among the program's own statements: the program ends, and
    /// answers `null`, before the function finishes, and the calls it is
    /// waiting on are cancelled.
    CalledUnawaited(String),
    /// In an `if`, a `try` or a block (named here) whose branches end in
    /// expressions, one of them a sequence (`a, b`), which cannot be
    /// assigned without parentheses: `eval` would answer the one that ran,
    /// a function body answers `null`.
    InBranches(&'static str),
    /// Otherwise (`return`, a loop, a program that does not parse).
    Other,
}

/// `program` returning its completion value, when its last statement is
/// an expression statement or ends in one ([`completions`]); `None` when
/// it does not, or when the program does not parse (the guest then
/// reports its own syntax error). The steps are the insertions, in order.
#[cfg(test)]
pub(crate) fn return_last_expression(program: &str) -> Option<(String, Vec<Step>)> {
    match ending(program) {
        Ending::Returned(text, steps, _) => Some((text, steps)),
        _ => None,
    }
}

/// The name a last declaration gives its first variable, when it has a
/// value and a plain name.
fn declared(statement: &Stmt) -> Option<String> {
    let Stmt::Decl(Decl::Var(var)) = statement else {
        return None;
    };
    let first = var.decls.first()?;
    first.init.as_ref()?;
    match &first.name {
        Pat::Ident(name) => Some(name.id.sym.to_string()),
        _ => None,
    }
}

/// The first `async function` of `statements` that one of them calls as
/// a statement of its own, not awaited: `main()`, or `main().then(...)`,
/// `.catch(...)`, `.finally(...)` of it ([`Ending::CalledUnawaited`]).
fn called_unawaited(statements: &[Stmt]) -> Option<String> {
    let is_async = |name: &str| {
        statements.iter().any(
            |s| matches!(s, Stmt::Decl(Decl::Fn(f)) if f.function.is_async && f.ident.sym == name),
        )
    };
    statements.iter().find_map(|statement| {
        let Stmt::Expr(statement) = statement else {
            return None;
        };
        let mut call = &*statement.expr;
        // Down a `.then`/`.catch`/`.finally` chain to the call it starts from.
        loop {
            let Expr::Call(outer) = call else {
                return None;
            };
            let callee = outer.callee.as_expr()?;
            match &**callee {
                Expr::Ident(name) => {
                    return is_async(&name.sym).then(|| name.sym.to_string());
                }
                Expr::Member(member)
                    if matches!(&member.prop, MemberProp::Ident(p)
                        if matches!(&*p.sym, "then" | "catch" | "finally")) =>
                {
                    call = &member.obj;
                }
                _ => return None,
            }
        }
    })
}

/// Whether `name` is written in `program` more than once, as a whole
/// word: a function the program calls, or names in any way, is not one
/// nothing called (a mention in a comment or a string counts too, which
/// only keeps a warning back).
fn named_again(program: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    program
        .match_indices(name)
        .filter(|&(at, _)| {
            !program[..at].chars().next_back().is_some_and(word)
                && !program[at + name.len()..].chars().next().is_some_and(word)
        })
        .nth(1)
        .is_some()
}

/// How `program` ends ([`Ending`]), and the program returning its value
/// when it ends in an expression.
pub(crate) fn ending(program: &str) -> Ending {
    let Some(script) = parse_program(program) else {
        return Ending::Other;
    };
    let Some((statements, _, _)) = super::body::function_body(&script) else {
        return Ending::Other;
    };
    let Some(last) = statements.iter().rev().find(|s| !gives_no_value(s)) else {
        return Ending::Other;
    };
    if let Stmt::Expr(expression) = last {
        return returned(program, expression).map_or(Ending::Other, |(text, step)| {
            Ending::Returned(text, vec![step], logged(expression))
        });
    }
    if let Some(name) = declared(last) {
        return Ending::Declared(name);
    }
    let returns = statements.iter().any(|s| matches!(s, Stmt::Return(_)));
    // Only where the program's value is otherwise none: a last `if` or
    // `try` that ends in expressions answers one.
    if !returns
        && !ends_in_expression(last)
        && let Some(name) = called_unawaited(statements)
    {
        return Ending::CalledUnawaited(name);
    }
    if let Stmt::Decl(Decl::Fn(function)) = last
        && !returns
        && !named_again(program, &function.ident.sym)
    {
        return Ending::DeclaredFunction(function.ident.sym.to_string());
    }
    if !ends_in_expression(last) {
        return Ending::Other;
    }
    let mut ends = Vec::new();
    branch_ends(last, &mut ends);
    if !ends.iter().any(|end| matches!(&*end.expr, Expr::Seq(_)))
        && let Some((text, steps)) = returned_in_branches(program, &ends)
    {
        return Ending::Returned(text, steps, None);
    }
    match last {
        Stmt::If(_) => Ending::InBranches("an `if`"),
        Stmt::Try(_) => Ending::InBranches("a `try`"),
        _ => Ending::InBranches("a block"),
    }
}

/// The expression statements that end the branches of `statement`, as
/// [`ends_in_expression`] finds them: the last of each block that gives a
/// value, both branches of an `if`, a `try`'s block and its `catch`.
fn branch_ends<'a>(statement: &'a Stmt, ends: &mut Vec<&'a ExprStmt>) {
    match statement {
        Stmt::Expr(expression) => ends.push(expression),
        Stmt::Block(block) => last_branch_ends(&block.stmts, ends),
        Stmt::If(branch) => {
            branch_ends(&branch.cons, ends);
            if let Some(alt) = branch.alt.as_deref() {
                branch_ends(alt, ends);
            }
        }
        Stmt::Try(attempt) => {
            last_branch_ends(&attempt.block.stmts, ends);
            if let Some(handler) = &attempt.handler {
                last_branch_ends(&handler.body.stmts, ends);
            }
        }
        _ => {}
    }
}

/// [`branch_ends`] of the last statement of `statements` that gives a value.
fn last_branch_ends<'a>(statements: &'a [Stmt], ends: &mut Vec<&'a ExprStmt>) {
    if let Some(last) = statements.iter().rev().find(|s| !gives_no_value(s)) {
        branch_ends(last, ends);
    }
}

/// `program` with each of `ends` assigned to the answer's variable, and
/// the insertions made: from the last in the text to the first, so that
/// each is at a place of the text as it was when it was made.
fn returned_in_branches(program: &str, ends: &[&ExprStmt]) -> Option<(String, Vec<Step>)> {
    let mut offsets = ends
        .iter()
        .map(|end| offset(end.span.lo).checked_sub(HEAD.len()))
        .collect::<Option<Vec<usize>>>()?;
    if offsets.is_empty() || !offsets.iter().all(|&at| program.is_char_boundary(at)) {
        return None;
    }
    offsets.sort_unstable_by(|a, b| b.cmp(a));
    offsets.dedup();
    let variable = variable(program);
    let before = assign(&variable);
    let lines = Lines::new(program);
    let mut text = program.to_owned();
    let mut steps = Vec::with_capacity(offsets.len());
    for at in offsets {
        let (line, column) = lines.position(at);
        text.insert_str(at, &before);
        steps.push(Step::Inserted {
            line,
            column,
            width: before.len(),
        });
    }
    text.push_str(&return_it(&variable));
    Some((text, steps))
}

/// `console.NAME` when `expression` is a call of it (awaited or not).
fn logged(expression: &ExprStmt) -> Option<String> {
    let mut expr = &*expression.expr;
    if let Expr::Await(awaited) = expr {
        expr = &awaited.arg;
    }
    let Expr::Call(call) = expr else {
        return None;
    };
    let Expr::Member(member) = &**call.callee.as_expr()? else {
        return None;
    };
    let (Expr::Ident(object), MemberProp::Ident(name)) = (&*member.obj, &member.prop) else {
        return None;
    };
    (&*object.sym == "console").then(|| format!("console.{}", name.sym))
}

/// `program` with `expression` made its value.
fn returned(program: &str, expression: &ExprStmt) -> Option<(String, Step)> {
    let at = offset(expression.span.lo).checked_sub(HEAD.len())?;
    if !program.is_char_boundary(at) {
        return None;
    }
    let (line, column) = Lines::new(program).position(at);
    let sequence = matches!(&*expression.expr, Expr::Seq(_));
    let (before, after) = if sequence {
        (RETURN.to_owned(), String::new())
    } else {
        // Not one the program writes: `let __wasmwire_last` would be
        // declared again by the added `var`.
        let variable = variable(program);
        (assign(&variable), return_it(&variable))
    };
    let mut text = String::with_capacity(program.len() + before.len() + after.len());
    text.push_str(&program[..at]);
    text.push_str(&before);
    text.push_str(&program[at..]);
    text.push_str(&after);
    let step = Step::Inserted {
        line,
        column,
        width: before.len(),
    };
    Some((text, step))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::PositionMap;

    /// The program after the rewrite, or itself when there is none.
    fn rewritten(program: &str) -> String {
        return_last_expression(program).map_or_else(|| program.to_owned(), |(text, _)| text)
    }

    /// `program` as the rewrite should make it: `head`, the assignment,
    /// `rest`, and the return after it.
    fn assigned(head: &str, rest: &str) -> String {
        let (assign, return_it) = (assign(VARIABLE), return_it(VARIABLE));
        format!("{head}{assign}{rest}{return_it}")
    }

    #[test]
    fn a_last_call_of_the_console_is_named() {
        for (program, logged) in [
            (
                "const d = 1;\nconsole.log(JSON.stringify(d));",
                Some("console.log"),
            ),
            ("await console.table([1])", Some("console.table")),
            ("log(1)", None),
            ("other.log(1)", None),
            ("console['log'](1)", None),
            ("main().then(console.log)", None),
        ] {
            match ending(program) {
                Ending::Returned(_, _, found) => assert_eq!(found.as_deref(), logged, "{program}"),
                other => panic!("{program}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_awaited_call_alone_is_returned() {
        assert_eq!(rewritten("await f()"), assigned("", "await f()"));
        assert_eq!(rewritten("await f();"), assigned("", "await f();"));
    }

    #[test]
    fn an_arithmetic_expression_is_returned() {
        assert_eq!(
            rewritten("const a = 1;\na + 2\n"),
            assigned("const a = 1;\n", "a + 2\n")
        );
    }

    #[test]
    fn a_parenthesised_object_literal_is_returned() {
        assert_eq!(rewritten("({a: 1})"), assigned("", "({a: 1})"));
    }

    #[test]
    fn a_declaration_last_is_left_alone() {
        for program in [
            "const x = await f();",
            "let y = 1",
            "function g() { return 1 }",
            "class C {}",
        ] {
            assert_eq!(
                return_last_expression(program).map(|r| r.0),
                None,
                "{program}"
            );
        }
    }

    #[test]
    fn a_last_function_declaration_is_named_unless_the_program_returns() {
        for (program, named) in [
            (
                "async function main() {\n  return await f();\n}",
                Some("main"),
            ),
            ("const x = 1;\nfunction run() { return x }", Some("run")),
            (
                "return await main();\nasync function main() { return 1 }",
                None,
            ),
            ("function f() {}\nf()", None),
            (
                "await main();\nasync function main() { console.log(1) }",
                None,
            ),
            (
                "for (const x of xs) { if (ok(x)) return x }\nfunction ok(x) { return x }",
                None,
            ),
            (
                "const mainly = 1;\nasync function main() { return mainly }",
                Some("main"),
            ),
        ] {
            let got = match ending(program) {
                Ending::DeclaredFunction(name) => Some(name),
                _ => None,
            };
            assert_eq!(got.as_deref(), named, "{program}");
        }
    }

    #[test]
    fn an_async_function_called_and_not_awaited_is_named_unless_the_program_returns() {
        for (program, named) in [
            ("main();\nasync function main() { await f() }", Some("main")),
            (
                "main().catch(console.error);\nasync function main() { await f() }",
                Some("main"),
            ),
            (
                "async function run() {}\nrun().then(r => console.log(r)).finally(() => 1);\nfor (const x of []) {}",
                Some("run"),
            ),
            // Awaited, returned, a function that is not async, the last
            // statement (returned, so awaited), a method of something else.
            ("await main();\nasync function main() {}", None),
            ("main();\nreturn 1;\nasync function main() {}", None),
            ("main();\nfunction main() {}", None),
            ("async function main() {}\nmain()", None),
            ("api.main();\nasync function main() {}", None),
            ("main.call();\nasync function main() {}", None),
            ("(async () => {})();\nconst x = 1", None),
            // A last `if` or `try` that ends in expressions answers them.
            (
                "async function note(s) {}\nnote('start');\nconst n = 2;\ntry { n * 21 } catch { 0 }",
                None,
            ),
            (
                "async function note(s) {}\nnote('start');\nif (1) { 'big' } else { 'small' }",
                None,
            ),
        ] {
            let got = match ending(program) {
                Ending::CalledUnawaited(name) => Some(name),
                _ => None,
            };
            assert_eq!(got.as_deref(), named, "{program}");
        }
    }

    #[test]
    fn a_last_declaration_with_a_value_is_named() {
        let name = |program| match ending(program) {
            Ending::Declared(name) => Some(name),
            _ => None,
        };
        assert_eq!(name("const total = await f();").as_deref(), Some("total"));
        assert_eq!(name("f()\nlet a = 1, b = 2\n;").as_deref(), Some("a"));
        assert_eq!(name("var n = 1"), Some("n".to_owned()));
        for program in ["let y;", "const { a } = o", "function g() {}", "return 1"] {
            assert_eq!(name(program), None, "{program}");
        }
    }

    #[test]
    fn what_javascript_gives_no_value_after_the_expression_does_not_count() {
        assert_eq!(rewritten("f()\nvar n;"), assigned("", "f()\nvar n;"));
        assert_eq!(
            rewritten("f()\nvar a, b;;"),
            assigned("", "f()\nvar a, b;;")
        );
        // A `var` that assigns is a statement of its own.
        assert_eq!(return_last_expression("f()\nvar n = 1;").map(|r| r.0), None);
    }

    #[test]
    fn programs_quickjs_runs_that_a_strict_parse_would_refuse_are_returned() {
        // `using` declarations; a function as the body of an `if` (sloppy
        // mode's Annex B).
        assert_eq!(
            rewritten("using x = null\n16"),
            assigned("using x = null\n", "16")
        );
        let annex_b = "if (true) function g() { return 9 }\n";
        assert_eq!(
            rewritten(&format!("{annex_b}1 + 2")),
            assigned(annex_b, "1 + 2")
        );
    }

    /// A program that wrote the variable's name was left as it was, and
    /// returned nothing (`null`).
    #[test]
    fn a_program_that_names_the_variable_gets_one_it_does_not_name() {
        for (program, variable) in [
            ("let __wasmwire_last = 1;\n2", "__wasmwire_last$"),
            ("__wasmwire_last\n3", "__wasmwire_last$"),
            (
                "let __wasmwire_last$ = 1, a__wasmwire_last$$$b = 2;\n__wasmwire_last$ + 1",
                "__wasmwire_last$$$$",
            ),
        ] {
            let text = return_last_expression(program).map(|r| r.0);
            let (head, rest) = program.rsplit_once('\n').unwrap();
            assert_eq!(
                text.as_deref(),
                Some(
                    format!("{head}\n{variable} = {rest}\n;return {variable};\nvar {variable};")
                        .as_str()
                ),
                "{program}"
            );
        }
        assert_eq!(variable("let x = 1;\nx"), VARIABLE);
        // However often it is written, one pass.
        let many = "__wasmwire_last$;".repeat(10_000);
        assert_eq!(variable(&many), "__wasmwire_last$$");
    }

    #[test]
    fn a_program_ending_in_return_is_left_alone() {
        assert_eq!(return_last_expression("f();\nreturn 1;").map(|r| r.0), None);
    }

    #[test]
    fn the_expressions_ending_a_final_if_try_or_block_are_returned() {
        let (assign, return_it) = (assign(VARIABLE), return_it(VARIABLE));
        for (program, expected) in [
            (
                "if (x) { f() } else g()",
                format!("if (x) {{ {assign}f() }} else {assign}g(){return_it}"),
            ),
            (
                "try { await f() } catch (e) { e.kind } finally { done() }",
                format!(
                    "try {{ {assign}await f() }} catch (e) {{ {assign}e.kind }} finally {{ done() }}{return_it}"
                ),
            ),
            (
                "{ const a = 1; a + 2 }",
                format!("{{ const a = 1; {assign}a + 2 }}{return_it}"),
            ),
            (
                "if (x) { if (y) 1; }",
                format!("if (x) {{ if (y) {assign}1; }}{return_it}"),
            ),
            // Over lines, each branch its own insertion.
            (
                "if (ok)\n  await f()\nelse {\n  g();\n}",
                format!("if (ok)\n  {assign}await f()\nelse {{\n  {assign}g();\n}}{return_it}"),
            ),
        ] {
            assert_eq!(
                return_last_expression(program).map(|r| r.0),
                Some(expected),
                "{program}"
            );
        }
        // Each place of the text sent maps back to the program's.
        let (text, steps) =
            return_last_expression("try { await f() } catch (e) { e.kind }").unwrap();
        let map = PositionMap::new(steps);
        let kind = text.find("e.kind").unwrap();
        assert_eq!(map.original(1, kind + 1), (1, 31));
        let call = text.find("await f()").unwrap();
        assert_eq!(map.original(1, call + 1), (1, 7));
    }

    #[test]
    fn branches_ending_in_a_sequence_are_named_not_returned() {
        for (program, what) in [
            ("if (x) { f(), g() } else h()", "an `if`"),
            ("try { a, b } catch { c }", "a `try`"),
            ("{ 1, 2 }", "a block"),
        ] {
            assert_eq!(
                return_last_expression(program).map(|r| r.0),
                None,
                "{program}"
            );
            assert!(
                matches!(ending(program), Ending::InBranches(w) if w == what),
                "{program}"
            );
        }
    }

    #[test]
    fn an_expression_in_a_loop_or_switch_is_left_alone() {
        for program in [
            "for (const a of b) a",
            "while (x) { f() }",
            "switch (x) { case 1: f() }",
            "if (x) { for (;;) f() }",
            "try { f(); const y = 1 } catch { const z = 2 }",
        ] {
            assert!(matches!(ending(program), Ending::Other), "{program}");
            assert_eq!(
                return_last_expression(program).map(|r| r.0),
                None,
                "{program}"
            );
        }
    }

    #[test]
    fn a_program_of_string_literals_returns_the_last() {
        // It was taken for a directive and returned nothing (`null`).
        assert_eq!(rewritten("'abc'"), assigned("", "'abc'"));
        assert_eq!(
            rewritten("\"use strict\";\n'x'"),
            assigned("\"use strict\";\n", "'x'")
        );
        assert_eq!(rewritten("f();\n'done'"), assigned("f();\n", "'done'"));
    }

    #[test]
    fn a_trailing_comment_stays_after_the_expression() {
        assert_eq!(
            rewritten("x = 1\nawait f(x) // the answer"),
            assigned("x = 1\n", "await f(x) // the answer")
        );
        assert_eq!(
            rewritten("await f() /* done */"),
            assigned("", "await f() /* done */")
        );
    }

    #[test]
    fn a_semicolon_and_whitespace_after_the_expression_stay() {
        assert_eq!(rewritten("  f(1) ;  \n\n"), assigned("  ", "f(1) ;  \n\n"));
        assert_eq!(rewritten("f(1);;\n"), assigned("", "f(1);;\n"));
    }

    #[test]
    fn a_sequence_expression_is_returned_whole() {
        assert_eq!(rewritten("f(), g()"), "return f(), g()");
    }

    #[test]
    fn a_program_that_does_not_parse_is_left_alone() {
        assert_eq!(return_last_expression("return (1 +").map(|r| r.0), None);
        assert_eq!(return_last_expression("").map(|r| r.0), None);
    }

    #[test]
    fn places_after_the_insertion_map_back_to_the_program() {
        let (text, step) = return_last_expression("let a = 1;\n  a.b.c").unwrap();
        assert_eq!(text, assigned("let a = 1;\n  ", "a.b.c"));
        let map = PositionMap::new(step);
        // `.c` is at column 24 in the text sent, column 6 in the program;
        // the assignment itself is put where the expression starts.
        assert_eq!(map.original(2, 24), (2, 6));
        assert_eq!(map.original(2, 5), (2, 3));
        assert_eq!(map.original(2, 3), (2, 3));
        assert_eq!(map.original(1, 5), (1, 5));
    }

    #[test]
    fn the_insertion_line_counts_a_lone_carriage_return() {
        let (_, step) = return_last_expression("let a = 1;\ra").unwrap();
        let map = PositionMap::new(step);
        assert_eq!(map.original(2, 8), (2, 1));
    }
}
