//! What preparing a program takes of the parent's memory, whatever the
//! program: swc's parser held an error for every pair of nested labels of
//! one name (`a: a: a: … 1`), 2.5 GiB for 24 KB of program (TypeScript is
//! now compiled in a sandbox, whose memory is held to the cap). Measured here
//! with a process-wide counting allocator (the parse may run on a parser
//! thread), one test in this binary so that nothing else allocates at the
//! same time.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use wasmwire::source::{Language, SourceError, prepare};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed to `System` unchanged; the counters are
// atomics, which neither allocate nor panic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize);
        note(-(layout.size() as isize));
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn note(delta: isize) {
    let now = LIVE.fetch_add(delta, Ordering::SeqCst) + delta;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The peak bytes `prepare` took over what was live before it.
fn peak_of(program: &str, language: Language) -> (usize, Result<String, SourceError>) {
    let before = LIVE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let prepared = prepare(program, language).map(|prepared| prepared.text);
    let peak = PEAK.load(Ordering::SeqCst) - before;
    (usize::try_from(peak).unwrap(), prepared)
}

const MIB: usize = 1 << 20;

/// `n` labels of one name, nested: `a: a: … a: 1`.
fn labels(n: usize) -> String {
    format!("var a;\n{}1\n", "a: ".repeat(n))
}

#[test]
fn nested_labels_of_one_name_take_the_parent_a_bounded_amount() {
    // Past the bound (2,000 labels: 168 MiB before), the program is not
    // parsed: JavaScript goes as written (QuickJS reports its duplicate
    // label).
    let program = labels(2_000);
    let (peak, prepared) = peak_of(&program, Language::JavaScript);
    assert_eq!(prepared.unwrap(), program);
    assert!(
        peak < 4 * MIB,
        "2,000 nested labels took {peak} bytes to prepare"
    );
    // The same label spelt as a lone surrogate escape, which swc keeps as
    // one name however it is written and the bound read as none (64 KiB
    // of it: 1.56 GiB; these 2,000: 154 MiB).
    let surrogates = format!("{}1\n", "\\u{DFFF}: ".repeat(2_000));
    let (peak, prepared) = peak_of(&surrogates, Language::JavaScript);
    assert_eq!(prepared.unwrap(), surrogates);
    assert!(
        peak < 4 * MIB,
        "2,000 labels spelt as surrogates took {peak} bytes to prepare"
    );
    // TypeScript is compiled in the compiler's sandbox, whose linear memory
    // (which this allocator does not see) is held to the default cap of 64
    // MiB: swc's errors for 2,000 labels pass it, and the host's own
    // memory stays as small. Loaded first, so that compiling the compiler
    // (a cold cache) is not counted.
    assert!(prepare("1", Language::TypeScript).is_ok());
    let (peak, prepared) = peak_of(&program, Language::TypeScript);
    let error = prepared.unwrap_err().to_string();
    assert!(
        error.contains("needed more than the 67108864 bytes the execution may hold"),
        "{error}"
    );
    assert!(
        peak < 4 * MIB,
        "2,000 nested labels took {peak} bytes to refuse"
    );

    // Just under it (1,000 labels, 499,500 pairs of the 524,288
    // allowed), the parse runs, and takes what the bound says it may:
    // 48 MiB at most (96 bytes a pair; 74 measured).
    let program = labels(1_000);
    let (peak, prepared) = peak_of(&program, Language::JavaScript);
    assert_eq!(prepared.unwrap(), program, "swc refuses a duplicate label");
    assert!(
        peak > 16 * MIB && peak < 48 * MIB,
        "1,000 nested labels took {peak} bytes to parse"
    );
}
