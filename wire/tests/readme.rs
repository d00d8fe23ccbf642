//! The README says what the code does: its failure-class table is the wire
//! table, and its library example is the one the suite builds.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

#[test]
fn readme_failure_table_matches_the_wire_table() {
    let readme = include_str!("../../README.md");
    let rows: Vec<(&str, &str, &str)> = readme
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            match cells.as_slice() {
                [kind, retryable, meaning]
                    if kind.starts_with('`') && (*retryable == "yes" || *retryable == "no") =>
                {
                    Some((kind.trim_matches('`'), *retryable, *meaning))
                }
                _ => None,
            }
        })
        .collect();
    let expected: Vec<(&str, &str, &str)> = wire::FAILURE_KINDS
        .iter()
        .map(|row| {
            (
                row.name,
                if row.retryable { "yes" } else { "no" },
                row.description,
            )
        })
        .collect();
    assert_eq!(rows, expected);
}

/// The README's library example is `host/examples/embed.rs` word for word
/// (the example is built by the test suite, so the README's code compiles).
#[test]
fn readme_library_example_is_the_embed_example() {
    let readme = include_str!("../../README.md");
    let example = include_str!("../../host/examples/embed.rs");
    let block = readme
        .split_once("<!-- embed.rs begins -->\n```rust\n")
        .and_then(|(_, rest)| rest.split_once("```\n<!-- embed.rs ends -->"))
        .map(|(block, _)| block)
        .expect("the README has the embed.rs block between its markers");
    assert_eq!(
        block, example,
        "README.md's copy of host/examples/embed.rs is out of date"
    );
}
