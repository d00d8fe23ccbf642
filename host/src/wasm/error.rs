//! Errors from setting up the wasm backend. A run never returns one: how a
//! run ends is a [`ChildExit`](super::ChildExit).

/// Why a [`WasmChild`](super::WasmChild) could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    /// wasmtime refused the engine configuration (e.g. a pooling allocator
    /// too large for this machine's address space).
    /// The innermost cause is in the message too: it is nearly always the
    /// pool's address space (`mmap failed to reserve ...`), which a
    /// process runs out of after a dozen default Sandboxes.
    #[error(
        "the wasmtime engine could not be configured: {}; each Sandbox reserves address space for its whole pool (share one Sandbox, or lower `Pooling::max_children`)",
        innermost(.0.as_ref())
    )]
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

/// The last error of `error`'s chain of sources: what went wrong at bottom.
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut at = error;
    while let Some(source) = at.source() {
        at = source;
    }
    at.to_string()
}
