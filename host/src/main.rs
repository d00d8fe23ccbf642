//! `wasmwire`: run a JavaScript program in the sandbox from the command line.
//!
//! stdout gets exactly one line, the final Result as JSON; stderr gets the
//! program's console output and diagnostics. Exit code: 0 when the Result is
//! ok, 1 when it is not, 2 for usage or set-up errors, 3 when the child broke
//! the protocol.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
