//! The wasmwire child: one Start in, one program run, one Result out.
//!
//! The same `main` runs in two shapes:
//!
//! * **the component** (`wasm32-wasip2`): the Start and the Result travel over
//!   the `start-channel` import of the `child` world in `wit/`. The component
//!   also exports `wizer-initialize`, which the host calls once, ahead of
//!   time, to build the QuickJS runtime, context and intrinsics; the host
//!   then snapshots the instance (wasmtime-wizer) and every execution starts
//!   from a fresh copy of that snapshot, with the evaluator already built.
//! * **a native process** (any other target), for the process backend: the
//!   Start is read from fd 3 and the Result written to fd 4.
//!
//! Either way tool calls go out on stdout and come back on stdin, console
//! output goes to stderr, and everything between the two ends is the
//! `wasmwire_guest` library.
//!
//! A Start the child cannot take is answered with a Result whenever it
//! names its `result_id` (`invalid`, naming the field; a protocol error for
//! another version). The native child also holds the Start's wall clock
//! itself and watches both channels for the parent cancelling: a closed
//! call channel (a reader thread) or a closed start channel (a thread
//! blocked on fd 3 after the Start) stops the program at once, even while
//! it computes, and the Result says `cancelled` (see `wasmwire_guest::stop`).

use std::cell::RefCell;
use std::io;

use wasmwire_guest::{Channel, Evaluator, OwnAllocator, Stop};
use wire::{FailureKind, Runner};

/// The child's allocations are counted, so that what it holds for a
/// program's calls and timers counts towards the program's memory limit.
#[global_allocator]
static ALLOCATOR: OwnAllocator = OwnAllocator;

thread_local! {
    /// The evaluator built ahead of time by `wizer-initialize`, if the host
    /// pre-initialised this instance.
    static PREPARED: RefCell<Option<Evaluator>> = const { RefCell::new(None) };
}

/// Free heap the snapshot starts with: what a small run allocates (its
/// frame buffers, the program, QuickJS's objects) then comes from memory
/// the instance already has. Each `memory.grow` would make the host change
/// the protection of the pooled memory slot back when the slot is reused,
/// which costs a TLB shoot-down on every core. Free pages are zero, so they
/// do not enlarge the snapshot.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const HEADROOM: usize = 1 << 20;

/// The size of each piece [`HEADROOM`] is taken in.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const HEADROOM_PIECE: usize = 16 << 10;

/// Builds the evaluator now, for the next `main` to take.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn prepare() {
    // A set-up failure is left for `main` to meet again and report.
    let evaluator = Evaluator::new().ok();
    PREPARED.with(|prepared| *prepared.borrow_mut() = evaluator);
    // The allocator keeps what it got from `memory.grow` once freed. Taken
    // in pieces, so that the holes set-up left (a script's text and
    // compilation, freed) count towards it, rather than all of it added
    // above the top of the heap.
    let pieces: Vec<Vec<u8>> = (0..HEADROOM / HEADROOM_PIECE)
        .map(|_| Vec::with_capacity(HEADROOM_PIECE))
        .collect();
    drop(std::hint::black_box(pieces));
}

fn main() {
    let (start_in, result_out) = match start_channel::open() {
        Ok(channel) => channel,
        Err(e) => {
            eprintln!("wasmwire-guest: no start channel: {e}");
            std::process::exit(2);
        }
    };
    let watch = start_channel::watcher(&start_in);
    let mut runner = Runner::new(start_in, result_out);
    let start = match runner.start() {
        Ok(start) => start,
        Err(e) => {
            eprintln!("wasmwire-guest: {e}");
            // A Start that names its result_id is answered, saying why it
            // was refused. Without one there is no one to answer: the
            // parent sees the channel close and the line above.
            let Some(result) = e.result() else {
                std::process::exit(1);
            };
            if let Err(e) = runner.finish(&result) {
                eprintln!("wasmwire-guest: {e}");
                std::process::exit(1);
            }
            return;
        }
    };
    let stop = Stop::for_start(&start);
    if let Some(watch) = watch {
        watch(runner.unread(), stop.clone());
    }
    let mut client = match call_channel(&stop) {
        Ok(client) => client,
        Err(e) => {
            let result = wire::Result::failure(
                &start.result_id,
                FailureKind::Unknown,
                format!("the child could not open its call channel: {e}"),
            );
            if let Err(e) = runner.finish(&result) {
                eprintln!("wasmwire-guest: {e}");
            }
            std::process::exit(1);
        }
    };
    let prepared = PREPARED.with(|prepared| prepared.borrow_mut().take());
    let mut evaluator = prepared.map_or_else(Evaluator::new, Ok);
    let result = match &mut evaluator {
        Ok(evaluator) => evaluator.run_with(&start, &mut client, io::stderr(), &stop),
        Err(e) => wire::Result::failure(&start.result_id, FailureKind::Limit, e.to_string()),
    };
    // The Requests the Result counts reach the parent before it does.
    client.deliver();
    if let Err(e) = runner.finish(&result) {
        eprintln!("wasmwire-guest: {e}");
        std::process::exit(1);
    }
    // The child ends here. Freeing the QuickJS heap buys nothing, and a
    // heap that hit its memory limit may be in a state where QuickJS's
    // teardown asserts: the Result is out, so skip it.
    std::mem::forget(evaluator);
}

/// The call channel: reads the parent's Responses while it writes Requests
/// (see `wasmwire_guest::channel`).
#[cfg(target_arch = "wasm32")]
fn call_channel(stop: &Stop) -> io::Result<Channel<wasmwire_guest::channel::WasiLink>> {
    Ok(Channel::stopped_by(
        wasmwire_guest::channel::WasiLink::new(),
        stop.clone(),
    ))
}

/// The call channel: a thread reads the parent's Responses from stdin while
/// Requests are written to stdout, and cancels the run when stdin ends.
#[cfg(not(target_arch = "wasm32"))]
fn call_channel(stop: &Stop) -> io::Result<Channel<wasmwire_guest::ThreadLink<io::Stdout>>> {
    let link = wasmwire_guest::ThreadLink::stopped_by(io::stdin(), io::stdout(), stop.clone())?;
    Ok(Channel::stopped_by(link, stop.clone()))
}

#[cfg(target_arch = "wasm32")]
mod start_channel {
    //! The start channel as the `start-channel` import of the `child` world.

    use std::io::{self, Read, Write};

    wit_bindgen::generate!({
        // The `child` world, plus the pre-initialisation entry point that
        // wasmtime-wizer looks for by default. The host removes the export
        // when it snapshots the component.
        inline: r#"
            package wasmwire:guest;

            world guest {
                include wasmwire:child/child@1.0.0;
                export wizer-initialize: func();
            }
        "#,
        path: "../wit",
        world: "wasmwire:guest/guest",
        generate_all,
    });

    use wasmwire::child::start_channel;

    /// The component's own exports.
    struct Exports;

    impl Guest for Exports {
        fn wizer_initialize() {
            super::prepare();
        }
    }

    export!(Exports);

    /// The Start stream: `start-channel.read`, where an empty read is EOF.
    #[derive(Default)]
    pub(super) struct StartIn {
        /// Bytes the host handed over beyond what the last caller asked for.
        spill: Vec<u8>,
        /// How far into `spill` the caller has read.
        pos: usize,
    }

    impl Read for StartIn {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if buf.is_empty() {
                return Ok(0);
            }
            if self.pos == self.spill.len() {
                let want = u32::try_from(buf.len()).unwrap_or(u32::MAX);
                self.spill = start_channel::read(want);
                self.pos = 0;
            }
            let n = (self.spill.len() - self.pos).min(buf.len());
            buf[..n].copy_from_slice(&self.spill[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    /// The Result stream: `start-channel.write`, all or an error.
    pub(super) struct ResultOut;

    impl Write for ResultOut {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            start_channel::write(buf)
                .map_err(|why| io::Error::new(io::ErrorKind::BrokenPipe, why))?;
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The component's start channel; it is always there.
    pub(super) fn open() -> io::Result<(StartIn, ResultOut)> {
        Ok((StartIn::default(), ResultOut))
    }

    /// What watches the start channel after the Start: nothing in the
    /// component, which has one thread; the host stops it by other means
    /// (epochs, and dropping it).
    #[allow(clippy::type_complexity)] // the native shape, never built here
    pub(super) fn watcher(
        _start_in: &StartIn,
    ) -> Option<Box<dyn FnOnce(usize, wasmwire_guest::Stop)>> {
        None
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod start_channel {
    //! The start channel of a process child: fd 3 in, fd 4 out (see the
    //! host's process backend).

    use std::fs::{File, OpenOptions};
    use std::io::{self, Read};
    use std::os::unix::fs::FileTypeExt;

    use wasmwire_guest::{Reason, Stop};

    /// The fd the Start is read from.
    const START_FD: u32 = 3;
    /// The fd the Result is written to.
    const RESULT_FD: u32 = 4;

    /// Opens fds 3 and 4 by path, which needs no `unsafe` and fails cleanly
    /// when the parent did not pass them.
    pub(super) fn open() -> io::Result<(File, File)> {
        let start = File::open(format!("/dev/fd/{START_FD}"))?;
        let result = OpenOptions::new()
            .write(true)
            .open(format!("/dev/fd/{RESULT_FD}"))?;
        Ok((start, result))
    }

    /// What watches the start channel once the Start is in: a thread
    /// blocked on a second handle of fd 3. The parent closing it is the
    /// parent cancelling the run; anything it sends there after its Start
    /// (already read, `unread` bytes, or arriving later) breaks the
    /// protocol. `None` when fd 3 cannot be duplicated (the run then goes
    /// on unwatched, as before).
    ///
    /// Only a pipe or a socket is watched: a Start handed over in a regular
    /// file (`3<start.bin`) ends where the file does, which is no cancel.
    #[allow(clippy::type_complexity)] // called once, right away
    pub(super) fn watcher(start_in: &File) -> Option<Box<dyn FnOnce(usize, Stop)>> {
        let kind = start_in.metadata().ok()?.file_type();
        if !(kind.is_fifo() || kind.is_socket()) {
            return None;
        }
        let mut watched = start_in.try_clone().ok()?;
        Some(Box::new(move |unread: usize, stop: Stop| {
            let more = |n: usize| {
                Reason::Protocol(format!(
                    "the parent sent {n} more bytes on the start channel after its Start \
                     (a run takes one Start)"
                ))
            };
            if unread > 0 {
                stop.request(more(unread));
                return;
            }
            let spawned = std::thread::Builder::new()
                .name("start-channel watcher".into())
                .spawn(move || {
                    let mut buf = [0; 64];
                    loop {
                        match watched.read(&mut buf) {
                            Ok(0) => stop.cancel("the parent closed the start channel"),
                            Ok(n) => stop.request(more(n)),
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            Err(e) => stop.cancel(format!("the start channel broke: {e}")),
                        }
                        return;
                    }
                });
            if let Err(e) = spawned {
                eprintln!("wasmwire-guest: the start channel goes unwatched: {e}");
            }
        }))
    }
}
