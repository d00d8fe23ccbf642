//! Errors from setting up the wasm backend. A run never returns one: how a
//! run ends is a [`ChildExit`](super::ChildExit).

/// Why a [`WasmChild`](super::WasmChild) could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    /// wasmtime refused the engine configuration (e.g. a pooling allocator
    /// too large for this machine's address space).
    /// The innermost cause is in the message too: most often the pool's
    /// address space (`mmap failed to reserve ...`), which a process runs
    /// out of after about 15 default Sandboxes; the message then names the
    /// remedy: share one Sandbox, or lower `Pooling::max_children`.
    #[error("the wasmtime engine could not be configured: {}", engine_cause(.0.as_ref()))]
    Engine(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The bytes are not a valid component, or it failed to compile.
    #[error("the child component could not be compiled")]
    Compile(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The component imports something the `child` world does not give, or
    /// does not export `wasi:cli/run`.
    #[error("the component is not a `child` component (wit/child.wit)")]
    NotAChild(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The component exports `wizer-initialize`, and running it or
    /// snapshotting the result failed (see
    /// [`EngineOptions::pre_initialize`](super::EngineOptions::pre_initialize)).
    #[error(
        "the child component could not be pre-initialised: {}",
        innermost(.0.as_ref())
    )]
    PreInitialize(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The epoch ticker thread could not be started.
    #[error("the epoch ticker thread could not be started")]
    Ticker(#[source] std::io::Error),
}

impl WasmError {
    pub(super) fn engine(e: wasmtime::Error) -> Self {
        WasmError::Engine(e.into_boxed_dyn_error())
    }

    pub(super) fn compile(e: wasmtime::Error) -> Self {
        WasmError::Compile(e.into_boxed_dyn_error())
    }

    pub(super) fn pre_initialize(e: wasmtime::Error) -> Self {
        WasmError::PreInitialize(e.into_boxed_dyn_error())
    }

    pub(super) fn not_a_child(e: wasmtime::Error) -> Self {
        WasmError::NotAChild(e.into_boxed_dyn_error())
    }
}

/// The innermost cause, and the remedy when the chain says an address
/// space reservation failed.
fn engine_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let cause = innermost(error);
    let reserving = std::iter::successors(Some(error), |e| e.source())
        .any(|e| e.to_string().contains("reserve"));
    if reserving {
        format!(
            "{cause}; each Sandbox reserves address space for its whole pool \
             (share one Sandbox, or lower `Pooling::max_children`)"
        )
    } else {
        cause
    }
}

/// The last error of `error`'s chain of sources: what went wrong at bottom.
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut at = error;
    while let Some(source) = at.source() {
        at = source;
    }
    at.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_innermost_cause() {
        let cause = wasmtime::Error::msg("Cannot allocate memory (os error 12)")
            .context("mmap failed to reserve 0x7dfa2000000 bytes")
            .context("failed to create memory pool mapping");
        let error = WasmError::engine(cause);
        assert_eq!(
            error.to_string(),
            "the wasmtime engine could not be configured: Cannot allocate memory (os error 12); \
             each Sandbox reserves address space for its whole pool \
             (share one Sandbox, or lower `Pooling::max_children`)"
        );
        let other = WasmError::engine(wasmtime::Error::msg("bad setting").context("configuring"));
        assert_eq!(
            other.to_string(),
            "the wasmtime engine could not be configured: bad setting"
        );
    }
}
