//! How an upstream tool is named in the program: `<server>_<tool>`, made a
//! name wasmwire accepts as a global.
//!
//! The rule (docs/mcp.md), applied to the server's name and the tool's
//! name separately, then joined with one `_`:
//!
//! 1. every character other than an ASCII letter, digit, `_` or `$` becomes
//!    `_` (`read-file` -> `read_file`, `café` -> `caf_`);
//! 2. the joined name is then tried as it is, and while wasmwire refuses it
//!    (a reserved word, a global the program already has, a name taken by an
//!    earlier tool) `_2`, `_3`, ... is appended.
//!
//! Tools are named in the order of (server name, tool name), so the same
//! upstream tools always get the same names. The server's name comes first,
//! so a name never starts with a digit unless the server's does; then it
//! gets a leading `_`.

/// `server` and `tool` as one identifier, before the dedupe of step 2.
pub fn base_name(server: &str, tool: &str) -> String {
    let mut name = format!("{}_{}", sanitize(server), sanitize(tool));
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// Each character that cannot be in a plain ASCII identifier becomes `_`.
fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The names tried for `base`, in order: `base`, `base_2`, `base_3`, ...
pub fn candidates(base: &str) -> impl Iterator<Item = String> + '_ {
    std::iter::once(base.to_string()).chain((2u32..).map(move |n| format!("{base}_{n}")))
}

/// The most of an upstream's name (a server's or a tool's) a message of
/// the server's shows.
const SHOWN: usize = 200;

/// `name` as a message shows it: whole, or cut after 200 bytes (`SHOWN`)
/// saying how long it was (a tool named with 6 MB put 6 MB on stderr per
/// line that named it).
pub fn shown(name: &str) -> String {
    if name.len() <= SHOWN {
        return name.to_owned();
    }
    let mut cut = SHOWN;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &name[..cut], name.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_name_is_shown_cut_with_its_length() {
        assert_eq!(shown("files"), "files");
        let long = "é".repeat(1000);
        let said = shown(&long);
        assert!(said.len() < SHOWN + 40, "{said}");
        assert!(said.ends_with("... (2000 bytes)"), "{said}");
    }

    #[test]
    fn names_are_server_then_tool_with_bad_characters_replaced() {
        assert_eq!(base_name("everything", "echo"), "everything_echo");
        assert_eq!(base_name("my-files", "read.file"), "my_files_read_file");
        assert_eq!(base_name("café", "ünï"), "caf___n_");
        assert_eq!(base_name("9lives", "x"), "_9lives_x");
        assert_eq!(base_name("", "x"), "_x");
    }

    #[test]
    fn candidates_append_a_counter() {
        let names: Vec<String> = candidates("a_b").take(3).collect();
        assert_eq!(names, ["a_b", "a_b_2", "a_b_3"]);
    }
}
