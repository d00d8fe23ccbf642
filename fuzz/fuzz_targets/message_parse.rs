//! Arbitrary bytes as one frame's payload, into `wire::decode` for each of
//! the four messages.
//!
//! Checked: nothing panics; whatever decodes carries `v` = `VERSION`, encodes
//! to a frame that `FrameReader` reads back as exactly one payload, and that
//! payload decodes to an equal value which encodes to the same bytes (the
//! encoding is canonical). A payload that is not an object must be refused as
//! `NotObject`, never as anything else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::{DecodeError, FrameReader, Message, Request, Response, Result, Start, VERSION, decode, encode};

fn check<M: Message + PartialEq + std::fmt::Debug>(payload: &[u8]) {
    // JSON's whitespace only (RFC 8259): not form feed, which
    // `is_ascii_whitespace` would skip.
    let looks_like_object = payload
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        == Some(&b'{');
    let msg = match decode::<M>(payload) {
        Ok(msg) => msg,
        Err(DecodeError::NotObject { message }) => {
            assert_eq!(message, M::NAME);
            assert!(!looks_like_object, "an object refused as NotObject");
            return;
        }
        Err(DecodeError::Version { message, got, want }) => {
            assert_eq!(message, M::NAME);
            assert_eq!(want, VERSION);
            assert_ne!(got, VERSION.to_string(), "a version error for the right version");
            return;
        }
        Err(DecodeError::Malformed { message, .. }) => {
            assert_eq!(message, M::NAME);
            return;
        }
    };
    assert!(
        looks_like_object,
        "decoded a payload that does not start with an object"
    );
    assert_eq!(msg.version(), VERSION);

    let frame = encode(&msg).unwrap_or_else(|e| panic!("{msg:?} decoded but does not encode: {e}"));
    let mut reader = FrameReader::new(&frame[..]);
    let payload2 = reader
        .read_frame()
        .expect("an encoded frame reads back")
        .expect("one frame");
    assert!(
        reader.read_frame().expect("clean end").is_none(),
        "encode wrote more than one frame"
    );
    assert_eq!(&frame[4..], &payload2[..]);

    let again: M = decode(&payload2).unwrap_or_else(|e| {
        panic!(
            "{msg:?} encoded as {:?} does not decode: {e}",
            String::from_utf8_lossy(&payload2)
        )
    });
    assert_eq!(again, msg, "re-encoded value decodes differently");
    let frame2 = encode(&again).expect("encodes twice");
    assert_eq!(frame2, frame, "encoding is not canonical");
}

fuzz_target!(|data: &[u8]| {
    check::<Request>(data);
    check::<Response>(data);
    check::<Start>(data);
    check::<Result>(data);
});
