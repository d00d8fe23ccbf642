//! The language a program is written in, and why a TypeScript program
//! cannot be sent.
//!
//! Shared with the TypeScript compiler's component (`typescript/`), which
//! compiles this file too.

use super::position::{self, PositionMap};

/// The language a program is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    /// JavaScript, sent as written (but for a returned last expression).
    #[default]
    JavaScript,
    /// TypeScript: its types are stripped before it is sent.
    TypeScript,
}

/// Why a TypeScript program cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The program is not valid TypeScript.
    #[error("TypeScript syntax error at line {line}, column {column}: {message}")]
    Syntax {
        /// What the parser found.
        message: String,
        /// The program's line (1-based).
        line: usize,
        /// The program's column, in characters (1-based).
        column: usize,
    },
    /// The program is longer than the parser reads (64 KiB).
    #[error("the TypeScript program is {len} bytes; at most {max} bytes are compiled")]
    TooLarge {
        /// The program's length in bytes.
        len: usize,
        /// The most there may be.
        max: usize,
    },
    /// Compiling the program needed more memory than the execution may
    /// hold: the TypeScript compiler's sandbox is held to its memory cap.
    #[error(
        "memory limit: compiling the TypeScript program needed more than the \
         {max_memory} bytes the execution may hold"
    )]
    Memory {
        /// The execution's memory cap, in bytes.
        max_memory: u64,
    },
    /// The TypeScript compiler failed on a program it parsed.
    #[error("the TypeScript program could not be compiled: {0}")]
    Failed(String),
}

impl SourceError {
    /// This error with its place mapped back through `steps` (edits made
    /// before the program was compiled).
    pub(crate) fn mapped(self, steps: &[position::Step]) -> Self {
        match self {
            SourceError::Syntax {
                message,
                line,
                column,
            } if !steps.is_empty() => {
                let (line, column) = PositionMap::new(steps.to_vec()).original(line, column);
                SourceError::Syntax {
                    message,
                    line,
                    column,
                }
            }
            other => other,
        }
    }
}
