//! A bound, found without parsing, on what swc's parser takes for labels.
//!
//! swc keeps a `DuplicateLabel` error for every enclosing label of the same
//! name, in the parse's own frames until it unwinds: `a: a: a: … 1`, a
//! label nested `n` deep, holds `n(n-1)/2` errors at once (8,000 labels,
//! 24 KB of program, took the parent to 2.5 GiB; 74 bytes an error).
//! Before a program goes to the parser, [`duplicate_pairs`] counts, for
//! every name, the places where it could be a label, and bounds the errors
//! by the pairs of places with the same name; a program whose bound
//! exceeds [`MAX_DUPLICATE_PAIRS`] is not parsed.
//!
//! The count must never be short of the labels swc sees, so it is loose in
//! one direction only. Every `name :` is a candidate (in code, strings,
//! comments and regular expressions alike), whitespace of any kind and
//! comments allowed between the name and its colon. A name written with an
//! escape (`\u0061`, `\u{61}`, a lone surrogate `\uDFFF`, which swc keeps
//! as a name of its own, a pair `\uD835\uDC9C`, which it decodes) is not
//! read at all: it is counted as the same name as every other candidate,
//! so no spelling of one name can get past the count (the way lone
//! surrogates got past reading escapes: 64 KiB of `\u{DFFF}: ` took the
//! parent to 1.56 GiB). The only ones left out are those directly after
//! `,`, `?`, `(`, `[` or `.` on the same line, with nothing but spaces
//! between: a label starts a statement, and what follows those characters
//! never does, or else (the character being in a string, comment or
//! regular expression) the name is in it too, as no quote or line break
//! comes between. So the first key of an object literal counts
//! (`{ name: 1 }`, as a label in a block would), and its others do not.

use std::collections::HashMap;

/// Pairs of same-named label candidates past which a program is not
/// parsed: at most 48 MiB of swc's errors at 96 bytes a pair (74 measured:
/// a boxed error, and its place in a vector grown by doubling), so that a
/// name may open about 1,000 statements or object literals in one program.
pub(crate) const MAX_DUPLICATE_PAIRS: u64 = 1 << 19;

/// How far past a name its colon is looked for, through whitespace and
/// comments. A label further from its colon takes more than this of its
/// program, so too few of them fit in [`MAX_PARSED_BYTES`] to matter
/// (256, about 33,000 pairs); and no byte is looked at from more than this
/// many names, so a program is read in linear time.
///
/// [`MAX_PARSED_BYTES`]: super::MAX_PARSED_BYTES
const LOOKAHEAD: usize = 256;

/// An upper bound on the pairs of nested same-named labels in `program`,
/// for the parser's `DuplicateLabel` errors: the sum, over names written
/// without escapes, of `n(n-1)/2` for `n` candidate labels of that name,
/// and for each candidate written with one, the number of candidates.
pub(crate) fn duplicate_pairs(program: &str) -> u64 {
    let bytes = program.as_bytes();
    let mut counts: HashMap<&str, u64> = HashMap::new();
    let mut pairs: u64 = 0;
    let (mut candidates, mut escaped) = (0u64, 0u64);
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_digit() {
            // A number, with whatever letters follow it (`0x1f`, `1e5`).
            at = skip_name(program, at);
        } else if starts_name(program, at) {
            let end = skip_name(program, at);
            if !after_expression_start(bytes, at) && colon_follows(program, end) {
                let name = &program[at..end];
                candidates += 1;
                if name.contains('\\') {
                    escaped += 1;
                } else {
                    let count = counts.entry(name).or_insert(0);
                    pairs = pairs.saturating_add(*count);
                    *count += 1;
                }
            }
            at = end.max(at + 1);
        } else {
            at += char_len(program, at);
        }
    }
    pairs.saturating_add(escaped.saturating_mul(candidates))
}

/// Whether a name may start at `at`: a letter, `_`, `$`, an escape, or any
/// character beyond ASCII (swc takes letters of any script).
fn starts_name(program: &str, at: usize) -> bool {
    match program.as_bytes()[at] {
        b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | b'\\' => true,
        byte if byte >= 0x80 => program[at..].chars().next().is_some_and(|c| !is_space(c)),
        _ => false,
    }
}

fn continues_name(program: &str, at: usize) -> bool {
    program.as_bytes()[at].is_ascii_digit() || starts_name(program, at)
}

/// The end of the name (or number) at `at`. An escape is passed over as
/// far as swc could take it, whatever it stands for: `\u`, then `{`, hex
/// digits and `}` when braced (four hex digits unbraced are name
/// characters anyway). Where swc ends a name sooner, what it left is hex
/// digits or a `}`, not a colon, so no label is missed by going further.
fn skip_name(program: &str, mut at: usize) -> usize {
    let bytes = program.as_bytes();
    while at < bytes.len() && continues_name(program, at) {
        if bytes[at] != b'\\' {
            at += char_len(program, at);
            continue;
        }
        at += 1;
        if bytes.get(at) == Some(&b'u') {
            at += 1;
            if bytes.get(at) == Some(&b'{') {
                at += 1;
                at += bytes[at..]
                    .iter()
                    .take_while(|b| b.is_ascii_hexdigit())
                    .count();
                if bytes.get(at) == Some(&b'}') {
                    at += 1;
                }
            }
        }
    }
    at
}

/// Whether the name at `at` comes directly after `,`, `?`, `(`, `[` or
/// `.`, with only spaces and tabs between (the same line).
fn after_expression_start(bytes: &[u8], at: usize) -> bool {
    let mut i = at;
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i > 0 && matches!(bytes[i - 1], b',' | b'?' | b'(' | b'[' | b'.')
}

/// Whether a `:` follows `at`, past whitespace and comments, within
/// [`LOOKAHEAD`] bytes.
fn colon_follows(program: &str, start: usize) -> bool {
    let bytes = program.as_bytes();
    let end = program.len().min(start.saturating_add(LOOKAHEAD));
    let mut at = start;
    while at < end {
        match bytes[at] {
            b':' => return true,
            // A line comment: `//`, and the HTML-like `<!--` and `-->`
            // swc also takes as one (wherever `-->` stands: where it is no
            // comment, a colon found past it only counts one name more).
            b'/' if bytes.get(at + 1) == Some(&b'/') => match line_end(bytes, at, end) {
                Some(next) => at = next,
                None => return false,
            },
            b'<' if bytes[at..].starts_with(b"<!--") => match line_end(bytes, at, end) {
                Some(next) => at = next,
                None => return false,
            },
            b'-' if bytes[at..].starts_with(b"-->") => match line_end(bytes, at, end) {
                Some(next) => at = next,
                None => return false,
            },
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                match bytes[(at + 2).min(end)..end]
                    .windows(2)
                    .position(|pair| pair == b"*/")
                {
                    Some(close) => at += 2 + close + 2,
                    None => return false,
                }
            }
            byte if byte.is_ascii_whitespace() || byte == 0x0b => at += 1,
            byte if byte >= 0x80 => {
                let c = program[at..].chars().next().unwrap_or('\0');
                if !is_space(c) {
                    return false;
                }
                at += c.len_utf8();
            }
            _ => return false,
        }
    }
    false
}

/// Whitespace and line breaks as JavaScript has them beyond ASCII, and
/// those swc also skips (U+200B, U+180E).
fn is_space(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{feff}' | '\u{200b}' | '\u{180e}')
}

/// Just past the line terminator that ends the line of `at` (`\n`, `\r`,
/// U+2028 or U+2029), if one comes before `end`.
fn line_end(bytes: &[u8], at: usize, end: usize) -> Option<usize> {
    let rest = &bytes[at..end];
    rest.iter().enumerate().find_map(|(i, &b)| match b {
        b'\n' | b'\r' => Some(at + i + 1),
        0xe2 if rest.get(i + 1) == Some(&0x80) && matches!(rest.get(i + 2), Some(0xa8 | 0xa9)) => {
            Some(at + i + 3)
        }
        _ => None,
    })
}

fn char_len(program: &str, at: usize) -> usize {
    program[at..].chars().next().map_or(1, char::len_utf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_labels_count_every_pair_of_the_same_name() {
        assert_eq!(duplicate_pairs("a: a: a: 1"), 3);
        assert_eq!(duplicate_pairs("a: b: a: b: 1"), 2);
        assert_eq!(duplicate_pairs(&"a: ".repeat(100)), 100 * 99 / 2);
        assert_eq!(duplicate_pairs("a: { a: { a: { } } }"), 3);
    }

    #[test]
    fn a_label_spelt_with_escapes_or_spaces_of_any_kind_is_counted() {
        // Three candidates, two escaped: each of those is taken for the
        // name of all three (3 pairs really).
        assert_eq!(duplicate_pairs("a: \\u0061: \\u{61}: 1"), 6);
        assert_eq!(duplicate_pairs("a: \\u{0000061}: \\u{000000000061}: 1"), 6);
        // Comments of every kind between a name and its colon, ended by
        // every line terminator; spaces swc skips that Unicode does not.
        assert_eq!(
            duplicate_pairs("a<!--1\n: a\n-->1\n: a//1\r: a//1\u{2028}: 1"),
            6
        );
        assert_eq!(duplicate_pairs("a\u{200b}: a\u{180e}: 1"), 1);
        assert_eq!(duplicate_pairs("a/* x */: a // y\n : a\u{a0}: 1"), 3);
        assert_eq!(duplicate_pairs("é: é: 1"), 1);
        // After a line break, a comma (here in a comment) proves nothing.
        assert_eq!(duplicate_pairs("a: //,\na: //,\na: 1"), 3);
    }

    /// swc keeps a lone surrogate escape as a name of its own
    /// (`\u{DFFF}` and `\udfff` are both `\uDFFF`), which the count read
    /// as no name (braced) or as another name per spelling, and decodes a
    /// pair (`\uD835\uDC9C` is `𝒜`): 64 KiB of `\u{DFFF}: ` took the parent
    /// to 1.56 GiB in swc's errors.
    #[test]
    fn every_spelling_of_a_name_with_escapes_counts_as_the_same_name() {
        let n: u64 = 100;
        for label in [
            "\\u{DFFF}: ",
            "\\u{dfff}: { ",
            "\\uDFFF: ",
            "\\udFfF: ",
            "\\uD835\\uDC9C: ",
            "\\u{1D49C}: ",
            "a\\u{DFFF}b: ",
            "\\u{110000}: ",
            "\\x: ",
        ] {
            let program = format!("{}1", label.repeat(n as usize));
            assert!(
                duplicate_pairs(&program) >= n * (n - 1) / 2,
                "{label}: {}",
                duplicate_pairs(&program)
            );
        }
        // Spellings mixed, and with a name written plainly.
        let mixed = "\\uD835\\uDC9C: 𝒜: \\u{1D49C}: \\udfff: \\u{DFFF}: 1";
        assert!(duplicate_pairs(mixed) >= 4);
        // Past the bound, the program is not given to the parser.
        let hostile = format!("{}1\n", "\\u{DFFF}: ".repeat(2_000));
        assert!(duplicate_pairs(&hostile) > MAX_DUPLICATE_PAIRS);
    }

    #[test]
    fn names_that_cannot_be_labels_are_left_out() {
        // The ternary's branch, a parameter, an object's later keys, a
        // member: none starts a statement.
        assert_eq!(
            duplicate_pairs("x ? a : a; f(a: 1, a: 2); o = {b: 1, a: 2, a: 3}"),
            0
        );
        // A number's letters are no name; `case` counts (loosely) alone.
        assert_eq!(duplicate_pairs("switch (x) { case 0x1: case 1e5: }"), 0);
        // Without a colon, a name is no label.
        assert_eq!(duplicate_pairs("a; a; a = a"), 0);
    }

    #[test]
    fn any_text_is_read_without_a_panic() {
        // Every piece of a text dense in what the reader looks at: names
        // and escapes beyond ASCII, comments cut off, spaces of all kinds.
        let text = format!(
            "é\\u{{e9}}: \\u00e9:/*{nbsp}*/😀: a{bom}:/* é */:\n// é:\n ,é: ?é: 0é: \\u{{: \\u12: 😀: {ls}: /*",
            nbsp = '\u{a0}',
            bom = '\u{feff}',
            ls = '\u{2028}',
        );
        let boundaries: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &start in &boundaries {
            for &end in boundaries.iter().filter(|&&end| end >= start) {
                duplicate_pairs(&text[start..end]);
            }
        }
        // And a lookahead cut inside a character.
        let far = format!("a {}: a:", "\u{a0}".repeat(LOOKAHEAD));
        assert_eq!(duplicate_pairs(&far), 0);
    }

    #[test]
    fn records_count_their_first_key_only() {
        let records: String = (0..500)
            .map(|i| format!("{{id: {i}, name: 'x'}},"))
            .collect();
        assert_eq!(
            duplicate_pairs(&format!("const r = [{records}];")),
            500 * 499 / 2
        );
    }
}
