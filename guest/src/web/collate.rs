//! The primary level of `localeCompare`, in Rust, for the strings whose
//! every character collates on its own (`collate.js`'s table `V`).
//!
//! `collate.js` orders strings by sort keys it builds in JavaScript, about
//! 4 µs a short string in the component, kept for the 20,000 strings a run
//! compared last: sorting 50,000 names took 2.5 s (Node 54 ms), and
//! 200,000 ran out a 10 s wall clock. Most comparisons are decided by the
//! primary weights alone (two different names differ in a letter, not only
//! in case or accent), and for a string of characters below `V`'s end that
//! each have an entry of their own (no contraction, no combining mark, no
//! character outside the tables: `V >= 0`), the primary weights are each
//! entry's one or two primary units in order: [`compare`] walks both strings' weights and
//! answers where they differ. Where they do not (equal primaries, or a
//! character the table does not give alone), it answers 0, and the
//! JavaScript decides as before, with its keys: so every answer is the one
//! the keys would give.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ffi::c_int;

use rquickjs::{TypedArray, qjs};

/// `V`'s flag for a character that `ignorePunctuation` ignores.
const VARIABLE: i32 = 1 << 26;

thread_local! {
    /// `V`, set by the first comparison of a run (the table is built then,
    /// never in the snapshot).
    static TABLE: RefCell<Option<Box<[i32]>>> = const { RefCell::new(None) };
    /// Strings found to have a character the table does not give alone, by
    /// their place in QuickJS's heap: a sort compares each string many
    /// times, and converting one again only to find it undecidable made a
    /// sort of such strings 20% slower than the keys alone. A place reused
    /// by another string only sends that one the keys' way: never a wrong
    /// answer.
    static UNDECIDABLE: RefCell<HashSet<usize>> = RefCell::new(HashSet::new());
}

/// The most places [`UNDECIDABLE`] keeps before it starts again.
const UNDECIDABLE_KEPT: usize = 1 << 14;

/// `collationTable(V)`: keeps a copy of `V`.
pub(super) fn set_table<'js>(table: TypedArray<'js, i32>) -> rquickjs::Result<()> {
    let entries: Box<[i32]> = match table.as_raw() {
        // SAFETY: the bytes are valid until JavaScript runs again, and are
        // copied out here, before any call into the engine.
        Some(raw) => unsafe { raw.as_ref() }
            .chunks_exact(4)
            .map(|word| i32::from_le_bytes([word[0], word[1], word[2], word[3]]))
            .collect(),
        None => Box::default(),
    };
    TABLE.with(|kept| *kept.borrow_mut() = Some(entries));
    Ok(())
}

/// `comparePrimaries(a, b, shifted)`, a C function of QuickJS's own kind:
/// -1 or 1 when the primary weights of the strings `a` and `b` order them,
/// 0 when they do not (equal, or a string with a character `V` does not
/// give alone, or no table yet): the keys then decide. Every comparison of
/// a sort makes one call, and rquickjs's wrapper of a Rust function (a
/// context handle made and dropped, each argument converted) was a fifth
/// of what a call cost; this reads the two strings' UTF-8 in place (an
/// ASCII string's own bytes) and nothing else.
///
/// # Safety
///
/// Called by QuickJS only: `ctx` live, `argv` holding `argc` values.
pub(super) unsafe extern "C" fn compare_primaries(
    ctx: *mut qjs::JSContext,
    _this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
) -> qjs::JSValue {
    if argc < 3 {
        return qjs::JS_MKVAL(qjs::JS_TAG_INT, 0);
    }
    // SAFETY: QuickJS passes `argc` values in `argv`.
    let (a, b, shifted) = unsafe { (*argv, *argv.add(1), *argv.add(2)) };
    // SAFETY: reads the values' payloads only, as numbers.
    let places = unsafe {
        [
            qjs::JS_VALUE_GET_PTR(a) as usize,
            qjs::JS_VALUE_GET_PTR(b) as usize,
        ]
    };
    if UNDECIDABLE.with(|known| places.iter().any(|place| known.borrow().contains(place))) {
        return qjs::JS_MKVAL(qjs::JS_TAG_INT, 0);
    }
    // SAFETY: `ctx` is live; each C string is freed below, once.
    let order = unsafe {
        let shifted = qjs::JS_ToBool(ctx, shifted) > 0;
        let (mut a_len, mut b_len) = (0usize, 0usize);
        let a_text = qjs::JS_ToCStringLen(ctx, &mut a_len, a);
        if a_text.is_null() {
            return qjs::JS_EXCEPTION;
        }
        let b_text = qjs::JS_ToCStringLen(ctx, &mut b_len, b);
        if b_text.is_null() {
            qjs::JS_FreeCString(ctx, a_text);
            return qjs::JS_EXCEPTION;
        }
        let order = TABLE.with(|kept| {
            let kept = kept.borrow();
            let table = kept.as_deref()?;
            let texts = [
                alone(
                    table,
                    std::slice::from_raw_parts(a_text.cast::<u8>(), a_len),
                ),
                alone(
                    table,
                    std::slice::from_raw_parts(b_text.cast::<u8>(), b_len),
                ),
            ];
            match texts {
                [Some(a), Some(b)] => Some(compare(table, a, b, shifted)),
                _ => {
                    UNDECIDABLE.with(|known| {
                        let mut known = known.borrow_mut();
                        if known.len() >= UNDECIDABLE_KEPT {
                            known.clear();
                        }
                        for (text, place) in texts.iter().zip(places) {
                            if text.is_none() {
                                known.insert(place);
                            }
                        }
                    });
                    None
                }
            }
        });
        qjs::JS_FreeCString(ctx, a_text);
        qjs::JS_FreeCString(ctx, b_text);
        order
    };
    let order = match order {
        Some(Ordering::Less) => -1,
        Some(Ordering::Greater) => 1,
        Some(Ordering::Equal) | None => 0,
    };
    qjs::JS_MKVAL(qjs::JS_TAG_INT, order)
}

/// `text` (UTF-8) if every character of it has an entry of its own in
/// `table`. Every character, not only those before a difference: one that
/// needs its neighbours (a combining mark after it, a contraction) may
/// change what comes before it.
fn alone<'a>(table: &[i32], text: &'a [u8]) -> Option<&'a str> {
    let text = std::str::from_utf8(text).ok()?;
    text.chars()
        .all(|c| table.get(c as usize).is_some_and(|&v| v >= 0))
        .then_some(text)
}

/// The order of `a` and `b`, each [`alone`], by their primary weights.
fn compare(table: &[i32], a: &str, b: &str, shifted: bool) -> Ordering {
    // What both begin with weighs the same in both: each character's
    // weights are its own.
    let mut same = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(same) {
        same -= 1;
    }
    let (a, b) = (&a[same..], &b[same..]);
    Primaries::new(table, a, shifted).cmp(Primaries::new(table, b, shifted))
}

/// The primary weight units of a string of characters `table` gives alone:
/// for each, its first unit and maybe a second; nothing for one that is
/// ignorable, or variable under `shifted`.
struct Primaries<'a> {
    table: &'a [i32],
    chars: std::str::Chars<'a>,
    shifted: bool,
    second: Option<u16>,
}

impl<'a> Primaries<'a> {
    fn new(table: &'a [i32], text: &'a str, shifted: bool) -> Self {
        Primaries {
            table,
            chars: text.chars(),
            shifted,
            second: None,
        }
    }
}

impl Iterator for Primaries<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        if let Some(unit) = self.second.take() {
            return Some(unit);
        }
        loop {
            let v = self.table[self.chars.next()? as usize];
            if v == 0 || (self.shifted && v & VARIABLE != 0) {
                continue;
            }
            // As `keyOf` packs them: 7 bits, then 11 bits above 0x1FFF.
            if v & 0x3_FF80 != 0 {
                self.second = Some(0x1FFF + ((v >> 7) & 0x7FF) as u16);
            }
            return Some((v & 0x7F) as u16);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of the shape `V` has: `a`-`z` and `A`-`Z` share a primary,
    /// digits their own, `-` a variable one with a second unit, U+00AD
    /// ignorable, `é` needing the general way.
    fn table() -> Vec<i32> {
        let mut v = vec![-2; 0x500];
        for c in b'a'..=b'z' {
            v[c as usize] = i32::from(c);
            v[c.to_ascii_uppercase() as usize] = i32::from(c);
        }
        for c in b'0'..=b'9' {
            v[c as usize] = i32::from(c) | 1 << 27;
        }
        v[b'-' as usize] = 0x2D | (0x2001 - 0x1FFF) << 7 | VARIABLE;
        v[0xAD] = 0;
        v[0xE9] = -2;
        v
    }

    /// The order if both strings are [`alone`].
    fn order_in(table: &[i32], a: &str, b: &str, shifted: bool) -> Option<Ordering> {
        let (a, b) = (alone(table, a.as_bytes())?, alone(table, b.as_bytes())?);
        Some(compare(table, a, b, shifted))
    }

    fn order(a: &str, b: &str, shifted: bool) -> Option<Ordering> {
        order_in(&table(), a, b, shifted)
    }

    #[test]
    fn the_first_primary_that_differs_orders_and_a_prefix_comes_first() {
        assert_eq!(
            order("Customer 12", "Customer 13", false),
            None,
            "space: not in the table"
        );
        assert_eq!(order("apple", "banana", false), Some(Ordering::Less));
        assert_eq!(order("Zebra", "apple", false), Some(Ordering::Greater));
        assert_eq!(order("app", "apple", false), Some(Ordering::Less));
        assert_eq!(order("item10", "item9", false), Some(Ordering::Less));
    }

    #[test]
    fn equal_primaries_and_characters_not_given_alone_are_left_to_the_keys() {
        assert_eq!(order("apple", "Apple", false), Some(Ordering::Equal));
        assert_eq!(order("caf\u{e9}", "cafe", false), None);
        assert_eq!(order("cafe\u{301}", "cafe", false), None);
        assert_eq!(order("a\u{4e00}", "b", false), None, "past the table");
    }

    #[test]
    fn a_common_beginning_is_skipped_whole_characters_at_a_time() {
        let mut table = table();
        table[0xE0] = i32::from(b'a') | 3 << 18; // "à": a's primary, an accent
        table[0xE1] = i32::from(b'b') | 3 << 18; // a made-up "á" that weighs as b
        // "à" and "á" share their first UTF-8 byte: the beginning skipped
        // must end before it, not inside it.
        let (a, b) = ("x\u{e0}z", "x\u{e1}a");
        assert_eq!(order_in(&table, a, b, false), Some(Ordering::Less));
        assert_eq!(order_in(&table, b, a, false), Some(Ordering::Greater));
    }

    #[test]
    fn ignorables_are_skipped_and_variables_too_when_shifted() {
        assert_eq!(order("co\u{ad}op", "coop", false), Some(Ordering::Equal));
        assert_eq!(order("co-op", "coop", false), Some(Ordering::Less));
        assert_eq!(order("co-op", "coop", true), Some(Ordering::Equal));
        // The second unit counts: "-" weighs 0x2D then 0x2001, against "o".
        assert_eq!(order("a-", "a-a", false), Some(Ordering::Less));
    }
}
