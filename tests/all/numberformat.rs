//! Numbers formatted in the real wasm guest, against ICU: the same values,
//! locales and options are formatted by the guest and by Node.js (full
//! ICU, installed by scripts/setup), with `toLocaleString`,
//! `Intl.NumberFormat`'s `format`, `formatToParts` and `resolvedOptions`,
//! and each answer must be ICU's, or the same kind of error, or a refusal
//! that says the sandbox cannot (a locale whose numbers read otherwise). What the guest refuses is counted, so that a
//! guest refusing everything fails.

use serde_json::{Value, json};
use wasmwire::FailureKind;
use wasmwire_tests::icu::{
    REPLACE_BUILT_INS, UNTRAP, compare_with_icu, fits_a_small_budget, strings,
};
use wasmwire_tests::{assert_failed, node_json, run, value};

/// Makes `cases`: `[locales, options, value, how]`, the same in both
/// engines (a seeded generator; no `Intl` until `answer` runs).
const CORPUS: &str = r##"
let seed = 20261205;
const rnd = () => { seed = (seed + 0x6D2B79F5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
const ri = (a, b) => a + Math.floor(rnd() * (b - a + 1));
const pick = (list) => list[Math.floor(rnd() * list.length)];
// Not "": V8 answers it with a RangeError, but with a format once its
// cache holds one (seen in the fuzz that wrote the formatter).
const LOCALES = [undefined, undefined, undefined, "en", "en-US", "EN-us", ["en-US", "fr"], [], "en-GB", "en-AU",
  "en-CA", "en-PH", "en-IN", "en-ZA", "de-DE", "fr", "ja-JP", "en-US-u-nu-arab", "en_US", "x-foo", 5];
// Powers of ten parsed, never computed: V8's `**` can be an ulp off.
const ten = (k) => Number("1e" + k);
const CURRENCIES = ["USD", "USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "INR", "CNY", "KRW", "BRL", "MXN", "BHD",
  "usd", "XYZ", "US"];
function double() {
  const r = rnd();
  if (r < 0.05) return pick([0, -0, NaN, Infinity, -Infinity, 1e21, -1e21, 1.7976931348623157e308, 5e-324, 9007199254740994, 1152921504606846976, 1e-7]);
  if (r < 0.25) { const s = (ri(0, ten(ri(1, 6))) + 0.5) / ten(ri(0, 8)); return rnd() < 0.5 ? -s : s; }
  if (r < 0.35) return pick([1, 9.5, 9.95, 9.995, 0.95, 99.95, 999.9995, 1.005, 2.675, 1.45, 0.125, 2.5]) * ten(ri(-8, 22)) * (rnd() < 0.3 ? -1 : 1);
  if (r < 0.55) return ri(-1e6, 1e6) * (rnd() < 0.5 ? 1 : ri(1, 1e9));
  if (r < 0.75) return (rnd() - 0.5) * ten(ri(-8, 25));
  if (r < 0.9) return Math.round(rnd() * 1e6) / ten(ri(0, 8)) * (rnd() < 0.3 ? -1 : 1);
  const bits = new DataView(new ArrayBuffer(8));
  bits.setUint32(0, Math.floor(rnd() * 2 ** 32)); bits.setUint32(4, Math.floor(rnd() * 2 ** 32));
  return bits.getFloat64(0);
}
function number() {
  if (rnd() < 0.9) return double();
  let digits = "";
  for (let i = ri(1, 30); i > 0; i--) digits += ri(0, 9);
  return BigInt(digits) * (rnd() < 0.3 ? -1n : 1n);
}
function options() {
  if (rnd() < 0.1) return undefined;
  const o = {};
  const style = pick(["decimal", "percent", "currency", "currency", undefined, undefined, "unit", "bogus"]);
  if (style !== undefined) o.style = style;
  if (style === "currency") o.currency = pick(CURRENCIES);
  if (style === "unit") {
    o.unit = pick(["meter", "kilometer-per-hour", "percent", "celsius", "megabyte", "mile-per-gallon", "day", "percent-per-second",
      "foot", "kilogram-per-liter", "month", "fahrenheit-per-hour"]);
    if (rnd() < 0.7) o.unitDisplay = pick(["short", "long", "narrow"]);
  }
  if (o.currency && rnd() < 0.5) o.currencyDisplay = pick(["symbol", "narrowSymbol", "code", "name"]);
  if (o.currency && rnd() < 0.3) o.currencySign = pick(["standard", "accounting"]);
  for (let i = ri(0, 4); i > 0; i--) {
    switch (ri(0, 13)) {
      case 0: o.minimumIntegerDigits = rnd() < 0.95 ? ri(1, 21) : pick([0, 22]); break;
      case 1: case 2: o.minimumFractionDigits = rnd() < 0.95 ? ri(0, 20) : pick([21, -1, "2"]); break;
      case 3: case 4: o.maximumFractionDigits = rnd() < 0.95 ? ri(0, 20) : pick([21, -1, "2"]); break;
      case 5: o.minimumSignificantDigits = ri(1, 21); break;
      case 6: o.maximumSignificantDigits = rnd() < 0.95 ? ri(1, 21) : 22; break;
      case 7: o.roundingPriority = pick(["auto", "morePrecision", "lessPrecision"]); break;
      case 8: o.roundingMode = pick(["ceil", "floor", "expand", "trunc", "halfCeil", "halfFloor", "halfExpand", "halfTrunc", "halfEven", "x"]); break;
      case 9: o.trailingZeroDisplay = pick(["auto", "stripIfInteger"]); break;
      case 10: o.useGrouping = pick([true, false, "always", "auto", "min2", "x"]); break;
      case 11: o.signDisplay = pick(["auto", "always", "never", "exceptZero", "negative", "x"]); break;
      case 12: case 13:
        o.notation = pick(["standard", "compact", "compact", "scientific", "engineering"]);
        if (rnd() < 0.5) o.compactDisplay = pick(["short", "long", "x"]);
        break;
    }
  }
  return o;
}
const cases = [];
for (let i = 0; i < 12000; i++) {
  const v = number();
  cases.push([pick(LOCALES), options(), v, typeof v === "bigint" ? pick(["format", "parts", "toLocaleString"]) : pick(["format", "parts", "resolved", "toLocaleString"])]);
}
"##;

/// `answers`: for each case, `=` and the answer, `!` and the error's name,
/// or `*` and the message of a refusal (a TypeError that names this
/// sandbox).
const ANSWERS: &str = r##"
const answer = ([locales, options, v, how]) => {
  try {
    if (how === "toLocaleString") return "=" + v.toLocaleString(locales, options);
    const nf = new Intl.NumberFormat(locales, options);
    if (how === "format") return "=" + nf.format(v);
    if (how === "parts") return "=" + JSON.stringify(nf.formatToParts(v));
    return "=" + JSON.stringify(nf.resolvedOptions());
  } catch (e) {
    return e instanceof TypeError && /sandbox/.test(e.message) ? "*" + e.message : "!" + e.name;
  }
};
const answers = cases.map(answer);
"##;

#[tokio::test]
async fn numbers_format_as_icu_does_for_en_us_or_the_sandbox_says_it_cannot() {
    // The cases as each engine made them, shown before any formatting.
    let shown = "const shown = cases.map(([l, o, v, h]) => JSON.stringify([l, o, typeof v === \"bigint\" ? \
                 v + \"n\" : Object.is(v, -0) ? \"-0\" : String(v), h]));";
    let compared = compare_with_icu(&format!("{CORPUS}\n{shown}"), ANSWERS, "", promised).await;
    compared.assert_holds();
    // A refusal is no answer for what ICU refuses as out of range.
    assert!(
        compared.refused_for_range_errors.is_empty(),
        "refused where ICU throws a RangeError:\n{}",
        compared.refused_for_range_errors[..compared.refused_for_range_errors.len().min(20)]
            .join("\n")
    );
}

/// Whether a case (as `shown`) is one the guest says it formats: a locale
/// whose numbers read as en-US's in every style, any style but a currency
/// ICU does not know, in any notation (the corpus
/// sets no `roundingIncrement`, which the guest takes only with the
/// standard one).
fn promised(shown: &str) -> bool {
    let case: Value = serde_json::from_str(shown).expect("a case");
    let english = [
        json!(null),
        json!("en"),
        json!("en-US"),
        json!("EN-us"),
        json!(["en-US", "fr"]),
        json!([]),
        json!("en-PH"),
    ];
    let options = &case[1];
    english.contains(&case[0])
        && options["style"] != "bogus"
        && !["XYZ", "US"].contains(&options["currency"].as_str().unwrap_or(""))
}

#[tokio::test]
async fn what_programs_write_formats_as_in_node() {
    let program = r#"
        const total = 1234567.891, price = 19.5, share = 0.4567;
        return [
          total.toLocaleString(),
          total.toLocaleString("en-US", { minimumFractionDigits: 2 }),
          price.toLocaleString("en-US", { style: "currency", currency: "USD" }),
          new Intl.NumberFormat("en-US", { style: "currency", currency: "EUR" }).format(-price),
          new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 1 }).format(share),
          new Intl.NumberFormat("en-US").format(12345678901234567890n),
          (1.005).toFixed(2) + " " + (1.005).toLocaleString(undefined, { maximumFractionDigits: 2 }),
          [1234.5, null, 7n, "x"].toLocaleString(),
          [12345678, -0, 2 ** 53 - 1, -1000, 999].toLocaleString(),
          (-0).toLocaleString(),
          (5e-324).toLocaleString(undefined, { maximumSignificantDigits: 3 }),
          ["b", "a", "B", "ä"].sort(new Intl.Collator(undefined, { sensitivity: "base" }).compare).join(""),
          new Intl.Collator("en", { numeric: true }).compare("item10", "item9"),
          JSON.stringify(new Intl.Collator().resolvedOptions()),
          ["de", "de-AT", "en-GB", "id-ID", "pt-BR"].map((l) => new Intl.Collator(l).resolvedOptions().locale).join(),
          new Intl.Collator("de", { sensitivity: "accent" }).compare("Äpfel", "äpfel"),
          Object.prototype.toString.call(Intl),
          // Strings: a hexadecimal one is exact at any size; a zero's exponent says nothing.
          new Intl.NumberFormat("en").format("0x" + "f".repeat(256)),
          new Intl.NumberFormat("en", { minimumSignificantDigits: 1 }).format("0e-100000000"),
          new Intl.NumberFormat("en").format("  -12345678901234567890.123456789e-3 "),
          new Intl.Collator("en-Latn-US").resolvedOptions().locale,
          // Compact, scientific and engineering notation.
          [999, 1234, 56789, 999999, 1.5e9, -2.5e12, 7e15].map((n) => n.toLocaleString("en-US", { notation: "compact" })).join(),
          new Intl.NumberFormat("en", { notation: "compact", compactDisplay: "long" }).format(1234567),
          new Intl.NumberFormat("en", { notation: "compact", style: "currency", currency: "USD" }).format(98765),
          new Intl.NumberFormat("en", { notation: "scientific" }).format(0.000123456),
          new Intl.NumberFormat("en", { notation: "engineering", maximumSignificantDigits: 3 }).format(98765),
          JSON.stringify(new Intl.NumberFormat("en", { notation: "compact" }).formatToParts(-1500)),
          // Units, simple and compound.
          [1, 2.5].map((n) => ["kilometer", "kilometer-per-hour", "megabyte", "celsius", "percent", "mile-per-hour", "day"]
            .map((unit) => ["short", "long", "narrow"].map((unitDisplay) => n.toLocaleString("en-US", { style: "unit", unit, unitDisplay })).join("/")).join()).join(),
          JSON.stringify(new Intl.NumberFormat("en", { style: "unit", unit: "gigabyte", notation: "compact", compactDisplay: "long" }).formatToParts(1234567)),
          JSON.stringify(new Intl.NumberFormat("en", { style: "unit", unit: "liter-per-kilometer" }).resolvedOptions()),
          // Under compact notation an explicit "auto" groups as "min2" does (ICU's), and says "auto".
          [undefined, "auto", "always", "min2", false].map((useGrouping) => [9441e12, 1234e12, 8].map((n) =>
            [{}, { compactDisplay: "long" }, { style: "currency", currency: "USD", minimumIntegerDigits: 4 }].map((o) =>
              new Intl.NumberFormat("en", { notation: "compact", useGrouping, ...o }).format(n)).join("/")).join() + " " +
            new Intl.NumberFormat("en", { notation: "compact", useGrouping }).resolvedOptions().useGrouping).join(),
        ];
    "#;
    let outcome = run(program).await;
    let got = value(&outcome);
    let want = node_json(&format!(
        "process.stdout.write(JSON.stringify((() => {{ {program} }})()));"
    ));
    assert_eq!(got, want, "{:?}", outcome.result);
    // And a few, spelled out, so that the test reads without Node.
    assert_eq!(got[0], "1,234,567.891");
    assert_eq!(got[2], "$19.50");
    assert_eq!(got[6], "1.00 1.01");
    assert_eq!(got[21], "999,1.2K,57K,1M,1.5B,-2.5T,7000T");
    assert!(
        got[27]
            .as_str()
            .unwrap()
            .starts_with("1 km/1 kilometer/1km,1 km/h/1 kilometer per hour/1km/h,")
    );
}

#[tokio::test]
async fn what_cannot_be_exact_throws_and_says_what_to_do() {
    let program = r#"
        const refusal = (f) => { try { return "answered " + JSON.stringify(f()); } catch (e) { return e.name + ": " + e.message; } };
        return {
          german: refusal(() => (1234.5).toLocaleString("de-DE")),
          compactIncrement: refusal(() => new Intl.NumberFormat("en", { notation: "compact", roundingIncrement: 5,
            minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(1234)),
          unit: refusal(() => (5).toLocaleString("en-GB", { style: "unit", unit: "meter" })),
          dates: refusal(() => new Intl.DateTimeFormat("de-DE").format(new Date(0))),
          zone: refusal(() => new Intl.DateTimeFormat("en-US", { timeZone: "Asia/Tokyo" }).format(0)),
          list: refusal(() => new Intl.ListFormat("en-GB").format(["a", "b", "c"])),
          badDigits: refusal(() => (1).toLocaleString("en", { maximumFractionDigits: 101 })),
          badTag: refusal(() => (1).toLocaleString("en_US")),
          date: refusal(() => new Date(0).toLocaleDateString("fr")),
          upperTr: refusal(() => "i".toLocaleUpperCase("tr")),
          // A currency not in the table, with digit options Node takes for it (its digits are 0): refused
          // for the currency, not a RangeError for options made up from default digits.
          oldCurrency: refusal(() => new Intl.NumberFormat("en", { style: "currency", currency: "ESP",
            minimumFractionDigits: 1, roundingIncrement: 50 }).format(-9814.1)),
          // Both given and unequal: ICU's RangeError, whatever the currency.
          oldCurrencyBoth: refusal(() => new Intl.NumberFormat("en", { style: "currency", currency: "ESP",
            minimumFractionDigits: 1, maximumFractionDigits: 2, roundingIncrement: 50 }).format(1)),
        };
    "#;
    let outcome = run(program).await;
    let got = value(&outcome);
    let says = |key: &str, start: &str, words: &[&str]| {
        let text = got[key].as_str().unwrap();
        assert!(text.starts_with(start), "{key}: {text}");
        for word in words {
            assert!(text.contains(word), "{key}: {word:?} not in {text}");
        }
    };
    says("german", "TypeError: ", &["de-DE", "en-US"]);
    says(
        "compactIncrement",
        "TypeError: ",
        &["roundingIncrement", "compact", "standard"],
    );
    says("unit", "TypeError: ", &["unit", "en-GB"]);
    says(
        "dates",
        "TypeError: ",
        &["DateTimeFormat", "de-DE", "toISOString"],
    );
    says(
        "zone",
        "TypeError: ",
        &["DateTimeFormat", "Asia/Tokyo", "UTC"],
    );
    says("list", "TypeError: ", &["ListFormat", "en-GB", "en-US"]);
    says("badDigits", "RangeError: ", &[]);
    says("badTag", "RangeError: ", &[]);
    says("date", "TypeError: ", &["\"fr\"", "en-US", "toISOString"]);
    says("upperTr", "TypeError: ", &["toUpperCase"]);
    says("oldCurrency", "TypeError: ", &["\"ESP\"", "table"]);
    says(
        "oldCurrencyBoth",
        "RangeError: ",
        &["maximumFractionDigits not equal"],
    );
    // What compares, Intl.Collator says it supports.
    let outcome = run(
        "return Intl.Collator.supportedLocalesOf(['de-at', 'fr', 'fr-CA', 'en-GB', 'sv', 'de-u-co-phonebk']);",
    )
    .await;
    assert_eq!(value(&outcome), json!(["de-AT", "fr", "en-GB"]));
    // Uncaught, a refusal ends the run as the program's own error would.
    let outcome = run("return (12.5).toLocaleString('de-DE');").await;
    assert_failed(&outcome, FailureKind::Invalid, "de-DE");
}

/// A program that replaces the built-ins the formatter uses, or reads its
/// options through getters, changes nothing the formatter answers, and
/// sees its getters read in the order V8 reads them. Among them
/// `String.prototype.concat`: QuickJS compiles a template literal to a call
/// of it, and a replaced one made every answer (`"1x,000,..."` for 5).
#[tokio::test]
async fn replaced_built_ins_and_getters_do_not_change_an_answer() {
    let reads = r#"
        const reads = [];
        const options = new Proxy({ style: "currency", currency: "USD", maximumFractionDigits: 1, useGrouping: "min2" }, {
          get(target, key, receiver) { reads.push(String(key)); return Reflect.get(target, key, receiver); },
        });
        const answer = new Intl.NumberFormat("en-US", options).format(12345.67);
    "#;
    let want = node_json(&format!(
        "{reads}\nprocess.stdout.write(JSON.stringify({{ reads, answer }}));"
    ));
    let program = format!(
        r#"
        {reads}
        const all = () => [(1234.5678).toLocaleString(), (0.125).toLocaleString("en", {{ style: "percent", minimumFractionDigits: 1 }}),
          (-98765.4321).toLocaleString("en-US", {{ style: "currency", currency: "JPY", currencySign: "accounting" }}),
          [1, 2.5].toLocaleString(), (12n ** 20n).toLocaleString(), new Intl.NumberFormat("en", {{ maximumSignificantDigits: 2 }}).formatToParts(-1234)];
        const show = (list) => {{ let s = ""; for (let i = 0; i < 5; i++) s += list[i] + "|"; return s + JSON.stringify(list[5]); }};
        const readsText = reads.join();
        const before = show(all());
        {REPLACE_BUILT_INS}
        let after;
        try {{ after = all(); }} catch (e) {{ after = ["" + e]; }}
        {UNTRAP}
        return {{ before, after: show(after), reads: readsText, answer }};
    "#
    );
    let outcome = run(&program).await;
    let got = value(&outcome);
    assert_eq!(got["before"], got["after"], "{:?}", outcome.result);
    assert!(
        got["before"]
            .as_str()
            .unwrap()
            .starts_with("1,234.568|12.5%|(¥98,765)|1,2.5|3,833,759,992,447,475,122,176|"),
        "{}",
        got["before"]
    );
    assert_eq!(got["answer"], want["answer"]);
    assert_eq!(got["reads"], json!(strings(&want["reads"]).join(",")));
}

/// A format is cheap and holds nothing: a program that formats in a loop
/// fits a small budget, and the formatter's tables are made once a run.
#[tokio::test]
async fn many_formats_fit_a_small_budget() {
    let program = r#"
        let out = 0;
        for (let i = 0; i < 20000; i++) {
          out += (i * 1.37).toLocaleString("en-US", { style: "currency", currency: i % 2 ? "USD" : "EUR" }).length;
          out += new Intl.NumberFormat(undefined, { maximumSignificantDigits: 1 + (i % 21) }).format(i / 7).length;
        }
        return out;
    "#;
    fits_a_small_budget(program, "").await;
}
