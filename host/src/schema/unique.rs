//! `uniqueItems`, checked in time linear in the array.
//!
//! jsonschema's own check hashes an array's items and compares those whose
//! hashes meet, but its hash of an array is the hashes of its items one
//! after another, with neither their count nor a mark of where one ends:
//! `[]`, `[[]]` and `[[], [[]]]` all hash alike. Distinct items of that
//! shape all met, and every item was compared with every one before it:
//! 8,000 of them, 1.2 s, in the Server's task, where the wall clock cannot
//! end a check under way. Here each item's hash takes in its type, its
//! length and its parts, through a hasher keyed afresh for each array (a
//! program cannot choose items whose hashes meet), and items are
//! compared, by jsonschema's own equality, only when their hashes meet.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};

use jsonschema::json::cmp::equal;
use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Number, Value};

/// The compiled keyword: `uniqueItems: true` (a `false` checks nothing).
pub(super) struct UniqueItems {
    unique: bool,
}

/// What [`jsonschema::ValidationOptions::with_keyword`] calls for each
/// `uniqueItems` of a schema.
pub(super) fn compile<'a>(
    _parent: &'a Map<String, Value>,
    value: &'a Value,
    _path: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
    match value {
        Value::Bool(unique) => Ok(Box::new(UniqueItems { unique: *unique })),
        _ => Err(ValidationError::schema("uniqueItems must be true or false")),
    }
}

impl<'i> Keyword<'i> for UniqueItems {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.first_repeat(instance) {
            None => Ok(()),
            Some((first, again)) => Err(ValidationError::custom(format!(
                "has non-unique elements: items {first} and {again} are equal"
            ))),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.first_repeat(instance).is_none()
    }
}

impl UniqueItems {
    /// The indices of the first item that equals an earlier one, and of
    /// that earlier one; `None` if every item is unique (or `instance` is
    /// not an array, or the keyword is `false`).
    fn first_repeat(&self, instance: &Value) -> Option<(usize, usize)> {
        let Value::Array(items) = instance else {
            return None;
        };
        if !self.unique || items.len() < 2 {
            return None;
        }
        let keys = RandomState::new();
        // Each hash's items so far: nearly always one.
        let mut seen: HashMap<u64, Vec<usize>> = HashMap::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let mut hasher = keys.build_hasher();
            hash(item, &keys, &mut hasher);
            let same = seen.entry(hasher.finish()).or_default();
            #[cfg(test)]
            tests::COMPARED.with(|c| c.set(c.get() + same.len()));
            if let Some(&earlier) = same.iter().find(|&&j| equal(&items[j], item)) {
                return Some((earlier, i));
            }
            same.push(i);
        }
        None
    }
}

/// A number by its value: a whole number as an integer (so `1`, `1.0` and
/// `1e0` are one key), anything else by its bits (`-0.0` as `0`).
#[derive(PartialEq, Eq, Hash)]
enum NumberKey {
    Whole(i128),
    Bits(u64),
}

fn number_key(n: &Number) -> NumberKey {
    if let Some(i) = n.as_i64() {
        return NumberKey::Whole(i.into());
    }
    if let Some(u) = n.as_u64() {
        return NumberKey::Whole(u.into());
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    // Whole floats within i128's range (2^127) are exact as integers.
    if f.fract() == 0.0 && f.abs() < 1.7e38 {
        return NumberKey::Whole(f as i128);
    }
    NumberKey::Bits(f.to_bits())
}

/// Feeds `value` to `state`: its type, its length and its parts, so that
/// values jsonschema holds [`equal`] hash alike and no two shapes share a stream. An
/// object's entries are hashed each on its own and added up, so that their
/// order does not count.
fn hash(value: &Value, keys: &RandomState, state: &mut impl Hasher) {
    match value {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => {
            state.write_u8(1);
            b.hash(state);
        }
        Value::Number(n) => {
            state.write_u8(2);
            number_key(n).hash(state);
        }
        Value::String(s) => {
            state.write_u8(3);
            s.hash(state);
        }
        Value::Array(items) => {
            state.write_u8(4);
            state.write_usize(items.len());
            for item in items {
                hash(item, keys, state);
            }
        }
        Value::Object(entries) => {
            state.write_u8(5);
            state.write_usize(entries.len());
            let mut sum = 0u64;
            for (key, value) in entries {
                let mut entry = keys.build_hasher();
                key.hash(&mut entry);
                hash(value, keys, &mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            state.write_u64(sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    std::thread_local! {
        /// Items compared with an earlier one whose hash met theirs.
        pub(super) static COMPARED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn repeat(items: Value) -> Option<(usize, usize)> {
        UniqueItems { unique: true }.first_repeat(&items)
    }

    #[test]
    fn equal_values_are_found_whatever_their_form() {
        assert_eq!(repeat(json!([1, 2, 1.0])), Some((0, 2)));
        assert_eq!(repeat(json!([0, -0.0])), Some((0, 1)));
        assert_eq!(
            repeat(json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}])),
            Some((0, 1))
        );
        assert_eq!(repeat(json!(["x", "y", "x"])), Some((0, 2)));
        assert_eq!(repeat(json!([null, false, null])), Some((0, 2)));
        assert_eq!(repeat(json!([1e300, 1e300])), Some((0, 1)));
        assert_eq!(
            repeat(json!([18446744073709551615u64, 18446744073709551615u64])),
            Some((0, 1))
        );
    }

    #[test]
    fn different_values_are_unique() {
        for items in [
            json!([1, "1", [1], {"1": 1}, true, null]),
            json!([[], [[]], [[], []], [[[]]]]),
            json!([{"a": 1}, {"a": 1, "b": 1}, {"b": 1}]),
            json!([1.5, 1, 2, 0.1]),
            json!([9007199254740993u64, 9007199254740992u64]),
            json!([]),
            json!("not an array"),
        ] {
            assert_eq!(repeat(items.clone()), None, "{items}");
        }
        assert_eq!(
            UniqueItems { unique: false }.first_repeat(&json!([1, 1])),
            None
        );
    }

    /// The shape whose hashes all met in jsonschema's check: every item a
    /// nest of empty arrays, each different. 20,000 of them took seconds
    /// there (quadratic); here a test's time.
    #[test]
    fn items_that_met_in_jsonschemas_hash_are_told_apart() {
        let items: Vec<Value> = (0..20_000)
            .map(|i| {
                let mut v = json!([]);
                for bit in 0..15 {
                    v = if i >> bit & 1 == 1 {
                        json!([v, []])
                    } else {
                        json!([v])
                    };
                }
                v
            })
            .collect();
        COMPARED.with(|c| c.set(0));
        assert_eq!(repeat(Value::Array(items.clone())), None);
        // Hashes that met by chance, if any: not every earlier item.
        assert!(
            COMPARED.with(|c| c.get()) < 10,
            "{}",
            COMPARED.with(|c| c.get())
        );
        let mut twice = items;
        twice.push(twice[7].clone());
        assert_eq!(repeat(Value::Array(twice)), Some((7, 20_000)));
    }
}
