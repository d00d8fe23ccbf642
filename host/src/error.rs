//! The errors the host API returns. Everything that happens *inside* an
//! execution ends in a [`crate::Outcome`] instead; these are only for what
//! stops an execution from starting at all.

use crate::wasm::WasmError;

/// Why a [`crate::Sandbox`] could not be built or an execution not started.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The wasm engine or component could not be set up.
    #[error(transparent)]
    Wasm(#[from] WasmError),
    /// The execution asked for a budget item this backend cannot hold.
    #[error("the {backend} backend cannot hold `{item}`; refusing to start rather than pretend")]
    Unsupported {
        /// The backend's name.
        backend: &'static str,
        /// The budget item (`wall_clock`, `max_calls`, `max_bytes`, `max_memory`).
        item: &'static str,
    },
    /// The execution asked for more of a budget item than this backend can hold.
    #[error(
        "the {backend} backend holds `{item}` only up to {most}; {asked} was asked (refusing to start rather than cap it silently)"
    )]
    OverCeiling {
        /// The backend's name.
        backend: &'static str,
        /// The budget item.
        item: &'static str,
        /// What was asked.
        asked: u64,
        /// The most it holds.
        most: u64,
    },
    /// The program is too large to send: its Start does not fit in a frame.
    #[error(
        "the program of {bytes} bytes is too large: its Start does not fit in a frame of {max} bytes"
    )]
    ProgramTooLarge {
        /// The program's length.
        bytes: usize,
        /// The frame maximum.
        max: usize,
    },
    /// The tools' bindings alone make the Start too large for a frame
    /// (thousands of tools, or names and signatures of megabytes).
    #[error(
        "the {tools} tools' names and signatures take {bytes} bytes, too many for a Start to fit in a frame of {max} bytes with any program"
    )]
    ToolsTooLarge {
        /// How many tools are registered.
        tools: usize,
        /// The bytes their names and signatures take.
        bytes: usize,
        /// The frame maximum.
        max: usize,
    },
    /// A [`SandboxOptions`](crate::SandboxOptions) setting no run can use
    /// ([`SandboxOptions::check`](crate::SandboxOptions::check)).
    #[error("SandboxOptions::{option}: {why}")]
    BadOption {
        /// The setting.
        option: &'static str,
        /// Why no run can use it.
        why: &'static str,
    },
    /// The process child could not be started.
    #[error("could not start the child process `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// A tool was registered with a bad name or signature.
    #[error("tool {name:?}: {why}")]
    BadTool {
        /// The tool's name.
        name: String,
        /// What is wrong with it.
        why: String,
    },
}
