//! wasmwire's TypeScript compiler: reads a TypeScript program on standard
//! input and writes, on standard output, the JavaScript a child is sent
//! for it with the map of places back to the program, or why it cannot be
//! sent, as one JSON value (`host/src/source/compiled.rs`).
//!
//! Built as a WASI command component (`wasm32-wasip2`), it is what the host
//! runs to prepare a TypeScript program: in a fresh instance per program,
//! held to the execution's memory cap and ended with its wall clock, so
//! that no program makes swc cost the parent anything. swc's parse of some
//! TypeScript takes time exponential in its nesting, its transform memory
//! exponential in an enum's members; neither can be stopped midway where
//! swc runs natively.
//!
//! The preparation is the host's own code (`host/src/source/`), compiled
//! here too, with swc's stripper (`source/typescript.rs`) added. Built
//! natively the program does the same, which is how its tests run.

mod source;

use std::io::{Read, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut program = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut program) {
        eprintln!("wasmwire-typescript: the program is not UTF-8 text: {e}");
        return ExitCode::FAILURE;
    }
    let compiled = source::compile(program);
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, &compiled)
        .map_err(std::io::Error::from)
        .and_then(|()| out.flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wasmwire-typescript: could not write the answer: {e}");
            ExitCode::FAILURE
        }
    }
}
