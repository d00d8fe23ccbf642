//! What ends a run from outside its program (`wasmwire_guest::Stop`): the
//! Start's wall clock, held by the native child itself, and the parent
//! cancelling. A program is stopped whether it computes or waits, and a
//! cancelled run never reports success.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use wasmwire_guest::{Channel, Evaluator, Reason, Stop, ThreadLink};
use wire::FailureKind;

use crate::fake::{Console, Tools, start};

/// The most a stop may come after its cause in these tests: generous, for
/// a shared 2-core machine; the figures they print are what was seen.
const GRACE: Duration = Duration::from_secs(3);

/// A console that tells `said` once the program first writes to it: the
/// program has started, so a stop that comes after is mid-run.
struct Signal(Option<mpsc::Sender<()>>);

impl Write for Signal {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(said) = self.0.take() {
            let _ = said.send(());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `program` under a wall clock of `ms` against the fake parent;
/// (kind, error, elapsed).
fn under_wall_clock(program: &str, ms: u64) -> (Option<FailureKind>, String, Duration) {
    let mut start = start(program, &[("t", "")]);
    start.budget.wall_clock = Duration::from_millis(ms);
    let mut tools = Tools::new().echo("t");
    let began = Instant::now();
    let result = Evaluator::new()
        .unwrap()
        .run(&start, &mut tools, Console::default());
    let elapsed = began.elapsed();
    assert!(!result.ok, "{program}: {result:?}");
    (result.kind, result.error, elapsed)
}

#[test]
fn the_wall_clock_stops_a_program_that_spins_however_it_spins() {
    for program in [
        "while (true) {}",
        "for (;;) { try { for (;;) {} } catch (e) {} }",
        "for (;;) { try { for (;;) {} } finally { for (;;) {} } }",
        "const f = () => { f(); f(); }; try { f() } catch (e) { for (;;) {} }",
        "await null; for (;;) {}",
        "setTimeout(() => { for (;;) {} }, 0); await new Promise(() => setInterval(() => {}, 1000));",
    ] {
        let (kind, error, elapsed) = under_wall_clock(program, 300);
        println!("{program}: {elapsed:?}");
        assert_eq!(kind, Some(FailureKind::Limit), "{program}: {error}");
        assert!(error.contains("wall clock of 300ms"), "{program}: {error}");
        assert!(
            elapsed >= Duration::from_millis(300),
            "{program}: {elapsed:?}"
        );
        assert!(
            elapsed < Duration::from_millis(300) + GRACE,
            "{program}: {elapsed:?}"
        );
    }
}

#[test]
fn the_wall_clock_ends_a_wait_for_a_timer_past_it() {
    let (kind, error, elapsed) =
        under_wall_clock("await new Promise((r) => setTimeout(r, 1e9))", 300);
    assert_eq!(kind, Some(FailureKind::Limit), "{error}");
    assert!(elapsed < Duration::from_millis(300) + GRACE, "{elapsed:?}");
}

#[test]
fn the_wall_clock_ends_a_wait_for_a_tool_that_never_answers() {
    // A real channel whose parent reads the Request and never answers.
    let (parent, child) = UnixStream::pair().unwrap();
    let link = ThreadLink::new(child.try_clone().unwrap(), child).unwrap();
    let mut channel = Channel::new(link);
    let mut start = start("await t(); return 1", &[("t", "")]);
    start.budget.wall_clock = Duration::from_millis(300);
    let began = Instant::now();
    let result = Evaluator::new()
        .unwrap()
        .run(&start, &mut channel, Console::default());
    let elapsed = began.elapsed();
    println!("blocked on a call: {elapsed:?}");
    assert_eq!(result.kind, Some(FailureKind::Limit), "{result:?}");
    assert!(result.error.contains("wall clock"), "{result:?}");
    assert!(elapsed < Duration::from_millis(300) + GRACE, "{elapsed:?}");
    assert_eq!(result.calls, 1);
    drop(parent);
}

#[test]
fn a_cancel_from_another_thread_stops_a_program_that_computes() {
    let stop = Stop::new();
    let (said, heard) = mpsc::channel();
    let canceller = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // Bounded: a program that never speaks fails the test, not hangs it.
            heard.recv_timeout(Duration::from_secs(60)).unwrap();
            stop.cancel("the parent closed the start channel");
            Instant::now()
        })
    };
    // A wall clock far past the grace: only the cancel ends this in time.
    let mut start = start("console.log('spinning'); for (;;) {}", &[]);
    start.budget.wall_clock = Duration::from_secs(30);
    let result =
        Evaluator::new()
            .unwrap()
            .run_with(&start, &mut Tools::new(), Signal(Some(said)), &stop);
    let late = canceller.join().unwrap().elapsed();
    println!("stopped {late:?} after the cancel");
    assert_eq!(result.kind, Some(FailureKind::Cancelled), "{result:?}");
    assert!(result.error.contains("start channel"), "{result:?}");
    assert!(late < GRACE, "{late:?}");
}

/// A parent on a socket: it reads one Request whole, says so, waits for
/// `close` and then closes the call channel.
fn closing_parent(
    mut parent: UnixStream,
    read_request: bool,
) -> (mpsc::Sender<()>, std::thread::JoinHandle<Instant>) {
    let (close, closed) = mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        if read_request {
            let mut prefix = [0; 4];
            parent.read_exact(&mut prefix).unwrap();
            let mut request = vec![0; u32::from_be_bytes(prefix) as usize];
            parent.read_exact(&mut request).unwrap();
        } else {
            closed.recv_timeout(Duration::from_secs(60)).unwrap();
        }
        parent.shutdown(std::net::Shutdown::Both).unwrap();
        Instant::now()
    });
    (close, thread)
}

#[test]
fn a_program_that_catches_its_cancelled_call_still_ends_cancelled() {
    let (parent, child) = UnixStream::pair().unwrap();
    let (_close, parent) = closing_parent(parent, true);
    let stop = Stop::new();
    let link = ThreadLink::stopped_by(child.try_clone().unwrap(), child, stop.clone()).unwrap();
    let mut channel = Channel::stopped_by(link, stop.clone());
    let program = "try { await t(); return 'answered' } catch (e) { return 'caught ' + e.kind }";
    let mut start = start(program, &[("t", "")]);
    start.budget.wall_clock = Duration::from_secs(30);
    let result =
        Evaluator::new()
            .unwrap()
            .run_with(&start, &mut channel, Console::default(), &stop);
    parent.join().unwrap();
    assert!(!result.ok, "a cancelled run reported success: {result:?}");
    assert_eq!(result.kind, Some(FailureKind::Cancelled), "{result:?}");
    assert!(
        result.error.contains("closed the call channel"),
        "{result:?}"
    );
}

#[test]
fn the_call_channel_closing_while_the_program_computes_stops_it_promptly() {
    let (parent, child) = UnixStream::pair().unwrap();
    let (close, parent) = closing_parent(parent, false);
    let stop = Stop::new();
    let link = ThreadLink::stopped_by(child.try_clone().unwrap(), child, stop.clone()).unwrap();
    let mut channel = Channel::stopped_by(link, stop.clone());
    let (said, heard) = mpsc::channel();
    let relay = std::thread::spawn(move || {
        heard.recv_timeout(Duration::from_secs(60)).unwrap();
        close.send(()).unwrap();
    });
    // No call at all: only the reader thread can notice the close.
    let mut start = start("console.log('spinning'); for (;;) {}", &[]);
    start.budget.wall_clock = Duration::from_secs(30);
    let result =
        Evaluator::new()
            .unwrap()
            .run_with(&start, &mut channel, Signal(Some(said)), &stop);
    relay.join().unwrap();
    let late = parent.join().unwrap().elapsed();
    println!("stopped {late:?} after the call channel closed");
    assert_eq!(result.kind, Some(FailureKind::Cancelled), "{result:?}");
    assert!(late < GRACE, "{late:?}");
    assert_eq!(
        stop.reason(),
        Some(Reason::Cancelled(
            "the parent closed the call channel".into()
        ))
    );
}
