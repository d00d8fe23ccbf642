// Empty: cargo builds a package's build-dependencies only when it has a
// build script, and this crate's build-dependencies pin the features of
// what other build scripts and proc macros use.
fn main() {}
