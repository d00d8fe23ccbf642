//! Builds the probe child (tests/probe-child) for `wasm32-wasip2` and for the
//! host, and hands their paths to the suites as the compile-time variables
//! `WASMWIRE_PROBE_WASM` and `WASMWIRE_PROBE_NATIVE` (see
//! src/probe_build.rs and src/probe.rs).

use std::env;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[path = "../host/buildsupport/nested_cargo.rs"]
mod nested_cargo;
#[path = "src/probe_build.rs"]
mod probe_build;

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
    let var = |name: &str| env::var(name).map_err(|_| format!("cargo did not set {name}"));
    let manifest_dir = PathBuf::from(var("CARGO_MANIFEST_DIR")?);
    let workspace = manifest_dir
        .parent()
        .ok_or("tests/ has no parent directory")?
        .to_path_buf();
    let out_dir = PathBuf::from(var("OUT_DIR")?);
    let host = var("HOST")?;
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/probe_build.rs");
    println!("cargo::rerun-if-changed=../host/buildsupport/nested_cargo.rs");
    for source in probe_build::SOURCES {
        println!(
            "cargo::rerun-if-changed={}",
            workspace.join(source).display()
        );
    }

    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let target_dir = nested_cargo::target_dir(&out_dir, &workspace).join("probe-wasm");
    let built = probe_build::build(
        &cargo,
        &workspace,
        &target_dir,
        &[probe_build::WASM_TARGET, &host],
    )?;
    for (name, path) in ["WASMWIRE_PROBE_WASM", "WASMWIRE_PROBE_NATIVE"]
        .iter()
        .zip(&built)
    {
        println!("cargo::rustc-env={name}={}", path.display());
    }
    Ok(())
}
