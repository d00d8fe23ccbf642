//! `String.prototype.localeCompare` in the real wasm guest, against ICU:
//! the same pairs are compared by the guest and by Node.js's
//! `localeCompare(b, "en", options)` (full ICU, installed by
//! scripts/setup), under every option the guest reads, and each answer
//! must be ICU's. What the guest has no tables for, and locales whose
//! order differs from English's, must throw instead of answering.

use serde_json::{Value, json};
use wasmwire::FailureKind;
use wasmwire_tests::{assert_failed, node_json, roomy, run, run_with, value};

/// Makes `pairs` (strings that differ as sorted data does: by case,
/// accents, punctuation, digits, script, ligatures) and `OPTIONS`, the
/// same in both engines (a seeded generator, no `Intl`, no locale).
const CORPUS: &str = r##"
const OPTIONS = [undefined, { sensitivity: "base" }, { sensitivity: "accent" }, { sensitivity: "case" },
  { numeric: true }, { caseFirst: "upper" }, { caseFirst: "lower" }, { ignorePunctuation: true },
  { numeric: true, sensitivity: "base" }];
let seed = 20261205;
const rnd = () => { seed = (seed + 0x6D2B79F5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
const pick = (list) => list[Math.floor(rnd() * list.length)];
const SYLLABLES = "ba be bi bo ca ce ci da de do el en er es fa fi ga go ha he ja ka ko la le li lo ma me mi mo na ne no pa pe ra re ri ro sa se si so ta te to va vi wa xa ya za an ar in on ur ch sh th st".split(" ");
const ACCENTED = { a: "áàâäãåāą", e: "éèêëēę", i: "íìîïī", o: "óòôöõøō", u: "úùûüūů", c: "çćč", n: "ñń", s: "šśş", z: "žźż", y: "ýÿ", l: "ł", d: "đď", g: "ğ", r: "ř", t: "ť" };
const SPECIAL = ["ß", "æ", "œ", "ø", "ł", "ð", "þ", "ı", "Æ", "Ø", "Œ", "ẞ"];
const WORDS = ("straße strasse Strauß Ärger arger Æble æble Øre ore Åse ase œuvre oeuvre cœur coeur naïve naive façade facade " +
  "résumé resume Résumé RESUME élève eleve élevé über uber Über ÜBER Müller Mueller Muller mañana manana Ñandú " +
  "łódź lodz Łódź Kraków krakow Gdańsk żółw zolw čaj caj Dvořák dvorak ışık isik istanbul Việt việt phở pho " +
  "đường duong Đặng fjörður fjordur Þór Thor ðæt Ísland island ijs IJssel ŀl l·l col·lecció São Sao ação acao " +
  "Ελλάδα ελλαδα Αθήνα αθηνα άλφα αλφα σοφός σοφοσ ΣΟΦΌΣ Ψυχή ψυχη ϊ " +
  "Москва москва Ёлка ёлка елка Елка йод иод Київ Киев ґанок ганок Іван Иван ђак ћ џ љ њ").split(" ");
const CYRILLIC = "абвгдежзийклмнопрстуфхцчшщъыьэюяёіїєґў", GREEK = "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώ";
const PUNCT = [" ", "_", "-", ".", "/", ",", ":", "'", "(", "&", "@", "—", "–", "…", "“", "”", "‘", "’", "«", "»", "€", "$", "£", "§", "°", "%", "#", "\u00a0"];
const accent = (w, p) => [...w].map((c) => { const l = c.toLowerCase(); if (!ACCENTED[l] || rnd() >= p) return c;
  const a = pick([...ACCENTED[l]]); return c === l ? a : a.toUpperCase(); }).join("");
const cap = (w) => w[0].toUpperCase() + w.slice(1);
const word = (n) => { let w = ""; for (let i = 1 + Math.floor(rnd() * n); i > 0; i--) w += pick(SYLLABLES); return w; };
const letters = (alphabet) => { let w = ""; for (let i = 2 + Math.floor(rnd() * 6); i > 0; i--) w += pick([...alphabet]); return rnd() < 0.3 ? cap(w) : w; };
const pad = (n, k) => String(n).padStart(k, "0");
const MAKERS = [
  () => cap(accent(word(3), 0.15)) + (rnd() < 0.5 ? " " + cap(accent(word(2), 0.15)) : ""),
  () => { let w = accent(word(3), 0.1); if (rnd() < 0.2) w += pick(SPECIAL); return rnd() < 0.2 ? cap(w) : rnd() < 0.05 ? w.toUpperCase() : w; },
  () => pick(WORDS),
  () => [word(2), word(1), word(2)].join(pick(PUNCT)) + (rnd() < 0.3 ? pick(PUNCT) : ""),
  () => pick(["item", "Item", "SKU-", "v", "file", "IMG_", "report (", "x"]) + (rnd() < 0.3 ? pad(Math.floor(rnd() * 1000), 4) : Math.floor(rnd() * 5000)) + (rnd() < 0.3 ? pick([".txt", "b", "-rc1", ".1", ")", "_final"]) : ""),
  () => `${2000 + Math.floor(rnd() * 30)}-${pad(1 + Math.floor(rnd() * 12), 2)}-${pad(1 + Math.floor(rnd() * 28), 2)}` + (rnd() < 0.5 ? "T" + pad(Math.floor(rnd() * 24), 2) + ":" + pad(Math.floor(rnd() * 60), 2) : ""),
  () => letters(GREEK),
  () => letters(CYRILLIC),
  () => `${word(2)}${pick([".", "_", "+", "", "-"])}${word(1)}@${pick(["example.com", "mail.co.uk"])}`,
  () => `${word(1)} ${pick(["¶", "½", "²", "©", "®", "×", "±", "·", "|", "~", "^", "`", "*", "™", "€", "…"])} ${word(1)}`,
  () => { let w = ""; for (let i = 1 + Math.floor(rnd() * 3); i > 0; i--) w += String.fromCharCode(0xAC00 + Math.floor(rnd() * 11172));
    return rnd() < 0.3 ? w + " " + word(1) : rnd() < 0.5 ? w + Math.floor(rnd() * 100) : w; },
];
const MUTATORS = [
  (s) => s.toUpperCase(), (s) => s.toLowerCase(), (s) => cap(s.toLowerCase()),
  (s) => s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").normalize("NFC"), (s) => accent(s, 0.5),
  (s) => { const k = Math.floor(rnd() * (s.length + 1)); return s.slice(0, k) + pick(PUNCT) + s.slice(k); },
  (s) => s.replace(/[0-9]+/, (d) => String(Number(d) + 1 - Math.floor(rnd() * 3))), (s) => s + pick(["", "s", "1", " ", "a"]),
  (s) => (/[\uAC00-\uD7A3]/.test(s) ? s : s.normalize("NFD")), () => pick(MAKERS)(),
];
const pairs = [];
for (let i = 0; i < 6000; i++) {
  const a = pick(MAKERS)();
  pairs.push([a, pick(MUTATORS)(a)]);
}
"##;

/// Answers of `compare(a, b, options)` for every pair and option set, one
/// character each (`<`, `=`, `>`), a line per pair.
const ANSWERS: &str = r##"
const sign = (n) => (n < 0 ? "<" : n > 0 ? ">" : "=");
const lines = pairs.map(([a, b]) => OPTIONS.map((o) => sign(compare(a, b, o))).join(""));
"##;

/// What ICU (Node.js) answers for the corpus, with the pairs.
fn icu_answers() -> (Vec<(String, String)>, Vec<String>) {
    let script = format!(
        "{CORPUS}\nconst compare = (a, b, o) => a.localeCompare(b, \"en\", o);\n{ANSWERS}\n\
         process.stdout.write(JSON.stringify({{ pairs, lines }}));"
    );
    let got = node_json(&script);
    let pairs = got["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_owned(),
                p[1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let lines = got["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect();
    (pairs, lines)
}

#[tokio::test]
async fn locale_compare_answers_as_icu_does_for_english_under_every_option() {
    let (pairs, want) = icu_answers();
    let program = format!(
        "{CORPUS}\nconst compare = (a, b, o) => a.localeCompare(b, undefined, o);\n{ANSWERS}\n\
         const collators = OPTIONS.map((o) => new Intl.Collator(\"en\", o));\n\
         const collated = pairs.map(([a, b]) => collators.map((c) => sign(c.compare(a, b))).join(\"\"));\n\
         return {{ lines, collated, en: pairs.map(([a, b]) => a.localeCompare(b, \"en-US\") < 0 ? \"<\" : a.localeCompare(b, \"en-US\") > 0 ? \">\" : \"=\") }};"
    );
    let outcome = run_with(&program, roomy()).await;
    let answers = value(&outcome);
    let lines = answers["lines"].as_array().expect("the guest's answers");
    let en = answers["en"]
        .as_array()
        .expect("the guest's answers with \"en-US\"");
    // Intl.Collator's compare reads its options once, when it is made, and
    // must answer as localeCompare with them does.
    let collated = answers["collated"]
        .as_array()
        .expect("the guest's answers through Intl.Collator");
    assert_eq!(lines.len(), want.len(), "{:?}", outcome.result);
    let options = [
        "default",
        "base",
        "accent",
        "case",
        "numeric",
        "caseFirst upper",
        "caseFirst lower",
        "ignorePunctuation",
        "numeric base",
    ];
    let mut wrong = Vec::new();
    for (i, ((a, b), want)) in pairs.iter().zip(&want).enumerate() {
        let got = lines[i].as_str().unwrap();
        for (k, (g, w)) in got.chars().zip(want.chars()).enumerate() {
            if g != w {
                wrong.push(format!(
                    "{a:?} vs {b:?} ({}): {g} where ICU says {w}",
                    options[k]
                ));
            }
        }
        // A locale that names English's order answers as none does.
        assert_eq!(en[i], want[..1], "{a:?} vs {b:?} with \"en-US\"");
        assert_eq!(collated[i], **want, "{a:?} vs {b:?} through Intl.Collator");
    }
    assert!(
        wrong.is_empty(),
        "{} of {} answers differ from ICU's, among them:\n{}",
        wrong.len(),
        want.len() * options.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
    // The corpus is not all ties: under each option set, at least a tenth
    // of the pairs are ordered one way and a tenth the other.
    for (k, name) in options.iter().enumerate() {
        for side in [b'<', b'>'] {
            let n = want.iter().filter(|l| l.as_bytes()[k] == side).count();
            assert!(
                n > want.len() / 10,
                "{name}: {n} of {} pairs answer {}",
                want.len(),
                side as char
            );
        }
    }
}

#[tokio::test]
async fn what_it_cannot_order_exactly_throws_and_says_why() {
    let program = r#"
        const outcome = (f) => { try { return "answered " + f(); } catch (e) { return e.name + ": " + e.message; } };
        return {
          emoji: outcome(() => ["🍎 apple", "banana"].sort((a, b) => a.localeCompare(b))),
          hebrew: outcome(() => "שלום".localeCompare("abc")),
          lone: outcome(() => "a\uD800".localeCompare("ab")),
          same: outcome(() => "🍎".localeCompare("🍎")),
          swedish: outcome(() => "ä".localeCompare("z", "sv")),
          listed: outcome(() => "ä".localeCompare("z", ["sv", "en"])),
          extension: outcome(() => "a2".localeCompare("a10", "en-u-kn")),
          search: outcome(() => "a".localeCompare("b", "en", { usage: "search" })),
          sensitivity: outcome(() => "a".localeCompare("b", "en", { sensitivity: "loose" })),
          caseFirst: outcome(() => "a".localeCompare("b", "en", { caseFirst: "yes" })),
          tag: outcome(() => "a".localeCompare("b", "not a tag")),
          nullOptions: outcome(() => "a".localeCompare("b", "en", null)),
          nullThis: outcome(() => String.prototype.localeCompare.call(null, "a")),
          english: outcome(() => ["b", "ä", "a", "Z"].sort((x, y) => x.localeCompare(y, ["en-GB", "sv"])).join(" ")),
          german: outcome(() => ["Zebra", "Äpfel", "Apfel", "Ofen", "Öl"].sort((x, y) => x.localeCompare(y, "de")).join(" ")),
          regions: outcome(() => ["de-AT", "pt-BR", "en-Latn-US", "fr-BE", "es-419".replace("es", "en")].map((l) => "b".localeCompare("ä", l)).join(" ")),
          canadian: outcome(() => "cote".localeCompare("côte", "fr-CA")),
          spanish: outcome(() => "nz".localeCompare("ñ", "es")),
          variant: outcome(() => "a".localeCompare("b", "en-US-posix")),
          nfd: outcome(() => ["Cre\u0300me", "Crème", "Cafe\u0301", "Cafe"].map((x) => x.localeCompare("Crème")).join(" ")),
          markFirst: outcome(() => "\u0301a".localeCompare("a")),
          markAfterDigit: outcome(() => "1\u0301".localeCompare("1")),
          markAfterShortI: outcome(() => "\u0439\u0301".localeCompare("\u0439")),
          length: String.prototype.localeCompare.length,
          shown: String(String.prototype.localeCompare),
        };
    "#;
    let outcome = run_with(program, roomy()).await;
    let got = value(&outcome);
    let says = |key: &str, needles: &[&str]| {
        let text = got[key].as_str().unwrap();
        for needle in needles {
            assert!(text.contains(needle), "{key}: {text}");
        }
    };
    says(
        "emoji",
        &["TypeError: ", "\"🍎\" (U+1F34E)", "compare with < and >"],
    );
    says("hebrew", &["TypeError: ", "(U+05E9)"]);
    says("lone", &["TypeError: ", "(U+D800)"]);
    says(
        "swedish",
        &["TypeError: ", "locale \"sv\" is not available"],
    );
    says("listed", &["TypeError: ", "locale \"sv\""]);
    says("extension", &["TypeError: ", "(-u-)", "{ numeric: true }"]);
    says(
        "canadian",
        &["TypeError: ", "locale \"fr-CA\" is not available"],
    );
    says(
        "spanish",
        &["TypeError: ", "locale \"es\" is not available"],
    );
    says("variant", &["TypeError: ", "(-posix)"]);
    assert_eq!(got["nfd"], "answered 0 0 -1 -1");
    for key in ["markFirst", "markAfterDigit", "markAfterShortI"] {
        says(key, &["TypeError: ", "(U+0301)", "s.normalize(\"NFC\")"]);
    }
    assert_eq!(got["regions"], "answered 1 1 1 1 1");
    says("search", &["TypeError: ", "usage \"search\""]);
    says("sensitivity", &["RangeError: ", "loose", "sensitivity"]);
    says("caseFirst", &["RangeError: ", "caseFirst"]);
    says("tag", &["RangeError: ", "Incorrect locale information"]);
    says("nullOptions", &["TypeError: "]);
    says("nullThis", &["TypeError: "]);
    assert_eq!(got["same"], "answered 0");
    // ICU's answers for English ("en-GB" comes first) and German.
    assert_eq!(got["english"], "answered a ä b Z");
    assert_eq!(got["german"], "answered Apfel Äpfel Ofen Öl Zebra");
    assert_eq!(got["length"], 1);
    assert_eq!(
        got["shown"],
        "function localeCompare() {\n    [native code]\n}"
    );
}

#[tokio::test]
async fn an_uncaught_refusal_ends_the_program_with_a_clear_error() {
    let outcome = run("return ['→ next', 'a'].sort((x, y) => x.localeCompare(y));").await;
    assert_failed(&outcome, FailureKind::Invalid, "(U+2192)");
}

/// The tables are built at a run's first comparison, after the program has
/// run: what the program replaced by then is not what they are built with.
#[tokio::test]
async fn a_program_that_replaces_builtins_first_still_gets_icus_order() {
    let program = r#"
        String.prototype.normalize = () => "x";
        String.prototype.charCodeAt = () => 0;
        String.prototype.toUpperCase = () => "Q";
        String.prototype.slice = () => "";
        String.prototype.split = () => [];
        String.fromCharCode = () => "";
        Map.prototype.get = () => 1;
        Function.prototype.call = function () { return 0; };
        Function.prototype.apply = function () { return 0; };
        Reflect.apply = () => 0;
        Array.prototype[Symbol.iterator] = function* () {};
        globalThis.Map = function () {};
        globalThis.Int32Array = function () {};
        const names = ["zoë", "Zoe", "émile", "Emile", "Œuvre", "oeuvre", "item10", "item9", "Ærø", "aero"];
        return [names.slice().sort((a, b) => a.localeCompare(b)), names.slice().sort((a, b) => a.localeCompare(b, "en", { numeric: true, sensitivity: "base" }))];
    "#;
    let outcome = run_with(program, roomy()).await;
    let want = icu_sorted(
        &[
            "zoë", "Zoe", "émile", "Emile", "Œuvre", "oeuvre", "item10", "item9", "Ærø", "aero",
        ],
        &["undefined", "{ numeric: true, sensitivity: \"base\" }"],
    );
    assert_eq!(value(&outcome), want, "{:?}", outcome.result);
}

/// Found by a reviewer: what a program can set on `Array.prototype` or
/// `Object.prototype` reached the lists the keys are made in (`a` against
/// `b` answered 0); an option's getter that compares strings itself reset
/// `numeric` for the comparison it was read for; a Symbol was compared as
/// its description; a run of 255 digits or more was ordered otherwise than
/// by ICU (which splits it); an array-like of length -1 was read 2^32 times.
#[tokio::test]
async fn what_a_program_sets_around_it_does_not_change_its_answers() {
    let program = r#"
        const outcome = (f) => { try { return "answered " + f(); } catch (e) { return e.name + ": " + e.message; } };
        const before = "a".localeCompare("b");
        Object.defineProperty(Array.prototype, "0", { get() { return 122; }, set(v) {}, configurable: true });
        Object.defineProperty(Object.prototype, "1", { get() { return 122; }, set(v) {}, configurable: true });
        const nines = "9".repeat(254), ones = "1".repeat(254);
        return {
          before,
          accessors: ["a".localeCompare("b"), "Zebra".localeCompare("apple"), "abcx".localeCompare("abcy"), "a".localeCompare("ab")].join(" "),
          reentrant: outcome(() => "a10".localeCompare("a9", undefined, {
            numeric: true, get ignorePunctuation() { "x".localeCompare("y"); return false; } })),
          symbol: outcome(() => String.prototype.localeCompare.call(Symbol("a"), "a")),
          symbolThat: outcome(() => "a".localeCompare(Symbol("a"))),
          digits254: outcome(() => nines.localeCompare("1" + "0".repeat(253), "en", { numeric: true })),
          digits255: outcome(() => nines.localeCompare("1" + "0".repeat(254), "en", { numeric: true })),
          digits255plain: outcome(() => (ones + "2").localeCompare(ones + "10")),
          lengthMinusOne: outcome(() => "a".localeCompare("b", { length: -1 })),
          badRegion: outcome(() => "a".localeCompare("b", "en-12")),
        };
    "#;
    let outcome = run_with(program, roomy()).await;
    let got = value(&outcome);
    assert_eq!(got["before"], -1);
    assert_eq!(got["accessors"], "-1 1 -1 -1");
    assert_eq!(got["reentrant"], "answered 1");
    assert!(
        got["symbol"].as_str().unwrap().starts_with("TypeError"),
        "{got}"
    );
    assert!(
        got["symbolThat"].as_str().unwrap().starts_with("TypeError"),
        "{got}"
    );
    assert_eq!(got["digits254"], "answered 1");
    let digits = got["digits255"].as_str().unwrap();
    assert!(
        digits.starts_with("TypeError") && digits.contains("254 digits"),
        "{digits}"
    );
    // Without numeric a digit is a character like any other.
    assert_eq!(got["digits255plain"], "answered 1");
    assert_eq!(got["lengthMinusOne"], "answered -1");
    assert!(
        got["badRegion"].as_str().unwrap().starts_with("RangeError"),
        "{got}"
    );
}

/// Long strings are compared in bounded memory: a long key is made in
/// typed scratch (2 bytes a unit, not a list's 8) that is given back, and a
/// key past 128 Ki units is not kept. Two strings of 300,000 characters
/// under 16 MiB (with lists: out of memory there).
#[tokio::test]
async fn long_strings_are_compared_in_bounded_memory() {
    let program = r#"
        const a = "x".repeat(300000) + "a", b = "x".repeat(300000) + "b";
        return [a.localeCompare(b), b.localeCompare(a), a.localeCompare(b, "en", { sensitivity: "base" })];
    "#;
    let mut small = roomy();
    small.max_memory = 16 << 20;
    let outcome = run_with(program, small).await;
    assert_eq!(value(&outcome), json!([-1, 1, -1]), "{:?}", outcome.result);
}

/// A sort of many strings keeps at most a bounded number of keys (20,000):
/// 60,000 names sort under 16 MiB, where the same sort by `<` needs 14 MiB
/// and one that kept every key (tried: 50,000) ran out of memory, and the
/// order holds across the keys dropped.
#[tokio::test]
async fn a_large_sort_fits_a_small_budget() {
    let program = r#"
        const names = [];
        for (let i = 0; i < 60000; i++) names.push((i % 7 ? "é" : "E") + String(i * 7919 % 60000).padStart(5, "0"));
        const sorted = names.slice().sort((a, b) => a.localeCompare(b));
        let ordered = true;
        for (let i = 1; i < sorted.length; i++) if (sorted[i - 1].slice(1) > sorted[i].slice(1)) ordered = false;
        return { ordered, n: sorted.length };
    "#;
    let mut small = roomy();
    small.max_memory = 16 << 20;
    let outcome = run_with(program, small).await;
    assert_eq!(
        value(&outcome),
        json!({"ordered": true, "n": 60000}),
        "{:?}",
        outcome.result
    );
}

/// `names` sorted by ICU (Node.js) with each of `options` (JavaScript).
fn icu_sorted(names: &[&str], options: &[&str]) -> Value {
    let names = serde_json::to_string(names).unwrap();
    let sorts: Vec<String> = options
        .iter()
        .map(|o| format!("names.slice().sort((a, b) => a.localeCompare(b, \"en\", {o}))"))
        .collect();
    let script = format!(
        "const names = {names}; process.stdout.write(JSON.stringify([{}]));",
        sorts.join(", ")
    );
    node_json(&script)
}
