//! Places in a program, and the map from the text a parent sends back to
//! the program its author wrote.
//!
//! A parent may prepare a program before it sends it: insert text (to
//! return a last expression's value), or generate it anew (a TypeScript
//! transform). The child then sees places in the text sent, while the
//! author, and the model that wrote the program, know the program's. A
//! [`Start`](crate::Start) carries the edits as [`PlaceStep`]s, in the
//! order made, and a child that takes them names every place (in a stack
//! a program reads, and in its Result) as the program's own, with
//! [`original`].
//!
//! A place is a 1-based line and a 1-based column in characters (Unicode
//! scalar values), lines ended by `\n`, `\r\n` or a lone `\r`.

use serde::{Deserialize, Serialize};

/// One edit made on the way from the program to the text sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaceStep {
    /// `width` characters were inserted at `line`, `column`, with no line
    /// break among them: the rest of that line moved right by `width`.
    Inserted {
        /// The line of the insertion.
        line: usize,
        /// The column of the first character inserted.
        column: usize,
        /// How many characters were inserted.
        width: usize,
    },
    /// The text was generated anew from its input.
    Generated(Generated),
}

/// A text generated anew: where its places came from in its input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generated {
    /// The generator's output line and column (both 1-based) at which the
    /// text sent starts: the text sent is the output from there on.
    pub first_line: usize,
    /// See `first_line`.
    pub first_column: usize,
    /// Characters of the input's first line that came before the
    /// program's (not counted in its columns).
    pub head_columns: usize,
    /// `[output line, output column, input line, input column]` for each
    /// place the generator recorded, sorted by output place; an input line
    /// of 0 means the output there came from no place of the input.
    pub anchors: Vec<[usize; 4]>,
}

/// The program's own line and column for `line`, `column` of the text sent
/// after `steps` (in the order made). Never panics, whatever the steps say:
/// a map that makes no sense gives places that make none.
pub fn original(steps: &[PlaceStep], line: usize, column: usize) -> (usize, usize) {
    steps
        .iter()
        .rev()
        .fold((line, column), |(line, column), step| {
            step.original(line, column)
        })
}

impl PlaceStep {
    /// The place before this edit of `line`, `column` after it.
    pub fn original(&self, line: usize, column: usize) -> (usize, usize) {
        match self {
            PlaceStep::Inserted {
                line: at_line,
                column: at_column,
                width,
            } => {
                if line != *at_line || column < *at_column {
                    (line, column)
                } else if column < at_column.saturating_add(*width) {
                    // Inside the inserted text: the place it was put before.
                    (line, *at_column)
                } else {
                    (line, column - width)
                }
            }
            PlaceStep::Generated(generated) => generated.original(line, column),
        }
    }
}

impl Generated {
    /// The input's place for `line`, `column` of the text sent: the last
    /// anchor at or before it (on this line or an earlier one), plus the
    /// distance from it when it is on the same line. Of anchors at the
    /// place itself, the first (as a source map's lookup takes them).
    pub fn original(&self, line: usize, column: usize) -> (usize, usize) {
        let out_line = line.saturating_add(self.first_line).saturating_sub(1);
        let out_column = if line == 1 {
            column.saturating_add(self.first_column).saturating_sub(1)
        } else {
            column
        };
        let here = (out_line, out_column);
        let after = self.anchors.partition_point(|&[l, c, _, _]| (l, c) <= here);
        let Some(&[last_line, last_column, _, _]) =
            after.checked_sub(1).and_then(|i| self.anchors.get(i))
        else {
            return (line, column);
        };
        let at = if (last_line, last_column) == here {
            self.anchors.partition_point(|&[l, c, _, _]| (l, c) < here)
        } else {
            after - 1
        };
        let Some(&[anchor_line, anchor_column, from_line, from_column]) = self.anchors.get(at)
        else {
            return (line, column);
        };
        if from_line == 0 {
            return (line, column);
        }
        let past = if anchor_line == out_line {
            out_column.saturating_sub(anchor_column)
        } else {
            0
        };
        let mut column = from_column.saturating_add(past);
        if from_line == 1 {
            column = column.saturating_sub(self.head_columns);
        }
        (from_line, column.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_insertion_moves_only_the_rest_of_its_line() {
        let steps = [PlaceStep::Inserted {
            line: 3,
            column: 5,
            width: 7,
        }];
        assert_eq!(original(&steps, 3, 4), (3, 4));
        assert_eq!(original(&steps, 3, 5), (3, 5));
        assert_eq!(original(&steps, 3, 11), (3, 5));
        assert_eq!(original(&steps, 3, 12), (3, 5));
        assert_eq!(original(&steps, 3, 20), (3, 13));
        assert_eq!(original(&steps, 2, 20), (2, 20));
        assert_eq!(original(&steps, 4, 20), (4, 20));
    }

    #[test]
    fn steps_are_undone_last_first() {
        // Two insertions on one line: 3 characters at column 1, then 5 at
        // column 10 of the result.
        let steps = [
            PlaceStep::Inserted {
                line: 1,
                column: 1,
                width: 3,
            },
            PlaceStep::Inserted {
                line: 1,
                column: 10,
                width: 5,
            },
        ];
        assert_eq!(original(&steps, 1, 20), (1, 12));
        assert_eq!(original(&steps, 1, 9), (1, 6));
    }

    #[test]
    fn a_generated_text_maps_through_its_anchors() {
        let generated = Generated {
            first_line: 2,
            first_column: 1,
            head_columns: 0,
            anchors: vec![[2, 1, 5, 3], [2, 10, 0, 0], [3, 4, 7, 1]],
        };
        // Line 1 of the text sent is the output's line 2.
        assert_eq!(generated.original(1, 1), (5, 3));
        assert_eq!(generated.original(1, 6), (5, 8));
        // After an anchor of no input place: the place itself.
        assert_eq!(generated.original(1, 12), (1, 12));
        assert_eq!(generated.original(2, 2), (2, 2));
        assert_eq!(generated.original(2, 9), (7, 6));
        // An anchor on an earlier line gives its own place, no distance.
        assert_eq!(generated.original(3, 1), (7, 1));
        // Before every anchor: the place itself.
        let early = Generated {
            first_line: 1,
            first_column: 1,
            head_columns: 0,
            anchors: vec![[4, 1, 1, 1]],
        };
        assert_eq!(early.original(2, 5), (2, 5));
    }

    #[test]
    fn of_anchors_at_one_place_the_first_is_taken_there_and_the_last_past_it() {
        let generated = Generated {
            first_line: 1,
            first_column: 1,
            head_columns: 0,
            anchors: vec![[1, 5, 2, 1], [1, 5, 2, 6]],
        };
        assert_eq!(generated.original(1, 5), (2, 1));
        assert_eq!(generated.original(1, 6), (2, 7));
    }

    #[test]
    fn the_input_head_is_taken_off_its_first_line() {
        let generated = Generated {
            first_line: 1,
            first_column: 1,
            head_columns: 4,
            anchors: vec![[1, 1, 1, 2], [1, 8, 1, 9]],
        };
        assert_eq!(generated.original(1, 8), (1, 5));
        // A place inside the head is the program's first column.
        assert_eq!(generated.original(1, 1), (1, 1));
    }

    #[test]
    fn nonsense_maps_give_places_and_no_panic() {
        let steps = [
            PlaceStep::Inserted {
                line: usize::MAX,
                column: usize::MAX,
                width: usize::MAX,
            },
            PlaceStep::Generated(Generated {
                first_line: usize::MAX,
                first_column: usize::MAX,
                head_columns: usize::MAX,
                anchors: vec![[9, 9, 1, 1], [1, 1, usize::MAX, usize::MAX], [0, 0, 0, 0]],
            }),
        ];
        for (line, column) in [(0, 0), (1, 1), (usize::MAX, usize::MAX), (9, 9)] {
            let _ = original(&steps, line, column);
        }
    }

    #[test]
    fn steps_read_and_write_as_tagged_objects() {
        let steps = vec![
            PlaceStep::Inserted {
                line: 2,
                column: 1,
                width: 18,
            },
            PlaceStep::Generated(Generated {
                first_line: 1,
                first_column: 1,
                head_columns: 0,
                anchors: vec![[1, 1, 1, 1]],
            }),
        ];
        let json = serde_json::to_string(&steps).unwrap();
        assert_eq!(
            json,
            r#"[{"inserted":{"line":2,"column":1,"width":18}},{"generated":{"first_line":1,"first_column":1,"head_columns":0,"anchors":[[1,1,1,1]]}}]"#
        );
        assert_eq!(
            serde_json::from_str::<Vec<PlaceStep>>(&json).unwrap(),
            steps
        );
    }
}
