//! The README's failure-class table is the wire table, not a restatement of it.
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
