//! Client, Runner and Starter, alone and against the Server.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use wire::{
    Call, Client, ClientError, FailureKind, FrameError, HandlerError, ProtocolError, Response,
    Result as ResultMsg, Runner, RunnerError, Server, ServerOptions, Start, StartBudget, Starter,
    StarterError, decode, encode,
};

fn frames(responses: &[Response]) -> Vec<u8> {
    responses.iter().flat_map(|r| encode(r).unwrap()).collect()
}

fn start_msg() -> Start {
    Start {
        v: 1,
        program: "return 1".into(),
        bindings: vec![],
        budget: StartBudget::default(),
        max_inflight: None,
        withdraw: false,
        places: vec![],
        result_id: "r-7".into(),
    }
}

#[test]
fn client_matches_out_of_order_responses_by_id() {
    let input = frames(&[
        Response::success("3", "c"),
        Response::failure("1", FailureKind::NotFound, "no such tool"),
        Response::success("2", "b"),
    ]);
    let mut sent = Vec::new();
    let mut client = Client::new(&input[..], &mut sent);
    let ids: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|t| client.send(t, "{}", 0).unwrap())
        .collect();
    assert_eq!(ids, ["1", "2", "3"]);
    assert_eq!(
        client.in_flight(),
        3,
        "all three are out before any answer is read"
    );
    let replies: Vec<_> = (0..3).map(|_| client.recv().unwrap()).collect();
    assert_eq!(replies[0].outcome, Ok("c".to_string()));
    assert_eq!(replies[0].id, "3");
    assert_eq!(
        replies[1].outcome,
        Err(wire::ToolFailure::new(
            FailureKind::NotFound,
            "no such tool"
        ))
    );
    assert_eq!(replies[2].id, "2");
    assert_eq!((client.calls(), client.bytes()), (3, 2));
    assert!(matches!(client.recv(), Err(ClientError::Idle)));
    drop(client);
    // Three whole Request frames went out.
    let mut r = wire::FrameReader::new(&sent[..]);
    let mut tools = Vec::new();
    while let Some(p) = r.read_frame().unwrap() {
        tools.push(decode::<wire::Request>(&p).unwrap().tool);
    }
    assert_eq!(tools, ["a", "b", "c"]);
}

#[test]
fn client_refuses_a_response_for_an_unknown_id() {
    let input = frames(&[Response::success("99", "x")]);
    let mut client = Client::new(&input[..], std::io::sink());
    client.send("t", "", 0).unwrap();
    assert!(matches!(
        client.recv(),
        Err(ClientError::Protocol(ProtocolError::UnknownId(id))) if id == "99"
    ));
}

/// What a client with call "1" in flight makes of one Response `payload`.
fn receive_one(payload: &[u8]) -> Result<wire::Reply, ClientError> {
    let mut framed = (payload.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(payload);
    let mut client = Client::new(&framed[..], std::io::sink());
    client.send("t", "", 0).unwrap();
    client.recv()
}

#[test]
fn client_refuses_a_failed_response_without_a_kind() {
    assert!(matches!(
        receive_one(br#"{"v":1,"id":"1","ok":false,"error":"x"}"#),
        Err(ClientError::Protocol(ProtocolError::MissingKind { .. }))
    ));
}

#[test]
fn client_refuses_a_successful_response_with_a_kind() {
    assert!(matches!(
        receive_one(br#"{"v":1,"id":"1","ok":true,"value":"1","kind":"limit"}"#),
        Err(ClientError::Protocol(ProtocolError::KindOnSuccess { .. }))
    ));
}

#[test]
fn eof_fails_every_call_in_flight_then_closes() {
    let input = frames(&[Response::success("2", "ok")]);
    let mut client = Client::new(&input[..], std::io::sink());
    for _ in 0..4 {
        client.send("t", "", 0).unwrap();
    }
    assert_eq!(client.recv().unwrap().outcome, Ok("ok".into()));
    let mut failed = Vec::new();
    for _ in 0..3 {
        let reply = client.recv().unwrap();
        let err = reply.outcome.unwrap_err();
        assert_eq!(err.kind, FailureKind::Cancelled);
        failed.push(reply.id);
    }
    assert_eq!(failed, ["1", "3", "4"]);
    assert!(matches!(client.recv(), Err(ClientError::Closed)));
    // A call made after the close fails the same way instead of hanging.
    let id = client.send("t", "", 0).unwrap();
    assert_eq!(client.recv().unwrap().id, id);
}

#[test]
fn a_version_mismatch_in_a_response_is_loud() {
    let input = br#"{"v":3,"id":"1","ok":true}"#;
    let mut framed = (input.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(input);
    let mut client = Client::new(&framed[..], std::io::sink());
    client.send("t", "", 0).unwrap();
    match client.recv() {
        Err(ClientError::Protocol(e)) => {
            assert!(e.is_version_mismatch());
            assert!(e.to_string().contains("version 3") && e.to_string().contains("version 1"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn runner_takes_one_start_and_sends_one_result() {
    let input = encode(&start_msg()).unwrap();
    let mut out = Vec::new();
    let mut runner = Runner::new(&input[..], &mut out);
    let start = runner.start().unwrap();
    assert_eq!(start, start_msg());
    assert!(matches!(runner.start(), Err(RunnerError::AlreadyStarted)));
    runner.finish(&ResultMsg::success("r-7", "1")).unwrap();
    let mut r = wire::FrameReader::new(&out[..]);
    let result: ResultMsg = decode(&r.read_frame().unwrap().unwrap()).unwrap();
    assert_eq!(result.value, "1");
    assert!(r.read_frame().unwrap().is_none(), "exactly one Result");
}

#[test]
fn runner_reports_a_closed_start_channel_and_a_bad_version() {
    let mut runner = Runner::new(&[][..], std::io::sink());
    assert!(matches!(runner.start(), Err(RunnerError::NoStart)));
    let mut start = start_msg();
    start.v = 2;
    let input = encode(&start).unwrap();
    let mut runner = Runner::new(&input[..], std::io::sink());
    // The Start names its result_id: the refusal is answered, as a
    // protocol error (no kind) naming both versions.
    match runner.start() {
        Err(RunnerError::Refused {
            kind: None, why, ..
        }) => assert!(why.contains("protocol version 2"), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// A Start with half a surrogate pair in a string is malformed (the
/// protocol refuses such an escape), but its `result_id` is read and the
/// refusal answered, saying why: it went unanswered.
#[test]
fn runner_answers_a_start_with_half_a_surrogate_pair_saying_why() {
    let payload = br#"{"v":1,"result_id":"R1","program":"return \"\ud800\".length"}"#;
    let mut input = (payload.len() as u32).to_be_bytes().to_vec();
    input.extend_from_slice(payload);
    let mut runner = Runner::new(&input[..], std::io::sink());
    match runner.start() {
        Err(RunnerError::Refused {
            result_id,
            kind: Some(wire::FailureKind::Invalid),
            why,
        }) => {
            assert_eq!(result_id, "R1");
            assert!(why.contains("half of a surrogate pair"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // One in the result_id itself names no id the parent sent.
    let payload = br#"{"v":1,"result_id":"R\ud800","program":"1"}"#;
    let mut input = (payload.len() as u32).to_be_bytes().to_vec();
    input.extend_from_slice(payload);
    let mut runner = Runner::new(&input[..], std::io::sink());
    assert!(
        matches!(runner.start(), Err(RunnerError::Protocol(_))),
        "no answer to an id that cannot be told"
    );
}

/// A child's start channel that never answers: a socket pair whose far end
/// is held open and silent.
fn silent_child() -> (tokio::net::UnixStream, UnixStream) {
    let (ours, theirs) = UnixStream::pair().unwrap();
    ours.set_nonblocking(true).unwrap();
    (tokio::net::UnixStream::from_std(ours).unwrap(), theirs)
}

#[tokio::test]
async fn starter_returns_on_timeout_against_a_silent_child() {
    let (ours, _theirs) = silent_child();
    let (r, w) = ours.into_split();
    let t = std::time::Instant::now();
    let err = Starter::new(r, w)
        .start(
            &start_msg(),
            &CancellationToken::new(),
            Some(Duration::from_millis(50)),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StarterError::TimedOut(d) if d == Duration::from_millis(50)));
    assert!(t.elapsed() >= Duration::from_millis(50));
}

#[tokio::test]
async fn starter_returns_on_cancel_and_closes_its_connection() {
    let (ours, mut theirs) = silent_child();
    let (r, w) = ours.into_split();
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        c.cancel();
    });
    let err = Starter::new(r, w)
        .start(&start_msg(), &cancel, None)
        .await
        .unwrap_err();
    assert!(matches!(err, StarterError::Cancelled));
    canceller.await.unwrap();
    // The child got the Start, then EOF: the connection was closed.
    let mut seen = Vec::new();
    theirs.read_to_end(&mut seen).unwrap();
    assert_eq!(seen, encode(&start_msg()).unwrap());
}

#[tokio::test]
async fn starter_refuses_a_result_for_another_start() {
    let (ours, mut theirs) = silent_child();
    let (r, w) = ours.into_split();
    theirs
        .write_all(&encode(&ResultMsg::success("someone-else", "1")).unwrap())
        .unwrap();
    let err = Starter::new(r, w)
        .start(&start_msg(), &CancellationToken::new(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StarterError::Protocol(ProtocolError::ResultIdMismatch { .. })
        ),
        "{err}"
    );
}

#[test]
fn a_result_is_checked_before_the_parent_passes_it_on() {
    use wire::{FailureKind, check_result};
    let id = "r1";
    // A success with a kind, or with a value that is not JSON, is the
    // child's protocol violation; the parent does not pass it on.
    let mut kinded = ResultMsg::success(id, "1");
    kinded.kind = Some(FailureKind::Limit);
    assert!(matches!(
        check_result(kinded, id),
        Err(ProtocolError::KindOnSuccess { .. })
    ));
    for value in ["not json", "", "{\"a\":"] {
        assert!(
            matches!(
                check_result(ResultMsg::success(id, value), id),
                Err(ProtocolError::ValueNotJson { .. })
            ),
            "{value:?}"
        );
    }
    // No value at all says so, not "EOF while parsing".
    let error = check_result(ResultMsg::success(id, ""), id).unwrap_err();
    assert!(error.to_string().contains("it has none"), "{error}");
    assert!(check_result(ResultMsg::success(id, " [1, {\"a\": null}] "), id).is_ok());
    // A failure needs a kind, or a text that says what broke the protocol;
    // either alone is enough, neither is a violation.
    let kinded_without_text = ResultMsg::failure(id, FailureKind::Limit, "");
    assert_eq!(
        check_result(kinded_without_text.clone(), id).unwrap(),
        kinded_without_text
    );
    let protocol = ResultMsg::protocol_error(id, "bad frame from the parent");
    assert_eq!(check_result(protocol.clone(), id).unwrap(), protocol);
    assert!(matches!(
        check_result(ResultMsg::protocol_error(id, ""), id),
        Err(ProtocolError::MissingKind { .. })
    ));
    // A huge error text is cut, not refused.
    let huge = ResultMsg::failure(id, FailureKind::Invalid, "e".repeat(15 << 20));
    let cut = check_result(huge, id).unwrap();
    assert!(cut.error.len() <= wire::MAX_ERROR_BYTES + 64);
    assert!(cut.error.ends_with("more bytes cut]"));
}

#[tokio::test]
async fn starter_reports_a_child_that_closes_without_a_result() {
    let (ours, theirs) = silent_child();
    drop(theirs);
    let (r, w) = ours.into_split();
    let err = Starter::new(r, w)
        .start(&start_msg(), &CancellationToken::new(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StarterError::NoResult | StarterError::Send(_)),
        "{err}"
    );
}

/// The whole call channel: a blocking Client in a thread against the Server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_calls_are_in_flight_fails_every_call_in_the_client() {
    let (server_side, client_side) = UnixStream::pair().unwrap();
    server_side.set_nonblocking(true).unwrap();
    let (r, w) = tokio::net::UnixStream::from_std(server_side)
        .unwrap()
        .into_split();
    let started = Arc::new(tokio::sync::Semaphore::new(0));
    let s = started.clone();
    let handler = move |call: Call| {
        let s = s.clone();
        async move {
            if call.tool == "fast" {
                return Ok::<_, HandlerError>("quick".into());
            }
            s.add_permits(1);
            std::future::pending::<()>().await;
            Ok(String::new())
        }
    };
    let server = Server::new(ServerOptions::default(), Arc::new(handler));
    let cancel = CancellationToken::new();
    let serving = tokio::spawn(server.serve(r, w, cancel.clone()));
    let mut child = tokio::task::spawn_blocking(move || {
        let mut client = Client::new(client_side.try_clone().unwrap(), client_side);
        // One call answered before the cancel (waited for here: nothing else
        // orders its Response before the cancel, which drops what is queued)...
        client.send("fast", "", 0).unwrap();
        let mut outcomes = vec![client.recv().unwrap()];
        // ...and five in flight when it comes.
        for _ in 0..5 {
            client.send("slow", "", 0).unwrap();
        }
        loop {
            match client.recv() {
                Ok(reply) => outcomes.push(reply),
                Err(ClientError::Closed) => return outcomes,
                Err(e) => panic!("{e}"),
            }
        }
    });
    // A client that ends (or panics) before its five calls are in flight
    // fails the test here rather than leaving it waiting for them.
    tokio::select! {
        all_started = started.acquire_many(5) => drop(all_started.unwrap()),
        ended = &mut child => panic!("the client ended before its calls were in flight: {ended:?}"),
    }
    cancel.cancel();
    assert_eq!(serving.await.unwrap().unwrap(), wire::Ending::Cancelled);
    let outcomes = child.await.unwrap();
    assert_eq!(outcomes.len(), 6);
    assert_eq!(outcomes[0].outcome, Ok("quick".into()));
    for reply in &outcomes[1..] {
        assert_eq!(
            reply.outcome.as_ref().unwrap_err().kind,
            FailureKind::Cancelled
        );
    }
}

/// A writer whose bytes the test can read while a client owns it.
#[derive(Clone, Default)]
struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Shared {
    /// The ids of the Requests written so far, in order.
    fn ids(&self) -> Vec<String> {
        let bytes = self.0.borrow().clone();
        let mut reader = wire::FrameReader::new(&bytes[..]);
        let mut ids = Vec::new();
        while let Some(payload) = reader.read_frame().unwrap() {
            ids.push(decode::<wire::Request>(&payload).unwrap().id);
        }
        ids
    }
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_paced_client_keeps_its_cap_on_the_wire_and_sends_the_rest_in_order_as_slots_free() {
    let input = frames(&[
        Response::success("2", "b"),
        Response::success("1", "a"),
        Response::success("3", "c"),
        Response::success("4", "d"),
        Response::success("5", "e"),
    ]);
    let written = Shared::default();
    let mut client = Client::paced(&input[..], written.clone(), 2);
    for _ in 0..5 {
        client.send("t", "", 0).unwrap();
    }
    assert_eq!(written.ids(), ["1", "2"], "two on the wire, three waiting");
    assert_eq!((client.in_flight(), client.calls()), (5, 2));
    assert_eq!(client.recv().unwrap().id, "2");
    assert_eq!(
        written.ids(),
        ["1", "2", "3"],
        "the freed slot goes to the oldest waiting call"
    );
    assert_eq!(client.recv().unwrap().id, "1");
    assert_eq!(written.ids(), ["1", "2", "3", "4"]);
    for want in ["3", "4", "5"] {
        assert_eq!(client.recv().unwrap().id, want);
    }
    assert_eq!(written.ids(), ["1", "2", "3", "4", "5"]);
    assert_eq!((client.in_flight(), client.calls()), (0, 5));
    assert!(matches!(client.recv(), Err(ClientError::Idle)));
}

#[test]
fn eof_fails_the_calls_still_waiting_for_a_slot_too() {
    let input = frames(&[Response::success("1", "a")]);
    let written = Shared::default();
    let mut client = Client::paced(&input[..], written.clone(), 1);
    for _ in 0..3 {
        client.send("t", "", 0).unwrap();
    }
    assert_eq!(client.recv().unwrap().outcome, Ok("a".into()));
    let mut failed = Vec::new();
    loop {
        match client.recv() {
            Ok(reply) => {
                assert_eq!(reply.outcome.unwrap_err().kind, FailureKind::Cancelled);
                failed.push(reply.id);
            }
            Err(ClientError::Closed) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(failed, ["2", "3"]);
}

#[test]
fn the_default_client_paces_to_the_default_cap() {
    let written = Shared::default();
    let mut client = Client::new(&[][..], written.clone());
    for _ in 0..wire::DEFAULT_MAX_INFLIGHT + 3 {
        client.send("t", "", 0).unwrap();
    }
    assert_eq!(written.ids().len(), wire::DEFAULT_MAX_INFLIGHT);
    assert_eq!(client.in_flight(), wire::DEFAULT_MAX_INFLIGHT + 3);
}

/// A paced Client against a Server with the same cap: a hundred calls at
/// once, none refused, and the handler never sees more than the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_paced_to_the_servers_cap_is_never_refused() {
    const CAP: usize = 3;
    let (server_side, client_side) = UnixStream::pair().unwrap();
    server_side.set_nonblocking(true).unwrap();
    let (r, w) = tokio::net::UnixStream::from_std(server_side)
        .unwrap()
        .into_split();
    let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (run, top) = (running.clone(), most.clone());
    let handler = move |call: Call| {
        let (run, top) = (run.clone(), top.clone());
        async move {
            let now = run.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            top.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
            // Pending once, so that the call is in flight, not answered inline.
            tokio::time::sleep(Duration::from_millis(2)).await;
            run.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            Ok::<_, HandlerError>(call.args)
        }
    };
    let options = ServerOptions {
        max_in_flight: CAP,
        ..ServerOptions::default()
    };
    let server = Server::new(options, Arc::new(handler));
    let tally = server.tally();
    let serving = tokio::spawn(server.serve(r, w, CancellationToken::new()));
    let outcomes = tokio::task::spawn_blocking(move || {
        let mut client = Client::paced(client_side.try_clone().unwrap(), &client_side, CAP);
        for i in 0..100 {
            client.send("echo", &i.to_string(), 0).unwrap();
        }
        let outcomes: Vec<_> = (0..100).map(|_| client.recv().unwrap().outcome).collect();
        client_side.shutdown(std::net::Shutdown::Write).unwrap();
        outcomes
    })
    .await
    .unwrap();
    assert_eq!(serving.await.unwrap().unwrap(), wire::Ending::Closed);
    let refused: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert!(refused.is_empty(), "refused: {refused:?}");
    assert_eq!(tally.calls(), 100);
    assert!(most.load(std::sync::atomic::Ordering::SeqCst) <= CAP);
}

/// A writer that takes `left` writes, then fails every one after.
struct BreaksAfter {
    left: usize,
}

impl Write for BreaksAfter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.left -= 1;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The child counts only the Requests it wrote: calls made after the
/// channel broke fail `cancelled`, and are not counted.
#[test]
fn a_client_counts_only_the_calls_it_wrote() {
    let mut client = Client::new(std::io::empty(), BreaksAfter { left: 1 });
    for _ in 0..3 {
        client.send("t", "{}", 0).unwrap();
    }
    let mut failed = 0;
    while let Ok(reply) = client.recv() {
        assert_eq!(reply.outcome.unwrap_err().kind, FailureKind::Cancelled);
        failed += 1;
    }
    assert_eq!(failed, 3);
    assert_eq!(client.calls(), 1, "only the first Request was written");
}

#[test]
fn an_answer_too_large_to_hold_fails_the_call_its_head_names_once() {
    // The child's decoder reads past a Response it has no memory for and
    // keeps its head: the call it names fails `limit`, and its slot is free.
    let mut calls = wire::InFlight::new(2);
    let first = calls.request("big", "{}", 0).expect("a request");
    let second = calls.request("big", "{}", 0).expect("a request");
    calls
        .send_ready(|_| Ok::<(), ()>(()))
        .expect("both on the wire");
    let head = |id: &str| {
        let mut frame = wire::encode(&Response::success(id, "x".repeat(5000))).expect("encodes");
        frame.drain(..4);
        frame.truncate(wire::UNHELD_HEAD);
        frame
    };
    let reply = calls
        .answer_unheld(&head(&second), 15_000_049)
        .expect("a reply");
    assert_eq!(reply.id, second);
    let failure = reply.outcome.expect_err("a failure");
    assert_eq!(failure.kind, FailureKind::Limit);
    assert!(
        failure
            .message
            .contains("could not be held: no memory left for its 15000049 bytes"),
        "{}",
        failure.message
    );
    assert_eq!(calls.on_the_wire(), 1);
    // The same id again names no call on the wire; a head with no id
    // names none at all.
    assert!(matches!(
        calls.answer_unheld(&head(&second), 9),
        Err(ProtocolError::UnknownId(id)) if id == second
    ));
    assert!(matches!(
        calls.answer_unheld(br#"{"v":1,"value":"xxxx"#, 9),
        Err(ProtocolError::Frame(FrameError::Unheld { len: 9, .. }))
    ));
    assert_eq!(calls.on_the_wire(), 1);
    assert_eq!(calls.fail_one("end").map(|r| r.id), Some(first));
}
