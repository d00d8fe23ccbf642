//! TypeScript to JavaScript, keeping the program's own places.
//!
//! swc's type stripper (`swc_ts_fast_strip`, the one behind Node's
//! `--experimental-strip-types`) blanks each type with whitespace of the
//! same length, so the JavaScript it gives has every line and column of the
//! program: annotations, interfaces, type aliases, generics, `as`,
//! `satisfies`, `!`, `declare` and type-only imports go without a trace.
//!
//! The program is parsed as a module, so that top-level `await` and
//! `import type` parse. A module has no top-level `return`, which the
//! program (the body of an async function) may use: each such `return` is
//! first replaced by something a module allows and of the same length
//! (`_=    ` before a value, six spaces before none), and put back after.
//! An import of types only (`import type`, `import { type A }`) is blanked
//! whole, as the parser delimits it: the child runs no imports.
//!
//! A few constructs have no JavaScript of their own to strip down to
//! (`enum`, `namespace`, constructor parameter properties, `<T>x`): the
//! stripper refuses them, and those programs are transformed instead. The
//! output is then generated anew, and its source map ([`Generated`]) maps
//! places back.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{BytePos, SourceMap};
use swc_ecma_ast::{ImportDecl, ImportSpecifier, ModuleDecl, ModuleItem, ReturnStmt};
use swc_ecma_parser::error::SyntaxError;
use swc_ecma_parser::{Syntax, TsSyntax};
use swc_ecma_visit::{Visit, VisitWith};
use swc_ts_fast_strip::{ErrorCode, Mode, Options, TransformOutput, operate};

use super::SourceError;
use super::body::{self, HEAD};
use super::position::{Generated, Lines, Step};
use super::prepare::Stripped;

/// Stands in for a top-level `return` with a value: an assignment takes any
/// expression a `return` does.
const RETURN_VALUE: &str = "_=    ";

/// Stands in for a top-level `return` without one.
const RETURN_BARE: &str = "      ";

/// The keyword the stand-ins replace (as long as each).
const RETURN: &str = "return";

/// The parser's view: TypeScript, not TSX (so `<` is a comparison or a
/// type argument, never an element).
fn syntax() -> TsSyntax {
    TsSyntax::default()
}

/// Turns `program` into JavaScript.
pub(crate) fn strip(program: &str) -> Result<Stripped, SourceError> {
    // swc leaves a leading byte order mark out of what it writes, so no
    // line of the output matched the program's and every such program
    // failed ("moved a top-level return"). It is whitespace to JavaScript:
    // one space stands for it, one column as it was.
    let blanked;
    let program = match program.strip_prefix('\u{FEFF}') {
        Some(rest) => {
            blanked = format!(" {rest}");
            blanked.as_str()
        }
        None => program,
    };
    let survey = survey(program)?;
    let mut stand_in = program.to_owned();
    for (&at, &bare) in &survey.returns {
        let with = if bare { RETURN_BARE } else { RETURN_VALUE };
        stand_in.replace_range(at..at + RETURN.len(), with);
    }
    let run = run_swc(stand_in.clone(), Mode::StripOnly, Some(true));
    match run.output {
        Ok(output) => {
            let moved = || SourceError::Failed("the type stripper moved a top-level return".into());
            let (mut text, returns) =
                realign(&stand_in, &output.code, &survey).ok_or_else(moved)?;
            for (at, bare) in returns {
                let with = if bare { RETURN_BARE } else { RETURN_VALUE };
                if text.get(at..at + RETURN.len()) != Some(with) {
                    return Err(moved());
                }
                text.replace_range(at..at + RETURN.len(), RETURN);
            }
            Ok(Stripped {
                text,
                steps: Vec::new(),
            })
        }
        Err(ErrorCode::UnsupportedSyntax) => {
            survey.transform.clone().map_err(SourceError::Failed)?;
            transform(&blank_type_imports(program, &survey.type_imports))
        }
        Err(_) => Err(run.error(program, 0)),
    }
}

/// The stripper's `output` for `input`, made a character for a character of
/// the input, with the survey's type-only imports blanked; and where each of
/// the survey's top-level returns now starts. `None` if the output is not
/// the input with some characters blanked or substituted.
///
/// The stripper keeps every line and UTF-16 offset: it writes a blanked
/// character as as many spaces as it has UTF-16 units, and a substituted
/// span (an `;` where a type stood) likewise. Places here count characters,
/// and the returns were found by byte: a blanked `é` (two bytes, one space)
/// moved every later byte, a blanked emoji (two spaces) every later column
/// of its line. So each input character becomes exactly one: itself where
/// the output kept it, else the first of the output's units for it (a space,
/// or the substitute).
fn realign(input: &str, output: &str, survey: &Survey) -> Option<(String, Vec<(usize, bool)>)> {
    let mut text = String::with_capacity(input.len());
    let mut returns = Vec::with_capacity(survey.returns.len());
    let mut rest = output;
    let mut imports = survey.type_imports.iter().peekable();
    for (at, c) in input.char_indices() {
        if let Some(&bare) = survey.returns.get(&at) {
            returns.push((text.len(), bare));
        }
        let kept = if rest.starts_with(c) {
            rest = &rest[c.len_utf8()..];
            c
        } else {
            let units = c.len_utf16();
            let written = rest.get(..units).filter(|w| w.is_ascii())?;
            rest = &rest[units..];
            char::from(written.as_bytes()[0])
        };
        while imports.next_if(|&&(_, end)| end <= at).is_some() {}
        text.push(match imports.peek() {
            Some(&&(start, _)) if start <= at => blank_import_char(at == start, kept),
            _ => kept,
        });
    }
    rest.is_empty().then_some((text, returns))
}

/// What the module parse tells about a program.
#[derive(Debug)]
struct Survey {
    /// The byte offset of every `return` outside a function, and whether it
    /// has no value.
    returns: BTreeMap<usize, bool>,
    /// The byte range of every import that imports only types.
    type_imports: Vec<(usize, usize)>,
    /// Why swc's full transform is not to be given the program, if it is
    /// not (`transform_cost`).
    transform: Result<(), String>,
}

/// Parses `program` as a module: its top-level `return`s and its type-only
/// imports, or its first syntax error.
fn survey(program: &str) -> Result<Survey, SourceError> {
    let mut parser = body::parser(Syntax::Typescript(syntax()), program);
    let module = parser
        .parse_module()
        .map_err(|error| syntax_error(program, error.span_lo(), &error.into_kind().msg()))?;
    let mut outside = Vec::new();
    for error in parser.take_errors() {
        let at = error.span_lo();
        match error.into_kind() {
            SyntaxError::ReturnNotAllowed => outside.push(at),
            kind => return Err(syntax_error(program, at, &kind.msg())),
        }
    }
    let mut finder = ReturnFinder {
        outside,
        found: BTreeMap::new(),
    };
    module.visit_with(&mut finder);
    let type_imports = module
        .body
        .iter()
        .filter_map(|item| match item {
            ModuleItem::ModuleDecl(ModuleDecl::Import(import)) if imports_only_types(import) => {
                Some((body::offset(import.span.lo), body::offset(import.span.hi)))
            }
            // `export {};`, the idiom that makes a file a module (for its
            // top-level await): it exports nothing, and the child, which
            // runs no module, refused it ("unsupported keyword: export").
            ModuleItem::ModuleDecl(ModuleDecl::ExportNamed(export))
                if export.specifiers.is_empty() && export.src.is_none() =>
            {
                Some((body::offset(export.span.lo), body::offset(export.span.hi)))
            }
            _ => None,
        })
        .collect();
    Ok(Survey {
        returns: finder.found,
        type_imports,
        transform: super::transform_cost::check(&module),
    })
}

/// Whether `import` brings in types and nothing else: `import type ...`,
/// or `import { type A, type B } from ...` (which the stripper would leave
/// as `import {} from ...`, an import the child cannot run).
fn imports_only_types(import: &ImportDecl) -> bool {
    import.type_only
        || !import.specifiers.is_empty()
            && import.specifiers.iter().all(|specifier| {
                matches!(specifier, ImportSpecifier::Named(named) if named.is_type_only)
            })
}

/// A character of a type-only import as it is blanked: line breaks kept,
/// the rest spaces, but for an `;` first. The stripper would leave `import
/// {} from ...` (which the child cannot run); blank, the statement before
/// could run on into the one after (`const a = b` then `(f)()`), so it
/// becomes an empty statement.
fn blank_import_char(first: bool, c: char) -> char {
    match c {
        '\n' | '\r' => c,
        _ if first => ';',
        _ => ' ',
    }
}

/// `program` with each of `ranges` (type-only imports) blanked for the
/// transform, a character for a character ([`blank_import_char`]), so that
/// every line and column stays (the transform's source map is in them; its
/// bytes may move).
fn blank_type_imports(program: &str, ranges: &[(usize, usize)]) -> String {
    let mut text = String::with_capacity(program.len());
    let mut from = 0;
    for &(start, end) in ranges {
        let (Some(before), Some(import)) = (program.get(from..start), program.get(start..end))
        else {
            continue;
        };
        text.push_str(before);
        text.extend(
            import
                .chars()
                .enumerate()
                .map(|(i, c)| blank_import_char(i == 0, c)),
        );
        from = end;
    }
    text.push_str(program.get(from..).unwrap_or_default());
    text
}

/// Finds the `return` statements the parser said were outside a function.
struct ReturnFinder {
    /// Where those statements start.
    outside: Vec<BytePos>,
    /// Their byte offsets, each with whether it has no value.
    found: BTreeMap<usize, bool>,
}

impl Visit for ReturnFinder {
    fn visit_return_stmt(&mut self, statement: &ReturnStmt) {
        if self.outside.contains(&statement.span.lo) {
            self.found
                .insert(body::offset(statement.span.lo), statement.arg.is_none());
        }
        statement.visit_children_with(self);
    }
}

/// A parser error's start, for either kind of swc error.
trait SpanLo {
    /// Where the error starts.
    fn span_lo(&self) -> BytePos;
}

impl SpanLo for swc_ecma_parser::error::Error {
    fn span_lo(&self) -> BytePos {
        swc_common::Spanned::span(self).lo
    }
}

/// A syntax error at parser position `at` of `program`.
fn syntax_error(program: &str, at: BytePos, message: &str) -> SourceError {
    syntax_error_at(program, body::offset(at), message)
}

/// A syntax error at byte `at` of `program`, saying what is not
/// supported where the parser stopped at something the child cannot run.
fn syntax_error_at(program: &str, at: usize, message: &str) -> SourceError {
    let (line, column) = Lines::new(program).position(at);
    let message = unsupported(program, at).unwrap_or_else(|| {
        // `import A = N.B`: an alias of a namespace's member, which swc
        // reads as a module's statement where tsc takes it in a script.
        if message.contains("cannot be used outside of module code")
            && let Some(alias) = namespace_alias(program, at)
        {
            format!(
                "`import {alias} = ...` (an alias of a namespace's member) is not supported \
                 here: write `const {alias} = ...` instead"
            )
        } else if message.contains("cannot be used outside of module code") {
            // `import fs = require("fs")`, `export = x`: a module's statements.
            format!(
                "{message} (the program is the body of an async function: nothing is \
                 imported or exported, and each tool is a global async function; an import \
                 of types alone can be `import type`, which is removed)"
            )
        } else {
            message.to_owned()
        }
    });
    SourceError::Syntax {
        message,
        line,
        column,
    }
}

/// The alias of `import Alias = Outer.Inner` at byte `at` of `program`: an
/// import whose right side is a name, not `require(...)`.
fn namespace_alias(program: &str, at: usize) -> Option<&str> {
    let rest = program.get(at..)?.strip_prefix("import")?;
    let rest = rest.strip_prefix(|c: char| c.is_whitespace())?.trim_start();
    let end = rest
        .find(|c: char| !(c == '_' || c == '$' || c.is_alphanumeric()))
        .unwrap_or(rest.len());
    let (alias, rest) = rest.split_at(end);
    let target = rest.trim_start().strip_prefix('=')?.trim_start();
    let named = target.starts_with(|c: char| c == '_' || c == '$' || c.is_alphabetic());
    let required = target
        .strip_prefix("require")
        .is_some_and(|rest| rest.trim_start().starts_with('('));
    (!alias.is_empty() && alias != "type" && named && !required).then_some(alias)
}

/// What a parser error at byte `at` of `program` means when it is about
/// something not supported rather than a mistake: an `@` there starts a
/// decorator (nothing else in TypeScript starts with one), which the
/// parser is not asked to read, because the stripper cannot lower them,
/// and the child's JavaScript has none.
fn unsupported(program: &str, at: usize) -> Option<String> {
    let rest = program.get(at..)?.strip_prefix('@')?;
    let name: String = rest
        .chars()
        .take_while(|&c| c == '_' || c == '$' || c == '.' || c.is_alphanumeric())
        .take(40)
        .collect();
    Some(format!(
        "decorators are not supported (`@{name}`): call the function on the class or the \
         method yourself"
    ))
}

/// What one run of swc's stripper gave: its output or its error code, and
/// the diagnostics it reported.
struct SwcRun {
    /// The output, or why there is none.
    output: Result<TransformOutput, ErrorCode>,
    /// The diagnostics: message and byte offset in the input, when it has
    /// one.
    diagnostics: Vec<(String, Option<usize>)>,
}

impl SwcRun {
    /// The first diagnostic as an error in `program`, its offsets less
    /// `head` bytes (the wrapper before the program, if any).
    fn error(&self, program: &str, head: usize) -> SourceError {
        let Some((message, at)) = self.diagnostics.first() else {
            return SourceError::Failed("the TypeScript compiler gave no output".into());
        };
        match at {
            Some(at) => syntax_error_at(program, at.saturating_sub(head), message),
            None => SourceError::Failed(message.clone()),
        }
    }
}

/// swc's diagnostics as they are reported: message and position, if any.
type Diagnostics = Arc<Mutex<Vec<(String, Option<BytePos>)>>>;

/// Keeps swc's diagnostics, where its own emitter would print them.
struct Collect(Diagnostics);

impl Emitter for Collect {
    fn emit(&mut self, diagnostic: &mut DiagnosticBuilder<'_>) {
        let at = diagnostic.span.primary_span().map(|span| span.lo);
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((diagnostic.message(), at));
    }
}

/// Runs swc's stripper over `input`.
fn run_swc(input: String, mode: Mode, module: Option<bool>) -> SwcRun {
    let files: Lrc<SourceMap> = Lrc::default();
    let collected = Diagnostics::default();
    let handler = Handler::with_emitter(true, false, Box::new(Collect(collected.clone())));
    let options = Options {
        module,
        mode,
        parser: syntax(),
        source_map: true,
        ..Options::default()
    };
    // The transform makes hygiene marks, which live in swc's globals.
    let output = swc_common::GLOBALS.set(&swc_common::Globals::new(), || {
        operate(&files, &handler, input, options).map_err(|error| error.code)
    });
    let diagnostics =
        std::mem::take(&mut *collected.lock().unwrap_or_else(PoisonError::into_inner))
            .into_iter()
            .map(|(message, at)| {
                let at = at.map(|at| files.lookup_byte_offset(at).pos.0 as usize);
                (message, at)
            })
            .collect();
    SwcRun {
        output,
        diagnostics,
    }
}

/// Transforms a program the stripper refused (an `enum`, a `namespace`),
/// inside the guest's async function so that its `return` parses.
fn transform(program: &str) -> Result<Stripped, SourceError> {
    let run = run_swc(body::wrap(program), Mode::Transform, Some(false));
    let output = match run.output {
        Ok(output) => output,
        Err(_) => return Err(run.error(program, HEAD.len())),
    };
    let unexpected =
        || SourceError::Failed("the TypeScript transform gave an unexpected shape".into());
    let map = output
        .map
        .as_deref()
        .and_then(|map| swc_sourcemap::SourceMap::from_slice(map.as_bytes()).ok())
        .ok_or_else(unexpected)?;
    // The output is the async function again: what is sent is its body.
    let mut parser = body::parser(Syntax::Es(Default::default()), &output.code);
    let script = parser.parse_script().map_err(|_| unexpected())?;
    let (_, open, close) = body::function_body(&script).ok_or_else(unexpected)?;
    let text = output
        .code
        .get(open + 1..close)
        .ok_or_else(unexpected)?
        .to_owned();
    let (first_line, brace_column) = Lines::new(&output.code).position(open);
    let generated = Generated {
        map,
        first_line,
        first_column: brace_column + 1,
        head_columns: HEAD.chars().count(),
        input: body::wrap(program),
        output: output.code.clone(),
    };
    Ok(Stripped {
        text,
        steps: vec![Step::Generated(Arc::new(generated))],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::PositionMap;

    /// The JavaScript for `program`, which must have been blanked in place.
    fn blanked(program: &str) -> String {
        let stripped = strip(program).unwrap();
        assert!(stripped.steps.is_empty(), "{program:?} was transformed");
        assert_eq!(
            stripped.text.chars().count(),
            program.chars().count(),
            "{program:?}"
        );
        stripped.text
    }

    /// A character of more than one byte, or of two UTF-16 units, in a type
    /// is one space (the stripper writes one per UTF-16 unit, and a top-level
    /// `return` after it was looked for at the wrong byte: "the type stripper
    /// moved a top-level return"); in code it is kept.
    #[test]
    fn characters_of_any_width_in_types_are_one_space_each() {
        assert_eq!(
            blanked("type T = \"ééé\";\nreturn 7;"),
            format!(";{}\nreturn 7;", " ".repeat(14))
        );
        assert_eq!(
            blanked(
                "interface R {\n  /** Temperatur in °C */\n  temp: number;\n}\n\
                 const r: R = { temp: 21 };\nreturn r.temp;"
            ),
            format!(
                ";{}\n{}\n{}\n \nconst r    = {{ temp: 21 }};\nreturn r.temp;",
                " ".repeat(12),
                " ".repeat(25),
                " ".repeat(15)
            )
        );
        // An emoji in a type made two spaces: every later column of its line
        // was one off.
        let text = blanked("const s: Record<\"😀\", number> = { \"😀\": 1 }; return s;");
        assert_eq!(
            text,
            format!("const s{} = {{ \"😀\": 1 }}; return s;", " ".repeat(21))
        );
        // An import of types only, with a character of two bytes.
        let blank = |n: usize| " ".repeat(n);
        assert_eq!(
            blanked("import { type X, type Y } from './ü';\nimport type Z from '€';\nreturn 1;"),
            format!(";{}\n;{}\nreturn 1;", blank(36), blank(22))
        );
    }

    #[test]
    fn annotations_are_blanked_in_place() {
        assert_eq!(
            blanked("const x: number = 1;\nfunction f(a: string, b?: number): void {}"),
            "const x         = 1;\nfunction f(a        , b         )       {}"
        );
    }

    #[test]
    fn interfaces_and_type_aliases_leave_an_empty_statement() {
        assert_eq!(
            blanked("interface A {\n  a: number;\n}\ntype B = A | null;\nlet b = 1;"),
            ";            \n            \n \n                  \nlet b = 1;"
        );
    }

    #[test]
    fn generics_are_blanked_and_comparisons_kept() {
        assert_eq!(
            blanked("function id<T>(x: T): T { return x; }\nconst n = id<number>(1) < 2;"),
            "function id   (x   )    { return x; }\nconst n = id        (1) < 2;"
        );
    }

    #[test]
    fn as_satisfies_and_non_null_are_blanked() {
        assert_eq!(
            blanked("const a = (b as any)!.c satisfies unknown;\nlet d!: string;"),
            "const a = (b       ) .c                  ;\nlet d         ;"
        );
    }

    #[test]
    fn declare_and_type_only_imports_are_blanked() {
        let blank = |n: usize| " ".repeat(n);
        assert_eq!(
            blanked(
                "import type { A } from './a';\nimport { type B } from './b';\n\
                 declare function search(q: string): Promise<A[]>;\ndeclare const n: B;\nf()"
            ),
            format!(
                ";{}\n;{}\n{}\n{}\nf()",
                blank(28),
                blank(28),
                blank(49),
                blank(19)
            )
        );
    }

    #[test]
    fn top_level_return_and_await_are_kept() {
        assert_eq!(
            blanked("const r: number = await f();\nif (r) return;\nreturn r as number;"),
            "const r         = await f();\nif (r) return;\nreturn r          ;"
        );
        assert_eq!(
            blanked("function g(): number { return 1 }\nreturn\ng();"),
            "function g()         { return 1 }\nreturn\ng();"
        );
    }

    #[test]
    fn plain_javascript_is_unchanged() {
        for program in [
            "const hosts = await list_hosts();\nconst bad = [];\nfor (const h of hosts) {\n  \
             const logs = await get_logs(h, 50);\n  if (logs.length < 3 && h.n > 1) bad.push(h);\n}\n\
             return bad.map((h) => `${h.name} <${h.id}>`);",
            "const html = '<div class=\"x\">' + \"<App prop={1} />\" + `</div>`;\n\
             const ok = a < b && b > c;\nreturn /<[a-z]+>/.test(html) ? html : null;",
            "let i = 0;\nwhile (i < 10) { i++; }\n// a comment: x: number\nreturn { i, s: 'a: string' };",
            "const r = await Promise.all([1, 2].map(async (n) => n * 2));\nreturn r;",
        ] {
            assert_eq!(blanked(program), program);
        }
    }

    #[test]
    fn a_syntax_error_names_the_programs_line_and_column() {
        let error = strip("const a = 1;\nconst x: number = ;").unwrap_err();
        let SourceError::Syntax { line, column, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!((*line, *column), (2, 19), "{error}");
        // Characters, not bytes, before the error.
        let error = strip("const é: string = 'ü'; let = ;").unwrap_err();
        assert!(
            matches!(
                error,
                SourceError::Syntax {
                    line: 1,
                    column: 30,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("TypeScript syntax error at line 1, column 30: ")
        );
    }

    #[test]
    fn a_decorator_is_refused_as_not_supported_at_its_place() {
        for (program, line, column) in [
            ("@log class C {}\nreturn 1", 1, 1),
            ("class C {\n  @log.on m() {}\n}", 2, 3),
            ("class C { m(@inject x: number) {} }", 1, 13),
            ("enum E { A }\n@sealed\nexport class A {}", 2, 1),
        ] {
            let error = strip(program).unwrap_err();
            let SourceError::Syntax {
                message,
                line: at_line,
                column: at_column,
            } = &error
            else {
                panic!("{error:?}");
            };
            assert!(
                message.starts_with("decorators are not supported (`@"),
                "{program}: {message}"
            );
            assert_eq!((*at_line, *at_column), (line, column), "{program}: {error}");
        }
        // A syntax error elsewhere keeps the parser's message.
        let error = strip("const a = '@';\nlet = 1;").unwrap_err();
        assert!(!error.to_string().contains("decorator"), "{error}");
    }

    #[test]
    fn a_module_statement_is_told_there_are_no_modules() {
        for program in ["import fs = require(\"fs\");\nreturn 1", "export = 1;"] {
            let error = strip(program).unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains("nothing is imported or exported"),
                "{program}: {error}"
            );
        }
    }

    /// `import A = N.B` aliases a namespace's member; it was told there
    /// are no modules, which is true and beside the point.
    #[test]
    fn a_namespace_alias_is_told_to_be_a_const() {
        let program = "namespace Outer { export const Inner = 2; }\nimport Alias = Outer.Inner;\nreturn Alias;";
        let error = strip(program).unwrap_err();
        let SourceError::Syntax { message, line, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(*line, 2, "{error}");
        assert!(
            message.contains("`import Alias = ...`") && message.contains("`const Alias = ...`"),
            "{message}"
        );
        assert!(!message.contains("nothing is imported"), "{message}");
        // A namespace whose name begins with "require" is one too.
        let error = strip("import R = requirements.B;").unwrap_err();
        assert!(error.to_string().contains("`const R = ...`"), "{error}");
    }

    #[test]
    fn a_syntax_error_in_a_program_with_an_enum_is_the_programs() {
        let error = strip("enum E { A }\nconst x = E.A +;").unwrap_err();
        assert!(
            matches!(error, SourceError::Syntax { line: 2, .. }),
            "{error:?}"
        );
    }

    #[test]
    fn an_enum_is_transformed_and_its_places_map_back() {
        let program = "enum Color { Red, Green }\nconst c: Color = Color.Green;\n\
                       if (c) throw new Error('boom');\nreturn c;";
        let stripped = strip(program).unwrap();
        assert!(!stripped.text.contains("enum"), "{}", stripped.text);
        assert!(stripped.text.contains("return c;"), "{}", stripped.text);
        let map = PositionMap::new(stripped.steps);
        // `throw` where the text sent has it maps back to line 3, column 8.
        let at = stripped.text.find("throw").unwrap();
        let (line, column) = Lines::new(&stripped.text).position(at);
        assert_eq!(map.original(line, column), (3, 8), "{}", stripped.text);
    }

    #[test]
    fn a_namespace_is_transformed() {
        let stripped = strip("namespace N { export const a: number = 1 }\nreturn N.a;").unwrap();
        assert!(!stripped.text.contains("namespace"), "{}", stripped.text);
        assert!(!stripped.text.contains(": number"), "{}", stripped.text);
    }
}
