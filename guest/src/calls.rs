//! The call table: calls the program made, by state.
//!
//! A binding does not send anything itself: it queues the call and returns
//! its promise, and the event loop sends every queued call as soon as the
//! program yields. `Promise.all` over fifty calls therefore puts fifty
//! Requests on the wire before the first Response is awaited.

use std::collections::HashMap;

use rquickjs::{Function, Object};
use wire::FailureKind;

/// One call the program made.
#[derive(Debug)]
pub(crate) struct Call<'js> {
    /// The tool's name.
    pub(crate) tool: String,
    /// The args text, as sent.
    pub(crate) args: String,
    /// The program's per-call deadline wish; 0 = none.
    pub(crate) deadline_ms: u64,
    /// Settles the program's promise with the value.
    pub(crate) resolve: Function<'js>,
    /// Settles the program's promise with a ToolError.
    pub(crate) reject: Function<'js>,
    /// The error made at the call site; it becomes the ToolError.
    pub(crate) site: Object<'js>,
}

/// A ToolError the evaluator handed to the program, and its true class.
#[derive(Debug)]
pub(crate) struct IssuedToolError<'js> {
    /// The object itself; recognised by identity, never by its properties.
    pub(crate) error: Object<'js>,
    /// The class of the failure.
    pub(crate) kind: FailureKind,
    /// The tool that failed.
    pub(crate) tool: String,
}

/// Calls queued, calls in flight, and the ToolErrors issued so far.
#[derive(Debug, Default)]
pub(crate) struct Calls<'js> {
    queued: Vec<Call<'js>>,
    in_flight: HashMap<String, Call<'js>>,
    issued: Vec<IssuedToolError<'js>>,
}

impl<'js> Calls<'js> {
    /// Queues a call made by the program.
    pub(crate) fn queue(&mut self, call: Call<'js>) {
        self.queued.push(call);
    }

    /// Takes every queued call, oldest first, for sending.
    pub(crate) fn take_queued(&mut self) -> Vec<Call<'js>> {
        std::mem::take(&mut self.queued)
    }

    /// Records a call the transport accepted under `id`.
    pub(crate) fn sent(&mut self, id: String, call: Call<'js>) {
        self.in_flight.insert(id, call);
    }

    /// Takes the call answered by `id`, if it is in flight.
    pub(crate) fn answered(&mut self, id: &str) -> Option<Call<'js>> {
        self.in_flight.remove(id)
    }

    /// Calls sent and not yet answered.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Takes every call in flight (the channel is gone).
    pub(crate) fn take_in_flight(&mut self) -> Vec<Call<'js>> {
        let mut calls: Vec<_> = self.in_flight.drain().collect();
        // Lowest id first, so that failures are delivered deterministically.
        calls.sort_by(|(a, _), (b, _)| (a.len(), a).cmp(&(b.len(), b)));
        calls.into_iter().map(|(_, call)| call).collect()
    }

    /// Remembers a ToolError handed to the program.
    pub(crate) fn issue(&mut self, issued: IssuedToolError<'js>) {
        self.issued.push(issued);
    }

    /// The record of `error` if it is a ToolError the evaluator made.
    pub(crate) fn issued(&self, error: &Object<'js>) -> Option<&IssuedToolError<'js>> {
        self.issued.iter().find(|i| i.error == *error)
    }
}
