//! What the TypeScript compiler's component (`typescript/`, which compiles
//! this file too) writes on its standard output: the program prepared, or
//! why it cannot be, as one JSON value. The component turns its result
//! into a [`Compiled`] ([`Compiled::new`]) and the host turns it back
//! ([`Compiled::into_prepared`]); each uses one of the two.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::position::{Generated, PositionMap, Step};
use super::{Prepared, SourceError};

/// A prepared program, or why it cannot be sent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Compiled {
    /// The JavaScript to send, the edits that moved places, and the note
    /// for a program that will likely answer `null`.
    Prepared {
        text: String,
        steps: Vec<CompiledStep>,
        unanswered: Option<String>,
    },
    /// [`SourceError::Syntax`].
    Syntax {
        message: String,
        line: usize,
        column: usize,
    },
    /// [`SourceError::Failed`]'s reason (or another error, said in words).
    Failed(String),
}

/// A [`Step`], with a generated text's source map as its JSON.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CompiledStep {
    /// [`Step::Inserted`].
    Inserted {
        line: usize,
        column: usize,
        width: usize,
    },
    /// [`Step::Generated`].
    Generated {
        map: String,
        first_line: usize,
        first_column: usize,
        head_columns: usize,
        input: String,
        output: String,
    },
}

impl Compiled {
    /// What the component writes for `prepared`.
    #[allow(dead_code)] // The component's half.
    pub(crate) fn new(prepared: Result<Prepared, SourceError>) -> Self {
        match prepared {
            Ok(Prepared {
                text,
                map,
                unanswered,
            }) => Compiled::Prepared {
                text,
                steps: map.steps().iter().map(CompiledStep::new).collect(),
                unanswered,
            },
            Err(SourceError::Syntax {
                message,
                line,
                column,
            }) => Compiled::Syntax {
                message,
                line,
                column,
            },
            // The reason alone: the host's `SourceError::Failed` says what
            // failed around it.
            Err(SourceError::Failed(why)) => Compiled::Failed(why),
            Err(other) => Compiled::Failed(other.to_string()),
        }
    }

    /// The prepared program, or why not; `None` if a source map in it does
    /// not read.
    #[allow(dead_code)] // The host's half.
    pub(crate) fn into_prepared(self) -> Option<Result<Prepared, SourceError>> {
        Some(match self {
            Compiled::Prepared {
                text,
                steps,
                unanswered,
            } => Ok(Prepared {
                text,
                map: PositionMap::new(
                    steps
                        .into_iter()
                        .map(CompiledStep::into_step)
                        .collect::<Option<_>>()?,
                ),
                unanswered,
            }),
            Compiled::Syntax {
                message,
                line,
                column,
            } => Err(SourceError::Syntax {
                message,
                line,
                column,
            }),
            Compiled::Failed(why) => Err(SourceError::Failed(why)),
        })
    }
}

impl CompiledStep {
    fn new(step: &Step) -> Self {
        match step {
            &Step::Inserted {
                line,
                column,
                width,
            } => CompiledStep::Inserted {
                line,
                column,
                width,
            },
            Step::Generated(generated) => {
                let mut map = Vec::new();
                // Writing JSON to a Vec fails only on a map swc could not
                // have made; an empty map then maps nothing back.
                let _ = generated.map.to_writer(&mut map);
                CompiledStep::Generated {
                    map: String::from_utf8(map).unwrap_or_default(),
                    first_line: generated.first_line,
                    first_column: generated.first_column,
                    head_columns: generated.head_columns,
                    input: generated.input.clone(),
                    output: generated.output.clone(),
                }
            }
        }
    }

    fn into_step(self) -> Option<Step> {
        Some(match self {
            CompiledStep::Inserted {
                line,
                column,
                width,
            } => Step::Inserted {
                line,
                column,
                width,
            },
            CompiledStep::Generated {
                map,
                first_line,
                first_column,
                head_columns,
                input,
                output,
            } => Step::Generated(Arc::new(Generated {
                map: swc_sourcemap::SourceMap::from_slice(map.as_bytes()).ok()?,
                first_line,
                first_column,
                head_columns,
                input,
                output,
            })),
        })
    }
}
