//! The host side of the `start-channel` interface of the `child` world
//! (`wit/child.wit`): the child reads one framed Start from `read` and writes
//! one framed Result with `write`.
//!
//! Both are plain byte streams here; framing belongs to `wire`'s Starter on
//! the other end.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Generated from `wit/child.wit` (`host/wit` links to it, so the packaged
/// crate carries the world); private, so its undocumented items stay
/// out of the public API.
#[allow(missing_docs)]
mod bindings {
    wasmtime::component::bindgen!({
        path: "wit",
        world: "child",
        imports: { default: async },
    });
}

use bindings::wasmwire::child::start_channel::Host;
pub use bindings::wasmwire::child::start_channel::add_to_linker;

/// Most bytes one `read` returns, whatever length the child asks for, so a
/// child cannot make the host allocate a buffer of its choosing.
pub const MAX_READ: u32 = 64 * 1024;

/// The two streams behind the child's start channel.
pub struct StartChannel {
    input: Box<dyn AsyncRead + Send + Sync + Unpin>,
    output: Box<dyn AsyncWrite + Send + Sync + Unpin>,
    /// The input ended (EOF or error): later reads answer "closed" at once.
    input_closed: bool,
    /// Why the output failed, if it did: later writes fail the same way.
    output_failed: Option<String>,
}

impl StartChannel {
    /// A start channel reading the Start from `input` and writing the Result
    /// to `output`.
    pub fn new(
        input: Box<dyn AsyncRead + Send + Sync + Unpin>,
        output: Box<dyn AsyncWrite + Send + Sync + Unpin>,
    ) -> Self {
        StartChannel {
            input,
            output,
            input_closed: false,
            output_failed: None,
        }
    }
}

impl std::fmt::Debug for StartChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartChannel")
            .field("input_closed", &self.input_closed)
            .field("output_failed", &self.output_failed)
            .finish_non_exhaustive()
    }
}

impl Host for StartChannel {
    async fn read(&mut self, len: u32) -> Vec<u8> {
        if self.input_closed || len == 0 {
            return Vec::new();
        }
        // Reserved, not zeroed: `read_buf` fills only what arrives.
        let mut buf = Vec::with_capacity(len.min(MAX_READ) as usize);
        match self.input.read_buf(&mut buf).await {
            Ok(n) if n > 0 => buf,
            // EOF, or a broken stream: both read as "closed" to the child.
            Ok(_) | Err(_) => {
                self.input_closed = true;
                Vec::new()
            }
        }
    }

    async fn write(&mut self, bytes: Vec<u8>) -> Result<(), String> {
        if let Some(reason) = &self.output_failed {
            return Err(reason.clone());
        }
        let written = async {
            self.output.write_all(&bytes).await?;
            self.output.flush().await
        };
        written.await.map_err(|e| {
            let reason = format!("the parent closed the start channel: {e}");
            self.output_failed = Some(reason.clone());
            reason
        })
    }
}
