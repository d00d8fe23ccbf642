#!/usr/bin/env python3
"""Writes frames.json, the shared wire-protocol test vectors, next to this file.

frames.json is the artefact: implementations read it, not this script. The
script only keeps the hex honest (payloads are written here as text and
framed by code, not by hand). Run it after editing a case:

    python3 wire/tests/vectors/gen_frames.py

and then `cargo test -p wire --test vectors`, which checks every case
against the Rust implementation. See README.md for the format.
"""

import json
import os
import struct

MAX = 16 * 1024 * 1024
HERE = os.path.dirname(os.path.abspath(__file__))


def b(x):
    """Bytes from text (UTF-8) or bytes."""
    return x.encode() if isinstance(x, str) else bytes(x)


def frame(payload):
    payload = b(payload)
    return struct.pack(">I", len(payload)) + payload


def prefix(n):
    return struct.pack(">I", n)


def js(obj):
    """Compact JSON, keys in the order given, non-ASCII left as UTF-8."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# Full decoded messages: every field present, defaults applied.

def request(id, tool, args="", deadline_ms=0, v=1):
    return {"v": v, "id": id, "tool": tool, "args": args, "deadline_ms": deadline_ms}


def response(id, ok, value="", kind=None, error="", v=1):
    return {"v": v, "id": id, "ok": ok, "value": value, "kind": kind, "error": error}


def binding(name, signature=""):
    return {"name": name, "signature": signature}


def budget(wall_clock=0, max_calls=0, max_bytes=0, max_memory=0):
    return {"wall_clock": wall_clock, "max_calls": max_calls, "max_bytes": max_bytes, "max_memory": max_memory}


def start(program, result_id, bindings=(), budget_=None, v=1, max_inflight=None, withdraw=False,
          places=()):
    return {
        "v": v,
        "program": program,
        "bindings": list(bindings),
        "budget": budget_ if budget_ is not None else budget(),
        "max_inflight": max_inflight,
        "withdraw": withdraw,
        "places": list(places),
        "result_id": result_id,
    }


def result(result_id, ok, value="", kind=None, error="", calls=0, bytes_=0, v=1):
    return {
        "v": v, "result_id": result_id, "ok": ok, "value": value, "kind": kind,
        "error": error, "calls": calls, "bytes": bytes_,
    }


KINDS = ["transient", "rate_limited", "invalid", "not_found", "denied", "limit", "cancelled", "unknown"]
U64_MAX = 2**64 - 1

decode_cases = []


def render(stream):
    """A readable rendering of a stream, for people only: [N] before each
    frame's payload, bytes that are not printable ASCII as \\xNN."""
    out = []
    while stream:
        if len(stream) < 4:
            out.append("[partial prefix %s]" % stream.hex())
            break
        n = struct.unpack(">I", stream[:4])[0]
        out.append("[%d]" % n)
        if n > MAX:
            out.append(" (refused; %d more bytes)" % (len(stream) - 4) if len(stream) > 4 else "")
            break
        payload, stream = stream[4:4 + n], stream[4 + n:]
        out.append("".join(chr(c) if 0x20 <= c < 0x7F else "\\x%02x" % c for c in payload))
        if len(payload) < n:
            out.append(" (ends %d bytes short)" % (n - len(payload)))
    return "".join(out)


def case(name, message, stream, messages=(), error=None, note=None, **detail):
    c = {"name": name, "message": message}
    if note:
        c["note"] = note
    c["stream"] = b(stream).hex()
    c["text"] = render(b(stream))
    c["messages"] = list(messages)
    c["end"] = error or "clean"
    if detail:
        assert error, name
        c["detail"] = detail
    decode_cases.append(c)


def one(name, message, payload, expect=None, error=None, note=None, **detail):
    """A stream of one frame carrying `payload`."""
    case(name, message, frame(payload), [expect] if expect is not None else [], error, note, **detail)


# ---------------------------------------------------------------- Request

REQ_ALL = '{"v":1,"id":"7","tool":"get_logs","args":"{\\"host\\":\\"db1\\",\\"count\\":50}","deadline_ms":2500}'
one("request_every_field", "Request", REQ_ALL,
    request("7", "get_logs", '{"host":"db1","count":50}', 2500))
one("request_required_fields_only", "Request", '{"v":1,"id":"1","tool":"t"}',
    request("1", "t"), note="args and deadline_ms are omitted when empty: they decode as \"\" and 0")
one("request_empty_args_and_zero_deadline_written_out", "Request",
    '{"v":1,"id":"1","tool":"t","args":"","deadline_ms":0}', request("1", "t"))
one("request_fields_in_any_order_with_whitespace_and_newlines", "Request",
    '\n { "deadline_ms" : 5 ,\r\n\t"args":"x\\ny", "tool":"t", "id":"9", "v":1 }\n',
    request("9", "t", "x\ny", 5), note="payloads may contain newlines; JSON whitespace is allowed around the object")
one("request_unknown_fields_ignored", "Request",
    '{"v":1,"id":"1","tool":"t","trace":{"span":[1,2,{"x":null}]},"extra":null,"Tool":"other"}',
    request("1", "t"), note="field names are case-sensitive: \"Tool\" is an unknown field")
one("request_args_is_raw_text_not_json", "Request", '{"v":1,"id":"1","tool":"t","args":"not json {"}',
    request("1", "t", "not json {"), note="the protocol never parses args")
one("request_args_object_is_a_wrong_type", "Request", '{"v":1,"id":"1","tool":"t","args":{"host":"db1"}}',
    error="malformed", note="args carries JSON as a string, never as a nested value")
one("request_args_null_is_absent", "Request", '{"v":1,"id":"1","tool":"t","args":null,"deadline_ms":null}',
    request("1", "t"), note="null in an optional field (a Go nil slice, map, pointer or json.RawMessage) reads as absent")
one("request_id_number_is_a_wrong_type", "Request", '{"v":1,"id":7,"tool":"t"}', error="malformed")
one("request_tool_array_is_a_wrong_type", "Request", '{"v":1,"id":"1","tool":["t"]}', error="malformed")
one("request_missing_id", "Request", '{"v":1,"tool":"t"}', error="malformed")
one("request_missing_tool", "Request", '{"v":1,"id":"1"}', error="malformed")
one("request_empty_id_decodes", "Request", '{"v":1,"id":"","tool":"t"}', request("", "t"),
    note="decoding accepts it; the Server then refuses it as a protocol violation (not in the scope of these vectors)")
one("request_deadline_ms_negative", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":-1}', error="malformed")
one("request_deadline_ms_float", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":1.5}', error="malformed")
one("request_deadline_ms_integral_float", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":100.0}',
    error="malformed", note="integers must be written as integers: 100.0 and 1e2 are refused")
one("request_deadline_ms_exponent", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":1e2}', error="malformed")
one("request_deadline_ms_nan", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":NaN}', error="malformed",
    note="NaN and Infinity are not JSON")
one("request_deadline_ms_infinity", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":Infinity}',
    error="malformed")
one("request_deadline_ms_string", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":"100"}', error="malformed")
one("request_deadline_ms_u64_max", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":%d}' % U64_MAX,
    request("1", "t", "", U64_MAX), note="deadline_ms is an unsigned 64-bit integer")
one("request_deadline_ms_past_u64", "Request", '{"v":1,"id":"1","tool":"t","deadline_ms":%d}' % (U64_MAX + 1),
    error="malformed")
one("request_unicode_escapes_and_surrogate_pair", "Request",
    '{"v":1,"id":"\\u0031","tool":"t\\u00e9","args":"\\ud83d\\ude00 \\" \\\\ \\/ \\b\\f\\n\\r\\t"}',
    request("1", "t\u00e9", "\U0001F600 \" \\ / \b\f\n\r\t"))
one("request_raw_utf8", "Request", '{"v":1,"id":"1","tool":"t","args":"h\u00e9llo \u4e16\u754c \U0001F600"}',
    request("1", "t", "h\u00e9llo \u4e16\u754c \U0001F600"))
one("request_go_style_html_escapes", "Request",
    '{"v":1,"id":"1","tool":"t","args":"\\u003cb\\u003e \\u0026 \\u2028\\u2029"}',
    request("1", "t", "<b> & \u2028\u2029"),
    note="Go's encoding/json escapes <, >, & and U+2028/U+2029 by default; decoders must accept that")
one("request_lone_surrogate_escape", "Request", '{"v":1,"id":"1","tool":"t","args":"\\ud800"}', error="malformed",
    note="an escape that is not a Unicode scalar value is refused, not replaced with U+FFFD")
one("request_bad_utf8_in_string", "Request", b'{"v":1,"id":"1","tool":"t","args":"\xff"}', error="malformed")
one("request_overlong_utf8_in_string", "Request", b'{"v":1,"id":"1","tool":"t","args":"\xc0\xaf"}',
    error="malformed")
one("request_utf8_surrogate_bytes_in_string", "Request", b'{"v":1,"id":"1","tool":"t","args":"\xed\xa0\x80"}',
    error="malformed", note="UTF-8 bytes of a surrogate (CESU-8) are not UTF-8")
one("request_truncated_utf8_in_string", "Request", b'{"v":1,"id":"1","tool":"t","args":"\xe4\xb8"}',
    error="malformed")
one("request_raw_control_character_in_string", "Request", b'{"v":1,"id":"1","tool":"t","args":"a\nb"}',
    error="malformed", note="a raw newline inside a string is not JSON; it must be escaped")
one("request_trailing_garbage", "Request", '{"v":1,"id":"1","tool":"t"}x', error="malformed")
one("request_two_objects_in_one_frame", "Request", '{"v":1,"id":"1","tool":"t"}{"v":1,"id":"2","tool":"t"}',
    error="malformed", note="one frame carries exactly one object")
one("request_trailing_comma", "Request", '{"v":1,"id":"1","tool":"t",}', error="malformed")
one("request_unterminated_object", "Request", '{"v":1,"id":"1","tool":"t"', error="malformed")
one("request_nul_after_object", "Request", b'{"v":1,"id":"1","tool":"t"}\x00', error="malformed")
one("request_duplicate_field", "Request", '{"v":1,"id":"1","id":"2","tool":"t"}', error="malformed",
    note="a repeated field is refused, not resolved first-wins or last-wins (two readers must not see two ids)")
one("request_duplicate_v", "Request", '{"v":2,"v":1,"id":"1","tool":"t"}', error="malformed")
one("request_duplicate_unknown_key_ignored", "Request", '{"v":1,"id":"1","tool":"t","x":1,"x":[2]}',
    request("1", "t"), note="unknown keys are skipped without being read, repeated or not")
one("request_single_quotes", "Request", "{'v':1,'id':'1','tool':'t'}", error="malformed")

# ---------------------------------------------------------------- versions

V_OTHER = ',"id":"1","tool":"t"}'
for label, text, got in [
    ("0", "0", 0), ("2", "2", 2), ("minus_1", "-1", -1), ("1_0", "1.0", 1.0), ("1e0", "1e0", 1.0),
    ("string_1", '"1"', "1"), ("true", "true", True), ("2_pow_32_plus_1", "4294967297", 4294967297),
    ("object", '{"major":1}', {"major": 1}),
]:
    one("version_" + label, "Request", '{"v":' + text + V_OTHER, error="version", v=got,
        note="v must be the integer 1" + (": a value that wraps to 1 in 32 bits is still refused"
                                          if label == "2_pow_32_plus_1" else ""))
one("version_missing", "Request", '{"id":"1","tool":"t"}', error="malformed",
    note="a missing v is a missing required field, not a version mismatch")
one("version_null", "Request", '{"v":null,"id":"1","tool":"t"}', error="malformed",
    note="null is not a version: the field is treated as missing")
one("version_wins_over_shape", "Request", '{"v":2,"id":7,"other":"shape"}', error="version", v=2,
    note="a message of another version may have another shape: the version is named, not the first field that did not fit")
one("version_2_alone", "Request", '{"v":2}', error="version", v=2)
one("version_right_but_shape_wrong", "Request", '{"v":1,"id":7,"tool":"t"}', error="malformed")
one("empty_object", "Request", "{}", error="malformed")
one("version_2_response", "Response", '{"v":2,"id":"1","ok":true}', error="version", v=2)
one("version_0_start", "Start", '{"v":0,"program":"","result_id":"r"}', error="version", v=0)
one("version_2_result", "Result", '{"v":2,"result_id":"r","ok":true}', error="version", v=2)

# ---------------------------------------------------------------- not objects

for label, payload in [
    ("array", '[{"v":1,"id":"1","tool":"t"}]'), ("empty_array", "[]"), ("string", '"{\\"v\\":1}"'),
    ("number", "42"), ("negative_number", "-1"), ("null", "null"), ("true", "true"), ("false", "false"),
    ("whitespace_only", " \n\t\r "), ("plain_text", "hello"), ("http_request_line", "GET / HTTP/1.1\r\n\r\n"),
    ("leading_whitespace_then_array", "\n [1]"),
]:
    one("not_object_" + label, "Request", payload, error="not_object")
one("not_object_utf8_bom_before_object", "Request", b'\xef\xbb\xbf{"v":1,"id":"1","tool":"t"}', error="not_object",
    note="the first byte that is not JSON whitespace (space, tab, LF, CR) must be '{'; a byte-order mark is not allowed")
one("not_object_bad_utf8_first", "Response", b'\xff{"v":1,"id":"1","ok":true}', error="not_object")
one("not_object_response_null", "Response", "null", error="not_object")
one("not_object_start_array", "Start", "[]", error="not_object")
one("not_object_result_string", "Result", '"ok"', error="not_object")

# ---------------------------------------------------------------- Response

one("response_every_field", "Response",
    '{"v":1,"id":"3","ok":false,"value":"partial","kind":"rate_limited","error":"slow down"}',
    response("3", False, "partial", "rate_limited", "slow down"))
one("response_success_required_fields_only", "Response", '{"v":1,"id":"3","ok":true}', response("3", True),
    note="value, kind and error are omitted when empty: they decode as \"\", null and \"\"")
one("response_success_with_value", "Response", '{"v":1,"id":"3","ok":true,"value":"[1,2,{\\"a\\":null}]"}',
    response("3", True, '[1,2,{"a":null}]'))
one("response_failure", "Response", '{"v":1,"id":"4","ok":false,"kind":"not_found","error":"no tool \\"x\\""}',
    response("4", False, "", "not_found", 'no tool "x"'))
one("response_failure_without_kind_decodes", "Response", '{"v":1,"id":"4","ok":false,"error":"boom"}',
    response("4", False, "", None, "boom"),
    note="decoding accepts it; the Client refuses a failed Response without a kind (not in the scope of these vectors)")
one("response_kind_null_is_absent", "Response", '{"v":1,"id":"4","ok":false,"kind":null,"error":"e"}',
    response("4", False, "", None, "e"))
case("response_every_kind", "Response",
     b"".join(frame(js({"v": 1, "id": str(i), "ok": False, "kind": k, "error": k + " happened"}))
              for i, k in enumerate(KINDS)),
     [response(str(i), False, "", k, k + " happened") for i, k in enumerate(KINDS)],
     note="eight frames back to back, one per failure kind")
for label, kind in [("unknown_string", '"timeout"'), ("wrong_case", '"Limit"'), ("empty_string", '""'),
                    ("number", "5"), ("padded", '" limit"'), ("array", '["limit"]')]:
    one("response_kind_" + label, "Response", '{"v":1,"id":"1","ok":false,"kind":' + kind + ',"error":"e"}',
        error="malformed", note="the failure kinds are a closed set: anything else is refused, never read as unknown")
for label, ok in [("string", '"true"'), ("number", "1"), ("null", "null")]:
    one("response_ok_" + label, "Response", '{"v":1,"id":"1","ok":' + ok + '}', error="malformed")
one("response_missing_ok", "Response", '{"v":1,"id":"1","value":"1"}', error="malformed")
one("response_missing_id", "Response", '{"v":1,"ok":true}', error="malformed")
one("response_value_number", "Response", '{"v":1,"id":"1","ok":true,"value":42}', error="malformed",
    note="value is raw text: the JSON number 42 travels as the string \"42\"")
one("response_value_null_is_absent", "Response", '{"v":1,"id":"1","ok":true,"value":null,"error":null}',
    response("1", True), note="null in an optional field reads as absent")
one("response_error_object", "Response", '{"v":1,"id":"1","ok":false,"kind":"invalid","error":{"msg":"x"}}',
    error="malformed")
one("response_unknown_fields_ignored", "Response", '{"v":1,"id":"1","ok":true,"value":"1","retry_after":3}',
    response("1", True, "1"))

# ---------------------------------------------------------------- Start

START_ALL = js({
    "v": 1, "program": "const x = await get_logs(\"db1\", 50);\nreturn x.length;",
    "bindings": [{"name": "get_logs", "signature": "get_logs(host, count)"}, {"name": "ping"}],
    "budget": {"wall_clock": 1500000000, "max_calls": 10, "max_bytes": 65536, "max_memory": 67108864},
    "result_id": "r-42",
})
START_ALL_DECODED = start(
    "const x = await get_logs(\"db1\", 50);\nreturn x.length;", "r-42",
    [binding("get_logs", "get_logs(host, count)"), binding("ping")],
    budget(1500000000, 10, 65536, 67108864))
one("start_every_field", "Start", START_ALL, START_ALL_DECODED,
    note="wall_clock is integer nanoseconds: 1500000000 is 1.5 s")
one("start_required_fields_only", "Start", '{"v":1,"program":"return 1","result_id":"r1"}',
    start("return 1", "r1"), note="bindings and budget may be absent: no bindings, every budget item 0 (unlimited)")
one("start_empty_budget_and_bindings", "Start", '{"v":1,"program":"","bindings":[],"budget":{},"result_id":"r1"}',
    start("", "r1"))
one("start_budget_wall_clock_only", "Start", '{"v":1,"program":"p","budget":{"wall_clock":1},"result_id":"r"}',
    start("p", "r", budget_=budget(wall_clock=1)), note="one nanosecond")
one("start_budget_wall_clock_u64_max", "Start",
    '{"v":1,"program":"p","budget":{"wall_clock":%d},"result_id":"r"}' % U64_MAX,
    start("p", "r", budget_=budget(wall_clock=U64_MAX)), note="about 584 years")
for label, wc in [("string", '"1s"'), ("float", "1.5"), ("negative", "-1"), ("integral_float", "1000000000.0"),
                  ("object", '{"secs":1,"nanos":0}'), ("past_u64", str(U64_MAX + 1))]:
    one("start_wall_clock_" + label, "Start",
        '{"v":1,"program":"p","budget":{"wall_clock":' + wc + '},"result_id":"r"}', error="malformed",
        note="wall_clock is an unsigned integer number of nanoseconds, nothing else")
one("start_budget_max_memory_negative", "Start",
    '{"v":1,"program":"p","budget":{"max_memory":-1},"result_id":"r"}', error="malformed")
one("start_budget_max_calls_string", "Start",
    '{"v":1,"program":"p","budget":{"max_calls":"10"},"result_id":"r"}', error="malformed")
one("start_budget_null_is_absent", "Start", '{"v":1,"program":"p","budget":null,"result_id":"r"}',
    start("p", "r"), note="a Go nil *Budget: no budget")
one("start_budget_items_null_are_absent", "Start",
    '{"v":1,"program":"p","budget":{"wall_clock":null,"max_calls":null,"max_bytes":null,"max_memory":null},'
    '"result_id":"r"}', start("p", "r"))
one("start_binding_signature_null_is_absent", "Start",
    '{"v":1,"program":"p","bindings":[{"name":"f","signature":null}],"result_id":"r"}',
    start("p", "r", [binding("f")]))
one("start_budget_as_list", "Start", '{"v":1,"program":"p","budget":[1000,1,2,3],"result_id":"r"}',
    error="malformed", note="the budget is an object: its items are never read by position")
one("start_binding_as_list", "Start", '{"v":1,"program":"p","bindings":[["f","f(a)"]],"result_id":"r"}',
    error="malformed", note="each binding is an object: its fields are never read by position")
one("start_program_null", "Start", '{"v":1,"program":null,"result_id":"r"}', error="malformed",
    note="null is absent only in optional fields: program, result_id, id, ok, v and a binding's name are required")
one("start_bindings_null", "Start", '{"v":1,"program":"p","bindings":null,"result_id":"r"}',
    start("p", "r"), note="Go's encoding/json writes a nil slice as null: it reads as no bindings")
one("start_bindings_object", "Start", '{"v":1,"program":"p","bindings":{"name":"x"},"result_id":"r"}',
    error="malformed")
one("start_binding_missing_name", "Start",
    '{"v":1,"program":"p","bindings":[{"signature":"f(a)"}],"result_id":"r"}', error="malformed")
one("start_binding_signature_number", "Start",
    '{"v":1,"program":"p","bindings":[{"name":"f","signature":1}],"result_id":"r"}', error="malformed")
one("start_unknown_fields_ignored_at_every_level", "Start",
    '{"v":1,"program":"p","bindings":[{"name":"f","doc":"d"}],"budget":{"max_calls":2,"max_cpu":9},'
    '"result_id":"r","env":{"A":"1"}}',
    start("p", "r", [binding("f")], budget(max_calls=2)))
one("start_budget_duplicate_item", "Start",
    '{"v":1,"program":"p","budget":{"max_calls":1,"max_calls":2},"result_id":"r"}', error="malformed",
    note="a repeated field is refused inside nested objects too")
one("start_max_inflight", "Start", '{"v":1,"program":"p","max_inflight":4,"result_id":"r"}',
    start("p", "r", max_inflight=4),
    note="the parent's in-flight cap: the child keeps at most 4 calls on the wire and queues the rest")
one("start_max_inflight_null", "Start", '{"v":1,"program":"p","max_inflight":null,"result_id":"r"}',
    start("p", "r"), note="null (a Go nil pointer) is absent: the child paces to the default, 64")
one("start_max_inflight_zero", "Start", '{"v":1,"program":"p","max_inflight":0,"result_id":"r"}',
    start("p", "r", max_inflight=0), note="0 is a value, not absence; a child takes it as 1")
one("start_max_inflight_u32_max", "Start", '{"v":1,"program":"p","max_inflight":4294967295,"result_id":"r"}',
    start("p", "r", max_inflight=2**32 - 1))
for label, n in [("past_u32", "4294967296"), ("negative", "-1"), ("float", "4.0"), ("string", '"4"')]:
    one("start_max_inflight_" + label, "Start", '{"v":1,"program":"p","max_inflight":' + n + ',"result_id":"r"}',
        error="malformed", note="max_inflight is an unsigned 32-bit integer")
one("start_withdraw", "Start", '{"v":1,"program":"p","withdraw":true,"result_id":"r"}',
    start("p", "r", withdraw=True),
    note="the parent takes Withdraw messages; omitted (false) when it does not")
one("start_places", "Start",
    '{"v":1,"program":"p","places":[{"inserted":{"line":2,"column":1,"width":18}},'
    '{"generated":{"first_line":1,"first_column":1,"head_columns":0,"anchors":[[1,1,1,1],[2,5,0,0]]}}],'
    '"result_id":"r"}',
    start("p", "r", places=[{"inserted": {"line": 2, "column": 1, "width": 18}},
                            {"generated": {"first_line": 1, "first_column": 1, "head_columns": 0,
                                           "anchors": [[1, 1, 1, 1], [2, 5, 0, 0]]}}]),
    note="places: how the text sent maps back to the program as written")
one("start_places_null", "Start", '{"v":1,"program":"p","places":null,"result_id":"r"}',
    start("p", "r"), note="null places read as none")
one("start_places_unknown_step", "Start", '{"v":1,"program":"p","places":[{"moved":{}}],"result_id":"r"}',
    error="malformed", note="a place step is inserted or generated")
one("start_withdraw_string", "Start", '{"v":1,"program":"p","withdraw":"yes","result_id":"r"}',
    error="malformed", note="withdraw is a boolean")
one("start_missing_program", "Start", '{"v":1,"result_id":"r"}', error="malformed")
one("start_missing_result_id", "Start", '{"v":1,"program":"p"}', error="malformed")
one("start_program_number", "Start", '{"v":1,"program":1,"result_id":"r"}', error="malformed")

# ---------------------------------------------------------------- Result

one("result_every_field", "Result",
    '{"v":1,"result_id":"r-42","ok":false,"value":"null","kind":"limit","error":"memory limit of 64 MiB",'
    '"calls":3,"bytes":120}',
    result("r-42", False, "null", "limit", "memory limit of 64 MiB", 3, 120))
one("result_success_required_fields_only", "Result", '{"v":1,"result_id":"r1","ok":true}', result("r1", True),
    note="value, kind, error, calls and bytes are omitted when empty: \"\", null, \"\", 0, 0")
one("result_success_with_value", "Result", '{"v":1,"result_id":"r1","ok":true,"value":"{\\"n\\":1}","calls":2,"bytes":9}',
    result("r1", True, '{"n":1}', calls=2, bytes_=9))
one("result_protocol_error_without_kind", "Result", '{"v":1,"result_id":"r1","ok":false,"error":"bad frame"}',
    result("r1", False, error="bad frame"), note="a protocol-level error is the one failure that carries no kind")
one("result_calls_string", "Result", '{"v":1,"result_id":"r1","ok":true,"calls":"3"}', error="malformed")
one("result_bytes_negative", "Result", '{"v":1,"result_id":"r1","ok":true,"bytes":-5}', error="malformed")
one("result_missing_result_id", "Result", '{"v":1,"ok":true}', error="malformed")
one("result_missing_ok", "Result", '{"v":1,"result_id":"r1"}', error="malformed")
one("result_kind_unknown", "Result", '{"v":1,"result_id":"r1","ok":false,"kind":"oom"}', error="malformed")

# ---------------------------------------------------------------- framing

R1 = '{"v":1,"id":"1","tool":"t"}'
R2 = '{"v":1,"id":"2","tool":"u","args":"[]"}'
M1 = request("1", "t")
M2 = request("2", "u", "[]")
case("stream_empty", "Request", b"", note="EOF at the very start is a clean close with no messages")
case("stream_two_frames_back_to_back", "Request", frame(R1) + frame(R2), [M1, M2])
case("stream_frame_with_newlines_between_frames", "Request", frame(R1 + "\n") + frame("\n" + R2), [M1, M2],
     note="a newline is payload, not a delimiter: the first payload ends in one, the second starts with one")
case("truncated_prefix_1_byte", "Request", b"\x00", error="truncated_prefix", got=1)
case("truncated_prefix_3_bytes", "Request", b"\x00\x00\x00", error="truncated_prefix", got=3)
case("truncated_prefix_after_a_frame", "Request", frame(R1) + b"\x00\x00", [M1], error="truncated_prefix", got=2)
case("truncated_payload_prefix_only", "Request", prefix(len(R1)), error="truncated_payload", got=0, want=len(R1))
case("truncated_payload_one_byte_short", "Request", frame(R1)[:-1], error="truncated_payload",
     got=len(R1) - 1, want=len(R1))
case("truncated_payload_after_a_frame", "Request", frame(R1) + frame(R2)[:10], [M1], error="truncated_payload",
     got=6, want=len(R2))
case("max_minus_1_prefix_accepted_then_truncated", "Request", prefix(MAX - 1) + b'{"v":1',
     error="truncated_payload", got=6, want=MAX - 1,
     note="00ffffff announces 16 MiB - 1 bytes: the length is accepted, the stream ends early")
case("max_prefix_accepted_then_truncated", "Request", prefix(MAX), error="truncated_payload", got=0, want=MAX,
     note="01000000 announces exactly 16 MiB, the largest frame there is: accepted; nothing follows")
case("max_plus_1_refused", "Request", prefix(MAX + 1) + b"{}", error="too_large", len=MAX + 1,
     note="01000001 is one byte over 16 MiB: refused at the prefix, before any payload is read or reserved")
case("prefix_ffffffff_refused", "Request", b"\xff\xff\xff\xff", error="too_large", len=0xFFFFFFFF)
case("prefix_80000000_refused", "Request", b"\x80\x00\x00\x00", error="too_large", len=0x80000000,
     note="the length is unsigned: a high bit is 2 GiB, not a negative number")
case("prefix_http_get_refused", "Request", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", error="too_large",
     len=0x47455420, note="\"GET \" read as a length is 1195725856 bytes")
case("prefix_json_text_refused", "Request", b'{"v":1,"id":"1","tool":"t"}', error="too_large",
     len=struct.unpack(">I", b'{"v"')[0], note="an unframed JSON object: '{\"v\"' read as a length")
case("zero_length_frame", "Request", b"\x00\x00\x00\x00", error="empty")
case("zero_length_frame_then_valid_frame", "Request", prefix(0) + frame(R1), error="empty",
     note="the first error is final: nothing after it is read")
case("valid_frame_then_zero_length_frame", "Request", frame(R1) + prefix(0) + frame(R2), [M1], error="empty")
case("valid_frame_then_too_large", "Request", frame(R1) + b"\xff\xff\xff\xff" + frame(R2), [M1],
     error="too_large", len=0xFFFFFFFF)
case("too_large_then_valid_frame", "Request", b"\x80\x00\x00\x00" + frame(R1), error="too_large", len=0x80000000)
case("valid_then_not_object_then_valid", "Request", frame(R1) + frame("[]") + frame(R2), [M1], error="not_object",
     note="a decode error ends the stream too")
case("valid_then_version_then_valid", "Request", frame(R1) + frame('{"v":2,"id":"2","tool":"t"}') + frame(R2),
     [M1], error="version", v=2)
case("valid_then_malformed_then_valid", "Request", frame(R1) + frame('{"v":1,"id":2,"tool":"t"}') + frame(R2),
     [M1], error="malformed")
case("length_shorter_than_object", "Request", prefix(5) + R1.encode(), error="malformed",
     note="the payload is exactly the announced 5 bytes, '{\"v\":', which is not a whole object")
case("length_longer_than_object_swallows_next_frame", "Request",
     prefix(len(R1) + 4) + R1.encode() + frame(R2), error="malformed",
     note="the payload runs 4 bytes into the next frame's prefix: trailing bytes after the object")
case("start_two_frames_back_to_back", "Start",
     frame(START_ALL) + frame('{"v":1,"program":"return 1","result_id":"r1"}'),
     [START_ALL_DECODED, start("return 1", "r1")])

# ---------------------------------------------------------------- encode

encode_cases = []


def enc(name, message, value, text, note=None):
    c = {"name": name, "message": message, "value": value}
    if note:
        c["note"] = note
    c["payload"] = text
    c["frame"] = frame(text).hex()
    encode_cases.append(c)


enc("request_required_fields_only", "Request", request("1", "t"), '{"v":1,"id":"1","tool":"t"}',
    note="empty args and zero deadline_ms are left out")
enc("request_every_field", "Request", request("7", "get_logs", '{"host":"db1","count":50}', 2500), REQ_ALL)
enc("request_deadline_only", "Request", request("2", "slow", "", 100), '{"v":1,"id":"2","tool":"slow","deadline_ms":100}')
enc("request_empty_id_and_tool_are_kept", "Request", request("", ""), '{"v":1,"id":"","tool":""}',
    note="only fields marked omitempty are ever left out")
enc("response_success", "Response", response("1", True, "42"), '{"v":1,"id":"1","ok":true,"value":"42"}')
enc("response_success_empty_value", "Response", response("1", True), '{"v":1,"id":"1","ok":true}',
    note="ok is never omitted, even when false; an empty value is")
enc("response_failure", "Response", response("2", False, "", "rate_limited", "slow down"),
    '{"v":1,"id":"2","ok":false,"kind":"rate_limited","error":"slow down"}')
enc("response_every_field", "Response", response("3", False, "partial", "invalid", "bad"),
    '{"v":1,"id":"3","ok":false,"value":"partial","kind":"invalid","error":"bad"}')
enc("response_failure_without_kind_or_error", "Response", response("4", False), '{"v":1,"id":"4","ok":false}')
for k in KINDS:
    enc("response_kind_" + k, "Response", response("k", False, "", k, "e"),
        '{"v":1,"id":"k","ok":false,"kind":"%s","error":"e"}' % k)
enc("start_required_fields_only", "Start", start("return 1", "r1"),
    '{"v":1,"program":"return 1","budget":{},"result_id":"r1"}',
    note="budget is always written, as {} when every item is 0; empty bindings are left out")
enc("start_every_field", "Start", start("return 1", "r1", [binding("get_logs", "get_logs(host, count)"), binding("ping")],
                                        budget(1500000000, 10, 65536, 67108864)),
    '{"v":1,"program":"return 1","bindings":[{"name":"get_logs","signature":"get_logs(host, count)"},'
    '{"name":"ping"}],"budget":{"wall_clock":1500000000,"max_calls":10,"max_bytes":65536,'
    '"max_memory":67108864},"result_id":"r1"}',
    note="an empty signature is left out; wall_clock is integer nanoseconds")
enc("start_budget_wall_clock_one_second", "Start", start("p", "r", budget_=budget(wall_clock=1000000000)),
    '{"v":1,"program":"p","budget":{"wall_clock":1000000000},"result_id":"r"}')
enc("start_budget_max_memory_only", "Start", start("p", "r", budget_=budget(max_memory=1 << 26)),
    '{"v":1,"program":"p","budget":{"max_memory":67108864},"result_id":"r"}')
enc("start_budget_wall_clock_u64_max", "Start", start("p", "r", budget_=budget(wall_clock=U64_MAX)),
    '{"v":1,"program":"p","budget":{"wall_clock":%d},"result_id":"r"}' % U64_MAX)
enc("start_max_inflight", "Start", start("p", "r", max_inflight=4),
    '{"v":1,"program":"p","budget":{},"max_inflight":4,"result_id":"r"}',
    note="max_inflight comes after budget; it is left out when absent (null), written when 0")
enc("start_max_inflight_zero", "Start", start("p", "r", max_inflight=0),
    '{"v":1,"program":"p","budget":{},"max_inflight":0,"result_id":"r"}')
enc("result_success", "Result", result("r1", True, "42"), '{"v":1,"result_id":"r1","ok":true,"value":"42"}')
enc("result_success_with_counts", "Result", result("r1", True, "[]", calls=2, bytes_=17),
    '{"v":1,"result_id":"r1","ok":true,"value":"[]","calls":2,"bytes":17}')
enc("result_every_field", "Result", result("r1", False, "null", "limit", "memory", 3, 120),
    '{"v":1,"result_id":"r1","ok":false,"value":"null","kind":"limit","error":"memory","calls":3,"bytes":120}')
enc("result_protocol_error", "Result", result("r1", False, error="bad frame"),
    '{"v":1,"result_id":"r1","ok":false,"error":"bad frame"}', note="no kind: a protocol-level error")
enc("string_escapes", "Request",
    request("1", "t", "q\" b\\ s/ nl\n cr\r tab\t bs\b ff\f nul\x00 us\x1f del\x7f"),
    '{"v":1,"id":"1","tool":"t","args":"q\\" b\\\\ s/ nl\\n cr\\r tab\\t bs\\b ff\\f nul\\u0000 us\\u001f del\x7f"}',
    note="only '\"', '\\\\' and control characters below 0x20 are escaped: \\b \\f \\n \\r \\t by name, the others "
         "as \\u00XX with lowercase hex; '/' and DEL are written as they are")
enc("non_ascii_written_as_utf8", "Request", request("1", "t", "h\u00e9llo \u4e16\u754c \U0001F600 <b> & \u2028"),
    '{"v":1,"id":"1","tool":"t","args":"h\u00e9llo \u4e16\u754c \U0001F600 <b> & \u2028"}',
    note="non-ASCII is written as raw UTF-8 and <, >, &, U+2028 are not escaped (Go needs SetEscapeHTML(false) "
         "to match; either form decodes the same)")

# ---------------------------------------------------------------- write

names = [c["name"] for c in decode_cases]
assert len(names) == len(set(names)), "duplicate decode case names"
names = [c["name"] for c in encode_cases]
assert len(names) == len(set(names)), "duplicate encode case names"

doc = {
    "format": "wasmwire wire protocol test vectors, format 1 (see README.md)",
    "protocol_version": 1,
    "max_frame_bytes": MAX,
    "error_classes": {
        "too_large": "the prefix announces more than max_frame_bytes; refused before the payload is read",
        "empty": "the prefix announces 0 bytes",
        "truncated_prefix": "the stream ends inside a 4-byte prefix (1 to 3 bytes of it)",
        "truncated_payload": "the stream ends inside a payload",
        "not_object": "the payload's first byte that is not JSON whitespace is not '{'",
        "version": "the object's v is present, not null, and not the integer 1",
        "malformed": "anything else that is not a valid message: bad JSON, bad UTF-8, trailing bytes, "
                     "missing required field, wrong type, unknown failure kind, repeated field",
    },
    "decode": decode_cases,
    "encode": encode_cases,
}

def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


# One case per line, so that the file greps and diffs by case.
lines = ["{"]
for key, value in doc.items():
    if isinstance(value, list):
        lines.append(" %s: [" % dumps(key))
        lines.extend("  %s%s" % (dumps(c), "," if i + 1 < len(value) else "") for i, c in enumerate(value))
        lines.append(" ],")
    elif isinstance(value, dict):
        lines.append(" %s: {" % dumps(key))
        items = list(value.items())
        lines.extend("  %s: %s%s" % (dumps(k), dumps(v), "," if i + 1 < len(items) else "")
                     for i, (k, v) in enumerate(items))
        lines.append(" },")
    else:
        lines.append(" %s: %s," % (dumps(key), dumps(value)))
lines[-1] = lines[-1].rstrip(",")
lines.append("}")
text = "\n".join(lines) + "\n"
assert json.loads(text) == doc
with open(os.path.join(HERE, "frames.json"), "w", encoding="utf-8") as f:
    f.write(text)
print("wrote %d decode and %d encode cases" % (len(decode_cases), len(encode_cases)))
