//! The position map as a child is sent it: a Start's `places`
//! (`wire::places`), with which the child names every place as the
//! program's own. (The host's half only: the TypeScript compiler, which
//! compiles `position.rs` too, has no use for it.)

use wire::places::{Generated as SentGenerated, PlaceStep};

use super::position::{Generated, PositionMap, Step, line_char_column};

impl PositionMap {
    /// The map as a Start's `places`: empty when the text sent is the
    /// program's own, place for place.
    pub(crate) fn places(&self) -> Vec<PlaceStep> {
        self.steps()
            .iter()
            .map(|step| match step {
                &Step::Inserted {
                    line,
                    column,
                    width,
                } => PlaceStep::Inserted {
                    line,
                    column,
                    width,
                },
                Step::Generated(generated) => PlaceStep::Generated(anchors(generated)),
            })
            .collect()
    }
}

/// A generated text's source map as anchors in characters, sorted by
/// output place: what [`Generated::original`](super::position) looks up, in
/// the form `wire::places::Generated::original` reads.
fn anchors(generated: &Generated) -> SentGenerated {
    let output = Utf16Lines::new(&generated.output);
    let input = Utf16Lines::new(&generated.input);
    let mut anchors: Vec<[usize; 4]> = generated
        .map
        .tokens()
        .map(|token| {
            let out_line = token.get_dst_line() as usize + 1;
            let out_column = output.char_column(out_line, token.get_dst_col() as usize + 1);
            if token.get_src_line() == u32::MAX {
                return [out_line, out_column, 0, 0];
            }
            let from_line = token.get_src_line() as usize + 1;
            let from_column = input.char_column(from_line, token.get_src_col() as usize + 1);
            [out_line, out_column, from_line, from_column]
        })
        .collect();
    // A source map's tokens come in output order; sorting (stable) makes
    // the lookup's binary search hold whatever the map's order.
    anchors.sort_by_key(|&[line, column, _, _]| (line, column));
    SentGenerated {
        first_line: generated.first_line,
        first_column: generated.first_column,
        head_columns: generated.head_columns,
        anchors,
    }
}

/// The lines of a text (ended at `\n`, as a source map counts them), for
/// turning UTF-16 columns into character columns: in time independent of
/// the line's length for a line with no character outside the Basic
/// Multilingual Plane, where the two are the same. (A source map has a
/// token for every few characters; a scan of the line for each would be
/// quadratic in a long one.)
struct Utf16Lines<'a> {
    lines: Vec<(&'a str, bool)>,
}

impl<'a> Utf16Lines<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            lines: text
                .split('\n')
                .map(|line| (line, line.chars().any(|c| c.len_utf16() == 2)))
                .collect(),
        }
    }

    /// The character column (1-based) of the UTF-16 column `column` of the
    /// 1-based `line`; past the line's end, the columns beyond count one
    /// each.
    fn char_column(&self, line: usize, column: usize) -> usize {
        let Some(&(text, astral)) = line.checked_sub(1).and_then(|i| self.lines.get(i)) else {
            return column;
        };
        if astral {
            line_char_column(text, column)
        } else {
            column
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_become_character_columns() {
        let lines = Utf16Lines::new("ab\nx😀y😀z\n");
        // `y` is the third character of line 2 and its fourth UTF-16 unit.
        assert_eq!(lines.char_column(2, 4), 3);
        assert_eq!(lines.char_column(2, 7), 5);
        // Past a line's end, and on a line of the BMP only, they agree.
        assert_eq!(lines.char_column(2, 11), 9);
        assert_eq!(lines.char_column(1, 9), 9);
        assert_eq!(lines.char_column(7, 3), 3);
    }
}
