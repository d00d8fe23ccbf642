//! Builds the probe child (tests/probe-child, its own cargo workspace) from
//! source with a nested `cargo build`, into `<target>/probe-wasm`, the way
//! host/build.rs builds the guest. Shared by tests/build.rs (at build time)
//! and cli/tests/cli.rs (at run time), so it uses std only.
//!
//! The nested build has its own target directory: the outer cargo holds the
//! lock on its own. It needs no C compiler, only the `wasm32-wasip2` Rust
//! target (which `scripts/setup` installs for the guest).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The probe's package (and binary) name.
pub const PACKAGE: &str = "wasmwire-probe-child";
/// The target of the probe component.
pub const WASM_TARGET: &str = "wasm32-wasip2";

/// The probe's sources, relative to the workspace: a change to any of them
/// makes the nested build rebuild it.
pub const SOURCES: &[&str] = &[
    "tests/probe-child/src",
    "tests/probe-child/Cargo.toml",
    "tests/probe-child/Cargo.lock",
    "wire/src",
    "wire/Cargo.toml",
    "wit",
];

/// Builds the probe for each of `targets` and returns each binary's path,
/// in the same order: `<target_dir>/<target>/release/wasmwire-probe-child`,
/// with `.wasm` for a wasm target.
pub fn build(
    cargo: &OsStr,
    workspace: &Path,
    target_dir: &Path,
    targets: &[&str],
) -> Result<Vec<PathBuf>, String> {
    let manifest = workspace.join("tests/probe-child/Cargo.toml");
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace.join("tests/probe-child"))
        .args(["build", "--release", "--quiet"])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir);
    for target in targets {
        command.args(["--target", target]);
    }
    crate::nested_cargo::scrub_environment(&mut command);
    let status = command
        .status()
        .map_err(|e| format!("could not run cargo to build the probe child: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the probe child ({}) failed ({status}); its errors are above. \
             If the wasm32-wasip2 target is missing, run `scripts/setup` \
             (it runs `rustup target add wasm32-wasip2`)",
            manifest.display()
        ));
    }
    let built: Vec<PathBuf> = targets
        .iter()
        .map(|target| {
            let name = if target.starts_with("wasm32") {
                format!("{PACKAGE}.wasm")
            } else {
                PACKAGE.to_string()
            };
            target_dir.join(target).join("release").join(name)
        })
        .collect();
    match built.iter().find(|path| !path.is_file()) {
        Some(missing) => Err(format!("the probe build left no {}", missing.display())),
        None => Ok(built),
    }
}
