//! The Runner: a Start it cannot take is answered when it names its
//! `result_id`, with a Result that says what is wrong.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use wire::{FailureKind, Runner, RunnerError, Start, write_frame};

/// What the runner makes of one Start frame carrying `payload`.
fn take(payload: &str) -> Result<Start, RunnerError> {
    let mut framed = Vec::new();
    write_frame(&mut framed, payload.as_bytes()).unwrap();
    Runner::new(&framed[..], std::io::sink()).start()
}

/// The Result a refused Start gets: (kind, error).
fn refused(payload: &str) -> (Option<FailureKind>, String) {
    let err = take(payload).unwrap_err();
    let result = err
        .result()
        .unwrap_or_else(|| panic!("{payload}: no Result for {err}"));
    assert_eq!(result.result_id, "r7", "{payload}");
    assert!(!result.ok);
    (result.kind, result.error)
}

#[test]
fn a_malformed_start_with_a_result_id_is_answered_invalid_naming_the_field() {
    for (field, named) in [
        (
            r#""budget":{"wall_clock":-300000000}"#,
            "`budget.wall_clock` is -300000000: a budget or cap cannot be negative",
        ),
        (r#""budget":{"max_calls":-1}"#, "`budget.max_calls` is -1"),
        (r#""budget":{"max_bytes":-5}"#, "`budget.max_bytes` is -5"),
        (r#""budget":{"max_memory":-1}"#, "`budget.max_memory` is -1"),
        (
            r#""budget":{"max_calls":1.5}"#,
            "`budget.max_calls` is 1.5, not an integer",
        ),
        (
            r#""budget":{"max_calls":"3"}"#,
            "`budget.max_calls` is a string, not a number",
        ),
        (r#""budget":7"#, "`budget` is a number, not an object"),
        (r#""max_inflight":-1"#, "`max_inflight` is -1"),
        (
            r#""max_inflight":4294967296"#,
            "`max_inflight` is 4294967296, over the most it can be, 4294967295",
        ),
        (r#""bindings":{}"#, "`bindings` is an object, not a list"),
        (
            r#""bindings":[null]"#,
            "`bindings[0]` is null, not an object",
        ),
        (
            r#""bindings":[{"signature":"t(a)"}]"#,
            "`bindings[0].name` is missing",
        ),
        (
            r#""bindings":[{"name":"t","signature":3}]"#,
            "`bindings[0].signature` is a number",
        ),
    ] {
        let payload = format!(r#"{{"v":1,"program":"x",{field},"result_id":"r7"}}"#);
        let (kind, error) = refused(&payload);
        assert_eq!(kind, Some(FailureKind::Invalid), "{payload}");
        assert!(error.contains(named), "{payload}: {error}");
    }
    for (payload, named) in [
        (r#"{"v":1,"result_id":"r7"}"#, "`program` is missing"),
        (
            r#"{"v":1,"program":null,"result_id":"r7"}"#,
            "`program` is null",
        ),
        (r#"{"program":"x","result_id":"r7"}"#, "`v` is missing"),
        (
            r#"{"v":null,"program":"x","result_id":"r7"}"#,
            "`v` is null",
        ),
        // Every field looks right on its own: serde's word is the best there is.
        (
            r#"{"v":1,"program":"x","program":"y","result_id":"r7"}"#,
            "duplicate field `program`",
        ),
    ] {
        let (kind, error) = refused(payload);
        assert_eq!(kind, Some(FailureKind::Invalid), "{payload}");
        assert!(error.contains(named), "{payload}: {error}");
    }
}

#[test]
fn a_start_of_another_version_is_answered_with_a_protocol_error_naming_both() {
    for v in ["2", "0", "\"1\"", "1.0"] {
        let payload = format!(r#"{{"v":{v},"program":"x","result_id":"r7"}}"#);
        let (kind, error) = refused(&payload);
        assert_eq!(kind, None, "{payload}");
        assert!(
            error.contains(&format!("protocol version {v}")) && error.contains("version 1"),
            "{payload}: {error}"
        );
    }
}

#[test]
fn a_start_with_no_readable_result_id_is_a_protocol_error_with_no_one_to_answer() {
    for payload in [
        r#"{"v":1,"program":"x","budget":{"max_calls":-1}}"#,
        r#"{"v":1,"program":"x","budget":{"max_calls":-1},"result_id":7}"#,
        r#"{"v":1,"program":"x","result_id":null}"#,
        r#"{"v":2,"program":"x"}"#,
        r#"{"v":1,"program":"x","result_id":"r7""#,
        r#"[1]"#,
    ] {
        let err = take(payload).unwrap_err();
        assert!(
            matches!(err, RunnerError::Protocol(_)),
            "{payload}: {err:?}"
        );
        assert!(err.result().is_none(), "{payload}");
    }
}

#[test]
fn bytes_after_the_start_are_seen_as_unread() {
    let mut framed = Vec::new();
    write_frame(&mut framed, br#"{"v":1,"program":"x","result_id":"r7"}"#).unwrap();
    let clean = framed.clone();
    framed.extend_from_slice(b"more");
    let mut runner = Runner::new(&framed[..], std::io::sink());
    runner.start().unwrap();
    assert_eq!(runner.unread(), 4);
    let mut runner = Runner::new(&clean[..], std::io::sink());
    runner.start().unwrap();
    assert_eq!(runner.unread(), 0);
}
