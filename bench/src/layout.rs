//! Whether the CLI binary was laid out by a current `cli/symbol-order.txt`.
//!
//! The file names the functions a `wasmwire run` executes, which the linker
//! places together so that a run maps few pages of text. Rust's legacy
//! symbol names carry a hash of their crate's build metadata, which changes
//! with any dependency's, so the file goes stale as the code moves on (78
//! commits left 1,445 of its 2,673 names), and the CLI's figures rise with
//! no change of its own: 14.0 MiB of peak RSS where a current file gives
//! 11.0. The benchmark says so beside the figures it would skew.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Context;
use object::{Object, ObjectSymbol};

/// Below this share of its names found, the file is called stale.
const CURRENT: f64 = 0.9;

/// How many of the order file's names the binary at `binary` has, of how
/// many.
pub fn order_found(binary: &Path, order: &Path) -> anyhow::Result<(usize, usize)> {
    let bytes = std::fs::read(binary).with_context(|| format!("reading {}", binary.display()))?;
    let file = object::File::parse(&*bytes)
        .with_context(|| format!("reading {} as an object file", binary.display()))?;
    let names: HashSet<&str> = file.symbols().filter_map(|s| s.name().ok()).collect();
    let order =
        std::fs::read_to_string(order).with_context(|| format!("reading {}", order.display()))?;
    let wanted: Vec<&str> = order.lines().filter(|l| !l.is_empty()).collect();
    let found = wanted.iter().filter(|name| names.contains(*name)).count();
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
}
