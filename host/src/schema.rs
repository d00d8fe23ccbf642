//! A tool's params schema: checked once when the tool is registered, and
//! every call's args checked against it before the handler runs.
//!
//! The params are one JSON object (a params schema must say
//! `"type": "object"`); its properties are the tool's parameters. A call
//! whose args do not fit is answered `invalid` with every rule it broke
//! (up to [`MAX_REPORTED`]), each naming the field as the program wrote it
//! (`args.items[0].name`) and the schema's keyword (`type`, `required`,
//! `additionalProperties`, ...). The handler never sees such a call.
//!
//! Schemas are compiled by the `jsonschema` crate without its remote
//! resolvers: a `$ref` must point inside the schema itself (`#/$defs/..`);
//! one that reaches for a file or a URL is refused at registration.
//!
//! The check runs on the execution's own task, before the call's handler,
//! so its cost is bounded by the args' size: a `pattern` (or a
//! `patternProperties` key) is matched by the `regex` crate, in time
//! linear in the string. A pattern only a backtracking engine can match
//! (a lookahead, a lookbehind, a backreference) is refused at
//! registration: against args a program writes, such a pattern took time
//! quadratic in a string's length or worse (an e-mail pattern with a
//! lookahead: 43 s of CPU for a 160 kB string, past any wall clock,
//! which cannot end a check under way).

use serde_json::Value;
use wire::{FailureKind, Holdings, ToolFailure};

mod cost;
mod unique;

pub(crate) use cost::REPORT_BUDGET;

use crate::json::{HeldReadError, ReadError};

/// The most broken rules one `invalid` answer lists; a model fixes the
/// first few and tries again, and the answer stays short.
pub const MAX_REPORTED: usize = 8;

/// The stack deep args are checked on: room for a recursive schema's
/// levels at `json::MAX_DEPTH` in a debug build (a release build takes
/// under 512 KiB for 1,000 levels).
const DEEP_ARGS_STACK: usize = 16 << 20;

/// A compiled params schema.
pub(crate) struct ParamsSchema {
    validator: jsonschema::Validator,
    /// The schema itself, to bound what a list of broken rules costs.
    schema: Value,
}

impl std::fmt::Debug for ParamsSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamsSchema").finish_non_exhaustive()
    }
}

impl ParamsSchema {
    /// Compiles `schema`, or says why it cannot be a params schema.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(
                "the params schema must be an object schema (\"type\": \"object\"): \
                 a tool's params are one object whose properties are its parameters"
                    .into(),
            );
        }
        let expanded = expanded_size(schema);
        if expanded > MAX_EXPANDED {
            return Err(format!(
                "the params schema is too large to check calls against: with its `$ref`s \
                 followed it applies more than {MAX_EXPANDED} subschemas along one path into \
                 the args (a reference used twice at each level doubles it with every level), \
                 or its references go deeper than {MAX_OPEN} or where they cannot be followed \
                 (outside the schema, to an anchor named twice, or inside a subschema with a \
                 `$id` of its own)"
            ));
        }
        let validator = jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .with_format("regex", is_checked_regex)
            .with_keyword("uniqueItems", unique::compile)
            .build(schema)
            .map_err(|e| {
                let mut why = format!("the params schema is not a usable JSON Schema: {e}");
                if matches!(e.kind(),
                    jsonschema::error::ValidationErrorKind::Format { format } if format == "regex")
                {
                    why.push_str(
                        " (patterns are matched in time linear in the args, without \
                         lookahead, lookbehind or backreferences, which a program's args \
                         could make take hours)",
                    );
                }
                why
            })?;
        Ok(ParamsSchema {
            validator,
            schema: schema.clone(),
        })
    }

    /// Whether a call with no args (the empty object) fits.
    pub(crate) fn accepts_no_args(&self) -> bool {
        self.validator
            .is_valid(&Value::Object(serde_json::Map::new()))
    }

    /// The call's args as JSON if they fit the schema; otherwise the
    /// `invalid` failure that lists what is wrong. No args at all (a
    /// `host.call(name)` without any) are the empty object.
    ///
    /// The args are read into a tree to be checked, and the tree is held
    /// against `holdings` while it is: args whose tree would not fit are
    /// answered `limit` unread (a tree can take fifty times its text).
    pub(crate) fn check(
        &self,
        tool: &str,
        args: &str,
        holdings: &Holdings,
    ) -> Result<Value, ToolFailure> {
        let invalid = |why: String| ToolFailure::new(FailureKind::Invalid, why);
        // The tree is held while it is checked.
        let (value, _tree, survey): (Value, _, wire::json::Survey) = if args.trim().is_empty() {
            let empty = wire::json::Survey {
                depth: 1,
                ..Default::default()
            };
            (Value::Object(Default::default()), None, empty)
        } else {
            match crate::json::read_held(holdings, args) {
                Ok((value, held, survey)) => (value, Some(held), survey),
                Err(HeldReadError::TooLarge(e)) => {
                    return Err(ToolFailure::new(
                        FailureKind::Limit,
                        format!(
                            "{tool}: the args cannot be checked against its params schema: {e}"
                        ),
                    ));
                }
                Err(HeldReadError::Read(e @ ReadError::TooDeep { .. })) => {
                    return Err(invalid(format!("{tool}: the args cannot be read: {e}")));
                }
                Err(HeldReadError::Read(ReadError::Json(e))) => {
                    return Err(invalid(format!(
                        "{tool}: the args are not JSON ({e}); pass one object, as the declaration says"
                    )));
                }
            }
        };
        // The text is what the tool gets; a key written twice in one
        // object would be checked by its last value alone.
        if members(&value) < survey.members
            && let Some(key) = repeated_key(args)
        {
            return Err(invalid(format!(
                "{tool}: the args write the key {} twice in one object: the params \
                 schema would check only its last value, and the tool would read the whole \
                 text; write each key once",
                Value::String(key)
            )));
        }
        // Whether they fit is asked first: jsonschema answers it once for
        // each part of the args and each recursive definition that
        // reaches it. Only args that do not fit are listed, and only when
        // the list's cost is bounded (`cost`).
        let list = || {
            if self.validator.is_valid(&value) {
                return Ok(None);
            }
            if cost::report_cost(&self.schema, &value, REPORT_BUDGET).is_none() {
                return Err(());
            }
            let mut broken = Vec::new();
            let mut more = 0usize;
            for error in self.validator.iter_errors(&value) {
                if broken.len() == MAX_REPORTED {
                    more += 1;
                    continue;
                }
                broken.push(format!(
                    "{}: {} (rule `{}`)",
                    field(error.instance_path().as_str()),
                    error,
                    error.kind().keyword()
                ));
            }
            Ok(Some((broken, more)))
        };
        // A recursive schema (`$ref` to itself) is checked a level of stack
        // per level of the args, which may nest up to `json::MAX_DEPTH`:
        // deep args are checked on a stack of their own.
        let listed = if survey.depth > crate::json::SHALLOW {
            stacker::grow(DEEP_ARGS_STACK, list)
        } else {
            list()
        };
        let Ok(listed) = listed else {
            return Err(invalid(format!(
                "{tool}: invalid args: they do not fit its params schema, and listing what \
                 is wrong would apply more than {REPORT_BUDGET} of its subschemas to them (args \
                 that large, or a schema whose definitions refer to themselves more than once \
                 at each level of the args); check them against the tool's declaration"
            )));
        };
        let Some((broken, more)) = listed else {
            return Ok(value);
        };
        if broken.is_empty() {
            // `is_valid` said no and the list found nothing: the two are
            // meant to agree, and the args are not passed on a doubt.
            return Err(invalid(format!(
                "{tool}: invalid args: they do not fit its params schema; check them against \
                 the tool's declaration"
            )));
        }
        let mut why = format!("{tool}: invalid args: {}", broken.join("; "));
        if more > 0 {
            why.push_str(&format!("; and {more} more"));
        }
        Err(invalid(why))
    }
}

/// The most subschemas a check may apply along one path into the args
/// ([`expanded_size`]). `anyOf` tries every alternative, `allOf` applies
/// each, and a `$ref` brings in what it points to: a 1.6 KB schema whose
/// 20 levels each refer to the one below twice took 3.3 s and 1.5 GB to
/// check `{"a": 5}`, doubling with every level, past any wall clock,
/// which cannot end a check under way. Past this a schema is refused at
/// registration.
pub(crate) const MAX_EXPANDED: u64 = 100_000;

/// Keywords whose subschemas apply to the same part of the args as the
/// schema they are in: a value of one subschema, an array of them, or a
/// map to them.
const SAME_PART: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
];

/// Keywords whose subschemas apply to a part inside it: `properties` and
/// `patternProperties` by the name of the part, the rest to any part.
const INNER_PART: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
];

/// How many subschemas a check of args against `schema` may apply along
/// one path into the args, with its `$ref`s followed: those that apply to
/// one part of the args add up (an `anyOf`'s alternatives, an `allOf`'s
/// parts, what a `$ref` points to), and of the parts inside it the one
/// that takes the most counts (two properties that refer to one
/// definition apply it to two different parts). A reference back into a
/// schema being counted (a recursive schema, applied a level of the args
/// at a time) counts once. A reference the count cannot follow (neither a
/// pointer nor an anchor inside the schema), a chain of references more
/// than 256 deep, or a walk of more than a million steps counts as past
/// the bound. Saturates past [`MAX_EXPANDED`]. Each subschema's count is
/// kept once found, unless the walk to it met a subschema still open
/// (reached another way, that one counts in full).
pub(crate) fn expanded_size(schema: &Value) -> u64 {
    Walk::new(schema).size(schema).0
}

/// A walk of [`expanded_size`].
struct Walk<'a> {
    root: &'a Value,
    /// Each `$anchor` (and `$dynamicAnchor`) of the schema, by name: a
    /// `$ref` of `#name` points there.
    anchors: std::collections::HashMap<&'a str, &'a Value>,
    /// Anchor names given to two subschemas.
    ambiguous: std::collections::HashSet<&'a str>,
    /// Whether the schema is draft 4's (`id`, not `$id`, names a resource).
    draft4: bool,
    /// Whether a subschema below the root has an id of its own.
    inner_id: bool,
    /// Each subschema's count, once found without meeting one still open.
    known: std::collections::HashMap<*const Value, u64>,
    /// The subschemas being counted, outermost first.
    open: Vec<*const Value>,
    /// Subschemas visited: a walk past [`MAX_STEPS`] gives up.
    steps: u64,
}

/// Past this many subschemas open at once, or visited in all, a schema is
/// taken as too large: a chain of references deeper than any real schema's
/// would otherwise hide what is below it.
const MAX_OPEN: usize = 256;
const MAX_STEPS: u64 = 1_000_000;

impl<'a> Walk<'a> {
    /// A walk of `schema`, its anchors found.
    fn new(schema: &'a Value) -> Self {
        let draft4 = schema
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("draft-04") || s.contains("draft-03"));
        let mut walk = Walk {
            root: schema,
            anchors: Default::default(),
            ambiguous: Default::default(),
            draft4,
            inner_id: false,
            known: Default::default(),
            open: Vec::new(),
            steps: 0,
        };
        walk.find_anchors(schema, true);
        walk
    }

    /// Records the anchors of `node` and the subschemas inside it: only
    /// where a schema can be (an anchor written inside `examples`, `const`
    /// or `default` is data, and jsonschema does not resolve to it), and
    /// a name given twice as no anchor (which of the two a reference
    /// means is not known). A `$id` below the root (`id` in draft 4) is
    /// noted: inside it `#...` is resolved against that subschema, not
    /// the root.
    fn find_anchors(&mut self, node: &'a Value, root: bool) {
        let Value::Object(map) = node else {
            return;
        };
        for keyword in ["$anchor", "$dynamicAnchor"] {
            if let Some(name) = map.get(keyword).and_then(Value::as_str) {
                match self.anchors.get(name) {
                    Some(&seen) if !std::ptr::eq(seen, node) => {
                        self.ambiguous.insert(name);
                    }
                    _ => {
                        self.anchors.insert(name, node);
                    }
                }
            }
        }
        if !root
            && (map.contains_key("$id")
                || (self.draft4 && map.get("id").is_some_and(Value::is_string)))
        {
            self.inner_id = true;
        }
        for (keyword, value) in map {
            let keyword = keyword.as_str();
            if matches!(keyword, "$defs" | "definitions") {
                if let Value::Object(defs) = value {
                    defs.values().for_each(|sub| self.find_anchors(sub, false));
                }
            } else if SAME_PART.contains(&keyword) || INNER_PART.contains(&keyword) {
                for (_, sub) in subschemas(keyword, value) {
                    self.find_anchors(sub, false);
                }
            }
        }
    }

    /// For a reference keyword (`$ref`, `$dynamicRef`, `$recursiveRef`),
    /// what it points to ([`Self::target`]; `$recursiveRef` is `#`);
    /// `None` for any other keyword.
    fn referenced(&self, keyword: &str, value: &Value) -> Option<Option<&'a Value>> {
        let reference = match keyword {
            "$recursiveRef" => Some("#"),
            "$ref" | "$dynamicRef" => value.as_str(),
            _ => return None,
        };
        Some(reference.and_then(|r| self.target(r)))
    }

    /// What a `$ref` inside the schema points to: a JSON pointer (`#`,
    /// `#/$defs/x`) or an anchor (`#name`), each read as a URI fragment
    /// (`%25` is `%`); `None` for anything else, which the count cannot
    /// follow, and for a schema with a `$id` below its root, against
    /// which jsonschema would resolve some of them.
    fn target(&self, reference: &str) -> Option<&'a Value> {
        if self.inner_id {
            return None;
        }
        let fragment = percent_encoding::percent_decode_str(reference.strip_prefix('#')?)
            .decode_utf8()
            .ok()?;
        if fragment.is_empty() || fragment.starts_with('/') {
            self.root.pointer(&fragment)
        } else if self.ambiguous.contains(fragment.as_ref()) {
            None
        } else {
            self.anchors.get(fragment.as_ref()).copied()
        }
    }

    /// `node`'s count, and whether the walk met a subschema still open (a
    /// count found so is not kept: reached by another way, that
    /// subschema would count in full).
    fn size(&mut self, node: &'a Value) -> (u64, bool) {
        const TOO_MANY: u64 = MAX_EXPANDED + 1;
        let key: *const Value = node;
        if let Some(&n) = self.known.get(&key) {
            return (n, false);
        }
        if self.open.contains(&key) {
            return (1, true);
        }
        self.steps += 1;
        if self.open.len() >= MAX_OPEN || self.steps > MAX_STEPS {
            return (TOO_MANY, false);
        }
        let Value::Object(object) = node else {
            return (1, false);
        };
        self.open.push(key);
        let cap = |n: u64| n.min(TOO_MANY);
        let mut looped = false;
        let mut same: u64 = 1;
        // Parts inside, by name (`None`: any part).
        let mut inner: std::collections::HashMap<Option<&str>, u64> = Default::default();
        for (keyword, value) in object {
            let keyword = keyword.as_str();
            if let Some(target) = self.referenced(keyword, value) {
                // A reference the count cannot follow counts as too many:
                // what it points to is not known.
                let n = match target {
                    Some(target) => {
                        let (n, met) = self.size(target);
                        looped |= met;
                        n
                    }
                    None => TOO_MANY,
                };
                same = cap(same.saturating_add(n));
            } else if SAME_PART.contains(&keyword) {
                for (_, sub) in subschemas(keyword, value) {
                    let (n, met) = self.size(sub);
                    looped |= met;
                    same = cap(same.saturating_add(n));
                }
            } else if INNER_PART.contains(&keyword) {
                let named = keyword == "properties";
                for (name, sub) in subschemas(keyword, value) {
                    let part = if named { name } else { None };
                    let (n, met) = self.size(sub);
                    looped |= met;
                    let at = inner.entry(part).or_default();
                    *at = cap(at.saturating_add(n));
                }
            }
        }
        // What applies to any part applies to every named one too.
        let any = inner.get(&None).copied().unwrap_or(0);
        let deepest = inner
            .iter()
            .map(|(part, n)| {
                if part.is_some() {
                    n.saturating_add(any)
                } else {
                    *n
                }
            })
            .max()
            .unwrap_or(0);
        let total = cap(same.saturating_add(deepest));
        self.open.pop();
        if !looped {
            self.known.insert(key, total);
        }
        (total, looped)
    }
}

/// Object members in `value`, nested ones included: fewer than its text
/// wrote when a key was written twice in one object (the last one kept).
fn members(value: &Value) -> usize {
    let mut count = 0;
    let mut work = vec![value];
    while let Some(value) = work.pop() {
        match value {
            Value::Object(map) => {
                count += map.len();
                work.extend(map.values());
            }
            Value::Array(items) => work.extend(items),
            _ => {}
        }
    }
    count
}

/// The first key `text` (JSON, read once already) writes twice in one
/// object, if any.
fn repeated_key(text: &str) -> Option<String> {
    use serde::de::{DeserializeSeed, Error, MapAccess, SeqAccess, Visitor};
    use std::cell::RefCell;

    /// A value read for its keys alone: the first repeated one is put in
    /// the cell, and the read stops there.
    #[derive(Clone, Copy)]
    struct Scan<'s>(&'s RefCell<Option<String>>);

    impl<'de> DeserializeSeed<'de> for Scan<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Scan<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(self)?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if seen.contains(&key) {
                    *self.0.borrow_mut() = Some(key);
                    return Err(A::Error::custom("a repeated key"));
                }
                seen.insert(key);
                map.next_value_seed(self)?;
            }
            Ok(())
        }
    }

    let found = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    // Args nest up to `json::MAX_DEPTH`, past serde_json's own limit.
    deserializer.disable_recursion_limit();
    // Stops at the first repeat with an error, which the cell explains.
    let _ = Scan(&found).deserialize(serde_stacker::Deserializer::new(&mut deserializer));
    found.into_inner()
}

/// The subschemas of `keyword`'s `value`, each with the name of the part
/// it applies to where the keyword maps names to schemas.
fn subschemas<'a>(keyword: &str, value: &'a Value) -> Vec<(Option<&'a str>, &'a Value)> {
    let maps = matches!(
        keyword,
        "properties" | "patternProperties" | "dependentSchemas" | "dependencies"
    );
    match value {
        Value::Object(map) if maps => map
            .iter()
            .filter(|(_, s)| s.is_object())
            .map(|(k, s)| (Some(k.as_str()), s))
            .collect(),
        Value::Array(items) => items.iter().map(|s| (None, s)).collect(),
        other => vec![(None, other)],
    }
}

/// The longest string a `format: "regex"` check reads: 16 KiB.
///
/// That check parses the program's string as an ECMAScript pattern, with
/// jsonschema's parser, in time quadratic in the pattern's named groups
/// (100,000 of them, 1.1 MB of args: 11 s of CPU past a 1 s wall clock,
/// which cannot end a check under way). Under this length the worst costs
/// milliseconds; a longer string is passed unchecked, as a format the
/// parent does not know would be: the tool reads it as any pattern it is
/// given.
pub(crate) const MAX_CHECKED_REGEX: usize = 16 << 10;

/// `format: "regex"`, as jsonschema checks it, for a string of at most
/// [`MAX_CHECKED_REGEX`] bytes; a longer one passes.
fn is_checked_regex(text: &str) -> bool {
    text.len() > MAX_CHECKED_REGEX || jsonschema_regex::is_valid_ecma_regex(text)
}

/// A JSON pointer into the args as the program would write the field:
/// `/items/0/name` is `args.items[0].name`, the root is `args`.
fn field(pointer: &str) -> String {
    let mut out = String::from("args");
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{segment}]"));
        } else if crate::tools::is_ascii_identifier(&segment) {
            out.push('.');
            out.push_str(&segment);
        } else {
            out.push_str(&format!("[{}]", Value::String(segment)));
        }
    }
    out
}

/// Why `signature`'s parameters do not fit `params`, if they do not: each
/// parameter must be one of its properties (when it lists any), and each
/// required property must be a parameter, or no positional call could
/// ever pass.
pub(crate) fn signature_mismatch(parameters: &[&str], params: &Value) -> Option<String> {
    let properties = params.get("properties").and_then(Value::as_object);
    if let Some(properties) = properties
        && let Some(p) = parameters.iter().find(|p| !properties.contains_key(**p))
    {
        return Some(format!(
            "parameter {p:?} of the signature is not a property of the params schema"
        ));
    }
    let required = params.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !parameters.contains(&name) {
            return Some(format!(
                "the params schema requires {name:?}, which the signature does not take"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ParamsSchema {
        ParamsSchema::compile(&json!({
            "type": "object",
            "properties": {
                "host": {"type": "string"},
                "count": {"type": "integer", "minimum": 1},
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                }},
            },
            "required": ["host"],
            "additionalProperties": false,
        }))
        .unwrap()
    }

    fn unbounded() -> Holdings {
        Holdings::new(usize::MAX)
    }

    #[test]
    fn args_whose_tree_would_not_fit_the_holdings_are_refused_unread() {
        let open_schema = ParamsSchema::compile(&json!({"type": "object"})).unwrap();
        // 64 KiB of text, a tree of several MiB.
        let args = format!(r#"{{"x":[{}]}}"#, vec![r#"{"":0}"#; 9_000].join(","));
        let tree = crate::json::tree_bytes(&args);
        assert!(tree > 40 * args.len(), "{tree} for {}", args.len());
        let holdings = Holdings::new(tree - 1);
        let failure = open_schema.check("t", &args, &holdings).unwrap_err();
        assert_eq!(failure.kind, FailureKind::Limit);
        assert!(
            failure.message.contains(&format!(
                "its {} bytes of JSON would take about {tree} bytes",
                args.len()
            )),
            "{}",
            failure.message
        );
        assert_eq!(holdings.used(), 0);
        // With room for it, the same args pass, and the hold ends with the check.
        let holdings = Holdings::new(tree);
        assert!(open_schema.check("t", &args, &holdings).is_ok());
        assert_eq!((holdings.used(), holdings.peak()), (0, tree));
    }

    fn why(args: &str) -> String {
        let failure = schema().check("t", args, &unbounded()).unwrap_err();
        assert_eq!(failure.kind, FailureKind::Invalid);
        failure.message
    }

    #[test]
    fn args_that_fit_pass_and_no_args_are_the_empty_object() {
        let ok = schema()
            .check("t", r#"{"host":"db1","count":2}"#, &unbounded())
            .unwrap();
        assert_eq!(ok, json!({"host":"db1","count":2}));
        assert!(why("").contains("\"host\" is a required property"));
    }

    #[test]
    fn args_javascript_makes_are_read_as_they_are_meant() {
        // A cut emoji (half a surrogate pair, as JSON.stringify writes it)
        // and nesting past serde_json's own 128 levels both pass.
        let open = r#"{"host":"\ud83d","count":1,"deep":"#;
        let deep = format!("{open}{}1{}}}", "[".repeat(200), "]".repeat(200));
        let open_schema = ParamsSchema::compile(&json!({"type": "object"})).unwrap();
        let ok = open_schema.check("t", &deep, &unbounded()).unwrap();
        assert_eq!(ok["host"], json!("\u{fffd}"));
        // Deeper than the parent reads: `invalid`, saying so.
        let deeper = format!("{open}{}1{}}}", "[".repeat(2000), "]".repeat(2000));
        let failure = open_schema.check("t", &deeper, &unbounded()).unwrap_err();
        assert_eq!(failure.kind, FailureKind::Invalid);
        assert!(
            failure.message.contains("2001 levels deep"),
            "{}",
            failure.message
        );
    }

    #[test]
    fn deep_args_against_a_recursive_schema_are_checked_on_a_stack_of_their_own() {
        // Each level of the args is a level of the validator's recursion:
        // on a 256 KiB thread (release) 999 levels overflowed without the
        // stack of their own.
        let tree = ParamsSchema::compile(&json!({
            "$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/node"}},
        }))
        .unwrap();
        let depth = crate::json::MAX_DEPTH - 1;
        let args = format!(r#"{{"x":{}{}}}"#, "[".repeat(depth), "]".repeat(depth));
        let checked = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || tree.check("t", &args, &unbounded()).is_ok())
            .unwrap()
            .join()
            .expect("no overflow");
        assert!(checked);
    }

    /// Found by a probe of the values crossing to tools: an OpenAPI-style
    /// schema (a Folder is a Node, and both look inside `children`)
    /// applies its definition twice at each level. Valid args 26 deep took
    /// 16 s to check; invalid ones against two alternatives that both look
    /// inside took 2.5 GB at 20 levels and the machine's memory at 24.
    /// Whether they fit is now asked of jsonschema's `is_valid`, which
    /// answers once per part and definition; a list of what is wrong is
    /// made only when its cost is bounded.
    #[test]
    fn a_definition_applied_twice_a_level_is_checked_in_time_linear_in_the_args() {
        let folder = ParamsSchema::compile(&json!({
            "$defs": {
                "Node": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Folder"}},
                }},
                "Folder": {"allOf": [
                    {"$ref": "#/$defs/Node"},
                    {"type": "object", "properties": {
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Folder"}},
                        "owner": {"type": "string"},
                    }},
                ]},
            },
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Folder"}},
        }))
        .unwrap();
        let mut root = json!({"name": "leaf"});
        for i in 0..60 {
            root = json!({"name": format!("f{i}"), "owner": "me", "children": [root]});
        }
        let args = json!({ "root": root }).to_string();
        assert!(folder.check("t", &args, &unbounded()).is_ok());
        // Shallow invalid args are still listed rule by rule.
        let failure = folder
            .check(
                "t",
                r#"{"root": {"children": [{"owner": 5}]}}"#,
                &unbounded(),
            )
            .unwrap_err();
        assert!(
            failure
                .message
                .contains("args.root.children[0].owner: 5 is not of type"),
            "{}",
            failure.message
        );
        // Deep invalid ones are answered without the list.
        let either = ParamsSchema::compile(&json!({
            "$defs": {"n": {"anyOf": [
                {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "minProperties": 1},
                {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "maxProperties": 1},
            ]}},
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/n"}},
        }))
        .unwrap();
        let deep = format!("{}1{}", r#"{"a":"#.repeat(40), "}".repeat(40));
        let failure = either.check("t", &deep, &unbounded()).unwrap_err();
        assert_eq!(failure.kind, FailureKind::Invalid);
        assert!(
            failure
                .message
                .contains("listing what is wrong would apply more than 100000"),
            "{}",
            failure.message
        );
        // So are args so large that every part breaks a rule: each error
        // is kept until the list is written (about 500 bytes apiece).
        let tags = ParamsSchema::compile(&json!({
            "type": "object",
            "properties": {"xs": {"type": "array", "items": {"type": "string"}}},
        }))
        .unwrap();
        let many = |n: usize| format!(r#"{{"xs": [{}]}}"#, vec!["1"; n].join(","));
        let failure = tags.check("t", &many(150_000), &unbounded()).unwrap_err();
        assert!(
            failure.message.contains("args that large"),
            "{}",
            failure.message
        );
        let failure = tags.check("t", &many(50_000), &unbounded()).unwrap_err();
        assert!(
            failure.message.contains("args.xs[0]: 1 is not of type")
                && failure.message.ends_with("and 49992 more"),
            "{}",
            failure.message
        );
        let shallow = format!("{}1{}", r#"{"a":"#.repeat(3), "}".repeat(3));
        let failure = either.check("t", &shallow, &unbounded()).unwrap_err();
        assert!(
            failure.message.contains("(rule `anyOf`)"),
            "{}",
            failure.message
        );
    }

    /// The same probe: `{"host": "evil", "host": "db1"}` passed a schema
    /// whose `host` must be `db1` (the check reads the last value), and the
    /// tool was given both.
    #[test]
    fn a_key_written_twice_is_refused() {
        let failure = schema()
            .check(
                "t",
                r#"{"host": "evil.example.com", "host": "db1"}"#,
                &unbounded(),
            )
            .unwrap_err();
        assert_eq!(failure.kind, FailureKind::Invalid);
        assert!(
            failure
                .message
                .contains(r#"write the key "host" twice in one object"#),
            "{}",
            failure.message
        );
        let nested = r#"{"host": "db1", "items": [{"name": "a"}, {"name": "b", "name": "c"}]}"#;
        assert!(why(nested).contains(r#"the key "name" twice"#));
        // The same name in different objects is no repeat.
        let ok = r#"{"host": "db1", "items": [{"name": "a"}, {"name": "b"}]}"#;
        assert!(schema().check("t", ok, &unbounded()).is_ok());
    }

    /// `uniqueItems` is the parent's own check (`unique.rs`): jsonschema's
    /// compared every item with every earlier one when their hashes met,
    /// which nested empty arrays always did.
    #[test]
    fn unique_items_are_checked_by_value() {
        let tags = ParamsSchema::compile(&json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "uniqueItems": true}},
        }))
        .unwrap();
        assert!(
            tags.check("t", r#"{"tags": [1, "1", [1], [[1]]]}"#, &unbounded())
                .is_ok()
        );
        let failure = tags
            .check(
                "t",
                r#"{"tags": ["a", {"x": 1, "y": 2}, {"y": 2, "x": 1.0}]}"#,
                &unbounded(),
            )
            .unwrap_err();
        assert!(
            failure.message.contains(
                "args.tags: has non-unique elements: items 1 and 2 are equal (rule `uniqueItems`)"
            ),
            "{}",
            failure.message
        );
    }

    #[test]
    fn each_broken_rule_names_the_field_and_the_keyword() {
        let m = why(r#"{"host":5}"#);
        assert!(
            m.contains("args.host: 5 is not of type \"string\" (rule `type`)"),
            "{m}"
        );
        let m = why(r#"{}"#);
        assert!(
            m.contains("args: \"host\" is a required property (rule `required`)"),
            "{m}"
        );
        let m = why(r#"{"host":"a","extra":1}"#);
        assert!(m.contains("'extra' was unexpected"), "{m}");
        assert!(m.contains("(rule `additionalProperties`)"), "{m}");
        let m = why(r#"{"host":"a","items":[{"name":"x"},{"name":3}]}"#);
        assert!(m.contains("args.items[1].name: 3 is not of type"), "{m}");
        let m = why(r#"{"host":"a","count":0}"#);
        assert!(
            m.contains("args.count:") && m.contains("(rule `minimum`)"),
            "{m}"
        );
        let m = why("db1");
        assert!(m.contains("not JSON"), "{m}");
    }

    /// `depth` levels, each an `anyOf` (or `allOf`) of the level below
    /// twice: 2^depth subschemas once the references are followed.
    fn doubling(depth: usize, keyword: &str) -> Value {
        let mut defs = serde_json::Map::new();
        defs.insert("l0".into(), json!({"type": "string"}));
        for level in 1..=depth {
            let below = format!("#/$defs/l{}", level - 1);
            defs.insert(
                format!("l{level}"),
                json!({ keyword: [{"$ref": below}, {"$ref": below}] }),
            );
        }
        json!({
            "type": "object",
            "properties": {"a": {"$ref": format!("#/$defs/l{depth}")}},
            "$defs": defs,
        })
    }

    #[test]
    fn a_schema_that_doubles_with_every_level_is_refused_at_registration() {
        for keyword in ["anyOf", "allOf"] {
            // 2^14 leaves: about 50,000 subschemas, checked at once.
            let fits = doubling(14, keyword);
            assert!(
                expanded_size(&fits) < MAX_EXPANDED,
                "{}",
                expanded_size(&fits)
            );
            let schema = ParamsSchema::compile(&fits).unwrap();
            assert!(schema.check("t", r#"{"a": "x"}"#, &unbounded()).is_ok());
            // 2^20: refused, naming why.
            let err = ParamsSchema::compile(&doubling(20, keyword)).unwrap_err();
            assert!(err.contains("too large to check calls against"), "{err}");
        }
        // A recursive schema counts its recursion once: it is applied a
        // level of the args at a time.
        let tree = json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
        });
        assert_eq!(expanded_size(&tree), 4);
        // A definition two properties refer to applies to two different
        // parts of the args: the count is the deeper one's.
        let shared = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/p"}, "b": {"$ref": "#/$defs/p"}},
            "$defs": {"p": {"type": "object", "properties": {"x": {}, "y": {}}}},
        });
        assert_eq!(expanded_size(&shared), 1 + (1 + (1 + 1)));
        // (Forty levels of such pairs are registered by tests/all's
        // `describe.rs`, `odd_schemas_give_declarations_tsc_takes_...`.)
        // Alternatives that each lead into the same part add up there.
        let mut defs = serde_json::Map::new();
        defs.insert("l0".into(), json!({"type": "string"}));
        for level in 1..=20 {
            let below = json!({"properties": {"a": {"$ref": format!("#/$defs/l{}", level - 1)}}});
            defs.insert(
                format!("l{level}"),
                json!({"anyOf": [below.clone(), below]}),
            );
        }
        let inward = json!({"type": "object", "allOf": [{"$ref": "#/$defs/l20"}], "$defs": defs});
        assert!(expanded_size(&inward) > MAX_EXPANDED);
    }

    #[test]
    fn no_way_of_writing_a_reference_hides_what_it_brings() {
        // A chain of 300 references above the doubling: deeper than the
        // walk follows, so too large, not counted as 1 where it stopped.
        let mut schema = doubling(20, "anyOf");
        let defs = schema["$defs"].as_object_mut().expect("defs");
        defs.insert("c0".into(), json!({"$ref": "#/$defs/l20"}));
        for i in 1..300 {
            defs.insert(
                format!("c{i}"),
                json!({"$ref": format!("#/$defs/c{}", i - 1)}),
            );
        }
        schema["properties"]["a"] = json!({"$ref": "#/$defs/c299"});
        assert!(expanded_size(&schema) > MAX_EXPANDED);
        // The same doubling through anchors (`#name`).
        let mut defs = serde_json::Map::new();
        defs.insert("l0".into(), json!({"$anchor": "l0", "type": "string"}));
        for level in 1..=20 {
            let below = format!("#l{}", level - 1);
            defs.insert(
                format!("l{level}"),
                json!({"$anchor": format!("l{level}"), "anyOf": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        let anchored =
            json!({"type": "object", "properties": {"a": {"$ref": "#l20"}}, "$defs": defs});
        assert!(expanded_size(&anchored) > MAX_EXPANDED);
        // A count found inside a loop is not kept for another way in: `n`
        // is first met below `a`, which is open, and counted small there;
        // reached again from `b`, 2^14 times, it brings `a` each time.
        let mut schema = doubling(14, "allOf");
        let defs = schema["$defs"].as_object_mut().expect("defs");
        defs.insert(
            "a".into(),
            json!({"allOf": [{"$ref": "#/$defs/l14"}], "properties": {"x": {"$ref": "#/$defs/n"}}}),
        );
        defs.insert(
            "n".into(),
            json!({"properties": {"y": {"$ref": "#/$defs/a"}}}),
        );
        let mut fan = vec![json!({"$ref": "#/$defs/n"})];
        for _ in 0..14 {
            fan = vec![json!({"allOf": fan.clone()}), json!({"allOf": fan})];
        }
        schema["properties"] = json!({"a": {"$ref": "#/$defs/a"}, "b": {"allOf": fan}});
        assert!(expanded_size(&schema) > MAX_EXPANDED);
        // Found by a review: references resolved otherwise than jsonschema
        // resolves them hid the doubling. A key written with `%` (the
        // reference `%25`, a decoy under the undecoded name)...
        let mut schema = doubling(20, "allOf");
        let defs = schema["$defs"].as_object_mut().expect("defs");
        for level in 1..=20 {
            let below = format!("#/$defs/l{}%25", level - 1);
            defs.insert(
                format!("l{level}%"),
                json!({"allOf": [{"$ref": below}, {"$ref": below}]}),
            );
            defs.insert(format!("l{level}%25"), json!({}));
        }
        defs.insert("l0%".into(), json!({"type": "string"}));
        schema["properties"]["a"] = json!({"$ref": "#/$defs/l20%25"});
        assert!(expanded_size(&schema) > MAX_EXPANDED);
        // ...an anchor's name also written inside `examples` (data, which
        // jsonschema does not resolve to)...
        let mut anchored = anchored.clone();
        anchored["examples"] = json!([{"$anchor": "l20"}]);
        assert!(expanded_size(&anchored) > MAX_EXPANDED);
        // ...and `#` inside a subschema with an `$id` of its own, which
        // means that subschema: such a reference is not followed, so the
        // schema is refused.
        let inner_id = json!({
            "type": "object",
            "properties": {"n": {"$id": "http://x.example/n", "anyOf": [
                {"properties": {"a": {"$ref": "#"}}}, {"properties": {"a": {"$ref": "#"}}},
            ]}},
        });
        assert!(expanded_size(&inner_id) > MAX_EXPANDED);
        let err = ParamsSchema::compile(&inner_id).unwrap_err();
        assert!(err.contains("a `$id` of its own"), "{err}");
        // An inner `$id` with no reference to mislead is fine.
        assert!(
            ParamsSchema::compile(&json!({
                "type": "object",
                "properties": {"n": {"$id": "http://x.example/n", "type": "integer"}},
            }))
            .is_ok()
        );
    }

    #[test]
    fn a_params_schema_must_be_an_object_schema_without_remote_refs() {
        let err = ParamsSchema::compile(&json!({"type": "string"})).unwrap_err();
        assert!(err.contains("must be an object schema"), "{err}");
        let remote = json!({"type": "object", "properties": {
            "a": {"$ref": "https://example.invalid/schema.json"}}});
        assert!(ParamsSchema::compile(&remote).is_err());
    }

    #[test]
    fn patterns_are_matched_in_linear_time_or_refused() {
        let email = |pattern: &str| {
            ParamsSchema::compile(&json!({"type": "object", "properties": {
                "to": {"type": "string", "pattern": pattern}}}))
        };
        // The probe's pattern: a lookahead in a repetition, quadratic.
        let err = email(r"^(?!\.)((?!.*\.{2})[a-zA-Z0-9.+-])+@[a-z]+\.[a-z]+$").unwrap_err();
        assert!(err.contains("without lookahead"), "{err}");
        assert!(email(r"^(a)\1$").is_err(), "a backreference");
        let props = json!({"type": "object", "patternProperties": {"^(?<=a)b": {}}});
        assert!(ParamsSchema::compile(&props).is_err(), "a lookbehind");
        // The same rule without them is checked.
        let linear = email(r"^[a-zA-Z0-9+-]+(\.[a-zA-Z0-9+-]+)*@[a-z]+\.[a-z]+$").unwrap();
        assert!(
            linear
                .check("t", r#"{"to":"a.b@c.de"}"#, &unbounded())
                .is_ok()
        );
        let failure = linear
            .check("t", r#"{"to":"a..b@c.de"}"#, &unbounded())
            .unwrap_err();
        assert!(
            failure.message.contains("(rule `pattern`)"),
            "{}",
            failure.message
        );
        // ECMA's classes still mean what they do in JavaScript.
        let digits = email(r"^\d+$").unwrap();
        assert!(digits.check("t", r#"{"to":"123"}"#, &unbounded()).is_ok());
        assert!(digits.check("t", r#"{"to":"١٢٣"}"#, &unbounded()).is_err());
    }

    #[test]
    fn a_regex_format_is_checked_up_to_a_length_that_keeps_it_cheap() {
        // draft-07 asserts formats: `format: "regex"` parses the program's
        // string as a pattern.
        let schema = ParamsSchema::compile(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"re": {"type": "string", "format": "regex"}},
        }))
        .unwrap();
        let check = |re: &str| schema.check("t", &json!({ "re": re }).to_string(), &unbounded());
        assert!(check("^a+(?<x>b)\\k<x>$").is_ok());
        let failure = check("(unclosed").unwrap_err();
        assert!(
            failure.message.contains("(rule `format`)"),
            "{}",
            failure.message
        );
        // Named groups, which the parser compares each with every other:
        // up to the bound, checked; past it, passed unchecked.
        let named = |n: usize, broken: &str| {
            let mut re: String = (0..n).map(|i| format!("(?<n{i}>)")).collect();
            re.push_str(broken);
            re
        };
        let under = named(MAX_CHECKED_REGEX / 12, "(");
        assert!(under.len() <= MAX_CHECKED_REGEX && check(&under).is_err());
        let over = named(100_000, "(");
        assert!(over.len() > MAX_CHECKED_REGEX && check(&over).is_ok());
    }

    #[test]
    fn fields_are_written_as_the_program_writes_them() {
        assert_eq!(field(""), "args");
        assert_eq!(field("/a/0/b"), "args.a[0].b");
        assert_eq!(field("/a b/c~1d"), "args[\"a b\"][\"c/d\"]");
    }

    #[test]
    fn a_signature_must_fit_the_params_schema() {
        let params = json!({"type":"object","properties":{"a":{},"b":{}},"required":["a"]});
        assert_eq!(signature_mismatch(&["a", "b"], &params), None);
        assert_eq!(signature_mismatch(&["a"], &params), None);
        assert!(
            signature_mismatch(&["a", "c"], &params)
                .unwrap()
                .contains("\"c\"")
        );
        assert!(
            signature_mismatch(&["b"], &params)
                .unwrap()
                .contains("requires \"a\"")
        );
    }
}
