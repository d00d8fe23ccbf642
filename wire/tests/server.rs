//! The Server against a scripted child on an in-memory duplex.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wire::{
    AsyncFrameReader, Call, Ending, FailureKind, HandlerError, ProtocolError, Request, Response,
    Server, ServerOptions, Tally, ToolFailure, decode, encode,
};

/// The child's end of a served connection.
struct Child {
    to_server: DuplexStream,
    from_server: AsyncFrameReader<DuplexStream>,
    served: JoinHandle<Result<Ending, ProtocolError>>,
    tally: Arc<Tally>,
    cancel: CancellationToken,
}

impl Child {
    fn spawn<H: wire::Handler>(options: ServerOptions, handler: H) -> Child {
        let (child_out, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, child_in) = tokio::io::duplex(1 << 20);
        let server = Server::new(options, Arc::new(handler));
        let tally = server.tally();
        let cancel = CancellationToken::new();
        let served = tokio::spawn(server.serve(server_in, server_out, cancel.clone()));
        Child {
            to_server: child_out,
            from_server: AsyncFrameReader::new(child_in),
            served,
            tally,
            cancel,
        }
    }

    async fn send(&mut self, request: Request) {
        self.to_server
            .write_all(&encode(&request).unwrap())
            .await
            .unwrap();
    }

    async fn call(&mut self, id: &str, tool: &str, args: &str) {
        self.send(Request::new(id, tool, args)).await;
    }

    async fn recv(&mut self) -> Response {
        let payload = self
            .from_server
            .read_frame()
            .await
            .unwrap()
            .expect("a response");
        decode(&payload).unwrap()
    }

    async fn close(
        self,
    ) -> (
        Result<Ending, ProtocolError>,
        AsyncFrameReader<DuplexStream>,
    ) {
        drop(self.to_server);
        (self.served.await.unwrap(), self.from_server)
    }
}

fn echo() -> impl wire::Handler {
    |call: Call| async move { Ok::<_, HandlerError>(call.args) }
}

fn options() -> ServerOptions {
    ServerOptions::default()
}

#[tokio::test]
async fn answers_a_call_and_counts_it() {
    let mut child = Child::spawn(options(), echo());
    child.call("1", "echo", "hello").await;
    assert_eq!(child.recv().await, Response::success("1", "hello"));
    assert_eq!((child.tally.calls(), child.tally.bytes()), (1, 5));
    let (ending, _) = child.close().await;
    assert_eq!(ending.unwrap(), Ending::Closed);
}

#[tokio::test]
async fn responses_come_back_in_completion_order_matched_by_id() {
    // Call i sleeps (10 - i) * 5 ms, so they complete in reverse order.
    let handler = |call: Call| async move {
        let i: u64 = call.args.parse().unwrap();
        tokio::time::sleep(Duration::from_millis((10 - i) * 5)).await;
        Ok::<_, HandlerError>(format!("v{i}"))
    };
    let mut child = Child::spawn(options(), handler);
    for i in 0..10 {
        child.call(&format!("c{i}"), "t", &i.to_string()).await;
    }
    let mut order = Vec::new();
    for _ in 0..10 {
        let r = child.recv().await;
        assert_eq!(r.value, format!("v{}", &r.id[1..]), "value matches its id");
        order.push(r.id);
    }
    let expected: Vec<_> = (0..10).rev().map(|i| format!("c{i}")).collect();
    assert_eq!(order, expected);
}

#[tokio::test]
async fn a_duplicate_in_flight_id_is_a_protocol_violation_and_cancels_handlers() {
    let hang = Hang::default();
    let handler = hang.handler();
    let mut child = Child::spawn(options(), handler);
    child.call("same", "t", "").await;
    // Wait until the first call's handler runs, so there is one to drop.
    while hang.started() < 1 {
        tokio::task::yield_now().await;
    }
    child.call("same", "t", "").await;
    let ending = child.served.await.unwrap();
    assert!(matches!(ending, Err(ProtocolError::DuplicateId(id)) if id == "same"));
    assert_eq!(hang.dropped(), 1, "the in-flight handler was dropped");
    // The connection is closed: the child reads EOF.
    assert!(child.from_server.read_frame().await.unwrap().is_none());
}

/// A handler that never returns, counting the calls it started and the
/// handler futures that were dropped (cancelled).
#[derive(Clone, Default)]
struct Hang {
    started: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl Hang {
    fn handler(&self) -> impl wire::Handler {
        let hang = self.clone();
        move |_call: Call| {
            hang.started.fetch_add(1, Ordering::SeqCst);
            let guard = DropCounter(hang.dropped.clone());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                Ok::<_, HandlerError>(String::new())
            }
        }
    }

    fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }
}

struct DropCounter(Arc<AtomicUsize>);
impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn an_id_may_be_reused_once_its_call_is_answered() {
    let mut child = Child::spawn(options(), echo());
    child.call("1", "t", "a").await;
    assert_eq!(child.recv().await.value, "a");
    child.call("1", "t", "b").await;
    assert_eq!(child.recv().await.value, "b");
}

#[tokio::test]
async fn an_empty_id_is_a_protocol_violation() {
    let mut child = Child::spawn(options(), echo());
    child.call("", "t", "").await;
    assert!(matches!(
        child.served.await.unwrap(),
        Err(ProtocolError::EmptyId { .. })
    ));
}

#[tokio::test]
async fn another_version_is_refused_naming_both() {
    let mut child = Child::spawn(options(), echo());
    let mut r = Request::new("1", "t", "");
    r.v = 2;
    child.send(r).await;
    let err = child.served.await.unwrap().unwrap_err();
    assert!(err.is_version_mismatch());
    assert_eq!(
        err.to_string(),
        "Request has protocol version 2, this side speaks version 1"
    );
}

#[tokio::test]
async fn a_bad_frame_ends_the_connection() {
    let mut child = Child::spawn(options(), echo());
    child
        .to_server
        .write_all(b"GET / HTTP/1.1\r\n")
        .await
        .unwrap();
    let err = child.served.await.unwrap().unwrap_err();
    assert!(
        matches!(err, ProtocolError::Frame(wire::FrameError::TooLarge { .. })),
        "{err}"
    );
}

/// A handler that holds every call until released.
#[derive(Clone, Default)]
struct Gate {
    open: Arc<Notify>,
    started: Arc<AtomicUsize>,
}

impl Gate {
    fn handler(&self) -> impl wire::Handler {
        let gate = self.clone();
        move |call: Call| {
            let gate = gate.clone();
            async move {
                gate.started.fetch_add(1, Ordering::SeqCst);
                gate.open.notified().await;
                Ok::<_, HandlerError>(call.id)
            }
        }
    }
}

#[tokio::test]
async fn in_flight_cap_allows_n_and_refuses_n_plus_one_at_once() {
    const CAP: usize = 8;
    let gate = Gate::default();
    let mut child = Child::spawn(
        ServerOptions {
            max_in_flight: CAP,
            ..options()
        },
        gate.handler(),
    );
    // A flood: 3 * CAP requests at once, none answered yet.
    for i in 0..3 * CAP {
        child.call(&i.to_string(), "t", "").await;
    }
    // The 2 * CAP over the cap are refused at once, while the first CAP still wait.
    let mut refused = Vec::new();
    for _ in 0..2 * CAP {
        let r = child.recv().await;
        assert_eq!(r.kind, Some(FailureKind::Limit), "{r:?}");
        assert!(r.error.contains("in-flight cap of 8"), "{}", r.error);
        refused.push(r.id.parse::<usize>().unwrap());
    }
    refused.sort();
    assert_eq!(refused, (CAP..3 * CAP).collect::<Vec<_>>());
    assert_eq!(
        gate.started.load(Ordering::SeqCst),
        CAP,
        "refused calls are not queued"
    );
    assert_eq!(
        child.tally.calls(),
        CAP as u64,
        "refused calls are not counted"
    );
    // Once they complete, there is room again.
    gate.open.notify_waiters();
    for _ in 0..CAP {
        assert!(child.recv().await.ok);
    }
    child.call("again", "t", "").await;
    tokio::task::yield_now().await;
    while gate.started.load(Ordering::SeqCst) < CAP + 1 {
        tokio::task::yield_now().await;
    }
    gate.open.notify_waiters();
    assert_eq!(child.recv().await, Response::success("again", "again"));
}

#[tokio::test]
async fn max_calls_allows_exactly_n() {
    let mut child = Child::spawn(
        ServerOptions {
            max_calls: 3,
            ..options()
        },
        echo(),
    );
    for i in 0..3 {
        child.call(&i.to_string(), "t", "x").await;
        assert!(child.recv().await.ok);
    }
    child.call("3", "t", "x").await;
    let r = child.recv().await;
    assert_eq!(r.kind, Some(FailureKind::Limit));
    assert!(r.error.contains("call quota of 3"), "{}", r.error);
    assert_eq!(child.tally.calls(), 3);
}

#[tokio::test]
async fn max_bytes_allows_exactly_the_budget_and_never_part_of_a_value() {
    let mut child = Child::spawn(
        ServerOptions {
            max_bytes: 10,
            ..options()
        },
        echo(),
    );
    child.call("1", "t", "123456").await;
    assert_eq!(child.recv().await.value, "123456");
    // 6 + 5 = 11 > 10: refused whole, not cut to 4 bytes.
    child.call("2", "t", "12345").await;
    let r = child.recv().await;
    assert_eq!(
        (r.ok, r.kind, r.value.as_str()),
        (false, Some(FailureKind::Limit), "")
    );
    // 6 + 4 = 10: exactly at the budget.
    child.call("3", "t", "1234").await;
    assert_eq!(child.recv().await.value, "1234");
    assert_eq!(child.tally.bytes(), 10);
    child.call("4", "t", "1").await;
    assert_eq!(child.recv().await.kind, Some(FailureKind::Limit));
}

#[test]
fn deadline_clamp_takes_the_smaller_and_zero_means_none() {
    let ms = Duration::from_millis;
    let host = |max| ServerOptions {
        max_call_deadline: max,
        ..ServerOptions::default()
    };
    // Child shorter than the host maximum.
    assert_eq!(host(Some(ms(500))).deadline_for(100), Some(ms(100)));
    // Child longer.
    assert_eq!(host(Some(ms(500))).deadline_for(900), Some(ms(500)));
    // Child none.
    assert_eq!(host(Some(ms(500))).deadline_for(0), Some(ms(500)));
    // Host none: only the wish.
    assert_eq!(host(None).deadline_for(70), Some(ms(70)));
    assert_eq!(host(None).deadline_for(0), None);
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_never_returns_is_answered_transient_at_its_deadline_and_dropped() {
    let hang = Hang::default();
    let handler = hang.handler();
    let mut child = Child::spawn(
        ServerOptions {
            max_call_deadline: Some(Duration::from_secs(30)),
            ..options()
        },
        handler,
    );
    let start = tokio::time::Instant::now();
    let mut r = Request::new("1", "t", "");
    r.deadline_ms = 200;
    child.send(r).await;
    let answer = child.recv().await;
    assert_eq!(answer.kind, Some(FailureKind::Transient));
    assert!(answer.error.contains("200 ms"), "{}", answer.error);
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(hang.dropped(), 1, "the handler was cancelled");
}

#[tokio::test]
async fn cancel_drops_handlers_and_closes_the_connection() {
    let hang = Hang::default();
    let handler = hang.handler();
    let mut child = Child::spawn(options(), handler);
    for i in 0..5 {
        child.call(&i.to_string(), "t", "").await;
    }
    while hang.started() < 5 {
        tokio::task::yield_now().await;
    }
    child.cancel.cancel();
    assert_eq!(child.served.await.unwrap().unwrap(), Ending::Cancelled);
    assert_eq!(
        hang.dropped(),
        5,
        "every handler was dropped before serve returned"
    );
    assert!(
        child.from_server.read_frame().await.unwrap().is_none(),
        "child sees EOF"
    );
}

#[tokio::test]
async fn failure_kinds_from_handlers_reach_the_child() {
    let handler = |call: Call| async move {
        match call.tool.as_str() {
            "plain" => Err::<String, HandlerError>("disk on fire".into()),
            kind => Err(ToolFailure::new(kind.parse().unwrap(), format!("{kind} happened")).into()),
        }
    };
    let mut child = Child::spawn(options(), handler);
    for row in wire::FAILURE_KINDS {
        child.call(row.name, row.name, "").await;
    }
    child.call("plain", "plain", "").await;
    let mut got = HashMap::new();
    for _ in 0..=wire::FAILURE_KINDS.len() {
        let r = child.recv().await;
        got.insert(r.id.clone(), r);
    }
    for row in wire::FAILURE_KINDS {
        let r = &got[row.name];
        assert_eq!((r.ok, r.kind), (false, Some(row.kind)));
        assert_eq!(r.error, format!("{} happened", row.name));
    }
    assert_eq!(got["plain"].kind, Some(FailureKind::Unknown));
    assert_eq!(got["plain"].error, "disk on fire");
}

#[tokio::test]
async fn a_panicking_handler_still_gets_its_call_answered() {
    let handler = |call: Call| async move {
        if call.args == "boom" {
            panic!("handler bug");
        }
        Ok::<_, HandlerError>(call.args)
    };
    let mut child = Child::spawn(options(), handler);
    child.call("1", "t", "boom").await;
    let r = child.recv().await;
    assert_eq!((r.id.as_str(), r.kind), ("1", Some(FailureKind::Unknown)));
    child.call("2", "t", "fine").await;
    assert_eq!(child.recv().await.value, "fine");
}

#[tokio::test]
async fn closing_waits_for_calls_in_flight_then_ends() {
    let handler = |call: Call| async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok::<_, HandlerError>(call.args)
    };
    let mut child = Child::spawn(options(), handler);
    child.call("1", "t", "late").await;
    let (ending, mut from_server) = child.close().await;
    assert_eq!(ending.unwrap(), Ending::Closed);
    let payload = from_server.read_frame().await.unwrap().unwrap();
    assert_eq!(decode::<Response>(&payload).unwrap().value, "late");
    assert!(from_server.read_frame().await.unwrap().is_none());
}

/// A child that writes many Requests at once must not keep the server from
/// yielding to the executor: on a current-thread runtime the handlers (and
/// every other task, timers included) run only when it yields. Here the
/// stream is all in memory, so only the server's own yielding lets the
/// first calls finish and free their in-flight slots before the flood ends.
#[tokio::test(flavor = "current_thread")]
async fn a_flood_of_requests_does_not_starve_the_handlers_on_the_same_thread() {
    const N: usize = 2_000;
    let stream: Vec<u8> = (0..N)
        .flat_map(|i| encode(&Request::new(i.to_string(), "echo", "x")).unwrap())
        .collect();
    let max_in_flight = 4;
    let server = Server::new(
        ServerOptions {
            max_in_flight,
            ..options()
        },
        Arc::new(echo()),
    );
    let tally = server.tally();
    let (server_out, child_in) = tokio::io::duplex(1 << 24);
    let ending = server
        .serve(&stream[..], server_out, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(ending, Ending::Closed);
    let mut from_server = AsyncFrameReader::new(child_in);
    let mut ok = 0;
    for _ in 0..N {
        let payload = from_server.read_frame().await.unwrap().unwrap();
        let response: Response = decode(&payload).unwrap();
        ok += usize::from(response.ok);
    }
    assert_eq!(tally.calls() as usize, ok);
    assert!(
        ok > 2 * max_in_flight,
        "only {ok} of {N} calls were accepted: the server never let a finished call free its slot"
    );
}
