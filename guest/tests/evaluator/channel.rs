//! The child's own call channel (`wasmwire_guest::Channel`): the transport
//! contract over a scripted link, and, over a real socket with a reader
//! thread, no deadlock against a parent that stops reading Requests while
//! its answers are unread.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use wasmwire_guest::{Channel, Inbox, Link, OUT_BATCH, ThreadLink, Transport};
use wire::{ClientError, FailureKind, FrameReader, Request, Response, Withdraw};

use crate::fake::start;

/// A parent in memory: it hands the child `answers` a few bytes at a time
/// (so frames arrive split), then closes; Requests land in `sent`.
struct Scripted {
    answers: Vec<u8>,
    at: usize,
    chunk: usize,
    sent: Vec<u8>,
    /// How many writes brought `sent`.
    writes: usize,
    /// The size of each write.
    sizes: Vec<usize>,
}

impl Scripted {
    fn new(responses: &[Response], chunk: usize) -> Self {
        let mut answers = Vec::new();
        for response in responses {
            answers.extend(wire::encode(response).unwrap());
        }
        Scripted {
            answers,
            at: 0,
            chunk,
            sent: Vec::new(),
            writes: 0,
            sizes: Vec::new(),
        }
    }

    fn requests(&self) -> Vec<Request> {
        let mut reader = FrameReader::new(&self.sent[..]);
        let mut sent = Vec::new();
        while let Some(payload) = reader.read_frame().unwrap() {
            sent.push(wire::decode::<Request>(&payload).unwrap());
        }
        sent
    }
}

impl Link for Scripted {
    fn send(&mut self, bytes: &[u8], _inbox: &mut Inbox) -> std::io::Result<()> {
        self.sent.extend_from_slice(bytes);
        self.writes += 1;
        self.sizes.push(bytes.len());
        Ok(())
    }

    fn receive(&mut self, inbox: &mut Inbox, _timeout: Option<std::time::Duration>) {
        if !inbox.is_open() {
            return;
        }
        if self.at == self.answers.len() {
            inbox.close();
            return;
        }
        let end = (self.at + self.chunk).min(self.answers.len());
        inbox.push(&self.answers[self.at..end]);
        self.at = end;
    }
}

#[test]
fn the_channel_carries_calls_and_answers_by_id_across_split_frames() {
    let link = Scripted::new(
        &[
            Response::success("2", r#"{"n":2}"#),
            Response::success("1", "plain"),
            Response::failure("3", FailureKind::Denied, "no"),
        ],
        3,
    );
    let mut channel = Channel::new(link);
    let program = r#"
        const [a, b] = await Promise.all([t('one'), host.call('t', { n: 2 }, { deadlineMs: 9 })]);
        let c;
        try { await t('three'); } catch (e) { c = e.kind; }
        return [a, b, c];"#;
    let result =
        wasmwire_guest::evaluate(&start(program, &[("t", "")]), &mut channel, std::io::sink());
    assert!(result.ok, "{result:?}");
    assert_eq!(result.value, r#"["plain",{"n":2},"denied"]"#);
    assert_eq!((result.calls, result.bytes), (3, 12));
    let summary: Vec<_> = channel
        .link_mut()
        .requests()
        .into_iter()
        .map(|r| (r.id, r.args, r.deadline_ms))
        .collect();
    assert_eq!(
        summary,
        [
            ("1".into(), "one".into(), 0),
            ("2".into(), r#"{"n":2}"#.into(), 9),
            ("3".into(), "three".into(), 0)
        ]
    );
}

#[test]
fn at_eof_every_call_in_flight_fails_once_as_cancelled_then_closed() {
    let mut channel = Channel::new(Scripted::new(&[Response::success("2", "1")], 64));
    for _ in 0..3 {
        channel.send("t", "{}", 0).unwrap();
    }
    let first = channel.recv().unwrap();
    assert_eq!((first.id.as_str(), first.outcome), ("2", Ok("1".into())));
    for id in ["1", "3"] {
        let reply = channel.recv().unwrap();
        assert_eq!(reply.id, id);
        assert_eq!(reply.outcome.unwrap_err().kind, FailureKind::Cancelled);
    }
    assert!(matches!(channel.recv(), Err(ClientError::Closed)));
}

#[test]
fn an_answer_to_no_call_and_a_truncated_frame_are_protocol_errors() {
    let mut channel = Channel::new(Scripted::new(&[Response::success("9", "1")], 64));
    assert!(matches!(channel.recv(), Err(ClientError::Idle)));
    channel.send("t", "{}", 0).unwrap();
    assert!(matches!(channel.recv(), Err(ClientError::Protocol(_))));

    let mut link = Scripted::new(&[Response::success("1", "1")], 64);
    link.answers.pop();
    let mut channel = Channel::new(link);
    channel.send("t", "{}", 0).unwrap();
    let err = channel.recv().unwrap_err();
    assert!(err.to_string().contains("ended inside a frame"), "{err}");
}

#[test]
fn a_request_too_large_for_a_frame_is_refused_and_takes_no_id() {
    let mut channel = Channel::new(Scripted::new(&[Response::success("1", "1")], 64));
    assert!(channel.send("t", &"x".repeat(17 << 20), 0).is_err());
    assert_eq!(channel.send("t", "{}", 0).unwrap(), "1");
    assert_eq!(channel.recv().unwrap().outcome, Ok("1".into()));
    assert_eq!(channel.calls(), 1);
}

#[test]
fn a_batch_is_written_before_it_passes_64_kib_and_a_frame_that_large_goes_alone() {
    let mut channel = Channel::new(Scripted::new(&[], 1024));
    channel.pace(100);
    let frame = |args: &str| wire::encode(&Request::new("1", "t", args)).unwrap().len();
    let (small, large) = ("x".repeat(20 << 10), "y".repeat(OUT_BATCH));
    for _ in 0..7 {
        channel.send("t", &small, 0).unwrap();
    }
    channel.send("t", &large, 0).unwrap();
    channel.send("t", "1", 0).unwrap();
    channel.flush();
    // Three 20 KiB frames fit under 64 KiB and a fourth does not: written
    // three by three, the seventh alone when the large one comes, which
    // goes on its own, and the last with the flush.
    let (s, l, one) = (frame(&small), frame(&large), frame("1"));
    assert!(3 * s <= OUT_BATCH && 4 * s > OUT_BATCH && l > OUT_BATCH);
    assert_eq!(channel.link_mut().sizes, [3 * s, 3 * s, s, l, one]);
    let ids: Vec<String> = channel
        .link_mut()
        .requests()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6", "7", "8", "9"]);
    assert_eq!(channel.calls(), 9);
}

#[test]
fn a_withdraw_goes_in_the_batch_after_the_request_it_withdraws() {
    let mut channel = Channel::new(Scripted::new(&[], 1024));
    let id = channel.send("t", "1", 0).unwrap();
    channel.withdraw(&id, true);
    assert_eq!(channel.link_mut().writes, 0, "held until the batch goes");
    channel.flush();
    let link = channel.link_mut();
    assert_eq!(link.writes, 1);
    let mut reader = FrameReader::new(&link.sent[..]);
    let request: Request = wire::decode(&reader.read_frame().unwrap().unwrap()).unwrap();
    let withdraw: Withdraw = wire::decode(&reader.read_frame().unwrap().unwrap()).unwrap();
    assert_eq!((request.id, withdraw), (id.clone(), Withdraw::new(&id)));
    assert!(reader.read_frame().unwrap().is_none());
    assert_eq!(channel.calls(), 1);
}

/// A link whose parent takes one write, then stops reading: every later
/// write fails.
struct TakesOne {
    taken: usize,
}

impl Link for TakesOne {
    fn send(&mut self, _bytes: &[u8], _inbox: &mut Inbox) -> std::io::Result<()> {
        self.taken += 1;
        if self.taken > 1 {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        Ok(())
    }

    fn receive(&mut self, _inbox: &mut Inbox, _timeout: Option<Duration>) {}
}

#[test]
fn the_channel_counts_only_the_calls_it_wrote_and_a_broken_write_cancels_the_run() {
    let stop = wasmwire_guest::Stop::new();
    let mut channel = Channel::stopped_by(TakesOne { taken: 0 }, stop.clone());
    channel.send("t", "{}", 0).unwrap();
    channel.flush();
    assert_eq!(channel.calls(), 1);
    assert!(stop.reason().is_none());
    // Two more in one batch, whose write fails.
    channel.send("t", "{}", 0).unwrap();
    channel.send("t", "{}", 0).unwrap();
    channel.flush();
    assert_eq!(channel.calls(), 1, "only the first Request was written");
    let mut cancelled = 0;
    while let Ok(reply) = channel.recv() {
        assert_eq!(reply.outcome.unwrap_err().kind, FailureKind::Cancelled);
        cancelled += 1;
    }
    assert_eq!((cancelled, channel.calls()), (3, 1));
    assert!(
        matches!(stop.reason(), Some(wasmwire_guest::Reason::Cancelled(why)) if why.contains("broke")),
        "{:?}",
        stop.reason()
    );
}

/// A parent whose answers come in while the child writes (as a link that
/// reads while it writes hands them over): each write brings the answer to
/// each Request in it. The child must never wait with answers in hand.
struct AnswersWhileWritten;

impl Link for AnswersWhileWritten {
    fn send(&mut self, bytes: &[u8], inbox: &mut Inbox) -> std::io::Result<()> {
        let mut reader = FrameReader::new(bytes);
        while let Some(payload) = reader.read_frame().unwrap() {
            let request: Request = wire::decode(&payload).unwrap();
            inbox.push(&wire::encode(&Response::success(request.id, request.args)).unwrap());
        }
        Ok(())
    }

    fn receive(&mut self, _inbox: &mut Inbox, _timeout: Option<Duration>) {
        panic!("waited for the parent with its answers already in hand");
    }
}

#[test]
fn answers_read_while_the_batch_is_written_are_taken_without_a_wait() {
    let mut channel = Channel::new(AnswersWhileWritten);
    channel.pace(2);
    let ids: Vec<String> = (0..5)
        .map(|i| channel.send("t", &i.to_string(), 0).unwrap())
        .collect();
    // Each answer frees a slot for the next call; the batch that carries
    // it is written (and so answered) as the last answer in hand goes.
    for (i, id) in ids.iter().enumerate() {
        let reply = channel.recv().unwrap();
        assert_eq!((&reply.id, reply.outcome), (id, Ok(i.to_string())));
    }
    assert_eq!(channel.calls(), 5);
}

/// A parent that answers each Request with its args, over a socket, from
/// one thread with blocking writes: while its answer is unread it reads no
/// more Requests. Returns how many it answered.
fn echo_parent(mut socket: UnixStream) -> usize {
    let mut reader = FrameReader::new(socket.try_clone().unwrap());
    let mut answered = 0;
    while let Ok(Some(payload)) = reader.read_frame() {
        let request: Request = wire::decode(&payload).unwrap();
        let frame = wire::encode(&Response::success(request.id, request.args)).unwrap();
        if socket.write_all(&frame).is_err() {
            break;
        }
        answered += 1;
    }
    answered
}

#[test]
fn a_flood_of_large_calls_does_not_deadlock_against_a_parent_that_waits_to_be_read() {
    // A socket buffer holds a few hundred KiB: one 1 MiB answer left unread
    // stops this parent. wire::Client, writing its next Request without
    // reading, waits for it forever; the channel reads meanwhile.
    let (parent, child) = UnixStream::pair().unwrap();
    // The reader thread holds the child's end open; this closes it.
    let closer = child.try_clone().unwrap();
    let parent = std::thread::spawn(move || echo_parent(parent));
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let link = ThreadLink::new(child.try_clone().unwrap(), child).unwrap();
        let mut channel = Channel::new(link);
        let program = "const settled = await Promise.allSettled(Array.from({ length: 40 }, () => echo('x'.repeat(1 << 20))));\n\
                       return settled.filter(s => s.status === 'fulfilled' && s.value.length === 1 << 20).length;";
        let result = wasmwire_guest::evaluate(
            &start(program, &[("echo", "")]),
            &mut channel,
            std::io::sink(),
        );
        let _ = done.send(result);
    });
    let result = result
        .recv_timeout(Duration::from_secs(60))
        .expect("the run ends: no deadlock between the child's writes and the parent's");
    assert!(result.ok, "{result:?}");
    assert_eq!(result.value, "40");
    assert_eq!((result.calls, result.bytes), (40, 40 << 20));
    closer.shutdown(std::net::Shutdown::Both).unwrap();
    assert_eq!(parent.join().unwrap(), 40);
}

#[test]
fn the_thread_link_sees_the_parent_close() {
    let (mut parent, child) = UnixStream::pair().unwrap();
    let link = ThreadLink::new(child.try_clone().unwrap(), child).unwrap();
    let mut channel = Channel::new(link);
    let id = channel.send("t", "{}", 0).unwrap();
    channel.flush();
    // The parent reads the Request whole (a socket closed with bytes unread
    // would be reset, not closed), then closes.
    let mut prefix = [0; 4];
    parent.read_exact(&mut prefix).unwrap();
    let mut request = vec![0; u32::from_be_bytes(prefix) as usize];
    parent.read_exact(&mut request).unwrap();
    drop(parent);
    let reply = channel.recv().unwrap();
    assert_eq!(reply.id, id);
    let failure = reply.outcome.unwrap_err();
    assert_eq!(failure.kind, FailureKind::Cancelled);
    assert!(failure.message.contains("closed"), "{}", failure.message);
}

#[test]
fn the_channel_paces_calls_to_its_cap_and_sends_the_next_as_an_answer_frees_a_slot() {
    let link = Scripted::new(
        &[
            Response::success("1", "a"),
            Response::success("2", "b"),
            Response::success("3", "c"),
        ],
        1024,
    );
    let mut channel = Channel::new(link);
    channel.pace(2);
    for _ in 0..3 {
        channel.send("t", "", 0).unwrap();
    }
    let sent = |channel: &mut Channel<Scripted>| {
        channel
            .link_mut()
            .requests()
            .into_iter()
            .map(|r| r.id)
            .collect::<Vec<_>>()
    };
    // Gathered, and written in one go when the evaluator flushes.
    assert!(sent(&mut channel).is_empty());
    channel.flush();
    assert_eq!(channel.link_mut().writes, 1);
    assert_eq!(sent(&mut channel), ["1", "2"]);
    assert_eq!(
        (channel.in_flight(), channel.on_the_wire(), channel.calls()),
        (3, 2, 2)
    );
    // The first read brings all three answers (the parent is scripted to
    // answer 3 before it could have it). Answer 1 frees a slot for call 3,
    // which waits in the batch while answers already read remain ...
    assert_eq!(channel.recv().unwrap().id, "1");
    assert_eq!(sent(&mut channel), ["1", "2"]);
    assert_eq!(channel.recv().unwrap().id, "2");
    assert_eq!(sent(&mut channel), ["1", "2"]);
    // ... and is written once the last of them is handed out.
    assert_eq!(channel.recv().unwrap().id, "3");
    assert_eq!(sent(&mut channel), ["1", "2", "3"]);
    assert_eq!(channel.link_mut().writes, 2);
    assert_eq!(channel.calls(), 3);
}

#[test]
fn recv_within_gives_up_after_its_timeout_and_still_takes_a_later_answer() {
    let (child, parent) = UnixStream::pair().unwrap();
    let link = ThreadLink::new(child.try_clone().unwrap(), child).unwrap();
    let mut channel = Channel::new(link);
    let id = channel.send("slow", "", 0).unwrap();
    let began = std::time::Instant::now();
    assert!(
        channel
            .recv_within(Duration::from_millis(50))
            .unwrap()
            .is_none()
    );
    assert!(began.elapsed() >= Duration::from_millis(50));
    let mut parent_writer = parent.try_clone().unwrap();
    parent_writer
        .write_all(&wire::encode(&Response::success(&id, "late")).unwrap())
        .unwrap();
    let reply = channel
        .recv_within(Duration::from_secs(3600))
        .unwrap()
        .unwrap();
    assert_eq!((reply.id, reply.outcome), (id, Ok("late".to_owned())));
    drop(parent);
}
