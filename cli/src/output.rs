//! What the CLI prints: one Result line on stdout that every line splitter
//! sees as one line, and console text that cannot drive a terminal.

/// The Result as one line of JSON.
///
/// JSON allows U+2028, U+2029 and U+0085 raw inside strings, and serde_json
/// writes them so; but JavaScript's, Python's `str.splitlines` and other
/// splitters treat them as line ends, and would see the one Result line as
/// several. They can only stand inside strings here, so escaping them keeps
/// the JSON's meaning and makes it one line for everyone.
pub fn result_line(result: &wire::Result) -> serde_json::Result<String> {
    Ok(one_line(serde_json::to_string(result)?))
}

/// A program's value (its JSON text) as one line, escaped as
/// [`result_line`] is. A line break in JSON text can only be whitespace
/// (one in a string is escaped), so a child that wrote its value over
/// several lines gets spaces in their place.
pub fn value_line(json: &str) -> String {
    one_line(json.replace(['\n', '\r'], " "))
}

fn one_line(json: String) -> String {
    if !json.contains(['\u{2028}', '\u{2029}', '\u{85}']) {
        return json;
    }
    let mut line = String::with_capacity(json.len() + 12);
    for c in json.chars() {
        match c {
            '\u{2028}' | '\u{2029}' | '\u{85}' => line.push_str(&format!("\\u{:04x}", c as u32)),
            c => line.push(c),
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unicode_line_separators_are_escaped_and_mean_the_same() {
        let result = wire::Result::success("r1", "\"a\u{2028}b\u{2029}c\u{85}d\"");
        let line = result_line(&result).expect("encodes");
        assert_eq!(line.lines().count(), 1);
        assert!(!line.contains(['\u{2028}', '\u{2029}', '\u{85}']), "{line}");
        let back: wire::Result = serde_json::from_str(&line).expect("still JSON");
        assert_eq!(back, result);
    }

    #[test]
    fn a_value_written_over_several_lines_is_one_line_and_means_the_same() {
        let json = "{\n  \"a\": [1,\r\n 2],\n  \"b\": \"x\\ny\u{2028}\"\n}";
        let line = value_line(json);
        assert_eq!(line.lines().count(), 1, "{line:?}");
        let read = |text: &str| serde_json::from_str::<serde_json::Value>(text).expect("JSON");
        assert_eq!(read(&line), read(json));
    }
}
