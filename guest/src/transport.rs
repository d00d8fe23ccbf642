//! The call channel as the evaluator sees it.
//!
//! The evaluator is generic over [`Transport`] so that native tests can drive
//! it with a scripted fake that answers in any order; the child itself uses
//! [`wire::Client`] over its stdin/stdout.

use std::io::{Read, Write};

use wire::{Client, ClientError, Reply};

/// Sends tool calls and hands back their answers, matched by id.
///
/// The contract is [`wire::Client`]'s: ids are unique within the execution,
/// answers come in any order, and once the channel closes every call still in
/// flight is answered once as a [`wire::FailureKind::Cancelled`] failure
/// before [`ClientError::Closed`].
pub trait Transport {
    /// Sends one call and returns its id. An error fails only this call.
    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError>;

    /// Blocks for the next answer to a call in flight.
    fn recv(&mut self) -> Result<Reply, ClientError>;

    /// Calls sent so far, reported in the Result for reconciliation.
    fn calls(&self) -> u64;

    /// Bytes of successful values received so far, reported likewise.
    fn bytes(&self) -> u64;
}

impl<R: Read, W: Write> Transport for Client<R, W> {
    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError> {
        Client::send(self, tool, args, deadline_ms)
    }

    fn recv(&mut self) -> Result<Reply, ClientError> {
        Client::recv(self)
    }

    fn calls(&self) -> u64 {
        Client::calls(self)
    }

    fn bytes(&self) -> u64 {
        Client::bytes(self)
    }
}

impl<T: Transport + ?Sized> Transport for &mut T {
    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError> {
        (**self).send(tool, args, deadline_ms)
    }

    fn recv(&mut self) -> Result<Reply, ClientError> {
        (**self).recv()
    }

    fn calls(&self) -> u64 {
        (**self).calls()
    }

    fn bytes(&self) -> u64 {
        (**self).bytes()
    }
}
