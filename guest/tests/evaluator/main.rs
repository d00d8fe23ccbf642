//! The evaluator, driven natively by a scripted parent.
//!
//! One test binary (modules per surface) so QuickJS's C build and the
//! fixtures are shared. Every run also drops its evaluator, and QuickJS
//! aborts the process if anything was left alive: a leak fails the suite.

#![allow(clippy::unwrap_used)]

mod bindings;
mod calls;
mod channel;
mod client;
mod console;
mod fake;
mod limits;
mod program;
mod samples;
mod stop;
mod timers;
mod web;
