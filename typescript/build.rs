//! The component's stack: swc's parser and visitors recurse about once per
//! level of a program's nesting (and per operator of a chain such as
//! `a < a < …`), and Rust's 1 MiB default for wasm32 ends a program of a
//! few hundred levels. The stack is placed first in linear memory, so one
//! that overflows traps (an access below address 0) rather than writing
//! over data; it counts against the execution's memory cap, in which the
//! compiler runs, but only the pages a program's nesting touches are
//! ever resident.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo::rustc-link-arg-bins=-zstack-size={}", 8 << 20);
    }
}
