//! The requests an upstream server sends `wasmwire mcp` (a `ping`,
//! `roots/list`), held to a bound.
//!
//! rmcp answers each in a task of its own, and the answer waits for the
//! transport; an upstream that sends requests faster than it reads the
//! answers (a `ping` loop on a server that never reads its stdin, or on an
//! HTTP event stream) grew `wasmwire mcp` without bound: 30 MB a second
//! over HTTP, 2 GB in 12 s over stdio. wasmwire offers an upstream nothing
//! through these requests (its client handler answers the protocol's
//! minimum), so past [`MAX_UNANSWERED`] unanswered ones a request is
//! dropped, unanswered, and the first drop is said on stderr.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rmcp::RoleClient;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// The most requests of an upstream's left unanswered at once.
pub(crate) const MAX_UNANSWERED: usize = 64;

/// `T`, with the upstream's requests held to [`MAX_UNANSWERED`].
pub(crate) struct Bounded<T> {
    inner: T,
    /// The upstream's requests read and not yet answered.
    unanswered: Arc<AtomicUsize>,
    /// Whether a drop was said.
    said: AtomicBool,
    /// The upstream's name, for what is said.
    name: String,
}

impl<T> Bounded<T> {
    pub(crate) fn new(inner: T, name: &str) -> Self {
        Bounded {
            inner,
            unanswered: Arc::new(AtomicUsize::new(0)),
            said: AtomicBool::new(false),
            name: name.to_owned(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Bounded<T> {
    type Error = T::Error;

    /// Sends `item`; an answer to the upstream's request frees its place
    /// once it has been written (or could not be).
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let sent = self.inner.send(item);
        let unanswered = self.unanswered.clone();
        async move {
            let sent = sent.await;
            if answer {
                let _ = unanswered
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
            }
            sent
        }
    }

    /// The upstream's next message; a request past the bound is dropped.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if matches!(message, JsonRpcMessage::Request(_)) {
                if self.unanswered.load(Ordering::Acquire) >= MAX_UNANSWERED {
                    if !self.said.swap(true, Ordering::AcqRel) {
                        say!(
                            "upstream server {:?} sent more than {MAX_UNANSWERED} requests that \
                             were not yet answered (it reads the answers more slowly than it asks); \
                             its further requests are dropped unanswered until fewer wait",
                            self.name
                        );
                    }
                    continue;
                }
                self.unanswered.fetch_add(1, Ordering::AcqRel);
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
