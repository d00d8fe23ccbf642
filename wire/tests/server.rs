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

/// A frame the child never finished (it was stopped while writing it) is
/// told apart from one it finished wrongly: the parent then asks how the
/// child ended before it calls the frame a violation.
#[tokio::test]
async fn a_frame_cut_short_is_told_apart_from_a_bad_one() {
    let frame = encode(&Request::new("1", "t", "")).unwrap();
    for cut in [2, 4, frame.len() - 1] {
        let mut child = Child::spawn(options(), echo());
        child.to_server.write_all(&frame[..cut]).await.unwrap();
        drop(child.to_server);
        let err = child.served.await.unwrap().unwrap_err();
        assert!(err.is_cut_short(), "{cut}: {err}");
    }
    let mut child = Child::spawn(options(), echo());
    child.call("", "t", "").await;
    let err = child.served.await.unwrap().unwrap_err();
    assert!(!err.is_cut_short(), "{err}");
    let mut child = Child::spawn(options(), echo());
    child.to_server.write_all(b"\0\0\0\x02{]").await.unwrap();
    let err = child.served.await.unwrap().unwrap_err();
    assert!(!err.is_cut_short(), "{err}");
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
    // Named as the child's own, the shortest of the three.
    assert_eq!(answer.error, "the call's deadline of 200 ms passed");
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(hang.dropped(), 1, "the handler was cancelled");
}

#[tokio::test]
async fn cancel_drops_handlers_and_closes_the_connection() {
    let hang = Hang::default();
    let handler = hang.handler();
    let mut child = Child::spawn(options(), handler);
    for i in 0..5 {
        let tool = if i == 0 { "first" } else { "t" };
        child.call(&i.to_string(), tool, "").await;
    }
    while hang.started() < 5 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        child.tally.unfinished(),
        None,
        "said only once serving stops"
    );
    child.cancel.cancel();
    assert_eq!(child.served.await.unwrap().unwrap(), Ending::Cancelled);
    // What the server was still waiting on, longest-running first.
    let unfinished = child.tally.unfinished().expect("said once serving stopped");
    let tools: Vec<&str> = unfinished.iter().map(|u| u.tool.as_str()).collect();
    assert_eq!(tools, ["first", "t", "t", "t", "t"]);
    assert!(unfinished.is_sorted_by(|a, b| a.running_for >= b.running_for));
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
    let tally = child.tally.clone();
    let (ending, mut from_server) = child.close().await;
    assert_eq!(ending.unwrap(), Ending::Closed);
    assert_eq!(tally.unfinished(), Some(vec![]), "every call was answered");
    let payload = from_server.read_frame().await.unwrap().unwrap();
    assert_eq!(decode::<Response>(&payload).unwrap().value, "late");
    assert!(from_server.read_frame().await.unwrap().is_none());
}

/// A child that writes many Requests at once must not keep the server from
/// yielding to the executor: on a current-thread runtime the handlers (and
/// every other task, timers included) run only when it yields. Here the
/// stream is all in memory, so only the server's own yielding lets the
/// first calls finish and free their in-flight slots before the flood ends.
///
/// A handler that is ready at once is answered inline and never holds a
/// slot, so it would pass with or without the yield; the handler that
/// awaits once is the one that needs the server to yield.
#[tokio::test(flavor = "current_thread")]
async fn a_flood_of_requests_does_not_starve_the_handlers_on_the_same_thread() {
    let awaits_once = |call: Call| async move {
        tokio::task::yield_now().await;
        Ok::<_, HandlerError>(call.args)
    };
    // Without the server's yield only the first 4 get a slot; with it, each
    // yield lets the 4 finish, so every batch of frames gets 4 more.
    let (ok, n) = flood(awaits_once).await;
    assert!(
        ok > 8,
        "only {ok} of {n} calls were accepted: the server never let a finished call free its slot"
    );
    let (ok, n) = flood(echo()).await;
    assert_eq!(ok, n, "a handler that is ready at once never takes a slot");
}

/// Serves 2,000 Requests written at once with an in-flight cap of 4; returns
/// how many were answered `ok`, and how many were sent.
async fn flood<H: wire::Handler>(handler: H) -> (usize, usize) {
    const N: usize = 2_000;
    let stream: Vec<u8> = (0..N)
        .flat_map(|i| encode(&Request::new(i.to_string(), "echo", "x")).unwrap())
        .collect();
    let server = Server::new(
        ServerOptions {
            max_in_flight: 4,
            ..options()
        },
        Arc::new(handler),
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
    (ok, N)
}

/// A handler that is not ready at its first poll goes on in serve's own
/// task, beside the others that wait: no task is spawned for it (a spawn
/// woke another worker of a multi-threaded runtime, which took the handler,
/// and its answer came back across threads), and the waiting handlers still
/// run at once, each answered when it is done.
#[tokio::test(flavor = "current_thread")]
async fn handlers_that_wait_run_at_once_in_the_servers_own_task() {
    let go = Arc::new(Notify::new());
    let waiting = Arc::new(AtomicUsize::new(0));
    let handler = {
        let (go, waiting) = (go.clone(), waiting.clone());
        move |call: Call| {
            let (go, waiting) = (go.clone(), waiting.clone());
            async move {
                let released = go.notified();
                waiting.fetch_add(1, Ordering::SeqCst);
                released.await;
                Ok::<_, HandlerError>(call.args)
            }
        }
    };
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let mut child = Child::spawn(options(), handler);
    for id in ["1", "2", "3"] {
        child.call(id, "t", id).await;
    }
    while waiting.load(Ordering::SeqCst) < 3 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        metrics.num_alive_tasks(),
        before + 1,
        "three waiting handlers took tasks of their own beside serve's"
    );
    assert_eq!(child.tally.in_flight(), 3);
    go.notify_waiters();
    let mut answered: Vec<String> = Vec::new();
    for _ in 0..3 {
        answered.push(child.recv().await.value);
    }
    answered.sort();
    assert_eq!(answered, ["1", "2", "3"]);
    assert_eq!(child.tally.in_flight(), 0);
}

#[tokio::test]
async fn a_handler_that_panics_after_its_first_poll_is_answered_unknown() {
    let handler = |call: Call| async move {
        tokio::task::yield_now().await;
        if call.args == "boom" {
            panic!("handler bug after an await");
        }
        Ok::<_, HandlerError>(call.args)
    };
    let mut child = Child::spawn(options(), handler);
    child.call("1", "t", "boom").await;
    let r = child.recv().await;
    assert_eq!(
        (r.id.as_str(), r.ok, r.kind),
        ("1", false, Some(FailureKind::Unknown))
    );
    assert!(r.error.contains("panicked"), "{}", r.error);
    child.call("2", "t", "fine").await;
    assert_eq!(child.recv().await.value, "fine");
}

#[tokio::test]
async fn a_handler_whose_drop_panics_does_not_take_the_server_down() {
    // A value held across an await that panics when dropped (a nested
    // runtime dropped in async code does): the drop when serve ends
    // unwound out of serve, and so out of the whole execution.
    struct PanicsOnDrop;
    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("panic in drop");
        }
    }
    let handler = |_call: Call| async move {
        let _held = PanicsOnDrop;
        std::future::pending::<()>().await;
        Ok::<_, HandlerError>(String::new())
    };
    let mut child = Child::spawn(options(), handler);
    child.call("1", "t", "x").await;
    // The call is running once the tally counts it.
    while child.tally.in_flight() == 0 {
        tokio::task::yield_now().await;
    }
    child.cancel.cancel();
    let (ended, _) = child.close().await;
    assert!(ended.is_ok(), "{ended:?}");
}

#[tokio::test]
async fn args_that_do_not_fit_what_the_parent_holds_are_refused_at_once() {
    let hang = Hang::default();
    let mut child = Child::spawn(
        ServerOptions {
            max_held: 100,
            ..options()
        },
        hang.handler(),
    );
    // 60 bytes held while the first handler runs (forever)...
    child.call("1", "t", &"a".repeat(60)).await;
    // ... so 60 more do not fit: answered at once, and the handler never runs.
    child.call("2", "t", &"b".repeat(60)).await;
    let r = child.recv().await;
    assert_eq!((r.id.as_str(), r.kind), ("2", Some(FailureKind::Limit)));
    assert!(
        r.error.contains("args of 60 bytes cannot be held"),
        "{}",
        r.error
    );
    assert!(r.error.contains("60 of its 100 bytes"), "{}", r.error);
    assert_eq!((hang.started(), child.tally.calls()), (1, 1));
    // 40 still fit.
    child.call("3", "t", &"c".repeat(40)).await;
    while hang.started() < 2 {
        tokio::task::yield_now().await;
    }
    child.cancel.cancel();
}

#[tokio::test]
async fn a_value_that_does_not_fit_what_the_parent_holds_is_answered_limit() {
    let handler = |call: Call| async move { Ok::<_, HandlerError>(call.args.repeat(200)) };
    let mut child = Child::spawn(
        ServerOptions {
            max_held: 100,
            ..options()
        },
        handler,
    );
    child.call("1", "t", "x").await;
    let r = child.recv().await;
    assert_eq!(r.kind, Some(FailureKind::Limit));
    assert!(
        r.error.contains("value of 200 bytes cannot be held"),
        "{}",
        r.error
    );
    // Nothing was delivered, so nothing is counted; a smaller value passes.
    assert_eq!(child.tally.bytes(), 0);
    child.call("2", "t", "").await;
    assert!(child.recv().await.ok);
}

#[tokio::test]
async fn a_refused_value_spends_none_of_the_byte_quota() {
    // 10 MiB of quotes escape to 20 MiB: too big for a frame, so refused.
    let handler = |call: Call| async move {
        Ok::<_, HandlerError>(match call.args.as_str() {
            "quotes" => "\"".repeat(10 << 20),
            _ => "x".repeat(10 << 20),
        })
    };
    let mut child = Child::spawn(
        ServerOptions {
            max_bytes: 12 << 20,
            ..options()
        },
        handler,
    );
    child.call("1", "t", "quotes").await;
    let r = child.recv().await;
    assert_eq!(r.kind, Some(FailureKind::Limit));
    assert!(r.error.contains("does not fit in a frame"), "{}", r.error);
    // Had the refused value been counted, 10 + 10 MiB would be over 12 MiB.
    child.call("2", "t", "plain").await;
    let r = child.recv().await;
    assert!(r.ok, "{}", r.error);
    assert_eq!(child.tally.bytes(), 10 << 20);
}

/// The documented point at which the server stops reading from a child that
/// does not read its answers (`wire::MAX_UNWRITTEN_BYTES`), written out so
/// that the tests pin the number rather than follow the constant.
const UNWRITTEN_PAUSE: usize = 16 << 20;

#[test]
fn the_unwritten_pause_is_the_documented_one() {
    assert_eq!(wire::MAX_UNWRITTEN_BYTES, UNWRITTEN_PAUSE);
}

/// An AsyncWrite that never takes a byte: a child that never reads.
struct NeverReads;

impl tokio::io::AsyncWrite for NeverReads {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Pending
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Pending
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Pending
    }
}

/// Serves `requests` to a child that never reads, until the server has
/// nothing left it can do (a paused clock only moves when every task is
/// idle, so the sleep returns exactly then); returns the server's counts and
/// holdings at that point.
async fn serve_to_a_child_that_never_reads<H: wire::Handler>(
    options: ServerOptions,
    handler: H,
    requests: Vec<u8>,
) -> (Arc<Tally>, wire::Holdings) {
    let server = Server::new(options, Arc::new(handler));
    let (tally, holdings) = (server.tally(), server.holdings());
    let cancel = CancellationToken::new();
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(server.serve(server_in, NeverReads, cancel.clone()));
    tokio::spawn(async move {
        let _ = to_server.write_all(&requests).await;
        std::future::pending::<()>().await;
        drop(to_server);
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    cancel.cancel();
    assert!(matches!(served.await.unwrap(), Ok(Ending::Cancelled)));
    (tally, holdings)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn bytes_count_only_what_was_written_to_the_child() {
    let requests: Vec<u8> = (0..4)
        .flat_map(|i| encode(&Request::new(i.to_string(), "t", "hello")).unwrap())
        .collect();
    let (tally, _) = serve_to_a_child_that_never_reads(options(), echo(), requests).await;
    assert_eq!(tally.calls(), 4, "the calls were accepted");
    assert_eq!(
        tally.bytes(),
        0,
        "but none of their values reached the child"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_child_that_never_reads_its_answers_is_no_longer_read() {
    // Each answer is 1 MiB. Without the pause the server would read all 64
    // Requests and queue 64 MiB for a child that reads nothing.
    const N: usize = 64;
    let big = |_call: Call| async move { Ok::<_, HandlerError>("v".repeat(1 << 20)) };
    let requests: Vec<u8> = (0..N)
        .flat_map(|i| encode(&Request::new(i.to_string(), "t", "")).unwrap())
        .collect();
    let options = ServerOptions {
        max_held: usize::MAX,
        ..options()
    };
    let (tally, holdings) = serve_to_a_child_that_never_reads(options, big, requests).await;
    let most = UNWRITTEN_PAUSE / (1 << 20) + 2;
    assert!(
        (tally.calls() as usize) <= most,
        "{} of {N} Requests were read from a child that reads nothing (at most {most} expected)",
        tally.calls()
    );
    assert!(
        holdings.peak() <= UNWRITTEN_PAUSE + (2 << 20),
        "{holdings:?}"
    );
}

/// The pause starts only when *more* than `UNWRITTEN_PAUSE` bytes wait: an
/// answer of exactly that size, unread, still lets the next Request in; one
/// byte more does not.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn reading_pauses_only_past_the_unwritten_bound() {
    // Each call's args say how many bytes its value's whole frame has.
    let sized = |call: Call| async move {
        let frame: usize = call.args.parse().unwrap();
        let overhead = encode(&Response::success(call.id.as_str(), "v"))
            .unwrap()
            .len()
            - 1;
        Ok::<_, HandlerError>("v".repeat(frame - overhead))
    };
    let options = ServerOptions {
        max_held: usize::MAX,
        ..options()
    };
    for (first, read_on) in [(UNWRITTEN_PAUSE, true), (UNWRITTEN_PAUSE + 1, false)] {
        let requests: Vec<u8> = [("1", first.to_string()), ("2", "100".to_string())]
            .iter()
            .flat_map(|(id, args)| encode(&Request::new(*id, "t", args.as_str())).unwrap())
            .collect();
        let (tally, holdings) = serve_to_a_child_that_never_reads(options, sized, requests).await;
        let expected = if read_on { 2 } else { 1 };
        assert_eq!(
            tally.calls(),
            expected,
            "a first answer of {first} bytes unwritten; {holdings:?}"
        );
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_flood_of_failures_to_a_child_that_never_reads_is_bounded_too() {
    // Every Request is refused at once (no in-flight slot): small answers,
    // but a child that never reads must not make the parent queue them all.
    const N: usize = 400_000;
    let requests: Vec<u8> = (0..N)
        .flat_map(|i| encode(&Request::new(i.to_string(), "t", "")).unwrap())
        .collect();
    let options = ServerOptions {
        max_in_flight: 0,
        ..options()
    };
    let (_, holdings) = serve_to_a_child_that_never_reads(options, echo(), requests).await;
    assert!(
        holdings.peak() <= UNWRITTEN_PAUSE + (64 << 10),
        "{holdings:?}"
    );
}

#[tokio::test]
async fn a_tool_error_text_is_cut_to_the_cap() {
    let handler = |_call: Call| async move {
        Err::<String, HandlerError>(
            ToolFailure::new(FailureKind::Invalid, "e".repeat(5_000_000)).into(),
        )
    };
    let mut child = Child::spawn(options(), handler);
    child.call("1", "t", "").await;
    let r = child.recv().await;
    assert_eq!(r.kind, Some(FailureKind::Invalid));
    assert!(
        r.error.len() <= wire::MAX_ERROR_BYTES + 64,
        "{}",
        r.error.len()
    );
    assert!(
        r.error.ends_with("more bytes cut]"),
        "{}",
        &r.error[r.error.len() - 40..]
    );
}

#[tokio::test]
async fn an_overlong_id_is_a_protocol_violation() {
    let mut child = Child::spawn(options(), echo());
    child
        .call(&"i".repeat(wire::MAX_ID_BYTES + 1), "t", "")
        .await;
    let ending = child.served.await.unwrap();
    assert!(
        matches!(ending, Err(ProtocolError::IdTooLong { len, .. }) if len == wire::MAX_ID_BYTES + 1)
    );
}

#[tokio::test]
async fn a_value_too_large_for_a_frame_is_answered_even_with_the_longest_id() {
    let handler = |_call: Call| async move { Ok::<_, HandlerError>("v".repeat(17 << 20)) };
    let mut child = Child::spawn(options(), handler);
    let id = "i".repeat(wire::MAX_ID_BYTES);
    child.call(&id, "t", "").await;
    let r = child.recv().await;
    assert_eq!((r.id, r.kind), (id, Some(FailureKind::Limit)));
    assert!(r.error.contains("does not fit in a frame"), "{}", r.error);
}

#[tokio::test(start_paused = true)]
async fn no_call_is_accepted_once_the_wall_clock_has_run_out() {
    let called = Arc::new(AtomicUsize::new(0));
    let counting = called.clone();
    let handler = move |call: Call| {
        counting.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, HandlerError>(call.args) }
    };
    let mut child = Child::spawn(
        ServerOptions {
            accept_until: Some(tokio::time::Instant::now() + Duration::from_secs(1)),
            ..options()
        },
        handler,
    );
    child.call("1", "t", "in time").await;
    assert!(child.recv().await.ok);
    tokio::time::advance(Duration::from_secs(1)).await;
    child.call("2", "t", "too late").await;
    let r = child.recv().await;
    assert_eq!(r.kind, Some(FailureKind::Limit));
    assert!(r.error.contains("wall clock ran out"), "{}", r.error);
    assert_eq!((called.load(Ordering::SeqCst), child.tally.calls()), (1, 1));
}

/// A child that breaks the protocol ends the connection at once, even with
/// answers queued that it never reads: they are dropped, not written first
/// (a writer waiting on a child that reads nothing would hold serve for
/// ever; no cancel comes here).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_violation_ends_the_connection_without_writing_what_is_queued() {
    let server = Server::new(options(), Arc::new(echo()));
    let tally = server.tally();
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(server.serve(server_in, NeverReads, CancellationToken::new()));
    let mut requests = encode(&Request::new("1", "t", "queued")).unwrap();
    requests.extend(encode(&Request::new("", "t", "no id")).unwrap());
    to_server.write_all(&requests).await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(3600), served)
        .await
        .expect("serve returned without a cancel")
        .unwrap();
    assert!(ended.is_err(), "{ended:?}");
    assert_eq!(tally.calls(), 1, "the first call was accepted");
    assert_eq!(tally.bytes(), 0, "and its answer never written");
    drop(to_server);
}

#[tokio::test]
async fn a_drain_reads_what_the_child_wrote_and_does_not_wait_for_handlers() {
    // The Result comes on the start channel, so the parent learns the
    // program ended while the Requests the child wrote just before it may
    // still sit in the call channel. Cut by a cancel there, they were lost:
    // a call made and not awaited went uncounted. A drain reads them first.
    let requests: Vec<u8> = [("1", "hang"), ("2", "t"), ("3", "t")]
        .into_iter()
        .flat_map(|(id, tool)| encode(&Request::new(id, tool, "")).unwrap())
        .collect();
    for drain in [true, false] {
        let hang = Hang::default();
        let (mut child_out, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, _child_in) = tokio::io::duplex(1 << 20);
        child_out.write_all(&requests).await.unwrap();
        let draining = CancellationToken::new();
        let server = Server::new(options(), Arc::new(hang.handler())).drain_on(draining.clone());
        let tally = server.tally();
        let cancel = CancellationToken::new();
        // Fired before the server's first poll: the worst case, a Result
        // read in the same turn as the child wrote its last Requests.
        if drain {
            draining.cancel();
        } else {
            cancel.cancel();
        }
        let served = tokio::spawn(server.serve(server_in, server_out, cancel));
        if drain {
            // It reads on to the end of the child's side, which the
            // child's exit makes.
            while hang.started() < 3 {
                tokio::task::yield_now().await;
            }
            assert!(
                !served.is_finished(),
                "it stopped before the child's side ended"
            );
            drop(child_out);
            assert_eq!(served.await.unwrap().unwrap(), Ending::Drained);
            assert_eq!(tally.calls(), 3);
            // Nothing waited for the handlers: each was dropped.
            assert_eq!(hang.dropped(), 3);
            let unfinished = tally.unfinished().unwrap();
            assert_eq!(unfinished.len(), 3);
        } else {
            assert_eq!(served.await.unwrap().unwrap(), Ending::Cancelled);
            assert_eq!(tally.calls(), 0, "a cancel reads nothing more");
        }
    }
}
