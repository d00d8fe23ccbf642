//! The functions a `wasmwire run` executes, as patterns the linker matches
//! whatever the build: `cli/build.rs` writes them into a linker script, and
//! the benchmark (`bench/src/layout.rs`) checks with them whether
//! `symbol-order.txt` still describes the binary.
//!
//! Rust puts each function in a section of its own, `.text.<symbol>`
//! (`symbol-order.txt` holds the part after `.text.`). A
//! symbol's name holds parts that change from build to build with nothing
//! changed in the function: the hash of each crate it names (in v0 names,
//! `Cs<base-62>_` before the crate's name; the crate's build metadata,
//! which any dependency's version or features move), the hash of a legacy
//! name (`17h<16 hex digits>E` at its end), and the number ThinLTO gives a
//! local function it makes visible (`.llvm.<digits>`). A pattern has `*` in
//! their place.

/// The pattern of one section's name (after `.text.`: a symbol's, or
/// `unlikely.` and a symbol's), or `None` for a name that is not a plain
/// symbol.
pub fn pattern(name: &str) -> Option<String> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.';
    if name.is_empty() || !name.bytes().all(plain) {
        return None;
    }
    // LLVM's cold functions (`#[cold]`) are in `.text.unlikely.<symbol>`.
    if let Some(symbol) = name.strip_prefix("unlikely.") {
        return pattern(symbol).map(|p| format!("unlikely.{p}"));
    }
    let name = name.find(".llvm.").map_or(name, |at| &name[..at]);
    if let Some(stem) = legacy_stem(name) {
        return Some(format!("{stem}17h*E"));
    }
    if !name.starts_with("_R") {
        return Some(name.to_owned());
    }
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut at = 0;
    while at < bytes.len() {
        if let Some(after) = crate_hash_end(bytes, at) {
            out.push_str("Cs*_");
            at = after;
        } else {
            out.push(char::from(bytes[at]));
            at += 1;
        }
    }
    Some(out)
}

/// A legacy name without its hash: `..17h0123456789abcdefE` -> `..`.
fn legacy_stem(name: &str) -> Option<&str> {
    let stem = name.strip_suffix('E')?;
    let (stem, hash) = stem.split_at_checked(stem.len().checked_sub(16)?)?;
    let stem = stem.strip_suffix("17h")?;
    (name.starts_with("_ZN") && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(stem)
}

/// Where a v0 crate root's disambiguator ends, if one starts at `at`: `C`,
/// `s`, base-62 digits, `_`, and then the crate's name, which starts with
/// its length.
fn crate_hash_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at..at + 2)? != b"Cs" {
        return None;
    }
    let digits = bytes[at + 2..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let underscore = at + 2 + digits;
    let named = bytes.get(underscore + 1).is_some_and(u8::is_ascii_digit);
    (digits > 0 && bytes.get(underscore) == Some(&b'_') && named).then_some(underscore + 1)
}

/// A linker script that lays out the sections of the named functions, in
/// the order given, at the start of the `.text` output section, and every
/// other code section after them as the linker would. It keeps the linker's
/// default layout of everything else (`INSERT BEFORE .init`: where `.text`
/// goes by default; a section of its own instead would be code outside
/// `.text`, which valgrind, for one, cannot name). A pattern that matches
/// a few more sections than the one meant (the same function of another
/// build of a crate) costs a few bytes in the hot part, nothing else.
pub fn linker_script(names: &str) -> String {
    let mut script = String::from("SECTIONS {\n  .text : {\n");
    let mut seen = std::collections::HashSet::new();
    for pattern in names.lines().filter_map(pattern) {
        if seen.insert(pattern.clone()) {
            script.push_str(&format!("    *(.text.{pattern} .text.{pattern}.llvm.*)\n"));
        }
    }
    script.push_str("    *(.text .text.*)\n  }\n}\nINSERT BEFORE .init;\n");
    script
}
