//! Places in a program, and the map from the text a child was sent back to
//! the program its author wrote.
//!
//! Lines are counted as the guest counts them in the positions it reports
//! (`guest/src/program.rs`): `\n`, `\r\n` and a lone `\r` each end one;
//! U+2028 and U+2029, which may stand inside a string, do not. Columns count
//! characters (Unicode scalar values). Both are 1-based.
//!
//! A [`PositionMap`] is the list of edits made on the way from the program
//! to the text that was sent, each able to say where one of its own places
//! came from; [`PositionMap::original`] asks them in the reverse order.

use std::sync::Arc;

/// Where a line starts, for every line of one text.
#[derive(Debug)]
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// Byte offset of each line's first character; `starts[0]` is 0.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// Indexes the lines of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '\r' => {
                    if let Some(&(next, '\n')) = chars.peek() {
                        chars.next();
                        starts.push(next + 1);
                    } else {
                        starts.push(at + 1);
                    }
                }
                '\n' => starts.push(at + 1),
                _ => {}
            }
        }
        Self { text, starts }
    }

    /// The 1-based line and character column of byte `offset` (clamped to
    /// the text, and back to a character boundary).
    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        // The last line starting at or before `offset`; starts[0] is 0.
        let index = self.starts.partition_point(|&start| start <= offset) - 1;
        let start = self.starts[index];
        let column = self.text[start..offset].chars().count() + 1;
        (index + 1, column)
    }
}

/// Maps places in the text a child was sent back to the program's own.
///
/// Empty (the identity) when the text sent is the program with its types
/// blanked out: every line and column is then already the program's.
#[derive(Debug, Clone, Default)]
pub struct PositionMap {
    /// The edits from the program to the text sent, in the order made.
    steps: Vec<Step>,
}

/// One edit on the way to the text sent.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// `width` characters were inserted at `line`, `column` (no line break
    /// among them): later columns of that line moved right by `width`.
    Inserted {
        /// The line of the insertion.
        line: usize,
        /// The column of the first inserted character.
        column: usize,
        /// How many characters were inserted.
        width: usize,
    },
    /// The text was generated anew (a TypeScript transform), with a source
    /// map back to its input.
    Generated(Arc<Generated>),
}

/// A generated text, and how to find the input's places in it.
#[derive(Debug)]
pub(crate) struct Generated {
    /// Maps the generator's output back to its input.
    pub(crate) map: swc_sourcemap::SourceMap,
    /// The output line and column the text sent starts at (both 1-based):
    /// the text sent is the output from there on.
    pub(crate) first_line: usize,
    /// See `first_line`.
    pub(crate) first_column: usize,
    /// Lines of the generator's input before the program's first (none).
    /// Its first line had `head_columns` characters before the program's.
    pub(crate) head_columns: usize,
    /// The generator's input and output: a source map counts columns in
    /// UTF-16 units, places here are in characters, and the two differ on a
    /// line with a character outside the Basic Multilingual Plane.
    pub(crate) input: String,
    /// See `input`.
    pub(crate) output: String,
}

impl PositionMap {
    /// A map of the given edits, in the order they were made.
    pub(crate) fn new(steps: Vec<Step>) -> Self {
        Self { steps }
    }

    /// The edits, in the order made.
    pub(crate) fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Whether every place in the text sent is already the program's.
    pub fn is_identity(&self) -> bool {
        self.steps.is_empty()
    }

    /// The program's own line and column (1-based, columns in characters)
    /// for `line`, `column` in the text sent.
    pub fn original(&self, line: usize, column: usize) -> (usize, usize) {
        self.steps
            .iter()
            .rev()
            .fold((line, column), |(line, column), step| {
                step.original(line, column)
            })
    }
}

impl Step {
    /// The place before this edit of `line`, `column` after it.
    fn original(&self, line: usize, column: usize) -> (usize, usize) {
        match self {
            Step::Inserted {
                line: at_line,
                column: at_column,
                width,
            } => {
                if line != *at_line || column < *at_column {
                    (line, column)
                } else if column < at_column + width {
                    // Inside the inserted text: the place it was put before.
                    (line, *at_column)
                } else {
                    (line, column - width)
                }
            }
            Step::Generated(generated) => generated.original(line, column),
        }
    }
}

impl Generated {
    /// The input's place for `line`, `column` of the text sent: the nearest
    /// mapped place at or before it on the same output line, plus the
    /// distance from there.
    fn original(&self, line: usize, column: usize) -> (usize, usize) {
        let out_line = line.saturating_add(self.first_line).saturating_sub(1);
        let out_column = if line == 1 {
            column.saturating_add(self.first_column).saturating_sub(1)
        } else {
            column
        };
        let out_column = utf16_column(&self.output, out_line, out_column);
        let (Ok(dst_line), Ok(dst_column)) = (
            u32::try_from(out_line.saturating_sub(1)),
            u32::try_from(out_column.saturating_sub(1)),
        ) else {
            return (line, column);
        };
        let Some(token) = self.map.lookup_token(dst_line, dst_column) else {
            return (line, column);
        };
        let (src_line, src_column) = (token.get_src_line(), token.get_src_col());
        if src_line == u32::MAX {
            return (line, column);
        }
        let past = if token.get_dst_line() == dst_line {
            dst_column.saturating_sub(token.get_dst_col())
        } else {
            0
        };
        let line = src_line as usize + 1;
        let column = src_column.saturating_add(past) as usize + 1;
        let mut column = char_column(&self.input, line, column);
        if line == 1 {
            column = column.saturating_sub(self.head_columns).max(1);
        }
        (line, column)
    }
}

/// The 1-based line `line` of `text` (lines end at `\n`; a `\r` before it
/// is a character like any other, in both counts).
fn nth_line(text: &str, line: usize) -> &str {
    text.split('\n').nth(line.saturating_sub(1)).unwrap_or("")
}

/// The UTF-16 column (1-based) of the character column `column` of `line`.
fn utf16_column(text: &str, line: usize, column: usize) -> usize {
    let before: usize = nth_line(text, line)
        .chars()
        .take(column.saturating_sub(1))
        .map(char::len_utf16)
        .sum();
    // Past the line's end, the columns beyond count one each.
    let chars = nth_line(text, line).chars().count();
    before + column.saturating_sub(1).saturating_sub(chars) + 1
}

/// The character column (1-based) of the UTF-16 column `column` of `line`.
fn char_column(text: &str, line: usize, column: usize) -> usize {
    line_char_column(nth_line(text, line), column)
}

/// The character column (1-based) of the UTF-16 column `column` of the
/// line `line`; past its end, the columns beyond count one each.
pub(crate) fn line_char_column(line: &str, column: usize) -> usize {
    let mut units = 0;
    let mut chars = 0;
    for c in line.chars() {
        if units >= column.saturating_sub(1) {
            return chars + 1;
        }
        units += c.len_utf16();
        chars += 1;
    }
    chars + column.saturating_sub(1).saturating_sub(units) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_convert_between_characters_and_utf16_units() {
        let text = "ab\nx😀y😀z";
        // `y` is the third character of line 2 and its fourth UTF-16 unit.
        assert_eq!(utf16_column(text, 2, 3), 4);
        assert_eq!(char_column(text, 2, 4), 3);
        assert_eq!(utf16_column(text, 2, 5), 7);
        assert_eq!(char_column(text, 2, 7), 5);
        // Without astral characters, and past a line's end, they agree.
        assert_eq!(utf16_column(text, 1, 2), 2);
        assert_eq!(char_column(text, 1, 9), 9);
        assert_eq!(utf16_column(text, 2, 9), 11);
        assert_eq!(char_column(text, 2, 11), 9);
    }

    #[test]
    fn lines_end_at_lf_crlf_and_a_lone_cr_only() {
        let text = "a\nb\r\nc\rd\u{2028}e\u{2029}f";
        let lines = Lines::new(text);
        let found: Vec<_> = ['a', 'b', 'c', 'd', 'e', 'f']
            .iter()
            .map(|&c| lines.position(text.find(c).unwrap()))
            .collect();
        assert_eq!(found, [(1, 1), (2, 1), (3, 1), (4, 1), (4, 3), (4, 5)]);
        assert_eq!(lines.position(text.find('\r').unwrap()), (2, 2));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let text = "x\néé=1";
        assert_eq!(Lines::new(text).position(text.find('=').unwrap()), (2, 3));
        // An offset inside a character is that character's place.
        assert_eq!(Lines::new(text).position(3), (2, 1));
        assert_eq!(Lines::new(text).position(usize::MAX), (2, 5));
    }

    #[test]
    fn an_insertion_moves_only_the_rest_of_its_line() {
        let map = PositionMap::new(vec![Step::Inserted {
            line: 3,
            column: 5,
            width: 7,
        }]);
        assert_eq!(map.original(3, 4), (3, 4));
        assert_eq!(map.original(3, 5), (3, 5));
        assert_eq!(map.original(3, 11), (3, 5));
        assert_eq!(map.original(3, 12), (3, 5));
        assert_eq!(map.original(3, 20), (3, 13));
        assert_eq!(map.original(2, 20), (2, 20));
        assert_eq!(map.original(4, 20), (4, 20));
    }

    #[test]
    fn the_identity_map_changes_nothing() {
        let map = PositionMap::default();
        assert!(map.is_identity());
        assert_eq!(map.original(7, 3), (7, 3));
    }
}
