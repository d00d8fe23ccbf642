//! The host's preparation of a program (its files, compiled here as they
//! are), with swc's TypeScript stripper. What of those files only the host
//! uses (the map's rewriting of an error, a program sent as written) is
//! compiled here unused.

#[path = "../../../host/src/source/body.rs"]
mod body;
#[path = "../../../host/src/source/compiled.rs"]
#[allow(dead_code)]
mod compiled;
#[path = "../../../host/src/source/completion.rs"]
mod completion;
#[path = "../../../host/src/source/language.rs"]
#[allow(dead_code)]
mod language;
#[path = "../../../host/src/source/object_block.rs"]
mod object_block;
#[path = "../../../host/src/source/position.rs"]
#[allow(dead_code)]
mod position;
#[path = "../../../host/src/source/prepare.rs"]
#[allow(dead_code)]
mod prepare;
mod transform_cost;
mod typescript;

pub(crate) use compiled::Compiled;
pub(crate) use language::{Language, SourceError};
#[cfg(test)]
pub(crate) use position::PositionMap;
pub(crate) use prepare::Prepared;

/// `program` (TypeScript) prepared for the child, or why it cannot be.
pub(crate) fn compile(program: String) -> Compiled {
    Compiled::new(prepare::prepare_typescript(program, typescript::strip))
}
