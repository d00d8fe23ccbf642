//! Running a nested `cargo build` from a build script or a test: shared by
//! host/build.rs (the guest component), tests/build.rs and cli/tests/cli.rs
//! (the probe child). Included with `#[path]`, so it uses std only.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment of an outer cargo (for a build script, or for a test it runs),
/// or that a user set for the outer build, that would change or break a
/// nested build: flags for the host target, the outer target directory and
/// target, the clippy driver (a different fingerprint would rebuild on every
/// switch between `cargo build` and `cargo clippy`), and the per-package
/// variables cargo sets. The jobserver (`CARGO_MAKEFLAGS`) is inherited on
/// purpose: the nested build shares the outer build's job slots.
const NOT_INHERITED: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_TARGET_DIR",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_LINKER",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_PRIMARY_PACKAGE",
    "OUT_DIR",
    "TARGET",
    "HOST",
    "NUM_JOBS",
    "OPT_LEVEL",
    "DEBUG",
    "PROFILE",
    "RUSTC_WRAPPER",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
];
/// Prefixes of the per-package variables among them.
const NOT_INHERITED_PREFIXES: &[&str] = &[
    "CARGO_FEATURE_",
    "CARGO_CFG_",
    "CARGO_PKG_",
    "DEP_",
    "CARGO_BIN_EXE_",
];

/// Removes from `command` every variable of [`NOT_INHERITED`].
pub fn scrub_environment(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let name_text = name.to_string_lossy();
        if NOT_INHERITED.contains(&name_text.as_ref())
            || NOT_INHERITED_PREFIXES
                .iter()
                .any(|p| name_text.starts_with(p))
        {
            command.env_remove(&name);
        }
    }
}

/// The outer target directory: the ancestor of OUT_DIR above
/// `<profile>/build` (it honours `--target-dir` and `CARGO_TARGET_DIR`
/// alike), else `<workspace>/target`.
pub fn target_dir(out_dir: &Path, workspace: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "build"))
        .and_then(|build| build.parent()?.parent())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| workspace.join("target"))
}
