//! End-to-end suites through the library, in one binary so the guest
//! component is compiled once: real JS programs in the real guest, every
//! budget at its boundary, isolation, and hostile process children.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

mod budgets;
mod children;
mod collate;
mod datetimeformat;
mod describe;
mod hostile;
mod isolation;
mod memory_sweep;
mod numberformat;
mod pacing;
mod positions;
mod probe;
mod process_tree;
mod programs;
mod surface;
mod timers;
mod typescript;
mod web;
mod words;
