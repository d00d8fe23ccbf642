//! The call channel as the evaluator sees it.
//!
//! The evaluator is generic over [`Transport`] so that native tests can drive
//! it with a scripted fake that answers in any order; the child itself uses
//! [`Channel`](crate::Channel) over its stdin/stdout, and [`wire::Client`]
//! is one too.

use std::collections::TryReserveError;
use std::io::{Read, Write};
use std::time::Duration;

use wire::{Client, ClientError, Reply};

/// Sends tool calls and hands back their answers, matched by id.
///
/// The contract is [`wire::Client`]'s: ids are unique within the execution,
/// answers come in any order, and once the channel closes every call still in
/// flight is answered once as a [`wire::FailureKind::Cancelled`] failure
/// before [`ClientError::Closed`].
pub trait Transport {
    /// Keeps at most `max_in_flight` calls on the wire from now on (the
    /// Start's [`max_in_flight`](wire::Start::max_in_flight)); calls made
    /// beyond it wait, in order, and go as answers free their slots. The
    /// evaluator sets it before the program runs.
    fn pace(&mut self, max_in_flight: usize);

    /// Makes one call and returns its id. An error fails only this call.
    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError>;

    /// Blocks for the next answer to a call in flight.
    fn recv(&mut self) -> Result<Reply, ClientError>;

    /// Waits at most `timeout` for the next answer to a call in flight:
    /// `Ok(None)` when none came in time. The event loop waits this way
    /// while a timer is pending.
    ///
    /// A transport that reads a blocking stream cannot stop waiting, so by
    /// default this blocks for the answer as [`recv`](Transport::recv)
    /// does (a timer due meanwhile then fires late). [`Channel`](crate::Channel),
    /// the child's own transport, waits no longer than `timeout`.
    fn recv_within(&mut self, timeout: Duration) -> Result<Option<Reply>, ClientError> {
        let _ = timeout;
        self.recv().map(Some)
    }

    /// The program no longer wants the answer to call `id` (it aborted
    /// the call's signal). A call still waiting for a slot is dropped
    /// unsent; one on the wire is withdrawn from the parent when
    /// `tell_parent` (the Start's `withdraw`) and its answer, which still
    /// comes, frees its slot. By default nothing is done: the answer comes
    /// in its time and the evaluator drops it.
    fn withdraw(&mut self, id: &str, tell_parent: bool) {
        let _ = (id, tell_parent);
    }

    /// Writes the Requests (and Withdraws) sent so far that the transport
    /// still holds. A transport may gather what it sends and write it in
    /// one go ([`Channel`](crate::Channel) does, before it waits and once
    /// it has handed out the answers it read); the evaluator flushes before
    /// the program runs code that is not an answer's (a timer), before it
    /// sleeps, and when the run ends, so that the parent has every call the
    /// Result counts. By default there is nothing to write.
    fn flush(&mut self) {}

    /// Makes room for `calls` more calls in what the transport holds, so
    /// that sending them grows none of its tables (see
    /// [`wire::InFlight::try_reserve`]); the evaluator makes it fallibly,
    /// under the program's memory limit, before it sends them. By default
    /// there is nothing to make room in.
    fn reserve(&mut self, calls: usize) -> Result<(), TryReserveError> {
        let _ = calls;
        Ok(())
    }

    /// Calls made and not yet sent: waiting for a slot under the pace. By
    /// default none (a transport that does not pace).
    fn waiting(&self) -> usize {
        0
    }

    /// Calls sent so far, reported in the Result for reconciliation.
    fn calls(&self) -> u64;

    /// Bytes of successful values received so far, reported likewise.
    fn bytes(&self) -> u64;
}

impl<R: Read, W: Write> Transport for Client<R, W> {
    fn pace(&mut self, max_in_flight: usize) {
        Client::set_max_in_flight(self, max_in_flight);
    }

    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError> {
        Client::send(self, tool, args, deadline_ms)
    }

    fn recv(&mut self) -> Result<Reply, ClientError> {
        Client::recv(self)
    }

    fn withdraw(&mut self, id: &str, tell_parent: bool) {
        // Only a Withdraw too large for a frame fails, and an id never is.
        let _ = Client::withdraw(self, id, tell_parent);
    }

    fn calls(&self) -> u64 {
        Client::calls(self)
    }

    fn bytes(&self) -> u64 {
        Client::bytes(self)
    }
}

impl<T: Transport + ?Sized> Transport for &mut T {
    fn pace(&mut self, max_in_flight: usize) {
        (**self).pace(max_in_flight);
    }

    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError> {
        (**self).send(tool, args, deadline_ms)
    }

    fn recv(&mut self) -> Result<Reply, ClientError> {
        (**self).recv()
    }

    fn recv_within(&mut self, timeout: Duration) -> Result<Option<Reply>, ClientError> {
        (**self).recv_within(timeout)
    }

    fn withdraw(&mut self, id: &str, tell_parent: bool) {
        (**self).withdraw(id, tell_parent);
    }

    fn flush(&mut self) {
        (**self).flush();
    }

    fn reserve(&mut self, calls: usize) -> Result<(), TryReserveError> {
        (**self).reserve(calls)
    }

    fn waiting(&self) -> usize {
        (**self).waiting()
    }

    fn calls(&self) -> u64 {
        (**self).calls()
    }

    fn bytes(&self) -> u64 {
        (**self).bytes()
    }
}
