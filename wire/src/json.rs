//! Two things about the JSON a child sends (a call's args, a Result's
//! value) that a parse alone does not settle: how deep it nests, and
//! strings that are not text.
//!
//! - **Lone surrogates.** A JavaScript string may hold half of a UTF-16
//!   surrogate pair, and `JSON.stringify` writes one as an escape
//!   (`"\ud83d"`, what `"😀".slice(0, 1)` gives). That is JSON, but no Rust
//!   string can hold it, so a Rust reader of such args or such a value
//!   fails. [`replace_lone_surrogates`] turns each into `\ufffd` (U+FFFD,
//!   the replacement character), as JavaScript's `toWellFormed` does: an
//!   escape of the same length, so no other byte moves.
//! - **Depth.** A reader that builds a tree (serde_json's `Value`), and
//!   whatever drops or writes the tree, takes stack for every level;
//!   [`survey`] says how deep a text nests without recursing, so a reader
//!   can refuse what it cannot hold before it starts.

/// What [`survey`] found in a JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Survey {
    /// The deepest nesting of arrays and objects (`1` = `[]` or `{}`).
    pub depth: usize,
    /// Escapes of a lone surrogate in its strings.
    pub lone_surrogates: usize,
    /// Values: every array element, object member's value and the top
    /// value, containers included (object keys are not values).
    pub values: usize,
    /// Arrays and objects.
    pub containers: usize,
    /// Object members (key and value).
    pub members: usize,
    /// Strings, keys included.
    pub strings: usize,
    /// Bytes of the text inside strings' quotes, escapes as written (so at
    /// least the bytes of the strings they read as).
    pub string_bytes: usize,
}

/// Reads `text` once, without recursing. Meant for JSON; on any other text
/// it still ends, with figures that mean nothing.
pub fn survey(text: &str) -> Survey {
    let mut survey = Survey::default();
    let mut depth = 0usize;
    let mut scalars = 0usize;
    // Inside a number or a literal (`true`, `null`): its later bytes are
    // not new values.
    let mut in_scalar = false;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let scalar_byte = !matches!(
            byte,
            b'"' | b'[' | b'{' | b']' | b'}' | b',' | b':' | b' ' | b'\t' | b'\n' | b'\r'
        );
        if scalar_byte && !in_scalar {
            scalars += 1;
        }
        in_scalar = scalar_byte;
        match byte {
            b'"' => {
                let (end, lone) = string_end(bytes, at + 1, |_| {});
                survey.lone_surrogates += lone;
                survey.strings += 1;
                survey.string_bytes += end.saturating_sub(at + 2);
                at = end;
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                survey.depth = survey.depth.max(depth);
                survey.containers += 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b':' => survey.members += 1,
            _ => {}
        }
        at += 1;
    }
    survey.values = (survey.strings + scalars + survey.containers).saturating_sub(survey.members);
    survey
}

/// `text` with every escape of a lone surrogate in its strings replaced by
/// `\ufffd`; the same `String`, untouched, when it has none.
pub fn replace_lone_surrogates(text: String) -> String {
    let mut lone = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'"' {
            let (end, _) = string_end(bytes, at + 1, |escape| lone.push(escape));
            at = end;
        } else {
            at += 1;
        }
    }
    if lone.is_empty() {
        return text;
    }
    let mut bytes = text.into_bytes();
    for escape in lone {
        // The four hex digits after the escape's `\u`.
        bytes[escape + 2..escape + 6].copy_from_slice(b"fffd");
    }
    // Only ASCII hex digits were replaced by ASCII hex digits.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Args as a handler gets them: when they are JSON with a lone surrogate
/// escape in a string (`{"text": long.slice(0, 1000)}` can cut an emoji
/// in two), each becomes `\ufffd`, so that a handler's JSON reader takes
/// them; any other args (text that is not JSON among them) are untouched.
pub fn well_formed_args(args: String) -> String {
    // Most args have no `\u` escape of a surrogate at all: one pass of a
    // substring search, no parse.
    if !(args.contains("\\ud") || args.contains("\\uD")) {
        return args;
    }
    if serde_json::from_str::<serde::de::IgnoredAny>(&args).is_err() {
        return args;
    }
    replace_lone_surrogates(args)
}

/// Where the JSON string whose opening quote is `bytes[quote]` ends: just
/// after its closing quote, or `bytes.len()` when it does not close. For
/// a scanner of JSON-like text (a top-level member, brackets outside
/// strings) that must not read into a string.
pub fn skip_string(bytes: &[u8], quote: usize) -> usize {
    string_end(bytes, quote + 1, |_| {}).0
}

/// A JSON string's text, from `text`, its escaped form (a literal's
/// inside, without its quotes, as a parser that checked its syntax hands
/// it out), read in `text`'s own buffer: an escape is never shorter than
/// the UTF-8 of what it stands for, so the text is written over its escaped
/// form and keeps the buffer (and its spare room). serde_json reads a
/// string with an escape through a scratch buffer that grows by doubling
/// and is then copied: a program of 15 MiB with a newline in it held 15 in
/// its frame, up to 30 in that scratch and 15 in the copy at once. `None`
/// for what serde_json refuses too: an escape of half a surrogate pair, or
/// one that is not JSON's.
pub(crate) fn unescape_in_place(text: String) -> Option<String> {
    let mut bytes = text.into_bytes();
    // The text so far is `bytes[..written]`; the escaped form left to read
    // begins at `read`, never before it.
    let mut written = 0;
    let mut read = 0;
    while let Some(offset) = bytes[read..].iter().position(|&b| b == b'\\') {
        bytes.copy_within(read..read + offset, written);
        written += offset;
        read += offset;
        let (c, used) = escape_at(&bytes, read)?;
        read += used;
        written += c.encode_utf8(&mut bytes[written..read]).len();
    }
    let len = bytes.len();
    bytes.copy_within(read..len, written);
    bytes.truncate(written + (len - read));
    // Whole characters were moved and written, each a valid UTF-8 sequence.
    String::from_utf8(bytes).ok()
}

/// The character the escape at `bytes[at]` (a `\\`) stands for, and the
/// bytes it takes (2, 6, or 12 for a surrogate pair): never fewer than the
/// character's UTF-8.
fn escape_at(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let c = match bytes.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(bytes, at + 2)?;
            return match unit {
                0xD800..=0xDBFF => {
                    let low = (bytes.get(at + 6..at + 8) == Some(b"\\u"))
                        .then(|| hex4(bytes, at + 8))
                        .flatten()
                        .filter(|low| (0xDC00..=0xDFFF).contains(low))?;
                    let scalar =
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    Some((char::from_u32(scalar)?, 12))
                }
                0xDC00..=0xDFFF => None,
                unit => Some((char::from_u32(u32::from(unit))?, 6)),
            };
        }
        _ => return None,
    };
    Some((c, 2))
}

/// From just after a string's opening quote: where the string ends (just
/// after its closing quote, or the text's end) and how many lone surrogate
/// escapes it holds, each one's offset (of its `\`) given to `lone`.
fn string_end(bytes: &[u8], mut at: usize, mut lone: impl FnMut(usize)) -> (usize, usize) {
    let mut count = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => return (at + 1, count),
            b'\\' if bytes.get(at + 1) == Some(&b'u') => {
                let unit = hex4(bytes, at + 2);
                match unit {
                    Some(0xD800..=0xDBFF) => {
                        let low = (bytes.get(at + 6) == Some(&b'\\')
                            && bytes.get(at + 7) == Some(&b'u'))
                        .then(|| hex4(bytes, at + 8))
                        .flatten();
                        if matches!(low, Some(0xDC00..=0xDFFF)) {
                            at += 12;
                            continue;
                        }
                        lone(at);
                        count += 1;
                    }
                    Some(0xDC00..=0xDFFF) => {
                        lone(at);
                        count += 1;
                    }
                    _ => {}
                }
                at += 6;
            }
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
    (bytes.len(), count)
}

/// The four hex digits at `at`, if there are four.
fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_survey_counts_nesting_outside_strings_only() {
        assert_eq!(survey("1").depth, 0);
        assert_eq!(survey("[[], {\"a\": [1]}]").depth, 3);
        assert_eq!(survey(r#"{"a": "[[[[{{", "b": "\"[["}"#).depth, 1);
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(survey(&deep).depth, 5000);
    }

    #[test]
    fn a_survey_counts_what_a_tree_of_the_text_would_hold() {
        let counts = |text: &str| {
            let s = survey(text);
            (s.values, s.containers, s.members, s.strings, s.string_bytes)
        };
        assert_eq!(counts("1"), (1, 0, 0, 0, 0));
        assert_eq!(counts("-12.5e+3"), (1, 0, 0, 0, 0));
        assert_eq!(counts("[]"), (1, 1, 0, 0, 0));
        assert_eq!(counts("[1, 22, true, null]"), (5, 1, 0, 0, 0));
        assert_eq!(counts(r#"{"a": "bc", "d": [false]}"#), (4, 2, 2, 3, 4));
        // Brackets, colons and escaped quotes inside a string are its bytes.
        assert_eq!(counts(r#"["[:{,\"", ""]"#), (3, 1, 0, 2, 6));
        assert_eq!(counts(" [ 1 ,\n2 ] "), (3, 1, 0, 0, 0));
    }

    #[test]
    fn only_lone_surrogate_escapes_are_replaced() {
        let cases = [
            (r#""\ud83d""#, r#""\ufffd""#),
            (r#""\uDE00 x""#, r#""\ufffd x""#),
            (
                r#"["\ud83d\ude00", "\ud83d\ud83d"]"#,
                r#"["\ud83d\ude00", "\ufffd\ufffd"]"#,
            ),
            (r#"{"\ud800": "a\\ud800"}"#, r#"{"\ufffd": "a\\ud800"}"#),
            (r#""\ud83d"#, r#""\ufffd"#),
            (r#""😀 \u0041""#, r#""😀 \u0041""#),
        ];
        for (text, want) in cases {
            assert_eq!(replace_lone_surrogates(text.to_owned()), want, "{text}");
        }
        // What is left reads as Rust text.
        let repaired = replace_lone_surrogates(r#"["\ud83d", "\udc00"]"#.to_owned());
        let read: Vec<String> = serde_json::from_str(&repaired).expect("well-formed");
        assert_eq!(read, ["\u{fffd}", "\u{fffd}"]);
    }

    #[test]
    fn args_are_repaired_only_when_they_are_json() {
        assert_eq!(
            well_formed_args(r#"{"t":"\ud83d"}"#.into()),
            r#"{"t":"\ufffd"}"#
        );
        // Text args that are not JSON go as they are, escapes and all.
        for text in [r#"say "\ud83d" twice"#, r#"\ud83d"#, "plain"] {
            assert_eq!(well_formed_args(text.into()), text);
        }
    }

    #[test]
    fn text_that_is_not_json_still_ends() {
        for text in ["\"", "\"\\", "\"\\u12", "[[[", "]]]", "\"\\ud800\\u"] {
            let _ = survey(text);
            let _ = replace_lone_surrogates(text.to_owned());
        }
    }

    #[test]
    fn a_string_unescaped_reads_as_serde_json_reads_it() {
        let cases = [
            r#""""#,
            r#""plain""#,
            r#""line\nbreak\ttab \"quoted\" back\\slash \/ \b\f\r""#,
            r#""\u0041\u00e9\u4e2d \ud83d\ude00 \uD83D\uDE00 \u0000""#,
            r#""é中😀 raw, \n then more""#,
            r#""\\u0041 is not an escape""#,
        ];
        for case in cases {
            let want: String = serde_json::from_str(case).expect("valid JSON");
            let got = unescape_in_place(case[1..case.len() - 1].to_owned()).expect("unescaped");
            assert_eq!(got, want, "{case}");
        }
        for lone in [
            r#""\ud83d""#,
            r#""\ude00 x""#,
            r#""\ud83d\u0041""#,
            r#""\ud83d\ud83d""#,
        ] {
            assert!(serde_json::from_str::<String>(lone).is_err(), "{lone}");
            assert!(
                unescape_in_place(lone[1..lone.len() - 1].to_owned()).is_none(),
                "{lone}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_written_as_json_unescapes_to_itself(text in proptest::prelude::any::<String>(), units in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..8)) {
            // serde_json's own escapes (quotes, back slashes, controls)...
            let quoted = serde_json::to_string(&text).expect("a string");
            let inner = |quoted: &str| quoted[1..quoted.len() - 1].to_owned();
            proptest::prop_assert_eq!(unescape_in_place(inner(&quoted)).expect("unescaped"), text.clone());
            // ...and every `\u` escape another writer may use.
            let escaped: String = units.iter().map(|unit| format!("\\u{unit:04x}")).collect();
            let quoted = format!("\"{escaped}{}\"", &quoted[1..quoted.len() - 1]);
            let want = serde_json::from_str::<String>(&quoted);
            let got = unescape_in_place(inner(&quoted));
            proptest::prop_assert_eq!(got, want.ok());
        }
    }
}
