//! Links the component so that its shadow stack cannot run into its heap.
//!
//! Only for wasm32 targets: a native build (the tests) links as usual.
//! A build script rather than `.cargo/config.toml`, because a workspace build
//! (and the host's nested build of this crate) does not read a member's
//! config file.

/// The shadow stack's size. It counts towards the child's linear memory, so
/// it is sized against the native stack rather than made huge: QuickJS uses
/// about 300 bytes of it per JavaScript call but about three times that of
/// wasmtime's native stack (`max_wasm_stack`), so 4 MiB outlasts any native
/// stack up to about 12 MiB. The evaluator's stack guard stops a program
/// when half of it is used.
const STACK_BYTES: u64 = 4 << 20;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    compile_format();
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg=-zstack-size={STACK_BYTES}");
        // The stack below the data and heap: an overflow faults at address
        // 0 instead of silently overwriting static data.
        println!("cargo:rustc-link-arg=--stack-first");
    }
}

/// Compiles `c/format.c`, the vsnprintf QuickJS's stack traces go through in
/// the component (and, natively, for its tests). On wasm32 with the
/// compiler and C library that build QuickJS: wasi-sdk's, where
/// host/build.rs set `WASI_SDK`.
fn compile_format() {
    println!("cargo:rerun-if-changed=c/format.c");
    println!("cargo:rerun-if-env-changed=WASI_SDK");
    let mut build = cc::Build::new();
    build
        .file("c/format.c")
        .warnings(true)
        .warnings_into_errors(true);
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32")
        && let Some(sdk) = std::env::var_os("WASI_SDK")
    {
        let sdk = std::path::Path::new(&sdk);
        build
            .compiler(sdk.join("bin/clang"))
            .archiver(sdk.join("bin/ar"))
            .flag(format!(
                "--sysroot={}",
                sdk.join("share/wasi-sysroot").display()
            ));
    }
    build.compile("wasmwire_format");
}
