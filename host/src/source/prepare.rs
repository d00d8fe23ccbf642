//! The steps that make a program the text a child is sent, on text alone:
//! no threads, no limits of their own. The host runs them for JavaScript;
//! TypeScript runs them inside the TypeScript compiler's sandbox
//! (`typescript/`, which compiles this file too), with swc's stripper as
//! `strip`.

use super::position::{PositionMap, Step};
use super::{Language, SourceError, completion, object_block};

/// A program ready to send, and how to map the child's places back.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The JavaScript to send to the child.
    pub text: String,
    /// From places in `text` to places in the program.
    pub map: PositionMap,
    /// What to tell a program that answers `null` of how it ended, when it
    /// likely meant to answer something: it ended by declaring a variable
    /// (`const total = ...`), in a call of the console's, or in an `if`,
    /// `try` or block whose branches end in expressions one of which is a
    /// sequence (`a, b`, which is not assigned).
    pub unanswered: Option<String>,
}

impl Prepared {
    /// `program` exactly as written, with the identity map (for a child
    /// that is not given JavaScript to prepare).
    pub fn as_written(program: &str) -> Self {
        Self::unchanged(program)
    }

    /// `program` as it is, with the identity map.
    pub(crate) fn unchanged(program: &str) -> Self {
        Self {
            text: program.to_owned(),
            map: PositionMap::default(),
            unanswered: None,
        }
    }
}

/// JavaScript for a TypeScript program, and the edits that moved places.
#[derive(Debug)]
pub(crate) struct Stripped {
    /// The JavaScript.
    pub(crate) text: String,
    /// Empty when the types were blanked in place.
    pub(crate) steps: Vec<Step>,
}

/// `program` (JavaScript) prepared for the child: a last `{ ... }` that
/// reads as an object made one, a last expression returned, and a note
/// for a program that likely meant to answer something and will not.
pub(crate) fn prepare_javascript(program: String) -> Prepared {
    let (text, steps) = parenthesised(program, Language::JavaScript);
    returned(text, steps)
}

/// `program` (TypeScript) prepared for the child: as
/// [`prepare_javascript`], with its types stripped by `strip` once a last
/// object is made one.
#[allow(dead_code)] // The TypeScript compiler's (`typescript/`).
pub(crate) fn prepare_typescript(
    program: String,
    strip: impl FnOnce(&str) -> Result<Stripped, SourceError>,
) -> Result<Prepared, SourceError> {
    let (program, mut steps) = parenthesised(program, Language::TypeScript);
    let stripped = strip(&program).map_err(|error| error.mapped(&steps))?;
    steps.extend(stripped.steps);
    Ok(returned(stripped.text, steps))
}

/// `program` with a last `{ ... }` that reads as an object in parentheses,
/// and the edits that made it so.
fn parenthesised(program: String, language: Language) -> (String, Vec<Step>) {
    match object_block::parenthesise(&program, language) {
        Some((text, steps)) => (text, steps.to_vec()),
        None => (program, Vec::new()),
    }
}

/// `text` (JavaScript, after `steps`) with its last expression returned.
fn returned(mut text: String, mut steps: Vec<Step>) -> Prepared {
    let mut unanswered = None;
    match completion::ending(&text) {
        completion::Ending::Returned(returned, made, logged) => {
            text = returned;
            steps.extend(made);
            unanswered = logged.map(|callee| {
                format!(
                    "the program ended with {callee}(...), which gives undefined, and answered \
                     null: end it with the value itself (or `return value`) to answer it"
                )
            });
        }
        completion::Ending::Declared(name) => {
            unanswered = Some(format!(
                "the program ended by declaring `{name}` and answered null: \
                 end it with `return {name}` (or `{name}` alone) to answer it"
            ));
        }
        completion::Ending::DeclaredFunction(name) => {
            unanswered = Some(format!(
                "the program ended by declaring function `{name}`, which nothing called, and \
                 answered null: end it with `return await {name}()` to answer what it returns"
            ));
        }
        completion::Ending::CalledUnawaited(name) => {
            unanswered = Some(format!(
                "the program called `{name}()` without awaiting it and answered null: a \
                 program ends with its own last statement, so what `{name}` was still waiting \
                 on was cancelled and its value was not the answer; write \
                 `return await {name}()` to wait for it and answer what it returns"
            ));
        }
        completion::Ending::InBranches(what) => {
            unanswered = Some(format!(
                "the program ended in {what} and answered null: an expression inside it \
                 is not the program's value; `return` the value from inside it"
            ));
        }
        completion::Ending::Other => {}
    }
    Prepared {
        text,
        map: PositionMap::new(steps),
        unanswered,
    }
}
