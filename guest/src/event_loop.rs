//! Runs the job queue, the timers and the call channel until the program
//! settles.
//!
//! One turn: run every pending job, send every call the program queued,
//! look at the program's promise, and if it is still pending, take one
//! event: a timer that is due, or the next answer. While a timer is due the
//! turns alternate between firing one and looking at the channel without
//! waiting, so neither can keep the other waiting; otherwise the loop waits
//! for an answer no longer than until the next timer is due, or, with no
//! call in flight, sleeps until then. A program still pending with no job
//! to run, no call in flight and no timer can never settle (it awaits a
//! promise nobody will resolve), and the loop says so instead of waiting
//! forever.
//!
//! What the loop sends, the transport may gather and write in one go (the
//! child's own channel does, until it waits or has handed out the answers
//! it read): the loop flushes it before a timer's callback runs and before
//! it sleeps, and the evaluator when the loop ends, so no call waits on
//! code that is not an answer's, and the parent has every call the Result
//! counts.
//!
//! The loop stops as soon as the promise settles: timers still pending are
//! dropped with the session, and the Result goes at once. It also stops as
//! soon as the run's [`Stop`] says so (the wall clock, or the parent
//! cancelling): it looks before every turn and after every job, and every
//! wait ends at the deadline or when another thread stops the run.

use std::time::{Duration, Instant};

use rquickjs::function::Rest;
use rquickjs::promise::PromiseState;
use rquickjs::{Ctx, Promise, Value, qjs};
use wire::{ClientError, FailureKind, FrameError, ProtocolError, Reply};

use crate::heap::Heap;
use crate::session::Session;
use crate::stop::{Reason, Stop};
use crate::throw_site;
use crate::tool_error;
use crate::transport::Transport;

/// How the program's promise ended up.
#[derive(Debug)]
pub(crate) enum Settled<'js> {
    /// It resolved with this value.
    Fulfilled(Value<'js>),
    /// It rejected with this reason.
    Rejected(Value<'js>),
    /// It is pending and nothing left can settle it.
    Stuck,
    /// The parent broke the protocol; the text says how.
    Protocol(String),
    /// The run was stopped from outside the program.
    Halted(Reason),
}

/// Drives `promise` to an end. `tell_parent`: the parent takes Withdraw
/// messages (the Start's `withdraw`). What the transport still holds when
/// it returns, the caller flushes.
pub(crate) fn drive<'js, T: Transport + ?Sized>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    promise: &Promise<'js>,
    transport: &mut T,
    heap: &Heap,
    stop: &Stop,
    tell_parent: bool,
) -> Settled<'js> {
    // Set after a timer fired while another may be due: the next turn
    // looks at the channel first.
    let mut channel_first = false;
    loop {
        if let Some(reason) = stop.reason() {
            return halted(ctx, promise, reason);
        }
        while let Some(job) = run_one_job(ctx) {
            note_throw(ctx, session, promise);
            if let Some(reason) = stop.reason() {
                // An interrupted job threw; the stop says why.
                return halted(ctx, promise, reason);
            }
            if let Err(thrown) = job {
                // A job throws only when QuickJS itself fails (out of memory,
                // say): the promise chain it belonged to is broken for good,
                // so the program ends with what was thrown.
                return Settled::Rejected(thrown);
            }
        }
        // Calls whose signal aborted: the transport stops waiting for them
        // (and, with `tell_parent`, the parent ends their handlers).
        for id in session
            .with_calls(|calls| calls.take_withdrawn())
            .unwrap_or_default()
        {
            transport.withdraw(&id, tell_parent);
        }
        if send_queued(ctx, session, transport) > 0 {
            // Calls that failed to send were rejected: their jobs run first.
            continue;
        }
        match promise.state() {
            PromiseState::Resolved => return settled_value(ctx, promise, true),
            PromiseState::Rejected => return settled_value(ctx, promise, false),
            PromiseState::Pending => {}
        }
        let in_flight = session.with_calls(|calls| calls.in_flight()).unwrap_or(0);
        let next_due = session.with_timers(|timers| timers.next_due()).flatten();
        // No wait outlasts the wall clock: the turn after it stops the run.
        let wake = match (next_due, stop.deadline()) {
            (Some(due), Some(deadline)) => Some(due.min(deadline)),
            (due, deadline) => due.or(deadline),
        };
        // The clock is read only when something is timed: in the component
        // a read is a host call, and a turn that waits on calls alone (every
        // tool call's) needs none.
        let timed = wake.map(|wake| (wake, Instant::now()));
        if let (Some(due), Some((_, now))) = (next_due, timed)
            && due <= now
            && !(channel_first && in_flight > 0)
        {
            channel_first = true;
            // The timer's code is not an answer's: the calls go first.
            transport.flush();
            if let Some(stop) = fire_one(ctx, session, now, stop) {
                return stop;
            }
            continue;
        }
        channel_first = false;
        let waited = match (in_flight, next_due, timed) {
            (0, None, _) => return Settled::Stuck,
            (0, Some(_), Some((wake, now))) => {
                // Withdraws the transport holds go before the sleep.
                transport.flush();
                stop.sleep(wake.saturating_duration_since(now));
                continue;
            }
            // A transport that can wait with a timeout also returns when
            // the run is stopped (the child's own channel does).
            (_, _, None) => transport.recv_within(Duration::MAX),
            (_, _, Some((wake, now))) => transport.recv_within(wake.saturating_duration_since(now)),
        };
        match waited {
            Ok(Some(reply)) => answer(ctx, session, heap, reply),
            // A timer is due: the next turn fires it.
            Ok(None) => {}
            // An answer there was no memory for that names no call: the
            // run is out of memory, not the parent wrong.
            Err(ClientError::Protocol(ProtocolError::Frame(FrameError::Unheld {
                len, ..
            }))) => {
                return Settled::Halted(Reason::UnheldAnswer(len));
            }
            Err(ClientError::Protocol(e)) => return Settled::Protocol(e.to_string()),
            Err(e @ (ClientError::Closed | ClientError::Idle)) => {
                // The transport has nothing more to say about the calls still
                // in flight here: fail them, so that the program can go on.
                fail_in_flight(ctx, session, &format!("the call was lost: {e}"));
            }
        }
    }
}

/// The run stopped for `reason`. When the heap refused and the program's
/// promise rejected with what followed (QuickJS's out-of-memory error,
/// thrown where the program ran out), that rejection is the ending the
/// evaluator judges: it says where. Otherwise the stop's reason is.
fn halted<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>, reason: Reason) -> Settled<'js> {
    if matches!(reason, Reason::Memory { .. }) && promise.state() == PromiseState::Rejected {
        return settled_value(ctx, promise, false);
    }
    Settled::Halted(reason)
}

/// Fires the first timer due at `now`, if any. `Some` when that ends the
/// run: the callback threw (the execution ends with what it threw, as an
/// uncaught exception) or the run was stopped.
fn fire_one<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    now: Instant,
    stop: &Stop,
) -> Option<Settled<'js>> {
    let due = session
        .with_timers(|timers| timers.take_due(now))
        .flatten()?;
    throw_site::take(ctx, session);
    let called = due.callback.call::<_, ()>((Rest(due.args),));
    if called.is_err()
        && let Some(reason) = stop.reason()
    {
        // Interrupted: the stop says why, not what QuickJS threw.
        let _ = ctx.catch();
        return Some(Settled::Halted(reason));
    }
    match called {
        Ok(()) => None,
        Err(e) => {
            if let Some(backtrace) = throw_site::take(ctx, session).text() {
                session.set_thrown_at(backtrace);
            }
            Some(Settled::Rejected(tool_error::caught(ctx, e)))
        }
    }
}

/// After a job (or the program's first run): takes QuickJS's backtrace of
/// the first throw since, and keeps it if the program's promise is now
/// rejected (see `throw_site`).
pub(crate) fn note_throw<'js>(ctx: &Ctx<'js>, session: &Session<'js>, promise: &Promise<'js>) {
    let taken = throw_site::take(ctx, session);
    if matches!(promise.state(), PromiseState::Rejected)
        && let Some(backtrace) = taken.text()
    {
        session.set_thrown_at(backtrace);
    }
}

/// Runs one pending job: `None` when there was none, else whether it threw.
///
/// rquickjs's `Ctx::execute_pending_job` swallows what a job throws; here
/// it must be seen, because an out-of-memory error inside a job otherwise
/// looks like a program that simply stopped making progress.
fn run_one_job<'js>(ctx: &Ctx<'js>) -> Option<Result<(), Value<'js>>> {
    let mut job_ctx = std::mem::MaybeUninit::<*mut rquickjs::qjs::JSContext>::uninit();
    // SAFETY: the runtime pointer comes from a live context, and
    // JS_ExecutePendingJob only writes the context it ran the job in. This
    // runtime has exactly one context, `ctx`, so a job's exception is left
    // pending on it and `catch` takes it.
    let ran = unsafe {
        let runtime = rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
        rquickjs::qjs::JS_ExecutePendingJob(runtime, job_ctx.as_mut_ptr())
    };
    match ran {
        0 => None,
        r if r < 0 => Some(Err(ctx.catch())),
        _ => Some(Ok(())),
    }
}

/// The value or reason of a settled promise.
fn settled_value<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>, fulfilled: bool) -> Settled<'js> {
    match promise.result::<Value>() {
        Some(Ok(value)) if fulfilled => Settled::Fulfilled(value),
        Some(Ok(value)) => Settled::Rejected(value),
        Some(Err(e)) => Settled::Rejected(tool_error::caught(ctx, e)),
        None => Settled::Stuck,
    }
}

/// Args and name (together) from which a call's Request is checked for
/// room before it is framed: a smaller one fits the memory limit's reserve.
const FRAMED_APART: usize = 64 << 10;

/// Sends every queued call. Returns how many failed to send (and were
/// rejected).
fn send_queued<'js, T: Transport + ?Sized>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    transport: &mut T,
) -> usize {
    let queued = session
        .with_calls(|calls| calls.take_queued())
        .unwrap_or_default();
    if queued.is_empty() {
        return 0;
    }
    let heap = session.heap();
    // The transport's tables take the calls without growing (see
    // `Heap::reserve`); with no memory for that the run is stopped, and
    // none of them is sent.
    if !heap.reserve(|| transport.reserve(queued.len())) {
        let failed = queued.len();
        for call in queued {
            let why = "memory limit: no memory left to send the call";
            tool_error::reject(ctx, session, call, FailureKind::Limit, why);
        }
        return failed;
    }
    let mut failed = 0;
    for mut call in queued {
        // A Request is framed beside its args, and as large: large args
        // that leave no room for it fail their call, as a frame refused
        // for want of memory does.
        let framed = call.args.len().saturating_add(call.tool.len());
        if framed >= FRAMED_APART && !heap.own_fits(framed) {
            failed += 1;
            let why = format!(
                "memory limit: the call's args of {} bytes could not be sent: no memory left \
                 for its Request beside them",
                call.args.len()
            );
            tool_error::reject(ctx, session, call, FailureKind::Limit, &why);
            continue;
        }
        match transport.send(&call.tool, &call.args, call.deadline_ms) {
            Ok(id) => {
                // The Request holds them now: the call's copy is not kept.
                call.args = String::new();
                session.with_calls(|calls| calls.sent(id, call));
            }
            Err(e) => {
                // Nothing was sent. Args too large for a frame hit a size
                // cap, as a value over a quota does: `limit`.
                failed += 1;
                let (kind, why) = match &e {
                    ClientError::Protocol(ProtocolError::Frame(FrameError::TooLarge {
                        ..
                    })) => (
                        FailureKind::Limit,
                        format!(
                            "size limit: the call's Request does not fit in a frame ({e}); \
                             a Request carries at most {} bytes",
                            wire::MAX_FRAME_BYTES
                        ),
                    ),
                    ClientError::Protocol(ProtocolError::Frame(FrameError::Io(io)))
                        if io.kind() == std::io::ErrorKind::OutOfMemory =>
                    {
                        (
                            FailureKind::Limit,
                            format!(
                                "memory limit: the call's args of {} bytes could not be sent ({io})",
                                call.args.len()
                            ),
                        )
                    }
                    _ => (FailureKind::Invalid, e.to_string()),
                };
                tool_error::reject(ctx, session, call, kind, &why);
            }
        }
    }
    failed
}

/// Settles the call `reply` answers.
fn answer<'js>(ctx: &Ctx<'js>, session: &Session<'js>, heap: &Heap, reply: Reply) {
    let Some(call) = session
        .with_calls(|calls| calls.answered(&reply.id))
        .flatten()
    else {
        // The transport matched it to a call this run never made; nothing
        // here waits for it.
        return;
    };
    // A failure's `reject` forgets the call's signal watch itself.
    match reply.outcome {
        Ok(value) => {
            let bytes = value.len();
            // A value too large for the heap fails the call, not the run.
            let value = match heap.tolerating(|| parse_value(ctx, session, value)) {
                Ok(parsed) => parsed,
                Err(why) => {
                    // The value could not be built (memory ran out, or its
                    // nesting outran the stack): the call fails `limit`,
                    // never hands the program the JSON text as a string.
                    let message = format!(
                        "the tool's value ({bytes} bytes of JSON) could not be built within this \
                         run's limits: {why}"
                    );
                    tool_error::reject(ctx, session, call, FailureKind::Limit, &message);
                    return;
                }
            };
            call.done(session);
            call.promise.resolve(value);
        }
        Err(failure) => {
            tool_error::reject(ctx, session, call, failure.kind, &failure.message);
        }
    }
}

/// A value as JSON when it parses, else as the raw string when it is not
/// JSON. Any other failure of the parse (QuickJS out of memory, which it
/// may tell by throwing `null`, or out of stack) is `Err` with what
/// happened: a value too large for the run once reached the program as its
/// JSON text, a string, with nothing to say so.
///
/// The text is parsed where it is, with the NUL QuickJS wants after it
/// added in place: rquickjs's own `json_parse` copies it into a buffer that
/// doubles to take the NUL, and a 15 MB value took 30 MB more of the
/// child's own heap, whose failure ended the whole run (and wrote Rust's
/// "memory allocation failed" to the console) where the call alone should
/// have failed.
fn parse_value<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    text: String,
) -> Result<Value<'js>, String> {
    let len = text.len();
    let mut bytes = text.into_bytes();
    bytes.reserve_exact(1);
    bytes.push(0);
    // SAFETY: the context is live for 'js; `bytes` is `len` bytes of UTF-8
    // and a NUL, alive across the call. `from_raw` takes the new reference;
    // an exception value is never wrapped (it stays pending in the context).
    let parsed = unsafe {
        let raw = qjs::JS_ParseJSON(
            ctx.as_raw().as_ptr(),
            bytes.as_ptr().cast(),
            len as _,
            c"<input>".as_ptr(),
        );
        if qjs::JS_IsException(raw) {
            Err(rquickjs::Error::Exception)
        } else {
            Ok(Value::from_raw(ctx.clone(), raw))
        }
    };
    // The text as it came (UTF-8 before the NUL was added).
    let text = std::str::from_utf8(&bytes[..len]).unwrap_or_default();
    match parsed {
        Ok(value) => return Ok(value),
        Err(rquickjs::Error::Exception) => {
            let thrown = ctx.catch();
            let headline = session
                .intrinsics()
                .filter(|_| thrown.is_error())
                .map(|i| i.error_headline(&thrown));
            match headline {
                // Not JSON: a fine string.
                Some(headline) if headline.starts_with("SyntaxError") => {}
                Some(headline) => return Err(headline),
                None => return Err("QuickJS ran out of memory".to_owned()),
            }
        }
        Err(_) => {}
    }
    rquickjs::String::from_str(ctx.clone(), text)
        .map(|s| s.into_value())
        .map_err(|_| {
            let _ = ctx.catch();
            "QuickJS could not make the string".to_owned()
        })
}

/// Fails every call in flight as cancelled.
fn fail_in_flight<'js>(ctx: &Ctx<'js>, session: &Session<'js>, why: &str) {
    let calls = session
        .with_calls(|calls| calls.take_in_flight())
        .unwrap_or_default();
    for call in calls {
        tool_error::reject(ctx, session, call, FailureKind::Cancelled, why);
    }
}
