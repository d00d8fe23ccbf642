//! Links the component so that its shadow stack cannot run into its heap.
//!
//! Only for wasm32 targets: a native build (the tests) links as usual.
//! A build script rather than `.cargo/config.toml`, because a workspace build
//! (and the host's nested build of this crate) does not read a member's
//! config file.

/// The shadow stack's size. It counts towards the child's linear memory, so
/// it is sized against the native stack rather than made huge: QuickJS uses
/// about 300 bytes of it per JavaScript call but about three times that of
/// wasmtime's native stack (`max_wasm_stack`), so 3.75 MiB outlasts any
/// native stack up to about 11 MiB. QuickJS's stack check throws at three
/// quarters of it used (`limits::configure_stack`). (4 MiB until the set-up scripts grew
/// the memory an execution starts with past 6 MiB, where a budget of 8 MiB
/// left no room for a program.)
const STACK_BYTES: u64 = 15 << 18;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    compile_format();
    embed_scripts();
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg=-zstack-size={STACK_BYTES}");
        // The stack below the data and heap: an overflow faults at address
        // 0 instead of silently overwriting static data.
        println!("cargo:rustc-link-arg=--stack-first");
    }
}

/// Writes each set-up script (`src/*.js`, `src/web/*.js`) to `OUT_DIR`
/// without the indentation of its lines and with every line that is only a
/// comment left empty, so every line stays where it was (a column of these
/// files' own frames moves, and the console shows none of those frames),
/// then deflated, as `NAME.js.deflate`. The embedded bytes are data of the
/// component, part of the linear memory every execution starts with and
/// that `max_memory` counts, and are read once, at set-up: 215 KB of
/// source became 158 KB of text and 46 KB deflated. None of these files has a string or
/// template literal that spans lines (every evaluator test runs every
/// script, so a line changed inside one would fail them all).
fn embed_scripts() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // Every `.js` file of `src` and `src/web`, as `script!` names it.
    let mut scripts = Vec::new();
    for folder in ["", "web"] {
        let dir = std::path::Path::new("src").join(folder);
        println!("cargo:rerun-if-changed={}", dir.display());
        for entry in
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        {
            let name = entry.expect("a folder entry").file_name();
            let name = name.to_str().expect("a file name in UTF-8");
            if name.ends_with(".js") {
                scripts.push(std::path::Path::new(folder).join(name));
            }
        }
    }
    for script in scripts {
        let from = std::path::Path::new("src").join(&script);
        println!("cargo:rerun-if-changed={}", from.display());
        let text = std::fs::read_to_string(&from)
            .unwrap_or_else(|e| panic!("reading {}: {e}", from.display()));
        let kept: String = text
            .split_inclusive('\n')
            .map(|line| {
                let line = line.trim_start_matches([' ', '\t']);
                if line.starts_with("//") {
                    if line.ends_with('\n') { "\n" } else { "" }
                } else {
                    line
                }
            })
            .collect();
        let mut to = out.join(&script).into_os_string();
        to.push(".deflate");
        let to = std::path::PathBuf::from(to);
        std::fs::create_dir_all(to.parent().expect("a file's folder"))
            .unwrap_or_else(|e| panic!("making {}: {e}", to.display()));
        // The text's length, then the text deflated at level 10 (miniz's
        // best: the bytes are written once, here); `setup::Script` reads it.
        let length = u32::try_from(kept.len()).expect("a script under 4 GiB");
        let mut embedded = length.to_le_bytes().to_vec();
        embedded.extend(miniz_oxide::deflate::compress_to_vec(kept.as_bytes(), 10));
        std::fs::write(&to, embedded).unwrap_or_else(|e| panic!("writing {}: {e}", to.display()));
    }
}

/// Compiles `c/format.c`, the vsnprintf QuickJS's stack traces go through in
/// the component, and `c/strtod.c`, the strtod its JSON numbers go through
/// (and both, natively, for their tests). On wasm32 with the compiler and
/// C library that build QuickJS: wasi-sdk's, where host/build.rs set
/// `WASI_SDK`.
fn compile_format() {
    println!("cargo:rerun-if-changed=c/format.c");
    println!("cargo:rerun-if-changed=c/strtod.c");
    println!("cargo:rerun-if-changed=c/pow.c");
    println!("cargo:rerun-if-env-changed=WASI_SDK");
    let mut build = cc::Build::new();
    build
        .file("c/format.c")
        .file("c/strtod.c")
        .file("c/pow.c")
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
