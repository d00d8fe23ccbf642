//! What the CLI prints: one Result line on stdout that every line splitter
//! sees as one line, and console text that cannot drive a terminal.

/// The Result as one line of JSON.
///
/// JSON allows U+2028, U+2029 and U+0085 raw inside strings, and serde_json
/// writes them so; but JavaScript's, Python's `str.splitlines` and other
/// splitters treat them as line ends, and would see the one Result line as
/// several. They can only stand inside strings here, so escaping them keeps
/// the JSON's meaning and makes it one line for everyone. DEL and the C1
/// controls (U+0080-U+009F, among them the CSI that starts a terminal's
/// escape sequences) are escaped too, as the console shows them, and so is
/// any other control character but tab in a value a child sent as it is,
/// so that what is printed cannot drive a terminal.
pub fn result_line(result: &wire::Result) -> serde_json::Result<String> {
    Ok(wasmwire::console::json_line(serde_json::to_string(result)?))
}

/// A program's value (its JSON text) as one line, escaped as
/// [`result_line`] is. A line break in JSON text can only be whitespace
/// (one in a string is escaped), so a child that wrote its value over
/// several lines gets spaces in their place.
pub fn value_line(json: &str) -> String {
    wasmwire::console::json_line(json.replace(['\n', '\r'], " "))
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
    fn del_and_c1_controls_are_escaped_and_mean_the_same() {
        let text = "\"\u{1b}[2J\u{9b}31m\u{7f}x\u{a0}\"";
        let result = wire::Result::success("r1", text);
        let line = result_line(&result).expect("encodes");
        assert!(!line.contains(|c: char| c.is_control()), "{line:?}");
        assert!(
            line.contains("\\u009b") && line.contains("\\u007f"),
            "{line}"
        );
        let back: wire::Result = serde_json::from_str(&line).expect("still JSON");
        assert_eq!(back, result);
        // A child's value text with a raw control character in a string
        // (no JSON: a process child may send anything) is escaped too.
        let value = value_line(text);
        assert!(!value.contains(|c: char| c.is_control()), "{value:?}");
        let read: serde_json::Value = serde_json::from_str(&value).expect("JSON");
        assert_eq!(read, serde_json::json!("\u{1b}[2J\u{9b}31m\u{7f}x\u{a0}"));
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
