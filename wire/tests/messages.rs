//! JSON shape of every message: field names, omission, durations, versions.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::time::Duration;

use serde_json::{Value, json};
use wire::{
    DecodeError, FailureKind, Request, Response, Result as ResultMsg, Start, StartBinding,
    StartBudget, decode, encode, encode_sized, encoded_len,
};

fn to_json<T: serde::Serialize>(msg: &T) -> Value {
    serde_json::to_value(msg).unwrap()
}

#[test]
fn request_uses_the_design_field_names() {
    let mut r = Request::new("7", "get_logs", r#"{"host":"db1"}"#);
    r.deadline_ms = 250;
    assert_eq!(
        to_json(&r),
        json!({"v": 1, "id": "7", "tool": "get_logs", "args": "{\"host\":\"db1\"}", "deadline_ms": 250})
    );
}

#[test]
fn request_omits_empty_args_and_zero_deadline() {
    assert_eq!(
        to_json(&Request::new("1", "t", "")),
        json!({"v": 1, "id": "1", "tool": "t"})
    );
}

#[test]
fn response_success_and_failure_shapes() {
    assert_eq!(
        to_json(&Response::success("1", "[1,2]")),
        json!({"v": 1, "id": "1", "ok": true, "value": "[1,2]"})
    );
    assert_eq!(
        to_json(&Response::failure(
            "2",
            FailureKind::RateLimited,
            "slow down"
        )),
        json!({"v": 1, "id": "2", "ok": false, "kind": "rate_limited", "error": "slow down"})
    );
    // An empty value is omitted, and `ok` never is.
    assert_eq!(
        to_json(&Response::success("3", "")),
        json!({"v": 1, "id": "3", "ok": true})
    );
}

#[test]
fn start_uses_the_design_field_names_and_nanoseconds() {
    let start = Start {
        v: 1,
        program: "return 1".into(),
        bindings: vec![
            StartBinding {
                name: "get_logs".into(),
                signature: "get_logs(host, count)".into(),
            },
            StartBinding {
                name: "ping".into(),
                signature: String::new(),
            },
        ],
        budget: StartBudget {
            wall_clock: Duration::from_millis(1500),
            max_calls: 10,
            max_bytes: 2048,
            max_memory: 64 << 20,
        },
        max_inflight: None,
        withdraw: false,
        places: vec![],
        result_id: "r-1".into(),
    };
    assert_eq!(
        to_json(&start),
        json!({
            "v": 1,
            "program": "return 1",
            "bindings": [{"name": "get_logs", "signature": "get_logs(host, count)"}, {"name": "ping"}],
            "budget": {"wall_clock": 1_500_000_000u64, "max_calls": 10, "max_bytes": 2048, "max_memory": 67108864},
            "result_id": "r-1"
        })
    );
}

#[test]
fn start_omits_empty_bindings_and_zero_budget_items() {
    let start = Start {
        v: 1,
        program: "".into(),
        bindings: vec![],
        budget: StartBudget::default(),
        max_inflight: None,
        withdraw: false,
        places: vec![],
        result_id: "r".into(),
    };
    assert_eq!(
        to_json(&start),
        json!({"v": 1, "program": "", "budget": {}, "result_id": "r"})
    );
    // And a Go parent that left budget out entirely still decodes.
    let decoded: Start = decode(br#"{"v":1,"program":"x","result_id":"r"}"#).unwrap();
    assert_eq!(decoded.budget, StartBudget::default());
    assert!(decoded.bindings.is_empty());
}

#[test]
fn a_go_nil_slice_of_bindings_reads_as_none() {
    // Go's encoding/json writes a nil []StartBinding without omitempty as null.
    let decoded: Start =
        decode(br#"{"v":1,"program":"x","bindings":null,"result_id":"r"}"#).unwrap();
    assert!(decoded.bindings.is_empty());
    // Anything else that is not a list is still refused.
    assert!(decode::<Start>(br#"{"v":1,"program":"x","bindings":7,"result_id":"r"}"#).is_err());
}

#[test]
fn wall_clock_is_integer_nanoseconds_both_ways() {
    let decoded: Start =
        decode(br#"{"v":1,"program":"","result_id":"r","budget":{"wall_clock":250000001}}"#)
            .unwrap();
    assert_eq!(decoded.budget.wall_clock, Duration::from_nanos(250_000_001));
    // Not a float, not a string.
    assert!(
        decode::<Start>(br#"{"v":1,"program":"","result_id":"r","budget":{"wall_clock":1.5}}"#)
            .is_err()
    );
    assert!(
        decode::<Start>(br#"{"v":1,"program":"","result_id":"r","budget":{"wall_clock":"1s"}}"#)
            .is_err()
    );
}

#[test]
fn result_shapes() {
    let mut ok = ResultMsg::success("r", "{\"n\":1}");
    ok.calls = 3;
    ok.bytes = 12;
    assert_eq!(
        to_json(&ok),
        json!({"v": 1, "result_id": "r", "ok": true, "value": "{\"n\":1}", "calls": 3, "bytes": 12})
    );
    assert_eq!(
        to_json(&ResultMsg::failure("r", FailureKind::Limit, "memory limit")),
        json!({"v": 1, "result_id": "r", "ok": false, "kind": "limit", "error": "memory limit"})
    );
    assert_eq!(
        to_json(&ResultMsg::protocol_error("r", "duplicate id")),
        json!({"v": 1, "result_id": "r", "ok": false, "error": "duplicate id"})
    );
}

/// A message framed by `encode` and by `encode_sized`, and its counted length.
fn framed<M: wire::Message>(msg: &M) -> (Vec<u8>, Vec<u8>, usize) {
    (
        encode(msg).unwrap(),
        encode_sized(msg).unwrap(),
        encoded_len(msg).unwrap(),
    )
}

#[test]
fn a_sized_frame_is_the_same_frame_made_at_its_size_and_one_too_large_is_refused() {
    let quotes = "\"".repeat(100_000);
    let mut result = ResultMsg::success("r1", format!("[{quotes:?}]"));
    result.calls = 3;
    let made = [
        framed(&Request::new("1", "t", quotes.as_str())),
        framed(&ResultMsg::failure("r1", FailureKind::Limit, "no")),
        framed(&result),
    ];
    for (grown, sized, len) in made {
        assert_eq!(sized, grown);
        assert_eq!(len, sized.len() - 4);
        // Allocated once, at its size.
        assert_eq!(sized.capacity(), sized.len());
    }
    // Escaping doubles the quotes: over the maximum, refused, with the length.
    let huge = ResultMsg::success("r1", "\"".repeat(wire::MAX_FRAME_BYTES / 2));
    let len = encoded_len(&huge).unwrap();
    assert!(len > wire::MAX_FRAME_BYTES);
    match encode_sized(&huge) {
        Err(wire::FrameError::TooLarge { len: said, max }) => {
            assert_eq!((said, max), (len as u64, wire::MAX_FRAME_BYTES));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_message_round_trips_through_a_frame() {
    let req = Request::new("1", "t", "a\nb");
    let frame = encode(&req).unwrap();
    assert_eq!(
        u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize,
        frame.len() - 4
    );
    assert_eq!(decode::<Request>(&frame[4..]).unwrap(), req);
    let res = Response::failure("1", FailureKind::Denied, "no");
    assert_eq!(
        decode::<Response>(&encode(&res).unwrap()[4..]).unwrap(),
        res
    );
}

#[test]
fn unknown_fields_are_ignored() {
    let r: Request =
        decode(br#"{"v":1,"id":"1","tool":"t","trace":{"span":9},"extra":[1]}"#).unwrap();
    assert_eq!(r, Request::new("1", "t", ""));
}

#[test]
fn wrong_types_are_decode_errors() {
    for bad in [
        &br#"{"v":1,"id":1,"tool":"t"}"#[..],
        br#"{"v":1,"id":"1","tool":"t","args":{"a":1}}"#,
        br#"{"v":1,"id":"1","tool":"t","deadline_ms":-5}"#,
        br#"{"v":1,"id":"1","tool":null}"#,
    ] {
        assert!(
            matches!(
                decode::<Request>(bad),
                Err(DecodeError::Malformed {
                    message: "Request",
                    ..
                })
            ),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    assert!(matches!(
        decode::<Response>(br#"{"v":1,"id":"1","ok":"true"}"#),
        Err(DecodeError::Malformed { .. })
    ));
}

#[test]
fn missing_required_fields_are_decode_errors() {
    assert!(matches!(
        decode::<Request>(br#"{"v":1,"tool":"t"}"#),
        Err(DecodeError::Malformed { .. })
    ));
    assert!(matches!(
        decode::<Response>(br#"{"v":1,"id":"1"}"#),
        Err(DecodeError::Malformed { .. })
    ));
    assert!(matches!(
        decode::<ResultMsg>(br#"{"v":1,"ok":true}"#),
        Err(DecodeError::Malformed { .. })
    ));
}

#[test]
fn an_unknown_kind_is_a_decode_error() {
    let err = decode::<Response>(br#"{"v":1,"id":"1","ok":false,"kind":"oops"}"#).unwrap_err();
    assert!(err.to_string().contains("unknown failure kind"), "{err}");
}

#[test]
fn every_other_version_is_refused_naming_both() {
    for (payload, got) in [
        (&br#"{"v":2,"id":"1","tool":"t"}"#[..], "2"),
        (br#"{"v":0,"id":"1","tool":"t"}"#, "0"),
        (br#"{"v":-1,"id":"1","tool":"t"}"#, "-1"),
        (br#"{"v":1.0,"id":"1","tool":"t"}"#, "1.0"),
        (br#"{"v":"1","id":"1","tool":"t"}"#, "\"1\""),
        (br#"{"v":2,"other":"shape"}"#, "2"),
    ] {
        match decode::<Request>(payload) {
            Err(e @ DecodeError::Version { .. }) => {
                let text = e.to_string();
                assert!(text.contains(&format!("version {got}")), "{text}");
                assert!(text.contains("version 1"), "{text}");
            }
            other => panic!("{}: {other:?}", String::from_utf8_lossy(payload)),
        }
    }
    // A missing version is a malformed message, not a version mismatch.
    assert!(matches!(
        decode::<Request>(br#"{"id":"1","tool":"t"}"#),
        Err(DecodeError::Malformed { .. })
    ));
}

#[test]
fn non_object_payloads_are_refused() {
    for bad in [
        &b"[1,\"1\",\"t\"]"[..],
        b"\"x\"",
        b"42",
        b"null",
        b"true",
        b"  ",
        b"\x0c{}",
    ] {
        assert!(
            matches!(decode::<Request>(bad), Err(DecodeError::NotObject { .. })),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn trailing_bytes_and_bad_utf8_are_refused() {
    assert!(decode::<Request>(br#"{"v":1,"id":"1","tool":"t"} {}"#).is_err());
    assert!(decode::<Request>(b"{\"v\":1,\"id\":\"\xff\",\"tool\":\"t\"}").is_err());
}

/// docs/protocol.md §3: error texts are cut to 8 KiB. Written out, so that
/// the test pins the number rather than follows the constant.
const ERROR_CAP: usize = 8 * 1024;

#[test]
fn error_texts_are_cut_at_the_documented_8_kib_with_an_exact_marker() {
    assert_eq!(wire::MAX_ERROR_BYTES, ERROR_CAP);
    // Exactly the cap passes untouched; one byte more is cut.
    let whole = "e".repeat(ERROR_CAP);
    assert_eq!(wire::cap_error_text(whole.clone()), whole);
    assert_eq!(
        wire::cap_error_text("e".repeat(ERROR_CAP + 1)),
        format!("{whole} [... 1 more bytes cut]")
    );
    assert_eq!(
        wire::cap_error_text("e".repeat(ERROR_CAP + 5000)),
        format!("{whole} [... 5000 more bytes cut]")
    );
    assert_eq!(wire::cap_error_text(String::new()), "");
}

#[test]
fn an_error_text_is_cut_at_a_character_boundary() {
    // "é" is two bytes and straddles the cap: the cut goes back one byte,
    // to the boundary before it, and counts what it dropped.
    let text = format!("{}é{}", "a".repeat(ERROR_CAP - 1), "b".repeat(10));
    let cut = wire::cap_error_text(text);
    assert_eq!(
        cut,
        format!("{} [... 12 more bytes cut]", "a".repeat(ERROR_CAP - 1))
    );
    // Three bytes ("€") straddling it: back two.
    let text = format!("{}€€", "a".repeat(ERROR_CAP - 2));
    assert_eq!(
        wire::cap_error_text(text),
        format!("{} [... 6 more bytes cut]", "a".repeat(ERROR_CAP - 2))
    );
}

#[test]
fn only_a_version_mismatch_is_one() {
    use wire::{FrameError, ProtocolError};
    let version = ProtocolError::from(decode::<Request>(br#"{"v":2}"#).unwrap_err());
    assert!(version.is_version_mismatch());
    for other in [
        ProtocolError::from(decode::<Request>(br#"{"v":1}"#).unwrap_err()),
        ProtocolError::from(decode::<Request>(b"[]").unwrap_err()),
        ProtocolError::from(FrameError::Empty),
        ProtocolError::EmptyId { tool: "t".into() },
        ProtocolError::DuplicateId("1".into()),
    ] {
        assert!(!other.is_version_mismatch(), "{other}");
    }
}

#[test]
fn max_inflight_is_the_childs_pace_and_absent_or_null_means_the_default() {
    let absent: Start = decode(br#"{"v":1,"program":"x","result_id":"r"}"#).unwrap();
    let null: Start =
        decode(br#"{"v":1,"program":"x","max_inflight":null,"result_id":"r"}"#).unwrap();
    let four: Start = decode(br#"{"v":1,"program":"x","max_inflight":4,"result_id":"r"}"#).unwrap();
    let zero: Start = decode(br#"{"v":1,"program":"x","max_inflight":0,"result_id":"r"}"#).unwrap();
    assert_eq!((absent.max_inflight, null.max_inflight), (None, None));
    assert_eq!(absent.max_in_flight(), wire::DEFAULT_MAX_INFLIGHT);
    assert_eq!(null.max_in_flight(), wire::DEFAULT_MAX_INFLIGHT);
    assert_eq!((four.max_inflight, four.max_in_flight()), (Some(4), 4));
    assert_eq!((zero.max_inflight, zero.max_in_flight()), (Some(0), 1));
    assert_eq!(
        to_json(&four),
        json!({"v": 1, "program": "x", "budget": {}, "max_inflight": 4, "result_id": "r"})
    );
    assert!(
        !to_json(&absent)
            .as_object()
            .unwrap()
            .contains_key("max_inflight")
    );
}

/// Go's encoding/json writes `null` for a nil slice, map, pointer or
/// `json.RawMessage` that is not `omitempty`: every optional field of every
/// message reads `null` as if it had been left out.
#[test]
fn null_reads_as_absent_in_every_optional_field_of_every_message() {
    let start: Start = decode(
        br#"{"v":1,"program":"x","bindings":[{"name":"t","signature":null}],
             "budget":{"wall_clock":null,"max_calls":null,"max_bytes":null,"max_memory":null},
             "max_inflight":null,"result_id":"r"}"#,
    )
    .unwrap();
    assert_eq!(start.bindings[0].signature, "");
    assert_eq!(start.budget, StartBudget::default());
    assert_eq!(start.max_inflight, None);
    let start: Start = decode(br#"{"v":1,"program":"x","budget":null,"result_id":"r"}"#).unwrap();
    assert_eq!(start.budget, StartBudget::default());

    let response: Response =
        decode(br#"{"v":1,"id":"1","ok":true,"value":null,"kind":null,"error":null}"#).unwrap();
    assert_eq!(response, Response::success("1", ""));
    let response: Response =
        decode(br#"{"v":1,"id":"1","ok":false,"value":null,"kind":"denied","error":null}"#)
            .unwrap();
    assert_eq!(response, Response::failure("1", FailureKind::Denied, ""));

    let request: Request =
        decode(br#"{"v":1,"id":"1","tool":"t","args":null,"deadline_ms":null}"#).unwrap();
    assert_eq!(request, Request::new("1", "t", ""));

    let result: ResultMsg = decode(
        br#"{"v":1,"result_id":"r","ok":true,"value":null,"kind":null,"error":null,
             "calls":null,"bytes":null}"#,
    )
    .unwrap();
    assert_eq!(result, ResultMsg::success("r", ""));
}

#[test]
fn null_is_refused_in_a_required_field() {
    for payload in [
        &br#"{"v":null,"program":"x","result_id":"r"}"#[..],
        br#"{"v":1,"program":null,"result_id":"r"}"#,
        br#"{"v":1,"program":"x","result_id":null}"#,
        br#"{"v":1,"program":"x","bindings":[{"name":null}],"result_id":"r"}"#,
        br#"{"v":1,"program":"x","bindings":[null],"result_id":"r"}"#,
    ] {
        let text = String::from_utf8_lossy(payload);
        assert!(decode::<Start>(payload).is_err(), "{text}");
    }
    for payload in [
        &br#"{"v":1,"id":null,"ok":true}"#[..],
        br#"{"v":1,"id":"1","ok":null}"#,
    ] {
        let text = String::from_utf8_lossy(payload);
        assert!(decode::<Response>(payload).is_err(), "{text}");
    }
}

/// Go's integers are signed: a negative budget item or cap does not fit
/// and is refused, never wrapped or read as "none".
#[test]
fn a_negative_budget_item_or_cap_is_refused() {
    for field in [
        r#""budget":{"wall_clock":-300000000}"#,
        r#""budget":{"max_calls":-1}"#,
        r#""budget":{"max_bytes":-1}"#,
        r#""budget":{"max_memory":-1}"#,
        r#""max_inflight":-1"#,
    ] {
        let payload = format!(r#"{{"v":1,"program":"x",{field},"result_id":"r"}}"#);
        assert!(decode::<Start>(payload.as_bytes()).is_err(), "{payload}");
    }
}

/// serde's derive would read a struct from a list, by position: the
/// budget and each binding are objects or nothing.
#[test]
fn a_budget_or_binding_written_as_a_list_is_refused() {
    for field in [
        r#""budget":[]"#,
        r#""budget":[1000,1,2,3]"#,
        r#""bindings":[["t","t(a)"]]"#,
        r#""bindings":[[]]"#,
    ] {
        let payload = format!(r#"{{"v":1,"program":"x",{field},"result_id":"r"}}"#);
        assert!(decode::<Start>(payload.as_bytes()).is_err(), "{payload}");
    }
    // A repeated item inside the budget is still caught.
    assert!(
        decode::<Start>(
            br#"{"v":1,"program":"x","budget":{"max_calls":1,"max_calls":2},"result_id":"r"}"#
        )
        .is_err()
    );
}

#[test]
fn a_program_that_is_not_a_string_is_refused_naming_what_it_is() {
    // The program is read from its raw text (item 113 of tests/HOSTILE.md):
    // whatever else stands there is named, never sliced as text.
    for (program, kind) in [
        ("5", "a number"),
        ("null", "null"),
        ("true", "a boolean"),
        (r#"{"ééééééééé": 1}"#, "an object"),
        ("[\"€€€€€€€€\"]", "an array"),
    ] {
        let payload = format!(r#"{{"v":1,"program":{program},"result_id":"r"}}"#);
        let err = decode::<Start>(payload.as_bytes()).expect_err(program);
        assert!(err.to_string().contains(kind), "{program}: {err}");
    }
    // And a string's escapes read as JSON reads them.
    let decoded: Start =
        decode(br#"{"v":1,"program":"a\n\"b\"\u00e9\ud83d\ude00","result_id":"r"}"#).unwrap();
    assert_eq!(decoded.program, "a\n\"b\"\u{e9}\u{1f600}");
}
