//! What listing everything wrong with a call's args would cost.
//!
//! Whether args fit is asked first, of jsonschema's `is_valid`, which
//! answers once for each part of the args and each recursive definition
//! that reaches it. The list of what is wrong (`iter_errors`) remembers
//! nothing: an `anyOf` lists each alternative's errors, and each of those
//! lists its own, so a definition that refers to itself twice at each
//! level (two alternatives that both look inside, or an `allOf` whose
//! parts both do) doubles the list with every level of the args: 150
//! bytes of args nested 24 deep took 24 GB and the machine's memory, in
//! the Server's task, where the wall clock cannot end a check under way.
//!
//! So before the list is made, [`report_cost`] bounds it: how many times
//! a subschema is applied to a part of the args, walking the args
//! themselves with the schema (each property by its name, each item by
//! its place), counting a subschema reached again inside itself at the
//! same part once (as jsonschema's own guard does) and every other way to
//! it in full. What a keyword applies to only some parts (`patternProperties`,
//! `additionalProperties`) is counted for all of them, so the bound is
//! never below what the list costs. Past [`REPORT_BUDGET`] the walk stops
//! and the call is answered without the list.

use std::collections::HashMap;

use serde_json::Value;

use super::{INNER_PART, SAME_PART, Walk, subschemas};

/// The most subschemas a list of what is wrong with a call's args may
/// apply. Measured: args of 120,000 items that each break one rule took
/// 74 ms to list and about 58 MB of the parent's memory while the list
/// was made (every error is kept until the first few are written).
pub(crate) const REPORT_BUDGET: u64 = 100_000;

/// Subschemas applied to one part of the args, each with how many times.
type Applied<'a> = HashMap<*const Value, (&'a Value, u64)>;

/// What the subschemas applied to one part apply inside it. `properties`
/// and the lists of `prefixItems` are kept as they are written and looked
/// up by the part's own keys and places: a schema of 20,000 properties
/// applied to 5,000 numbers made a map of them all 5,000 times.
#[derive(Default)]
struct Inner<'a> {
    /// `properties` maps, each with the times it applies.
    named: Vec<(&'a serde_json::Map<String, Value>, u64)>,
    /// Lists of subschemas by place (`prefixItems`, an array of `items`).
    placed: Vec<(&'a [Value], u64)>,
    /// To every property and every item.
    every: Applied<'a>,
}

/// How many subschemas listing what is wrong with `args` applies at most,
/// or `None` past `budget`.
pub(super) fn report_cost(schema: &Value, args: &Value, budget: u64) -> Option<u64> {
    let mut cost = Cost {
        walk: Walk::new(schema),
        spent: 0,
        budget,
        open: Vec::new(),
    };
    let mut root = Applied::new();
    add(&mut root, schema, 1);
    cost.part(args, root).then_some(cost.spent)
}

struct Cost<'a> {
    /// The schema, to follow its references.
    walk: Walk<'a>,
    /// Subschemas applied so far.
    spent: u64,
    budget: u64,
    /// The subschemas being applied to the current part, outermost first.
    open: Vec<*const Value>,
}

fn add<'a>(applied: &mut Applied<'a>, schema: &'a Value, times: u64) {
    let entry = applied.entry(schema).or_insert((schema, 0));
    entry.1 = entry.1.saturating_add(times);
}

impl<'a> Cost<'a> {
    /// Applies `applied` to `part` and what they apply inside it to each
    /// of its properties or items; false once past the budget.
    fn part(&mut self, part: &Value, applied: Applied<'a>) -> bool {
        let mut inner = Inner::default();
        for (schema, times) in applied.into_values() {
            if !self.apply(schema, times, &mut inner) {
                return false;
            }
        }
        let children: Box<dyn Iterator<Item = (Option<&str>, Option<usize>, &Value)>> = match part {
            Value::Object(map) => Box::new(map.iter().map(|(k, v)| (Some(k.as_str()), None, v))),
            Value::Array(items) => {
                Box::new(items.iter().enumerate().map(|(i, v)| (None, Some(i), v)))
            }
            _ => return true,
        };
        // Each look-up counts, so that looking is bounded too.
        let lookups = (inner.named.len() + inner.placed.len()) as u64;
        for (name, place, child) in children {
            self.spent = self.spent.saturating_add(lookups);
            if self.spent > self.budget {
                return false;
            }
            let mut next = inner.every.clone();
            if let Some(name) = name {
                for &(map, times) in &inner.named {
                    if let Some(sub) = map.get(name) {
                        add(&mut next, sub, times);
                    }
                }
            }
            if let Some(place) = place {
                for &(list, times) in &inner.placed {
                    if let Some(sub) = list.get(place) {
                        add(&mut next, sub, times);
                    }
                }
            }
            if !next.is_empty() && !self.part(child, next) {
                return false;
            }
        }
        true
    }

    /// Applies `schema`, `times` over, to the current part: counts it and
    /// what it brings in on the same part, and gathers what it applies
    /// inside into `inner`. False once past the budget.
    fn apply(&mut self, schema: &'a Value, times: u64, inner: &mut Inner<'a>) -> bool {
        self.spent = self.spent.saturating_add(times);
        if self.spent > self.budget {
            return false;
        }
        let Value::Object(object) = schema else {
            return true;
        };
        self.open.push(schema);
        let mut within = true;
        for (keyword, value) in object {
            let keyword = keyword.as_str();
            if let Some(target) = self.walk.referenced(keyword, value) {
                // One the walk cannot follow is never registered (it
                // counts as too large there); here it is past any bound.
                within = match target {
                    Some(target) => self.same_part(target, times, inner),
                    None => false,
                };
            } else if SAME_PART.contains(&keyword) {
                for (_, sub) in subschemas(keyword, value) {
                    within = within && self.same_part(sub, times, inner);
                }
            } else if INNER_PART.contains(&keyword) {
                match (keyword, value) {
                    ("properties", Value::Object(map)) => inner.named.push((map, times)),
                    ("prefixItems" | "items", Value::Array(subs)) => {
                        inner.placed.push((subs, times));
                    }
                    _ => {
                        for (_, sub) in subschemas(keyword, value) {
                            add(&mut inner.every, sub, times);
                        }
                    }
                }
            }
            if !within {
                break;
            }
        }
        self.open.pop();
        within
    }

    /// [`Self::apply`] of a subschema on the same part, unless it is being
    /// applied to it already (jsonschema's guard stops such a loop).
    fn same_part(&mut self, schema: &'a Value, times: u64, inner: &mut Inner<'a>) -> bool {
        let key: *const Value = schema;
        self.open.contains(&key) || self.apply(schema, times, inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Args nested `depth` deep as `{"children": [{"children": [...]}]}`.
    fn nested(depth: usize) -> Value {
        let mut v = json!({"children": []});
        for _ in 0..depth {
            v = json!({"children": [v]});
        }
        v
    }

    #[test]
    fn a_plain_schema_costs_its_subschemas_per_part() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "additionalProperties": {"type": "boolean"},
        });
        // The root, a look in `properties` for each key, then `a` with
        // `additionalProperties` counted for it too, and `c` with that alone.
        assert_eq!(report_cost(&schema, &json!({"a": "x"}), 1000), Some(4));
        assert_eq!(
            report_cost(&schema, &json!({"a": "x", "c": 1}), 1000),
            Some(6)
        );
        assert_eq!(report_cost(&schema, &json!({}), 1000), Some(1));
    }

    /// A definition that refers to itself once a level costs a few
    /// subschemas a level; one that does so twice doubles every level.
    #[test]
    fn a_definition_applied_twice_a_level_doubles_and_is_stopped() {
        let once = json!({
            "type": "object",
            "$ref": "#/$defs/node",
            "$defs": {"node": {"properties": {"children": {"items": {"$ref": "#/$defs/node"}}}}},
        });
        let cost = report_cost(&once, &nested(200), u64::MAX).unwrap();
        assert!(cost < 2_000, "{cost}");
        let twice = json!({
            "type": "object",
            "$ref": "#/$defs/folder",
            "$defs": {
                "node": {"properties": {"children": {"items": {"$ref": "#/$defs/folder"}}}},
                "folder": {"allOf": [
                    {"$ref": "#/$defs/node"},
                    {"properties": {"children": {"items": {"$ref": "#/$defs/folder"}}}},
                ]},
            },
        });
        let ten = report_cost(&twice, &nested(10), u64::MAX).unwrap();
        let eleven = report_cost(&twice, &nested(11), u64::MAX).unwrap();
        assert!(eleven >= ten * 19 / 10, "{ten} then {eleven}");
        assert_eq!(report_cost(&twice, &nested(40), REPORT_BUDGET), None);
    }

    /// A schema of many properties applied to parts that are not objects
    /// costs one each: the properties are looked up by a part's own keys
    /// (they were gathered into a map for every part, uncounted: 5,000
    /// numbers against 20,000 properties took 23 s).
    #[test]
    fn many_properties_cost_only_the_keys_a_part_has() {
        let properties: serde_json::Map<String, Value> = (0..20_000)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        let schema = json!({
            "type": "object",
            "properties": {"list": {"items": {"$ref": "#/$defs/big"}}},
            "$defs": {"big": {"type": "object", "properties": properties}},
        });
        let args = json!({"list": vec![1; 5000]});
        // The root, its look-up for `list`, `list`'s schema, then for each
        // number the `items` schema and the definition it refers to.
        assert_eq!(report_cost(&schema, &args, u64::MAX), Some(3 + 2 * 5000));
    }

    /// A reference the walk cannot follow (here: inside a subschema with
    /// an id of its own, where jsonschema reads `#` as that subschema) is
    /// past any bound, never skipped.
    #[test]
    fn a_reference_that_cannot_be_followed_is_past_the_bound() {
        let schema = json!({
            "type": "object",
            "properties": {"n": {"$id": "http://x.example/n", "anyOf": [{"$ref": "#"}]}},
        });
        assert_eq!(report_cost(&schema, &json!({"n": 1}), u64::MAX), None);
    }

    /// A loop back to a schema already applied to the same part counts
    /// once, as jsonschema's guard stops it.
    #[test]
    fn a_reference_back_on_the_same_part_counts_once() {
        let schema = json!({"type": "object", "allOf": [{"$ref": "#"}]});
        assert_eq!(report_cost(&schema, &json!({}), 1000), Some(2));
    }
}
