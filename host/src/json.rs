//! Reading the JSON a child sent (a Result's value, a call's args) into
//! Rust values, whatever JavaScript put in it.
//!
//! `serde_json::from_str` refuses two things a JavaScript program gives
//! without trying: a string holding half of a surrogate pair (JSON escapes
//! it, `"\ud83d"`; no Rust string can hold it) and nesting deeper than 128
//! levels. [`from_str`] reads the first as U+FFFD, the replacement
//! character (as JavaScript's `toWellFormed` does), and the second up to
//! [`MAX_DEPTH`] levels; deeper is a clear [`ReadError::TooDeep`], so that
//! no tree is built that takes more stack to drop or write than a thread
//! has.
//!
//! ```
//! let value: serde_json::Value = wasmwire::json::from_str(r#"{"cut": "\ud83d"}"#)?;
//! assert_eq!(value["cut"], "\u{fffd}");
//! let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
//! assert!(wasmwire::json::from_str::<serde_json::Value>(&deep).is_ok());
//! # Ok::<(), wasmwire::json::ReadError>(())
//! ```

use serde::de::DeserializeOwned;
use wire::{Held, Holdings, OverHoldings};

/// The deepest nesting of arrays and objects [`from_str`] reads. A
/// JavaScript program's value nests a few thousand levels at most before
/// the child's own stack ends it; real values and args nest a handful.
pub const MAX_DEPTH: usize = 1000;

/// Nesting serde_json reads with its own recursion limit (128) on, and
/// that any reader of the parent's takes on the stack it has.
pub(crate) const SHALLOW: usize = 120;

/// Why a JSON text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// It nests deeper than [`MAX_DEPTH`].
    #[error("it nests {depth} levels deep, more than the {max} that are read")]
    TooDeep {
        /// How deep it nests.
        depth: usize,
        /// [`MAX_DEPTH`].
        max: usize,
    },
    /// It is not JSON, or not JSON of the shape asked for.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// How deep `text` nests (arrays and objects; `0` for a scalar), read
/// without recursing, for a reader with a limit of its own.
pub fn depth(text: &str) -> usize {
    wire::json::survey(text).depth
}

/// About how many bytes of memory reading `text` as a
/// `serde_json::Value` takes at its peak, counted from the text without
/// reading it: every value's place in its array or object (with the room
/// a growing `Vec` leaves), every object's index, every string's bytes.
/// An upper bound for JSON, never more than a few times what the tree
/// really takes (`host/tests/tree_bytes.rs` measures both). A tree can take
/// fifty times its text (`[{"":0},{"":0},...]`), so a parent reads what a
/// child sent into one only when this fits what it may hold for the child.
pub fn tree_bytes(text: &str) -> usize {
    shape(text).tree_bytes
}

/// How deep `text` nests and what it takes as a tree, from one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// As [`depth`] gives it.
    pub depth: usize,
    /// As [`tree_bytes`] gives it.
    pub tree_bytes: usize,
}

/// [`depth`] and [`tree_bytes`] of `text`, read once.
pub fn shape(text: &str) -> Shape {
    let survey = wire::json::survey(text);
    Shape {
        depth: survey.depth,
        tree_bytes: estimate(&survey),
    }
}

/// Holds, against `holdings`, the memory reading `text` as a tree takes
/// ([`tree_bytes`]), before it is read: a handler that reads a call's args
/// into a tree keeps this while it holds the tree, so that what a child
/// sends cannot make its parent hold more than the cap, however it is
/// shaped.
pub fn hold_tree(holdings: &Holdings, text: &str) -> Result<Held, TreeTooLarge> {
    hold_surveyed(holdings, text, &wire::json::survey(text))
}

/// Reads `text` as [`from_str`] does, once what its tree takes is held
/// against `holdings` ([`hold_tree`]): the hold comes back with the value,
/// to be kept for as long as the value is; and the text's survey (how
/// deep it nests, how many object members it writes), for a caller that
/// walks, checks or passes on the value. One pass over the text serves
/// the hold, the read and the caller.
pub fn read_held<T: DeserializeOwned>(
    holdings: &Holdings,
    text: &str,
) -> Result<(T, Held, wire::json::Survey), HeldReadError> {
    let survey = wire::json::survey(text);
    let held = hold_surveyed(holdings, text, &survey)?;
    Ok((read(text, &survey)?, held, survey))
}

/// Why [`read_held`] read nothing.
#[derive(Debug, thiserror::Error)]
pub enum HeldReadError {
    /// Its tree would not fit in what the parent holds.
    #[error(transparent)]
    TooLarge(#[from] TreeTooLarge),
    /// It could not be read ([`from_str`]'s errors).
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// [`hold_tree`] of a text already surveyed.
fn hold_surveyed(
    holdings: &Holdings,
    text: &str,
    survey: &wire::json::Survey,
) -> Result<Held, TreeTooLarge> {
    let tree = estimate(survey);
    holdings.try_hold(tree).map_err(|over| TreeTooLarge {
        text: text.len(),
        tree,
        over,
    })
}

/// JSON whose tree would not fit in what the parent holds for the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "its {text} bytes of JSON would take about {tree} bytes of the parent's memory read as a tree, \
     and the parent holds {} of its {} bytes for this execution",
    over.used,
    over.cap
)]
pub struct TreeTooLarge {
    /// Bytes of the text.
    pub text: usize,
    /// [`tree_bytes`] of it.
    pub tree: usize,
    /// The hold that would have gone over the cap.
    pub over: OverHoldings,
}

fn estimate(survey: &wire::json::Survey) -> usize {
    const ALLOCATION: usize = 16;
    // No args at all.
    if survey.values == 0 {
        return 0;
    }
    let slot = std::mem::size_of::<serde_json::Value>();
    // A member's place: its hash and key beside its value's slot, and its
    // entry in the index.
    let member = std::mem::size_of::<(u64, String)>() + 2 * std::mem::size_of::<usize>() + 1;
    // A growing `Vec` holds up to twice its length, and three times while
    // it moves.
    let places = survey
        .values
        .saturating_mul(slot)
        .saturating_add(survey.members.saturating_mul(member))
        .saturating_mul(3);
    let strings = survey
        .strings
        .saturating_mul(ALLOCATION)
        // A string with an escape is decoded into a scratch buffer that
        // grows as a `Vec` does, then copied out.
        .saturating_add(survey.string_bytes.saturating_mul(2));
    // A `Vec`'s first allocation has room for four: a one-element array
    // takes a fourth slot past the three above.
    let containers = survey.containers.saturating_mul(4 * ALLOCATION + slot);
    places
        .saturating_add(strings)
        .saturating_add(containers)
        .saturating_add(slot)
}

/// Reads `text` as a `T`: lone surrogates as U+FFFD, up to [`MAX_DEPTH`]
/// levels of nesting.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, ReadError> {
    read(text, &wire::json::survey(text))
}

/// [`from_str`] of a text already surveyed.
fn read<T: DeserializeOwned>(text: &str, survey: &wire::json::Survey) -> Result<T, ReadError> {
    if survey.depth > MAX_DEPTH {
        return Err(ReadError::TooDeep {
            depth: survey.depth,
            max: MAX_DEPTH,
        });
    }
    let repaired;
    let text = if survey.lone_surrogates > 0 {
        repaired = wire::json::replace_lone_surrogates(text.to_owned());
        repaired.as_str()
    } else {
        text
    };
    if survey.depth <= SHALLOW {
        return Ok(serde_json::from_str(text)?);
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = T::deserialize(serde_stacker::Deserializer::new(&mut deserializer))?;
    deserializer.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn nesting_up_to_the_maximum_is_read_and_deeper_is_refused() {
        let value: Value = from_str(&nested(MAX_DEPTH)).expect("read");
        let mut level = &value;
        let mut depth = 0;
        while let Some(inner) = level.get(0) {
            level = inner;
            depth += 1;
        }
        assert_eq!((depth, level), (MAX_DEPTH, &json!(1)));
        let error = from_str::<Value>(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert!(
            matches!(error, ReadError::TooDeep { depth, .. } if depth == MAX_DEPTH + 1),
            "{error}"
        );
    }

    #[test]
    fn deep_nesting_is_read_on_a_small_stack() {
        // 256 KiB of stack, an eighth of a tokio worker's. In a release
        // build serde_json's own recursion would fit too; the stacker is
        // for debug builds, whose frames are several times larger.
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| from_str::<Value>(&nested(MAX_DEPTH)).map(|_| ()))
            .expect("a thread")
            .join()
            .expect("no overflow")
            .expect("read");
    }

    #[test]
    fn a_lone_surrogate_reads_as_the_replacement_character() {
        let value: Value = from_str(r#"["\ud83d", "\ud83d\ude00", "\udc00x"]"#).expect("read");
        assert_eq!(value, json!(["\u{fffd}", "😀", "\u{fffd}x"]));
    }

    #[test]
    fn what_is_not_json_is_still_refused() {
        for text in ["", "[1,", "{\"a\" 1}", "[1] 2"] {
            assert!(
                matches!(from_str::<Value>(text), Err(ReadError::Json(_))),
                "{text}"
            );
        }
        let deep_and_broken = format!("{}1{}", "[".repeat(500), "]".repeat(499));
        assert!(from_str::<Value>(&deep_and_broken).is_err());
    }
}
