//! What calls waiting for a place hold, bounded.
//!
//! A call waits, before it starts, for one of its client's places for
//! unread answers and for a place among the executions running
//! ([`crate::held`], [`Limits::max_running`](crate::config::Limits)).
//! rmcp starts a task for every request it reads, and the call's program
//! (with the request's `_meta`) is held by that task while it waits: a
//! client sending requests faster than they run made the server hold them
//! all (100 programs of 4 MB: 528 MB; over HTTP, requests whose connections
//! had closed, 1.31 GB, and every one of them still ran later).
//!
//! So a call that cannot take its places at once takes a ticket here
//! first: at most [`Limits::max_waiting`](crate::config::Limits) calls
//! wait, of every client together, holding at most
//! [`Limits::max_waiting_bytes`](crate::config::Limits) of programs and
//! `_meta` between them. A call that finds no ticket is refused at once
//! ("server busy", `transient`), holding nothing more; a call that gets
//! its places gives its ticket back. A call whose client cancels it
//! (`notifications/cancelled`), or whose HTTP response stream is gone (its
//! connection closed), stops waiting and never runs.

use tokio::sync::{Semaphore, SemaphorePermit};
use wasmwire::wire::{Held, Holdings};

/// The tickets of calls waiting for a place.
#[derive(Debug)]
pub(crate) struct Waiting {
    tickets: Semaphore,
    max: usize,
    bytes: Holdings,
}

/// A waiting call's ticket: its place among the waiting calls and its
/// bytes, given back when dropped.
#[derive(Debug)]
pub(crate) struct Ticket<'a> {
    _ticket: SemaphorePermit<'a>,
    _bytes: Held,
}

impl Waiting {
    /// At most `max` calls waiting, holding at most `max_bytes` together.
    pub(crate) fn new(max: usize, max_bytes: usize) -> Self {
        Waiting {
            tickets: Semaphore::new(max),
            max,
            bytes: Holdings::new(max_bytes),
        }
    }

    /// A ticket for a call that holds `bytes` while it waits, or why there
    /// is none ("server busy", the limit, and how to raise it).
    pub(crate) fn enter(&self, bytes: usize) -> Result<Ticket<'_>, String> {
        let Ok(ticket) = self.tickets.try_acquire() else {
            return Err(format!(
                "server busy: {} calls already wait for a place to run (max_waiting); send it \
                 again once an answer has come back, or raise max_waiting in the server's config",
                self.max
            ));
        };
        let bytes = self.bytes.try_hold(bytes).map_err(|over| {
            format!(
                "server busy: the calls waiting for a place to run hold {} of the {} bytes they \
                 may (max_waiting_bytes), and this one's {} bytes (its program and _meta) would \
                 go over; send it again once an answer has come back, or raise \
                 max_waiting_bytes in the server's config",
                over.used, over.cap, over.asked
            )
        })?;
        Ok(Ticket {
            _ticket: ticket,
            _bytes: bytes,
        })
    }
}

/// The bytes `value` takes written as JSON, counted without writing it.
pub(crate) fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_max_waiting_calls_or_bytes_a_call_is_refused_busy_and_tickets_come_back() {
        let waiting = Waiting::new(2, 100);
        let a = waiting.enter(40).unwrap();
        let b = waiting.enter(40).unwrap();
        let why = waiting.enter(1).unwrap_err();
        assert!(
            why.contains("server busy: 2 calls") && why.contains("raise max_waiting"),
            "{why}"
        );
        drop(a);
        let why = waiting.enter(61).unwrap_err();
        assert!(
            why.contains("server busy") && why.contains("raise max_waiting_bytes"),
            "{why}"
        );
        // The refused call held nothing: the ticket it took came back.
        let c = waiting.enter(60).unwrap();
        drop((b, c));
        let _all = waiting.enter(100).unwrap();
        // None may wait at all.
        assert!(Waiting::new(0, 100).enter(0).is_err());
    }

    #[test]
    fn json_len_is_the_written_length() {
        let value = serde_json::json!({"progressToken": "x".repeat(1000), "n": [1, 2]});
        assert_eq!(json_len(&value), serde_json::to_vec(&value).unwrap().len());
    }
}
