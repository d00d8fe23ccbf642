//! Whether the CLI binary was laid out by a current `cli/symbol-order.txt`.
//!
//! The file names the functions a `wasmwire run` executes, which the linker
//! places together so that a run maps few pages of text. Its names are
//! matched without their build-dependent hashes (`cli/hot_text.rs`), but a
//! function renamed, moved or no longer run still leaves the file behind,
//! and the CLI's figures rise with no change of their own (14.0 MiB of peak
//! RSS where a current file gives 11.0). The benchmark says so beside the
//! figures it would skew.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Context;
use object::{Object, ObjectSymbol};

// The CLI's build uses the rest of it (its linker script); tested here.
#[allow(dead_code)]
#[path = "../../cli/hot_text.rs"]
mod hot_text;

/// Below this share of its names found, the file is called stale.
const CURRENT: f64 = 0.9;

/// How many of the order file's names the binary at `binary` has (as the
/// linker matches them: by pattern), of how many.
pub fn order_found(binary: &Path, order: &Path) -> anyhow::Result<(usize, usize)> {
    let bytes = std::fs::read(binary).with_context(|| format!("reading {}", binary.display()))?;
    let file = object::File::parse(&*bytes)
        .with_context(|| format!("reading {} as an object file", binary.display()))?;
    let names: HashSet<String> = file
        .symbols()
        .filter_map(|s| s.name().ok().and_then(hot_text::pattern))
        .collect();
    let order =
        std::fs::read_to_string(order).with_context(|| format!("reading {}", order.display()))?;
    let wanted: Vec<String> = order.lines().filter_map(hot_text::pattern).collect();
    let found = wanted
        .iter()
        .filter(|pattern| names.contains(*pattern))
        .count();
    Ok((found, wanted.len()))
}

/// A line for stderr about the CLI's layout, if one is worth saying.
pub fn order_note(binary: &Path) -> Option<String> {
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/symbol-order.txt");
    match order_found(binary, &order) {
        // Counted over a whole file: a ratio, not an amount.
        #[allow(clippy::cast_precision_loss)]
        Ok((found, wanted)) if wanted > 0 && (found as f64) < CURRENT * wanted as f64 => {
            Some(format!(
                "cli/symbol-order.txt is stale: {found} of its {wanted} names are in {}; \
                 the CLI's figures read high until scripts/order-symbols is run",
                binary.display()
            ))
        }
        Ok(_) => None,
        Err(e) => Some(format!("could not check the CLI's symbol order: {e:#}")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.
mod tests {
    use super::*;

    #[test]
    fn names_the_binary_lacks_are_counted_out() {
        let binary = std::env::current_exe().unwrap();
        let dir = std::env::temp_dir().join(format!("wasmwire-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let order = dir.join("order.txt");
        // `main` is in every test binary; the other name in none.
        std::fs::write(&order, "main\nno_such_function_17h0000000000000000E\n").unwrap();
        let counted = order_found(&binary, &order).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(counted, (1, 2));
    }

    #[test]
    fn a_name_matches_itself_in_another_build() {
        let same = |a: &str, b: &str| {
            let (a, b) = (hot_text::pattern(a).unwrap(), hot_text::pattern(b).unwrap());
            assert_eq!(a, b);
            a
        };
        // Legacy names: the hash at the end.
        let legacy = same(
            "_ZN8wasmwire3cli4main17h0123456789abcdefE",
            "_ZN8wasmwire3cli4main17hfedcba9876543210E.llvm.1234",
        );
        assert_eq!(legacy, "_ZN8wasmwire3cli4main17h*E");
        // v0 names: each crate's hash, and ThinLTO's number.
        let v0 = same(
            "_RINvNtCsjrHSEGnQ3l9_3std2io5printNtCs6d7GoaNTBIz_8wasmwire4TextECsgEmfK2I1SDS_3cli",
            "_RINvNtCs1_3std2io5printNtCsZZZZZZZZZZZ_8wasmwire4TextECs9_3cli.llvm.77",
        );
        assert_eq!(v0, "_RINvNtCs*_3std2io5printNtCs*_8wasmwire4TextECs*_3cli");
        // A cold function's section.
        let cold = same(
            "unlikely._RNvCsABC_8wasmwire4fail",
            "unlikely._RNvCsXYZ_8wasmwire4fail.llvm.9",
        );
        assert_eq!(cold, "unlikely._RNvCs*_8wasmwire4fail");
    }

    #[test]
    fn a_name_that_differs_elsewhere_does_not_match() {
        let pattern = |name| hot_text::pattern(name).unwrap();
        // Another type argument: another function.
        assert_ne!(
            pattern("_RINvNtCs1_3std2io5printNtCs2_8wasmwire4TextE"),
            pattern("_RINvNtCs1_3std2io5printNtCs2_8wasmwire5BytesE")
        );
        // `Cs` inside a name, not a crate's hash, is kept.
        assert_eq!(pattern("_RNvCs1_3csv8CsvError"), "_RNvCs*_3csv8CsvError");
        // A legacy-looking ending on a name that is not mangled is kept.
        assert_eq!(pattern("f17h0123456789abcdefE"), "f17h0123456789abcdefE");
        // Placeholders and names with a glob's characters are no names.
        assert_eq!(hot_text::pattern("(below main)"), None);
        assert_eq!(hot_text::pattern("a*b"), None);
        assert_eq!(hot_text::pattern(""), None);
    }

    #[test]
    fn the_linker_script_keeps_the_order_once_each() {
        let script = hot_text::linker_script(
            "_ZN1b4main17h0123456789abcdefE\n(below main)\n_ZN1a4main17h0000000000000000E\n\
             _ZN1b4main17hffffffffffffffffE\n",
        );
        let b = script
            .find("*(.text._ZN1b4main17h*E .text._ZN1b4main17h*E.llvm.*)")
            .unwrap();
        let a = script.find("*(.text._ZN1a4main17h*E ").unwrap();
        assert!(b < a, "{script}");
        assert_eq!(script.matches("_ZN1b4main").count(), 2, "{script}");
        assert!(!script.contains("below"), "{script}");
        // Everything else after them, in the same output section.
        assert!(
            script
                .trim_end()
                .ends_with("*(.text .text.*)\n  }\n}\nINSERT BEFORE .init;"),
            "{script}"
        );
    }
}
