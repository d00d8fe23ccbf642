//! The locale formatters' generated cases, answered by the real wasm guest
//! and by Node.js (full ICU), and compared: each answer must be ICU's, the
//! same kind of error, or a refusal (a `TypeError` that names the sandbox),
//! and what the guest refuses of what it says it formats is counted, so
//! that a guest refusing everything fails.

use serde_json::Value;

use crate::{node_json, roomy, run_with, value};

/// JavaScript that replaces the built-ins a formatter might use (each to
/// throw `replaced NAME`) and sets traps on `Object.prototype` for an
/// index written and a `type` read or written (each throws), as a hostile
/// program would; [`UNTRAP`] takes the traps away. A formatter must
/// capture what it uses before any program runs, and set its own objects'
/// properties by definition, not assignment.
pub const REPLACE_BUILT_INS: &str = r#"
        Object.defineProperty(Object.prototype, "0", { set() { throw new Error("index set"); }, configurable: true });
        Object.defineProperty(Object.prototype, "type", { get() { throw new Error("type read"); }, set() { throw new Error("type set"); }, configurable: true });
        for (const [owner, names] of [[Array.prototype, ["push", "join", "slice", "map", "indexOf", "includes", "splice", "concat"]],
            [String.prototype, ["slice", "padStart", "repeat", "split", "indexOf", "charCodeAt", "replace", "toUpperCase", "toLowerCase", "trim", "concat"]],
            [Number.prototype, ["toString", "toFixed", "toPrecision", "toExponential"]], [BigInt.prototype, ["toString"]],
            [Date.prototype, ["getTime", "getUTCFullYear", "getUTCHours", "getFullYear", "getHours"]],
            [Math, ["floor", "abs", "max", "min", "pow", "round", "trunc"]], [Object, ["defineProperty", "create", "keys", "setPrototypeOf"]],
            [WeakMap.prototype, ["get", "set", "has"]], [String, ["fromCharCode"]], [globalThis, ["BigInt", "Number", "String"]]]) {
          for (const name of names) owner[name] = () => { throw new Error("replaced " + name); };
        }
"#;

/// Takes [`REPLACE_BUILT_INS`]'s traps away (its replaced functions stay).
pub const UNTRAP: &str = r#"
        delete Object.prototype["0"];
        delete Object.prototype.type;
"#;

/// Runs `program` in the guest under an 8 MiB budget and in Node (after
/// `node_first`), and checks that both answer the same: what a program
/// formats in a loop holds nothing.
pub async fn fits_a_small_budget(program: &str, node_first: &str) {
    let mut small = roomy();
    small.max_memory = 8 << 20;
    let outcome = run_with(program, small).await;
    let got = value(&outcome);
    let want = node_json(&format!(
        "{node_first} process.stdout.write(JSON.stringify((() => {{ {program} }})()));"
    ));
    assert_eq!(got, want, "{:?}", outcome.result);
}

/// The strings of a JSON array.
pub fn strings(list: &Value) -> Vec<String> {
    let list = list.as_array().expect("a list");
    list.iter()
        .map(|s| s.as_str().expect("a string").to_owned())
        .collect()
}

/// How the guest's answers compare with ICU's.
#[derive(Debug, Default)]
pub struct Compared {
    /// Answers the same as ICU's (a value, or the same error's name).
    pub same: usize,
    /// Cases, with both answers, where the guest answered otherwise and
    /// did not refuse.
    pub wrong: Vec<String>,
    /// Cases the guest says it formats.
    pub in_scope: usize,
    /// Of those, the ones it refused, with its message.
    pub refused_in_scope: Vec<String>,
    /// Cases the guest refused where ICU threw a `RangeError`.
    pub refused_for_range_errors: Vec<String>,
    /// All cases.
    pub total: usize,
}

impl Compared {
    /// Nothing wrong; under 0.5% of what the guest says it formats
    /// refused, and that at least a quarter of all cases; over half the
    /// answers ICU's.
    pub fn assert_holds(&self) {
        assert!(
            self.wrong.is_empty(),
            "{} of {} answers differ from ICU's, among them:\n{}",
            self.wrong.len(),
            self.total,
            self.wrong[..self.wrong.len().min(20)].join("\n")
        );
        assert!(
            self.refused_in_scope.len() * 200 < self.in_scope && self.in_scope > self.total / 4,
            "refused {} of {} cases it should format, among them:\n{}",
            self.refused_in_scope.len(),
            self.in_scope,
            self.refused_in_scope[..self.refused_in_scope.len().min(20)].join("\n")
        );
        assert!(
            self.same > self.total / 2,
            "only {} of {} the same",
            self.same,
            self.total
        );
        eprintln!(
            "{} of {} the same; {} refused in scope of {}; {} refused where ICU throws a RangeError",
            self.same,
            self.total,
            self.refused_in_scope.len(),
            self.in_scope,
            self.refused_for_range_errors.len()
        );
    }
}

/// Runs `cases` (a script that makes `cases` and `shown`, each case as
/// text) then `answers` (one that makes `answers`: `=` and the answer, `!`
/// and an error's name, `*` and a refusal's message) in Node, after
/// `node_first`, and in the guest; checks that both made the same cases,
/// and compares the answers, `promised` telling which cases (as shown) the
/// guest says it formats.
pub async fn compare_with_icu(
    cases: &str,
    answers: &str,
    node_first: &str,
    promised: impl Fn(&str) -> bool,
) -> Compared {
    let icu = node_json(&format!(
        "{node_first}\n{cases}\n{answers}\nprocess.stdout.write(JSON.stringify({{ answers, shown }}));"
    ));
    let outcome = run_with(
        &format!("{cases}\n{answers}\nreturn {{ answers, shown }};"),
        roomy(),
    )
    .await;
    let guest = value(&outcome);
    let got = strings(&guest["answers"]);
    let (want, shown) = (strings(&icu["answers"]), strings(&icu["shown"]));
    assert_eq!(
        strings(&guest["shown"]),
        shown,
        "the engines made other cases"
    );
    assert_eq!(got.len(), want.len(), "{:?}", outcome.result);
    let mut compared = Compared {
        total: want.len(),
        ..Compared::default()
    };
    for ((got, want), shown) in got.iter().zip(&want).zip(&shown) {
        let promised = promised(shown);
        compared.in_scope += usize::from(promised);
        if got == want {
            compared.same += 1;
        } else if got.starts_with('*') {
            if want.starts_with("!RangeError") {
                compared
                    .refused_for_range_errors
                    .push(format!("{shown}: {got}"));
            }
            if promised {
                compared.refused_in_scope.push(format!("{shown}: {got}"));
            }
        } else {
            compared
                .wrong
                .push(format!("{shown}: {got} where ICU says {want}"));
        }
    }
    compared
}
