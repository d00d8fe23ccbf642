//! Withdraw: a child takes back a call in flight, and the parent's handler
//! for it ends (docs/protocol.md, section 4a).
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;
use wire::{
    AsyncFrameReader, Call, Client, FailureKind, HandlerError, InFlight, Request, Response, Server,
    ServerOptions, Start, Withdraw, Withdrawal, decode, encode,
};

/// A handler that never answers and counts how many of its futures were
/// dropped (cancelled).
fn hang(dropped: Arc<AtomicUsize>) -> impl wire::Handler {
    move |call: Call| {
        let guard = Dropped(dropped.clone());
        async move {
            let _guard = guard;
            if call.tool == "fast" {
                return Ok::<_, HandlerError>("1".to_owned());
            }
            std::future::pending::<()>().await;
            Ok(String::new())
        }
    }
}

struct Dropped(Arc<AtomicUsize>);
impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_withdrawn_call_is_answered_cancelled_its_handler_dropped_and_it_leaves_the_calls_in_flight()
 {
    let dropped = Arc::new(AtomicUsize::new(0));
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, child_in) = tokio::io::duplex(1 << 16);
    let server = Server::new(ServerOptions::default(), Arc::new(hang(dropped.clone())));
    let tally = server.tally();
    let served = tokio::spawn(server.serve(server_in, server_out, CancellationToken::new()));
    let mut from_server = AsyncFrameReader::new(child_in);

    for id in ["1", "2"] {
        let frame = encode(&Request::new(id, "slow", "")).unwrap();
        to_server.write_all(&frame).await.unwrap();
    }
    // Both calls are running (neither can answer): two in flight.
    let waited = tokio::time::timeout(Duration::from_secs(5), async {
        while tally.in_flight() < 2 {
            tokio::task::yield_now().await;
        }
    });
    waited.await.expect("both calls are accepted");

    to_server
        .write_all(&encode(&Withdraw::new("2")).unwrap())
        .await
        .unwrap();
    let payload = from_server.read_frame().await.unwrap().unwrap();
    let response: Response = decode(&payload).unwrap();
    assert_eq!(response.id, "2");
    assert!(!response.ok);
    assert_eq!(response.kind, Some(FailureKind::Cancelled));
    assert!(response.error.contains("withdrew"), "{}", response.error);
    // The answer is sent once the handler's task is gone.
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "the handler was dropped");
    assert_eq!(tally.in_flight(), 1, "only call 1 is left in flight");
    assert_eq!(tally.calls(), 2, "a withdrawn call was still accepted");

    // A Withdraw for an id not in flight (answered already, or never
    // made) is ignored, and the connection goes on.
    for id in ["2", "nope"] {
        let frame = encode(&Withdraw::new(id)).unwrap();
        to_server.write_all(&frame).await.unwrap();
    }
    let frame = encode(&Request::new("3", "fast", "")).unwrap();
    to_server.write_all(&frame).await.unwrap();
    let payload = from_server.read_frame().await.unwrap().unwrap();
    let response: Response = decode(&payload).unwrap();
    assert_eq!((response.id.as_str(), response.ok), ("3", true));
    assert_eq!(tally.in_flight(), 1);

    // The id of a withdrawn call may be used again once it was answered.
    to_server
        .write_all(&encode(&Request::new("2", "fast", "")).unwrap())
        .await
        .unwrap();
    let payload = from_server.read_frame().await.unwrap().unwrap();
    let response: Response = decode(&payload).unwrap();
    assert_eq!((response.id.as_str(), response.ok), ("2", true));

    drop(to_server);
    served.abort();
}

/// The protocol violation a server ends with when a child sends one frame
/// of `payload`.
async fn violation_of(payload: &[u8]) -> String {
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, _child_in) = tokio::io::duplex(1 << 16);
    let server = Server::new(ServerOptions::default(), Arc::new(hang(Arc::default())));
    let served = tokio::spawn(server.serve(server_in, server_out, CancellationToken::new()));
    to_server
        .write_all(&(payload.len() as u32).to_be_bytes())
        .await
        .unwrap();
    to_server.write_all(payload).await.unwrap();
    let error = served.await.unwrap().expect_err("a protocol violation");
    error.to_string()
}

#[tokio::test]
async fn a_frame_that_is_neither_request_nor_withdraw_is_still_malformed() {
    let error = violation_of(br#"{"v":1,"id":"1"}"#).await;
    assert!(error.contains("malformed Request"), "{error}");
}

/// A Withdraw whose id is no string was told as "malformed Request:
/// missing field `id`", the one thing it never tried to be.
#[tokio::test]
async fn a_malformed_withdraw_is_told_as_a_withdraw() {
    let error = violation_of(br#"{"v":1,"withdraw":5}"#).await;
    assert!(error.contains("malformed Withdraw"), "{error}");
}

#[test]
fn a_waiting_call_is_dropped_unsent_and_one_on_the_wire_yields_a_withdraw_frame() {
    let mut calls = InFlight::new(1);
    let first = calls.request("t", "", 0).unwrap();
    let second = calls.request("t", "", 0).unwrap();
    let mut wire = Vec::new();
    calls
        .send_ready(|frame| {
            wire.push(frame.to_vec());
            Ok::<_, ()>(())
        })
        .unwrap();
    assert_eq!(wire.len(), 1);
    assert_eq!(calls.withdraw(&second).unwrap(), Withdrawal::Unsent);
    assert_eq!(calls.len(), 1, "the unsent call is gone, uncounted");
    let Withdrawal::OnTheWire(frame) = calls.withdraw(&first).unwrap() else {
        panic!("the first call is on the wire");
    };
    let withdraw: Withdraw = decode(&frame[4..]).unwrap();
    assert_eq!(withdraw, Withdraw::new(first.clone()));
    assert_eq!(calls.len(), 1, "its slot is held until the answer comes");
    assert_eq!(calls.withdraw("nope").unwrap(), Withdrawal::Unknown);
    let reply = calls
        .answer(&encode(&Response::failure(&first, FailureKind::Cancelled, "w")).unwrap()[4..])
        .unwrap();
    assert_eq!(reply.id, first);
    assert!(calls.is_empty());
    assert_eq!(calls.calls(), 1);
}

#[test]
fn the_client_tells_only_a_parent_that_takes_withdrawals() {
    for tell in [false, true] {
        let mut out = Vec::new();
        let mut client = Client::new(&[][..], &mut out);
        let id = client.send("t", "", 0).unwrap();
        client.withdraw(&id, tell).unwrap();
        drop(client);
        let request_len = encode(&Request::new(id.as_str(), "t", "")).unwrap().len();
        let rest = &out[request_len..];
        if tell {
            assert_eq!(rest, &encode(&Withdraw::new(id)).unwrap()[..]);
        } else {
            assert!(rest.is_empty(), "a foreign parent never sees a Withdraw");
        }
    }
}

#[test]
fn a_start_without_withdraw_reads_as_false_and_true_is_sent() {
    let text = r#"{"v":1,"program":"return 1","result_id":"r"}"#;
    let start: Start = serde_json::from_str(text).unwrap();
    assert!(!start.withdraw);
    let mut start = start;
    start.withdraw = true;
    let text = serde_json::to_string(&start).unwrap();
    assert!(text.contains(r#""withdraw":true"#), "{text}");
    start.withdraw = false;
    let text = serde_json::to_string(&start).unwrap();
    assert!(!text.contains("withdraw"), "omitted when false: {text}");
}
