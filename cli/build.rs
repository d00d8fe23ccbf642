//! Link settings for the `wasmwire` binary that make a run hold fewer pages.
//!
//! - Packed relative relocations (DT_RELR) where the platform has them. The
//!   binary is position-independent, and its 1.5 MB of RELA relative
//!   relocations were read by the dynamic loader on every start: pages of
//!   the file each `wasmwire run` held. Packed, they take 17 KB. Measured on
//!   `wasmwire run` of `return 1`, page cache dropped before each series:
//!   RSS 19.5 -> 18.4 MiB. GNU ld 2.38+ and lld 15+ pack them; glibc 2.36+
//!   reads them, and ld adds the version dependency that says so.
//! - The functions a run executes laid out together (`symbol-order.txt`,
//!   written by `scripts/order-symbols`). The kernel maps a file's pages in
//!   64 KiB windows around each page a process touches, so a run touching a
//!   few thousand functions spread over 28 MiB of text held 8 MiB of it;
//!   laid out together, 2.1 MiB (RSS of the whole run 16.9 -> 10.8 MiB).
//!   The names become section patterns without their build-dependent hashes
//!   (`hot_text.rs`), in a linker script that places their sections first.
//!   The script is passed only to lld, the linker Rust uses by default on
//!   x86-64 Linux, and not when another linker is configured. A name the
//!   build does not have (a function inlined away, a changed one) matches
//!   nothing: the order is a layout hint, never a correctness matter.

mod hot_text;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=hot_text.rs");
    println!("cargo::rerun-if-changed=symbol-order.txt");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo::rerun-if-env-changed=WASMWIRE_LINK_MAP");
    let var = |name| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    let default_linker = var("TARGET") == "x86_64-unknown-linux-gnu"
        && std::env::var_os("RUSTC_LINKER").is_none()
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    let order = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("symbol-order.txt");
    if default_linker && order.is_file() {
        let Ok(names) = std::fs::read_to_string(&order) else {
            return;
        };
        let script = std::path::Path::new(&var("OUT_DIR")).join("hot-text.ld");
        if std::fs::write(&script, hot_text::linker_script(&names)).is_ok() {
            println!("cargo::rustc-link-arg-bins=-Wl,-T,{}", script.display());
        }
        // scripts/order-symbols reads which section holds each function.
        if let Some(map) = std::env::var_os("WASMWIRE_LINK_MAP") {
            println!(
                "cargo::rustc-link-arg-bins=-Wl,-Map={}",
                std::path::Path::new(&map).display()
            );
        }
    }
}
