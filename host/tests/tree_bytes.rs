//! `wasmwire::json::tree_bytes` against what building the tree really
//! takes: the peak of the bytes this thread has allocated while
//! `serde_json::Value` (with the features the parent builds it with) reads
//! each text. The estimate must cover the peak, and must not be so far
//! above it that ordinary values are refused for memory they would not
//! take.
#![allow(clippy::unwrap_used)] // Tests unwrap: a panic is a failure, with its message.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the live bytes, and their peak, of the thread that allocates
/// (each test reads one text on its own thread, so tests running at once
/// do not count each other's).
struct Counting;

thread_local! {
    // Signed: a thread frees blocks others allocated for it.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

// SAFETY: every call is passed to `System` unchanged; the counters are
// thread-local `Cell`s of plain integers, which neither allocate nor panic.
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
        // Counted as a new block before the old one is freed: how a
        // realloc that moves peaks.
        note(new_size as isize);
        note(-(layout.size() as isize));
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn note(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get().wrapping_add(delta);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The peak bytes reading `text` as a `Value` took, over what was live
/// before, and the tree's own bytes while it is held afterwards.
fn measured(text: String) -> usize {
    std::thread::spawn(move || {
        let before = LIVE.with(Cell::get);
        PEAK.with(|peak| peak.set(before));
        let value: serde_json::Value = wasmwire::json::from_str(&text).unwrap();
        let peak = PEAK.with(Cell::get) - before;
        drop(value);
        usize::try_from(peak).unwrap()
    })
    .join()
    .unwrap()
}

fn shapes() -> Vec<(&'static str, String)> {
    let repeat = |item: &str, n: usize| format!("[{}]", vec![item; n].join(","));
    vec![
        ("small ints", repeat("0", 200_000)),
        ("floats", repeat("1.5e300", 100_000)),
        ("empty arrays", repeat("[]", 200_000)),
        ("empty objects", repeat("{}", 200_000)),
        ("one-member objects", repeat(r#"{"":0}"#, 200_000)),
        ("nested one-element arrays", repeat("[[[[[[0]]]]]]", 50_000)),
        (
            "nested one-member objects",
            repeat(r#"{"a":{"a":{"a":0}}}"#, 50_000),
        ),
        ("short strings", repeat(r#""ab""#, 200_000)),
        ("one long string", format!("\"{}\"", "x".repeat(4 << 20))),
        (
            "one long string of escapes",
            // Just past a power of two: the scratch it is decoded into has
            // doubled to twice its length.
            format!("\"{}\"", r"\n".repeat((1 << 20) + 1)),
        ),
        ("strings of escapes", repeat(r#""\n\t\"""#, 200_000)),
        (
            "records",
            repeat(
                r#"{"id":12345,"host":"db1.example.com","tags":["a","b"],"load":0.75,"up":true}"#,
                20_000,
            ),
        ),
        (
            "one wide object",
            format!(
                "{{{}}}",
                (0..100_000)
                    .map(|i| format!("\"key{i}\":{i}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ),
        ("deep", format!("{}0{}", "[".repeat(900), "]".repeat(900))),
        ("a number", "42".to_owned()),
    ]
}

#[test]
fn the_estimate_covers_what_reading_a_value_takes_and_not_far_more() {
    for (shape, text) in shapes() {
        let estimate = wasmwire::json::tree_bytes(&text);
        let took = measured(text.clone());
        eprintln!(
            "{shape}: {} bytes of text, took {took} bytes at the peak, estimated {estimate} ({:.2}x)",
            text.len(),
            estimate as f64 / took.max(1) as f64
        );
        assert!(
            estimate >= took,
            "{shape}: estimated {estimate} bytes, reading it took {took}"
        );
        assert!(
            estimate <= took.max(4096) * 4,
            "{shape}: estimated {estimate} bytes, more than four times the {took} it took"
        );
    }
}
