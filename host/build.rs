//! Hands the library its two components, built for `wasm32-wasip2`: the
//! guest (package `wasmwire-guest`, the child) as the compile-time
//! environment variable `WASMWIRE_GUEST_WASM`, and the TypeScript compiler
//! (package `wasmwire-typescript`, run to prepare a TypeScript program) as
//! `WASMWIRE_TYPESCRIPT_WASM`, for `include_bytes!`. Three sources, first
//! match:
//!
//! 1. `WASMWIRE_PREBUILT_GUEST=<file.wasm>`: that guest component (for
//!    machines that build the guest elsewhere), and the shipped compiler.
//! 2. `WASMWIRE_GUEST_FROM_SOURCE=1`: both built from `guest/` and
//!    `typescript/` now, at once, by two nested `cargo build`s, each with a
//!    target directory of its own (`<target>/guest-wasm` and
//!    `<target>/typescript-wasm`; sharing the outer one would wait forever
//!    on the outer cargo's lock, sharing one the two would take turns).
//!    QuickJS is C, so this needs a wasi-sdk: this
//!    script makes a wasi-sdk-shaped directory of symlinks to Debian's
//!    clang-19 and wasi-libc (as `scripts/setup` installs them) unless
//!    `WASI_SDK` already names one. The build is reproducible: paths of the
//!    checkout, the target directory and cargo's home are remapped, so the
//!    same sources give the same bytes on any machine with the same
//!    toolchain (the test command checks this against the shipped file).
//! 3. Otherwise the components that ship with the crate,
//!    `prebuilt/wasmwire-guest.wasm` and `prebuilt/wasmwire-typescript.wasm`,
//!    so that building the library needs neither clang, nor wasi-libc, nor
//!    the wasm32 target.
//!
//! Each one's SHA-256 goes with it, as `WASMWIRE_GUEST_SHA256` and
//! `WASMWIRE_TYPESCRIPT_SHA256` (the file of the 32 bytes): the
//! compiled-component cache is keyed by it, and hashing 2 MB at every start
//! was a sixth of a CLI run.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};

const GUEST_PACKAGE: &str = "wasmwire-guest";
const TYPESCRIPT_PACKAGE: &str = "wasmwire-typescript";
const GUEST_TARGET: &str = "wasm32-wasip2";
/// Names a guest component built elsewhere, to embed instead of building one.
const PREBUILT: &str = "WASMWIRE_PREBUILT_GUEST";
/// Set to `1`, builds the guest from `guest/` instead of embedding the
/// shipped component.
const FROM_SOURCE: &str = "WASMWIRE_GUEST_FROM_SOURCE";
/// The shipped components, relative to this crate.
const SHIPPED: &str = "prebuilt/wasmwire-guest.wasm";
const SHIPPED_TYPESCRIPT: &str = "prebuilt/wasmwire-typescript.wasm";

/// Debian's parts of a wasi-sdk (packages clang-19, llvm-19, wasi-libc).
const CLANG: &str = "/usr/bin/clang-19";
const AR: &str = "/usr/bin/llvm-ar-19";
const WASI_INCLUDE: &str = "/usr/include/wasm32-wasi";
const WASI_LIB: &str = "/usr/lib/wasm32-wasi";
/// From libclang-rt-19-dev-wasm32: clang links its builtins from here.
const CLANG_RT: &str = "/usr/lib/llvm-19/lib/clang/19/lib/wasi/libclang_rt.builtins-wasm32.a";

const SETUP_HINT: &str = "run `scripts/setup` once: it installs clang-19, lld-19, wasi-libc and \
     libclang-rt-19-dev-wasm32 with apt-get and runs `rustup target add wasm32-wasip2`";

#[path = "buildsupport/nested_cargo.rs"]
mod nested_cargo;

fn main() -> ExitCode {
    match build() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            println!("cargo::error={message}");
            ExitCode::FAILURE
        }
    }
}

fn build() -> Result<(), String> {
    let manifest_dir = PathBuf::from(var("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(var("OUT_DIR")?);
    println!("cargo::rerun-if-env-changed={PREBUILT}");
    println!("cargo::rerun-if-env-changed={FROM_SOURCE}");

    // An escape hatch for machines that build the guest elsewhere.
    if let Some(prebuilt) = env::var_os(PREBUILT) {
        let embedded = out_dir.join("wasmwire-guest.wasm");
        fs::copy(&prebuilt, &embedded)
            .map_err(|e| format!("{PREBUILT}={}: {e}", Path::new(&prebuilt).display()))?;
        println!("cargo::rerun-if-changed={}", Path::new(&prebuilt).display());
        embed(&embedded, "GUEST")?;
        return embed_shipped(&manifest_dir, SHIPPED_TYPESCRIPT, "TYPESCRIPT");
    }
    if env::var_os(FROM_SOURCE).is_some_and(|v| v == "1") {
        return from_source(&manifest_dir, &out_dir);
    }
    embed_shipped(&manifest_dir, SHIPPED, "GUEST")?;
    embed_shipped(&manifest_dir, SHIPPED_TYPESCRIPT, "TYPESCRIPT")
}

/// Embeds the shipped component at `shipped` as `WASMWIRE_<name>_*`.
fn embed_shipped(manifest_dir: &Path, shipped: &str, name: &str) -> Result<(), String> {
    let shipped = manifest_dir.join(shipped);
    if !shipped.is_file() {
        return Err(format!(
            "{} is missing: build the components from source with {FROM_SOURCE}=1",
            shipped.display()
        ));
    }
    println!("cargo::rerun-if-changed={}", shipped.display());
    embed(&shipped, name)
}

/// Builds the guest from `guest/` and the TypeScript compiler from
/// `typescript/` (a checkout of the whole workspace) and embeds them.
fn from_source(manifest_dir: &Path, out_dir: &Path) -> Result<(), String> {
    let workspace = manifest_dir
        .parent()
        .ok_or("host/ has no parent directory")?
        .to_path_buf();
    if !workspace.join("guest/Cargo.toml").is_file() {
        return Err(format!(
            "{FROM_SOURCE}=1 needs the whole wasmwire workspace (guest/ is not next to {})",
            manifest_dir.display()
        ));
    }
    watch(&workspace);

    let target_dir = nested_cargo::target_dir(out_dir, &workspace);
    let wasi_sdk = wasi_sdk(&target_dir.join("guest-wasm"))?;
    check_rust_target()?;

    let builds = [
        (GUEST_PACKAGE, target_dir.join("guest-wasm"), "GUEST"),
        (
            TYPESCRIPT_PACKAGE,
            target_dir.join("typescript-wasm"),
            "TYPESCRIPT",
        ),
    ];
    // Both at once: each ends in a link of one thread (fat LTO), which the
    // other's compiling overlaps. They share the outer build's job slots.
    let running: Vec<_> = builds
        .iter()
        .map(|(package, dir, _)| nested_build(package, &workspace, dir, &wasi_sdk))
        .collect();
    let mut failed = None;
    for (build, (package, ..)) in running.into_iter().zip(&builds) {
        let ended = build.and_then(|mut child| {
            child
                .wait()
                .map_err(|e| format!("could not wait for the cargo building {package}: {e}"))
        });
        let why = match ended {
            Ok(status) if status.success() => continue,
            Ok(status) => format!(
                "building the {package} component failed ({status}); its errors are above. \
                 If a C compiler or the wasm32-wasip2 target is missing, {SETUP_HINT}"
            ),
            Err(why) => why,
        };
        failed.get_or_insert(why);
    }
    if let Some(why) = failed {
        return Err(why);
    }
    for (package, dir, name) in &builds {
        let built = dir
            .join(GUEST_TARGET)
            .join("release")
            .join(format!("{package}.wasm"));
        // A copy per build, so a concurrent nested build cannot change the
        // bytes under this crate's `include_bytes!`.
        let embedded = out_dir.join(format!("{package}.wasm"));
        fs::copy(&built, &embedded)
            .map_err(|e| format!("the build left no {}: {e}", built.display()))?;
        embed(&embedded, name)?;
    }
    Ok(())
}

/// Starts building `package` for the guest target in `target_dir`, with
/// its own cargo: one package a build, so that what one depends on cannot
/// change the features (and so the bytes) of the other.
fn nested_build(
    package: &str,
    workspace: &Path,
    target_dir: &Path,
    wasi_sdk: &Path,
) -> Result<Child, String> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args([
            "build",
            "--release",
            "--target",
            GUEST_TARGET,
            "-p",
            package,
        ])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        // The workspace's release profile keeps debug info for the host;
        // in the guest it would be most of the component (the C parts get
        // full DWARF), embedded in every host binary. The name section
        // stays, so traps still name the guest's functions.
        .args(["--config", "profile.release.debug=false"])
        .args(["--config", "profile.release.strip=\"debuginfo\""])
        // Whole-program optimisation of the guest's Rust (its C is compiled
        // by clang, at the level set below): the workspace's release
        // profile is incremental, which splits every crate into hundreds of
        // codegen units. Measured: fib(27) 5-7% faster, the component 9%
        // smaller.
        .args(["--config", "profile.release.incremental=false"])
        .args(["--config", "profile.release.codegen-units=1"])
        .args(["--config", "profile.release.lto=\"fat\""])
        .env("WASI_SDK", wasi_sdk);
    nested_cargo::scrub_environment(&mut command);
    let mut cflags = reproducible(&mut command, workspace, target_dir);
    // QuickJS's vsnprintf calls (every line of every stack trace) go to the
    // guest's own, which writes the formats they use without wasi-libc's
    // general printf machinery: guest/c/format.c.
    cflags.push("-Dvsnprintf=wasmwire_vsnprintf".to_owned());
    // And its strtod calls (every number JSON.parse reads, integers too) to
    // one with a fast path for short decimals: guest/c/strtod.c.
    cflags.push("-Dstrtod=wasmwire_strtod".to_owned());
    // And its pow calls (`**`, Math.pow) to one that squares by a
    // multiplication, as V8 does: guest/c/pow.c.
    cflags.push("-Dpow=wasmwire_pow".to_owned());
    // The guest's C (QuickJS's, format.c and strtod.c) at -O2 rather than the
    // profile's -O3; cc puts these flags after its own, so this one wins.
    // QuickJS's interpreter loop (`JS_CallInternal`, where a compute-bound
    // program spends all its time) is one huge function, and what -O3
    // adds to it made Cranelift's code slower. Measured side by side:
    // fib(27) 10% faster (36.6-38.6 against 41.0-41.5 ms), JSON and tool
    // calls unchanged; -O1 and -Os were slower than both.
    cflags.push("-O2".to_owned());
    command.env("CFLAGS_wasm32_wasip2", cflags.join(" "));
    command
        .spawn()
        .map_err(|e| format!("could not run cargo to build {package}: {e}"))
}

/// Remaps every machine-specific path the guest's build would record (in
/// panic locations and C `__FILE__`s), so that its bytes depend only on the
/// sources and the toolchain: the checkout, the nested target directory
/// (QuickJS is compiled from a copy in `OUT_DIR`) and cargo's home (the
/// registry's sources). Sets the Rust flags; returns the C flags.
fn reproducible(command: &mut Command, workspace: &Path, target_dir: &Path) -> Vec<String> {
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let mut maps = vec![
        (workspace.to_path_buf(), "/wasmwire"),
        (target_dir.to_path_buf(), "/target"),
    ];
    if let Some(home) = cargo_home {
        maps.push((home, "/cargo"));
    }
    // The target directory is usually inside the checkout, so the longer
    // prefix must win: rustc applies the last flag that matches, so it goes
    // last (clang tries nested prefixes longest first by itself).
    maps.sort_by_key(|(from, _)| std::cmp::Reverse(from.as_os_str().len()));
    let rustflags: Vec<String> = maps
        .iter()
        .rev()
        .map(|(from, to)| format!("--remap-path-prefix={}={to}", from.display()))
        .collect();
    command.env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\x1f"));
    maps.iter()
        .map(|(from, to)| format!("-ffile-prefix-map={}={to}", from.display()))
        .collect()
}

/// Hands `component` to the library as `WASMWIRE_<name>_WASM`, and its
/// SHA-256 as `WASMWIRE_<name>_SHA256`.
fn embed(component: &Path, name: &str) -> Result<(), String> {
    println!(
        "cargo::rustc-env=WASMWIRE_{name}_WASM={}",
        component.display()
    );
    use sha2::{Digest, Sha256};
    let bytes =
        fs::read(component).map_err(|e| format!("cannot read {}: {e}", component.display()))?;
    let digest_file = PathBuf::from(var("OUT_DIR")?).join(format!(
        "{}.sha256",
        component
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name)
    ));
    fs::write(&digest_file, Sha256::digest(&bytes))
        .map_err(|e| format!("cannot write {}: {e}", digest_file.display()))?;
    println!(
        "cargo::rustc-env=WASMWIRE_{name}_SHA256={}",
        digest_file.display()
    );
    Ok(())
}

fn var(name: &str) -> Result<String, String> {
    env::var(name).map_err(|_| format!("cargo did not set {name}"))
}

/// Rebuild the components when their sources, the protocol or the WIT
/// change (the TypeScript compiler compiles the host's `src/source/` too).
fn watch(workspace: &Path) {
    for path in [
        "guest/src",
        "guest/Cargo.toml",
        "guest/build.rs",
        "guest/c",
        "guest/rquickjs-sys",
        "typescript/src",
        "typescript/build.rs",
        "typescript/Cargo.toml",
        "host/src/source",
        "wire/src",
        "wire/Cargo.toml",
        "wit",
        "Cargo.toml",
        "Cargo.lock",
        ".cargo/config.toml",
        "host/buildsupport/nested_cargo.rs",
    ] {
        let path = workspace.join(path);
        // A path that does not exist would make cargo rerun this every time.
        if path.exists() {
            println!("cargo::rerun-if-changed={}", path.display());
        }
    }
    println!("cargo::rerun-if-env-changed=WASI_SDK");
}

/// `WASI_SDK` if the user set one, else a wasi-sdk-shaped directory of
/// symlinks under `dir`, made (idempotently) now.
fn wasi_sdk(dir: &Path) -> Result<PathBuf, String> {
    if let Some(sdk) = env::var_os("WASI_SDK").map(PathBuf::from)
        && sdk.is_dir()
    {
        return Ok(sdk);
    }
    let missing: Vec<&str> = [CLANG, AR, WASI_INCLUDE, WASI_LIB, CLANG_RT]
        .into_iter()
        .filter(|path| !Path::new(path).exists())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the C toolchain for the wasm guest is missing ({} not found); {SETUP_HINT}",
            missing.join(", ")
        ));
    }
    let sdk = dir.join("wasi-sdk");
    let sysroot = sdk.join("share/wasi-sysroot");
    let io =
        |e: std::io::Error| format!("could not make the wasi-sdk shim in {}: {e}", sdk.display());
    for sub in [
        "bin",
        "share/wasi-sysroot/include",
        "share/wasi-sysroot/lib",
    ] {
        fs::create_dir_all(sdk.join(sub)).map_err(io)?;
    }
    link(CLANG, &sdk.join("bin/clang")).map_err(io)?;
    link(AR, &sdk.join("bin/ar")).map_err(io)?;
    for triple in ["wasm32-wasi", "wasm32-wasip1", "wasm32-wasip2"] {
        link(WASI_INCLUDE, &sysroot.join("include").join(triple)).map_err(io)?;
        link(WASI_LIB, &sysroot.join("lib").join(triple)).map_err(io)?;
    }
    Ok(sdk)
}

/// Makes `link` a symlink to `target`, replacing whatever is there unless it
/// already is exactly that.
fn link(target: &str, link: &Path) -> std::io::Result<()> {
    if fs::read_link(link).is_ok_and(|existing| existing == Path::new(target)) {
        return Ok(());
    }
    match fs::remove_file(link) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::os::unix::fs::symlink(target, link)
}

/// The standard library for the guest target must be installed through rustup.
fn check_rust_target() -> Result<(), String> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let output = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", GUEST_TARGET])
        .output()
        .map_err(|e| format!("could not run rustc: {e}"))?;
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() || libdir.is_empty() || !Path::new(&libdir).is_dir() {
        return Err(format!(
            "the Rust standard library for {GUEST_TARGET} is not installed; {SETUP_HINT}"
        ));
    }
    Ok(())
}
