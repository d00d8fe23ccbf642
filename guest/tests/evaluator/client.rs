//! The real `wire::Client` as the evaluator's transport, over in-memory frames.

use wire::{Client, FailureKind, Request, Response};

use crate::fake::start;

#[test]
fn the_wire_client_carries_calls_and_answers_by_id() {
    // The parent answers call 2 before call 1, and fails call 3.
    let mut answers = Vec::new();
    for response in [
        Response::success("2", r#"{"n":2}"#),
        Response::success("1", "plain"),
        Response::failure("3", FailureKind::Denied, "no"),
    ] {
        answers.extend(wire::encode(&response).unwrap());
    }
    let mut requests = Vec::new();
    let mut client = Client::new(&answers[..], &mut requests);
    let program = r#"
        const [a, b] = await Promise.all([t('one'), host.call('t', { n: 2 }, { deadlineMs: 9 })]);
        let c;
        try { await t('three'); } catch (e) { c = e.kind; }
        return [a, b, c];"#;
    let result =
        wasmwire_guest::evaluate(&start(program, &[("t", "")]), &mut client, std::io::sink());
    assert!(result.ok, "{result:?}");
    assert_eq!(result.value, r#"["plain",{"n":2},"denied"]"#);
    assert_eq!((result.calls, result.bytes), (3, 12));
    drop(client);

    let mut reader = wire::FrameReader::new(&requests[..]);
    let mut sent = Vec::new();
    while let Some(payload) = reader.read_frame().unwrap() {
        sent.push(wire::decode::<Request>(&payload).unwrap());
    }
    let summary: Vec<_> = sent
        .iter()
        .map(|r| (r.id.as_str(), r.args.as_str(), r.deadline_ms))
        .collect();
    assert_eq!(
        summary,
        [("1", "one", 0), ("2", r#"{"n":2}"#, 9), ("3", "three", 0)]
    );
}

#[test]
fn the_wire_client_at_eof_fails_calls_in_flight_as_cancelled() {
    let mut requests = Vec::new();
    let mut client = Client::new(&[][..], &mut requests);
    let program = "try { await t(); } catch (e) { return e.kind; }";
    let result =
        wasmwire_guest::evaluate(&start(program, &[("t", "")]), &mut client, std::io::sink());
    assert_eq!(result.value, r#""cancelled""#);
}

#[test]
/// A Request over the frame cap hits a size cap, as a value over a quota
/// does: `limit`, not `invalid` (the args are not wrong, only too large).
fn args_too_large_for_a_frame_fail_the_call_as_limit() {
    let mut requests = Vec::new();
    let mut client = Client::new(&[][..], &mut requests);
    let program = "try { await t('x'.repeat(17 * 1024 * 1024)); } \
                   catch (e) { return [e.kind, e.retryable, e.tool, e.message]; }";
    let result =
        wasmwire_guest::evaluate(&start(program, &[("t", "")]), &mut client, std::io::sink());
    let (kind, retryable, tool, message): (String, bool, String, String) =
        serde_json::from_str(&result.value).unwrap();
    assert_eq!(
        (kind.as_str(), retryable, tool.as_str()),
        ("limit", false, "t")
    );
    assert!(message.contains("size limit"), "{message}");
    assert!(requests.is_empty());
    assert_eq!(result.calls, 0, "a call never sent is not counted");
}

#[test]
fn a_return_value_too_large_for_a_frame_ends_as_limit() {
    let mut client = Client::new(&[][..], Vec::new());
    let program = "return 'x'.repeat(17 * 1024 * 1024);";
    let result = wasmwire_guest::evaluate(&start(program, &[]), &mut client, std::io::sink());
    assert_eq!(result.kind, Some(FailureKind::Limit), "{}", result.error);
    assert!(wire::encode(&result).is_ok());
}

#[test]
fn an_error_message_too_large_for_a_frame_is_cut() {
    let mut client = Client::new(&[][..], Vec::new());
    let program = "throw new Error('x'.repeat(17 * 1024 * 1024));";
    let result = wasmwire_guest::evaluate(&start(program, &[]), &mut client, std::io::sink());
    assert_eq!(result.kind, Some(FailureKind::Invalid));
    assert!(result.error.starts_with("Error: xxx") && result.error.len() < 70_000);
    assert!(wire::encode(&result).is_ok());
}
