//! A Response's value taken out of its frame in one allocation.
//!
//! A value is JSON text sent as a JSON string, so every quote in it comes
//! escaped, and serde reads an escaped string into a scratch buffer that
//! grows by doubling, then copies it out: a 15 MB value took a 30 MB
//! scratch and a 15 MB copy beside its 15 MB frame, and in a child of 64
//! MiB the allocator's failure ended the whole run (Rust aborts on it).
//! Here the value's string is kept as the frame's own bytes while the
//! Response is read, then unescaped into one buffer of its written size
//! (never less than what it reads as), taken fallibly: a child with no
//! room for it fails that call `limit`, and goes on. A frame of 64 KiB or
//! less is read by serde alone, as before: its scratch is as small, and
//! the two steps here cost a fan-out of small answers a little.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::codec::{DecodeError, decode};
use crate::{FailureKind, Response, VERSION};

/// Frames up to this size are read by serde alone.
const SMALL_FRAME: usize = 64 << 10;

/// A Response as read off the wire, its value still the JSON string
/// literal it came as (borrowed from the frame).
#[derive(Deserialize)]
struct Frame<'a> {
    v: u32,
    id: String,
    ok: bool,
    #[serde(default, borrow)]
    value: Option<&'a RawValue>,
    #[serde(default)]
    kind: Option<FailureKind>,
    #[serde(default, deserialize_with = "crate::message::null_as_default")]
    error: String,
}

/// A Response read by [`decode_response`].
#[derive(Debug)]
pub(crate) struct Decoded {
    pub response: Response,
    /// Bytes of a successful value there was no memory to hold: its
    /// `value` is empty, and the call should fail `limit`.
    pub unheld: Option<usize>,
}

/// Reads a Response frame's payload as [`decode`] does (the same checks,
/// the same errors), its value unescaped in one allocation of the written
/// string's size, one byte more left spare (a C parser of the value wants
/// a NUL after it).
pub(crate) fn decode_response(payload: &[u8]) -> Result<Decoded, DecodeError> {
    // A small frame goes the usual way: its scratch is small too, and the
    // raw slice and the copy after it cost a fan-out of 1,000 calls 1-3%.
    if payload.len() <= SMALL_FRAME {
        if let Some(response) = written_as_encoded(payload) {
            return Ok(Decoded {
                response,
                unheld: None,
            });
        }
        return whole(payload);
    }
    decode_unescaped(payload)
}

/// A success written as this crate's encoder writes one
/// (`{"v":1,"id":"7","ok":true,"value":"…"}`, the value left out when
/// empty), read without serde: serde's reading of a small frame was a
/// fifteenth of a call's round trip in the child. `None` for any other
/// text, however valid (other key orders, spaces, escapes in the id, a
/// failure), which serde then reads, for its words if it refuses: what
/// this accepts, serde reads as the same Response.
fn written_as_encoded(payload: &[u8]) -> Option<Response> {
    let rest = payload.strip_prefix(br#"{"v":1,"id":""#)?;
    let id_len = rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    if rest[id_len] != b'"' {
        return None;
    }
    let id = std::str::from_utf8(&rest[..id_len]).ok()?;
    let rest = rest[id_len + 1..].strip_prefix(br#","ok":true"#)?;
    let value = if rest == b"}" {
        String::new()
    } else {
        // The value's literal, quotes included: one JSON string, so no
        // quote or control character inside it but an escaped one, and no
        // escape cut off by its end.
        let literal = rest.strip_prefix(br#","value":"#)?.strip_suffix(b"}")?;
        let inner = literal.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
        let mut at = 0;
        while at < inner.len() {
            match inner[at] {
                b'"' => return None,
                b'\\' if at + 1 == inner.len() => return None,
                b'\\' => at += 2,
                b if b < 0x20 => return None,
                _ => at += 1,
            }
        }
        unescape(std::str::from_utf8(literal).ok()?).ok()?
    };
    Some(Response {
        v: VERSION,
        id: id.to_owned(),
        ok: true,
        value,
        kind: None,
        error: String::new(),
    })
}

/// The Response of `payload`, as serde reads it.
fn whole(payload: &[u8]) -> Result<Decoded, DecodeError> {
    decode::<Response>(payload).map(|response| Decoded {
        response,
        unheld: None,
    })
}

/// [`decode_response`] of a frame of any size, its value unescaped here.
fn decode_unescaped(payload: &[u8]) -> Result<Decoded, DecodeError> {
    let whole = || whole(payload);
    // Anything unusual (not an object, another version, a value that is not
    // a string, an escape serde would refuse) is left to serde, for its
    // words.
    if payload.first() != Some(&b'{') {
        return whole();
    }
    let Ok(frame) = serde_json::from_slice::<Frame<'_>>(payload) else {
        return whole();
    };
    if frame.v != VERSION {
        return whole();
    }
    let (value, unheld) = match frame.value {
        None => (String::new(), None),
        Some(raw) => match unescape(raw.get()) {
            Ok(text) => (text, None),
            Err(Unescape::NoMemory(bytes)) => (String::new(), Some(bytes)),
            Err(Unescape::Refused) => return whole(),
        },
    };
    Ok(Decoded {
        response: Response {
            v: frame.v,
            id: frame.id,
            ok: frame.ok,
            value,
            kind: frame.kind,
            error: frame.error,
        },
        unheld,
    })
}

/// The `id` of a Response of which only `head`, its first bytes, was
/// kept (a frame there was no memory to hold: `FrameError::Unheld`):
/// `None` unless `head` is the start of a JSON object with a string `id`
/// before anything in it stopped the reading (the parent writes `v` and
/// `id` before the value).
pub(crate) fn id_in_head(head: &[u8]) -> Option<String> {
    use serde::de::{Deserializer, Error, IgnoredAny, MapAccess, Visitor};
    use std::fmt;

    struct IdOf<'a>(&'a mut Option<String>);

    impl<'de> Visitor<'de> for IdOf<'_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a Response")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "id" {
                    *self.0 = Some(map.next_value::<String>()?);
                    // Found: the rest (cut short) is not read.
                    return Err(A::Error::custom("found"));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }

    let mut id = None;
    let mut reader = serde_json::Deserializer::from_slice(head);
    // Ends in an error whenever it finds the id, or the head was cut
    // before it: either way `id` says what was found.
    let _ = reader.deserialize_map(IdOf(&mut id));
    id
}

/// Why [`unescape`] gave no text.
#[derive(Debug, PartialEq, Eq)]
enum Unescape {
    /// No memory for a string of this many bytes.
    NoMemory(usize),
    /// Not a JSON string, or one serde refuses (a lone surrogate).
    Refused,
}

/// The text of the JSON string literal `literal` (quotes included), in a
/// buffer of the literal's inner length plus one byte (room for the NUL
/// its reader adds): copied once, then read in place
/// ([`unescape_in_place`](crate::json::unescape_in_place)).
fn unescape(literal: &str) -> Result<String, Unescape> {
    let inner = literal
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .ok_or(Unescape::Refused)?;
    let mut text = String::new();
    text.try_reserve_exact(inner.len() + 1)
        .map_err(|_| Unescape::NoMemory(inner.len()))?;
    text.push_str(inner);
    crate::json::unescape_in_place(text).ok_or(Unescape::Refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode;

    /// The payload of `response`'s frame.
    fn payload(response: &Response) -> Vec<u8> {
        encode(response).expect("encodes")[4..].to_vec()
    }

    #[test]
    fn the_id_is_read_from_the_head_of_a_frame_cut_anywhere_after_it() {
        let response = Response::success("42", "x".repeat(5000));
        let frame = payload(&response);
        let id_ends = frame
            .windows(4)
            .position(|w| w == b"\"42\"")
            .expect("the id is in the frame")
            + 4;
        for cut in 0..2000 {
            let found = id_in_head(&frame[..cut]);
            let want = (cut >= id_ends).then(|| "42".to_owned());
            assert_eq!(found, want, "cut at {cut}");
        }
        // Wherever the id is, before a cut value; never from inside one.
        assert_eq!(
            id_in_head(br#"{"ok":true,"v":1,"id":"7","value":"ab"#),
            Some("7".into())
        );
        assert_eq!(id_in_head(br#"{"v":1,"value":"\"id\":\"9\"","id"#), None);
        assert_eq!(id_in_head(br#"{"v":1,"value":"\"id\":\"9\"..."#), None);
        assert_eq!(id_in_head(br#"{"v":1,"id":7,"value":""#), None);
        assert_eq!(id_in_head(br#"["id","7"]"#), None);
        assert_eq!(id_in_head(b""), None);
    }

    /// Values with every escape serde_json writes, and none.
    const VALUES: [&str; 6] = [
        "",
        "1",
        r#"{"a":"b \"quoted\" \\ / \n\t\r\u0008\u000c","c":[1,2]}"#,
        "Zürich 😀 \u{7f} \u{1f} \u{2028} \u{0}",
        "\\\\\\\"",
        "ends in a backslash \\",
    ];

    #[test]
    fn a_value_reads_as_serde_reads_it_in_a_buffer_of_its_written_size() {
        for value in VALUES {
            let response = Response::success("7", value);
            let bytes = payload(&response);
            let decoded = decode_unescaped(&bytes).expect("decodes");
            assert_eq!(decoded.response, decode::<Response>(&bytes).unwrap());
            assert_eq!(decoded.response.value, value);
            assert_eq!(decoded.unheld, None);
            if value.is_empty() {
                // Left out of the frame: nothing to hold.
                continue;
            }
            // The written string (quotes aside) and one byte for a NUL.
            let written = serde_json::to_string(value).unwrap().len() - 2;
            assert_eq!(decoded.response.value.capacity(), written + 1, "{value:?}");
        }
        let failure = Response::failure("8", FailureKind::Transient, "busy \"now\"");
        assert_eq!(
            decode_unescaped(&payload(&failure)).unwrap().response,
            failure
        );
    }

    #[test]
    fn a_value_small_or_large_is_held_in_a_buffer_of_its_written_size() {
        for value in ["x", "\"q\"", &"\"quoted\" ".repeat(20_000)] {
            let bytes = payload(&Response::success("7", value));
            let decoded = decode_response(&bytes).expect("decodes").response;
            assert_eq!(decoded.value, value);
            // Read without serde (a small frame as encoded) or unescaped
            // here (a large one): the written size and a byte for a NUL.
            let written = serde_json::to_string(value).unwrap().len() - 2;
            assert_eq!(decoded.value.capacity(), written + 1, "{}", bytes.len());
        }
    }

    #[test]
    fn a_success_as_encoded_is_read_without_serde_as_serde_reads_it() {
        for value in VALUES {
            let bytes = payload(&Response::success("c17", value));
            let read = written_as_encoded(&bytes).expect("read without serde");
            assert_eq!(read, decode::<Response>(&bytes).unwrap(), "{value:?}");
            assert_eq!(read.value, value);
        }
        // Anything else is left to serde, valid or not.
        for frame in [
            r#"{"v":1,"id":"1","ok":false,"kind":"invalid","error":"no"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"a","kind":null}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"a"} "#,
            r#"{"v":1,"id":"1","ok":true,"value":"a","value":"b"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"a\"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"a\\"b"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"\ud800"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"\x"}"#,
            "{\"v\":1,\"id\":\"1\",\"ok\":true,\"value\":\"a\tb\"}",
            r#"{"v":1,"id":"\u0031","ok":true}"#,
            r#"{"v":1,"id":"a\,"ok":true}"#,
            "{\"v\":1,\"id\":\"a\u{1},\"ok\":true}",
            r#"{"v":1, "id":"1","ok":true}"#,
            r#"{"id":"1","v":1,"ok":true}"#,
            r#"{"v":2,"id":"1","ok":true}"#,
            r#"{"v":1,"id":"1","ok":true,"value":7}"#,
            r#"{"v":1,"id":"1","ok":true,"value":null}"#,
        ] {
            assert_eq!(written_as_encoded(frame.as_bytes()), None, "{frame}");
            // and decode_response answers as serde does
            let mine = decode_response(frame.as_bytes()).map(|d| d.response);
            let serde = decode::<Response>(frame.as_bytes());
            assert_eq!(format!("{mine:?}"), format!("{serde:?}"), "{frame}");
        }
        // Bytes that are not UTF-8 in the value or the id.
        let mut bad = br#"{"v":1,"id":"1","ok":true,"value":"a"}"#.to_vec();
        bad[35] = 0xff;
        assert_eq!(written_as_encoded(&bad), None);
        let mut bad = br#"{"v":1,"id":"1","ok":true}"#.to_vec();
        bad[13] = 0xc3;
        assert_eq!(written_as_encoded(&bad), None);
    }

    proptest::proptest! {
        /// Any success, and the same frame with one byte changed, one cut
        /// off or one put in: `decode_response` answers as serde does.
        #[test]
        fn any_frame_near_an_encoded_one_reads_as_serde_reads_it(
            id in "[a-z0-9\"\\\\]{0,6}",
            value in proptest::prelude::any::<String>(),
            at in proptest::prelude::any::<usize>(),
            byte in proptest::prelude::any::<u8>(),
            how in 0u8..4,
        ) {
            let mut bytes = payload(&Response::success(id, value));
            let at = at % (bytes.len() + 1);
            match how {
                0 => {}
                1 if at < bytes.len() => bytes[at] = byte,
                2 if at < bytes.len() => { bytes.remove(at); }
                _ => bytes.insert(at, byte),
            }
            let mine = decode_response(&bytes).map(|d| d.response);
            let serde = decode::<Response>(&bytes);
            proptest::prop_assert_eq!(format!("{mine:?}"), format!("{serde:?}"));
        }
    }

    #[test]
    fn escapes_any_writer_may_use_read_as_serde_reads_them() {
        // Escapes serde_json never writes but a Go or Python parent may.
        for written in [
            r#"\u00e9\u00E9\/\ud83d\ude00"#,
            r#"\u0041\u4e2d\uFFFF"#,
            r#"plain"#,
        ] {
            let frame = format!(r#"{{"v":1,"id":"1","ok":true,"value":"{written}"}}"#);
            let mine = decode_unescaped(frame.as_bytes()).unwrap().response;
            assert_eq!(
                mine,
                decode::<Response>(frame.as_bytes()).unwrap(),
                "{written}"
            );
        }
    }

    #[test]
    fn what_serde_refuses_is_refused_in_serdes_words() {
        for frame in [
            r#"{"v":1,"id":"1","ok":true,"value":"\ud800"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"\ud800\u0041"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"\udc00"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"\x"}"#,
            r#"{"v":1,"id":"1","ok":true,"value":7}"#,
            r#"{"v":1,"id":"1","ok":true,"value":"a","value":"b"}"#,
            r#"{"v":2,"id":"1","ok":true,"value":"a"}"#,
            r#"[1]"#,
            r#"{"v":1,"id":"1","ok":true,"value":"a"} x"#,
        ] {
            let serde = decode::<Response>(frame.as_bytes())
                .unwrap_err()
                .to_string();
            let mine = decode_unescaped(frame.as_bytes()).unwrap_err().to_string();
            assert_eq!(mine, serde, "{frame}");
        }
        let null = br#"{"v":1,"id":"1","ok":true,"value":null}"#;
        assert_eq!(decode_unescaped(null).unwrap().response.value, "");
    }
}
