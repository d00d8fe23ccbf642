//! Dates formatted in the real wasm guest, against ICU: the same times,
//! locales and options are formatted by the guest and by Node.js (full
//! ICU, installed by scripts/setup, run in UTC, the sandbox's only time
//! zone), with `toLocaleString`, `toLocaleDateString`,
//! `toLocaleTimeString` and `Intl.DateTimeFormat`'s `format`,
//! `formatToParts` and `resolvedOptions`. Each answer must be ICU's, or
//! the same kind of error, or a refusal that says the sandbox cannot (a
//! locale whose dates read otherwise, a time zone other than UTC). What the
//! guest refuses is counted, so that a guest refusing everything fails.

use serde_json::{Value, json};
use wasmwire::{Budget, FailureKind};
use wasmwire_tests::icu::{
    REPLACE_BUILT_INS, UNTRAP, compare_with_icu, fits_a_small_budget, strings,
};
use wasmwire_tests::{assert_failed, node_json, roomy, run, run_with, value};

/// Makes `cases`: `[locales, options, time, how]`, the same in both
/// engines (a seeded generator; no `Intl` until `answer` runs).
const CORPUS: &str = r##"
let seed = 20261206;
const rnd = () => { seed = (seed + 0x6D2B79F5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
const ri = (a, b) => a + Math.floor(rnd() * (b - a + 1));
const pick = (list) => list[Math.floor(rnd() * list.length)];
const LOCALES = [undefined, undefined, undefined, undefined, "en", "en-US", "EN-us", ["en-US", "fr"], [], "en-GB",
  "en-AU", "en-CA", "en-IN", "de-DE", "fr", "ja-JP", "en-US-u-hc-h23", "en-US-u-ca-buddhist", "en_US", 5];
const ZONES = [undefined, undefined, undefined, undefined, undefined, undefined, "UTC", "utc", "Etc/UTC", "GMT", "America/New_York", "Asia/Tokyo",
  "Mars/Base", "UTC+1", "GMT-5", "GMT+0", "Etc/GMT+5"];
const DAY = 864e5;
function time() {
  const r = rnd();
  if (r < 0.05) return pick([0, -1, NaN, 8.64e15, -8.64e15, 8.64e15 + 1, 951782400000, -62135596800000, -62198755200000]);
  if (r < 0.5) return Date.UTC(ri(1970, 2040), ri(0, 11), ri(1, 31), ri(0, 23), ri(0, 59), ri(0, 59), ri(0, 999));
  if (r < 0.6) return Date.UTC(ri(2000, 2030), ri(0, 11), ri(1, 28), pick([0, 11, 12, 23]), pick([0, 59]), 0, 0);
  if (r < 0.8) return Math.round((rnd() - 0.5) * 2 * 4e14 / DAY) * DAY + ri(0, DAY - 1);
  return Math.round((rnd() - 0.5) * 2 * 8.64e15);
}
const FIELDS = [
  ["weekday", ["narrow", "short", "long", "bogus"]],
  ["era", ["narrow", "short", "long"]],
  ["year", ["numeric", "2-digit", "2-digit", "long"]],
  ["month", ["numeric", "2-digit", "narrow", "short", "long", "long"]],
  ["day", ["numeric", "2-digit"]],
  ["dayPeriod", ["narrow", "short", "long"]],
  ["hour", ["numeric", "2-digit"]],
  ["minute", ["numeric", "2-digit"]],
  ["second", ["numeric", "2-digit"]],
  ["fractionalSecondDigits", [1, 2, 3, 4, 0]],
  ["timeZoneName", ["short", "long", "shortOffset", "longOffset", "shortGeneric", "longGeneric"]],
];
function options() {
  if (rnd() < 0.1) return undefined;
  const o = {};
  if (rnd() < 0.3) {
    if (rnd() < 0.8) o.dateStyle = pick(["full", "long", "medium", "short", "bogus"]);
    if (rnd() < 0.6) o.timeStyle = pick(["full", "long", "medium", "short"]);
    if (rnd() < 0.05) o.month = "long";
  } else {
    for (let i = ri(0, 4); i > 0; i--) { const [key, values] = pick(FIELDS); o[key] = pick(values); }
  }
  if (rnd() < 0.15) o.hour12 = rnd() < 0.5;
  if (rnd() < 0.1) o.hourCycle = pick(["h11", "h12", "h23", "h24", "h25"]);
  const zone = pick(ZONES);
  if (zone !== undefined) o.timeZone = zone;
  if (rnd() < 0.03) o.calendar = pick(["gregory", "buddhist", "iso8601"]);
  if (rnd() < 0.03) o.numberingSystem = pick(["latn", "arab"]);
  return o;
}
const HOWS = ["format", "format", "parts", "resolved", "toLocaleString", "toLocaleDateString", "toLocaleTimeString"];
const cases = [];
for (let i = 0; i < 12000; i++) cases.push([pick(LOCALES), options(), time(), pick(HOWS)]);
"##;

/// `answers`: for each case, `=` and the answer, `!` and the error's name,
/// or `*` and the message of a refusal (a TypeError that names this
/// sandbox).
const ANSWERS: &str = r##"
const answer = ([locales, options, t, how]) => {
  try {
    const d = new Date(t);
    if (how === "toLocaleString") return "=" + d.toLocaleString(locales, options);
    if (how === "toLocaleDateString") return "=" + d.toLocaleDateString(locales, options);
    if (how === "toLocaleTimeString") return "=" + d.toLocaleTimeString(locales, options);
    const dtf = new Intl.DateTimeFormat(locales, options);
    if (how === "format") return "=" + dtf.format(d);
    if (how === "parts") return "=" + JSON.stringify(dtf.formatToParts(t));
    return "=" + JSON.stringify(dtf.resolvedOptions());
  } catch (e) {
    return e instanceof TypeError && /sandbox/.test(e.message) ? "*" + e.message : "!" + e.name;
  }
};
const answers = cases.map(answer);
"##;

/// Node in UTC, the sandbox's time zone.
const IN_UTC: &str = "process.env.TZ = \"UTC\";";

#[tokio::test]
async fn dates_format_as_icu_does_for_en_us_in_utc_or_the_sandbox_says_it_cannot() {
    // The cases as each engine made them, shown before any formatting.
    let shown = "const shown = cases.map((c) => JSON.stringify(c, (k, v) => Number.isNaN(v) ? \"NaN\" : v));";
    // A refusal where ICU throws a RangeError is allowed: a time zone ICU
    // does not know either (the sandbox has no list of zones, and refuses
    // every one but UTC), or a bad value beside a locale the sandbox
    // refuses first.
    compare_with_icu(&format!("{CORPUS}\n{shown}"), ANSWERS, IN_UTC, promised)
        .await
        .assert_holds();
}

/// Whether a case (as `shown`) is one the guest says it formats: an
/// English locale whose dates read as en-US's, UTC or no time zone, the
/// Gregorian calendar and Latin digits.
fn promised(shown: &str) -> bool {
    let case: Value = serde_json::from_str(shown).expect("a case");
    let english = [
        json!(null),
        json!("en"),
        json!("en-US"),
        json!("EN-us"),
        json!(["en-US", "fr"]),
        json!([]),
    ];
    let options = &case[1];
    let zone = options["timeZone"].as_str().unwrap_or("UTC");
    english.contains(&case[0])
        && ["UTC", "utc", "Etc/UTC", "GMT"].contains(&zone)
        && ["gregory", ""].contains(&options["calendar"].as_str().unwrap_or(""))
        && ["latn", ""].contains(&options["numberingSystem"].as_str().unwrap_or(""))
}

/// What model-written programs write, answered as Node in UTC answers.
#[tokio::test]
async fn what_programs_write_formats_as_in_node() {
    let program = r#"
        const d = new Date(Date.UTC(2024, 2, 10, 15, 4, 5, 678));
        const midnight = new Date("2023-12-31T00:00:00Z");
        return [
          d.toLocaleDateString(), d.toLocaleTimeString(), d.toLocaleString(),
          d.toLocaleDateString("en-US", { month: "short", day: "numeric", year: "numeric" }),
          d.toLocaleDateString("en-US", { weekday: "long", year: "numeric", month: "long", day: "numeric" }),
          d.toLocaleTimeString("en-US", { hour: "2-digit", minute: "2-digit" }),
          d.toLocaleString("en-US", { timeZone: "UTC", hour12: false }),
          d.toLocaleDateString(undefined, { month: "2-digit", day: "2-digit", year: "numeric" }),
          new Intl.DateTimeFormat("en-US", { dateStyle: "full", timeStyle: "long" }).format(d),
          new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short", timeZone: "Etc/UTC" }).format(d),
          new Intl.DateTimeFormat("en-US", { month: "long" }).format(midnight),
          new Intl.DateTimeFormat("en-US", { hour: "numeric", dayPeriod: "long" }).format(d),
          new Intl.DateTimeFormat("en-US", { minute: "2-digit", second: "2-digit", fractionalSecondDigits: 3 }).format(d),
          new Intl.DateTimeFormat("en-US", { year: "numeric", era: "short" }).format(new Date(Date.UTC(-500, 0, 1))),
          new Intl.DateTimeFormat("en-US", { timeZoneName: "short" }).format(d),
          new Intl.DateTimeFormat().formatToParts(midnight),
          Intl.DateTimeFormat().resolvedOptions(),
          new Intl.DateTimeFormat("en-US", { dateStyle: "short", timeStyle: "medium" }).resolvedOptions(),
          [d, midnight].map(new Intl.DateTimeFormat("en-US", { weekday: "short" }).format),
          new Date(NaN).toLocaleString(),
          Object.prototype.toString.call(new Intl.DateTimeFormat()),
          Intl.DateTimeFormat.supportedLocalesOf(["en-US", "en-PH", "en-GB", "fr"]),
        ];
    "#;
    let outcome = run(program).await;
    let got = value(&outcome);
    let want = node_json(&format!(
        "{IN_UTC} process.stdout.write(JSON.stringify((() => {{ {program} }})()));"
    ));
    // Node lists every locale it has; the sandbox the ones it formats.
    let (mut got_all, mut want_all) = (got.clone(), want.clone());
    got_all.as_array_mut().unwrap().pop();
    want_all.as_array_mut().unwrap().pop();
    assert_eq!(got_all, want_all, "{:?}", outcome.result);
    assert_eq!(
        got.as_array().unwrap().last().unwrap(),
        &json!(["en-US", "en-PH"])
    );
    // And a few, spelled out, so that the test reads without Node.
    assert_eq!(got[0], "3/10/2024");
    assert_eq!(got[1], "3:04:05 PM");
    assert_eq!(got[3], "Mar 10, 2024");
}

#[tokio::test]
async fn what_cannot_be_exact_throws_and_says_what_to_do() {
    let program = r#"
        const refusal = (f) => { try { return "answered " + JSON.stringify(f()); } catch (e) { return e.name + ": " + e.message; } };
        return {
          german: refusal(() => new Date(0).toLocaleDateString("de-DE")),
          british: refusal(() => new Date(0).toLocaleDateString("en-GB")),
          zone: refusal(() => new Date(0).toLocaleString("en-US", { timeZone: "America/New_York" })),
          calendar: refusal(() => new Intl.DateTimeFormat("en-US", { calendar: "buddhist" })),
          digits: refusal(() => new Intl.DateTimeFormat("en-US", { numberingSystem: "arab" })),
          range: refusal(() => new Intl.DateTimeFormat("en").formatRange(0, 1)),
          badZone: refusal(() => new Intl.DateTimeFormat("en", { timeZone: "+99:99" })),
          badStyle: refusal(() => new Intl.DateTimeFormat("en", { dateStyle: "tiny" })),
          conflict: refusal(() => new Intl.DateTimeFormat("en", { dateStyle: "short", hour: "numeric" })),
          invalid: refusal(() => new Intl.DateTimeFormat("en").format(NaN)),
          typed: refusal(() => new Uint8Array([1]).toLocaleString()),
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
    says("german", "TypeError: ", &["de-DE", "en-US", "toISOString"]);
    says("british", "TypeError: ", &["en-GB", "en-US"]);
    says("zone", "TypeError: ", &["America/New_York", "UTC"]);
    says("calendar", "TypeError: ", &["buddhist", "gregory"]);
    says("digits", "TypeError: ", &["arab"]);
    says("range", "TypeError: ", &["formatRange", "format()"]);
    says("badZone", "RangeError: ", &[]);
    says("badStyle", "RangeError: ", &[]);
    says("conflict", "TypeError: ", &[]);
    says("invalid", "RangeError: ", &[]);
    says("typed", "TypeError: ", &["toLocaleString", "join()"]);
    // Uncaught, a refusal ends the run as the program's own error would.
    let outcome =
        run("return new Date(0).toLocaleString('en-US', { timeZone: 'Europe/Paris' });").await;
    assert_failed(&outcome, FailureKind::Invalid, "Europe/Paris");
}

/// A program that replaces the built-ins the formatter uses, or reads its
/// options through getters, changes nothing the formatter answers, and sees
/// its getters read in the order, and as often, as V8 reads them. (Not
/// `Date.prototype.valueOf`: `format(date)` converts its argument to a
/// number, which calls it, in V8 as here.) A first version of the file
/// looked `Object.setPrototypeOf` and `String.fromCharCode` up at each
/// call: a program that replaced the latter had a made-up zone taken for
/// UTC.
#[tokio::test]
async fn replaced_built_ins_and_getters_do_not_change_an_answer() {
    let reads = r#"
        const reads = [];
        const options = new Proxy({ dateStyle: "medium", timeStyle: "short", hourCycle: "h23", timeZone: "UTC" }, {
          get(target, key, receiver) { reads.push(String(key)); return Reflect.get(target, key, receiver); },
        });
        const answer = new Intl.DateTimeFormat("en-US", options).format(Date.UTC(2024, 0, 2, 3, 4, 5));
        const before = reads.length;
        new Date(0).toLocaleString("en-US", options);
        const again = reads.slice(before);
    "#;
    let want = node_json(&format!(
        "{IN_UTC}\n{reads}\nprocess.stdout.write(JSON.stringify({{ reads: reads.slice(0, before), again, answer }}));"
    ));
    let program = format!(
        r#"
        {reads}
        const d = new Date(Date.UTC(2024, 6, 4, 18, 30, 15, 250));
        const all = () => [d.toLocaleDateString(), d.toLocaleString("en-US", {{ weekday: "long", hour: "numeric" }}),
          new Intl.DateTimeFormat("en", {{ dateStyle: "full", timeStyle: "full" }}).format(d),
          JSON.stringify(new Intl.DateTimeFormat("en-US", {{ month: "short", fractionalSecondDigits: 2, second: "numeric" }}).formatToParts(d)),
          JSON.stringify(Intl.DateTimeFormat().resolvedOptions())];
        const show = (list) => {{ let s = list[0]; for (let i = 1; i < list.length; i++) s += "|" + list[i]; return s; }};
        const before_ = show(all());
        const readsText = reads.slice(0, before).join(), againText = again.join();
        {REPLACE_BUILT_INS}
        let after;
        try {{ after = show(all()); }} catch (e) {{ after = "" + e; }}
        {UNTRAP}
        return {{ before: before_, after, reads: readsText, again: againText, answer }};
    "#
    );
    let outcome = run(&program).await;
    let got = value(&outcome);
    assert_eq!(got["before"], got["after"], "{:?}", outcome.result);
    assert!(
        got["before"]
            .as_str()
            .unwrap()
            .starts_with("7/4/2024|Thursday 6 PM|"),
        "{}",
        got["before"]
    );
    assert_eq!(got["answer"], want["answer"]);
    assert_eq!(got["reads"], json!(strings(&want["reads"]).join(",")));
    assert_eq!(got["again"], json!(strings(&want["again"]).join(",")));
}

/// A format is cheap and holds nothing: a program that formats in a loop
/// fits a small budget.
#[tokio::test]
async fn many_formats_fit_a_small_budget() {
    let program = r#"
        let out = 0;
        for (let i = 0; i < 20000; i++) {
          const d = new Date(Date.UTC(2000, 0, 1) + i * 3_600_123);
          out += d.toLocaleDateString().length + d.toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" }).length;
          out += new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", weekday: i % 2 ? "short" : "long" }).format(d).length;
        }
        return out;
    "#;
    fits_a_small_budget(program, IN_UTC).await;
}

/// What a program hands the formatter costs it no more than the text
/// itself: a distinct calendar or numbering system is not kept (a first
/// version cached every one for good: 200 calendars of 100 KB held 370
/// MB; these 80 would hold some 80 MB against the 32 MiB given), a locale of thousands of variants or a time zone of megabytes is
/// refused at once, with V8's RangeError (they took 13 s and 5 s, and
/// ended in the sandbox's TypeError). And the errors of a style beside a
/// field name the field V8 names.
#[tokio::test]
async fn what_a_program_hands_the_formatter_is_not_kept_nor_worked_on_for_long() {
    let program = r#"
        const name = (f) => { try { f(); return "answered"; } catch (e) { return e.name; } };
        const big = "abc-".repeat(25000) + "abc";
        const kept = [];
        for (let i = 0; i < 40; i++) {
          kept.push(name(() => new Intl.DateTimeFormat("en", { calendar: big + "-x" + (1000 + i) })));
          kept.push(name(() => new Intl.DateTimeFormat("en", { numberingSystem: big + "-y" + (1000 + i) })));
        }
        const variants = [];
        for (let i = 0; i < 16000; i++) variants.push("a" + String(i).padStart(4, "0"));
        return {
          kept: [...new Set(kept)],
          variants: name(() => new Intl.DateTimeFormat("en-" + variants.join("-"))),
          thirty: name(() => new Intl.DateTimeFormat("en-" + variants.slice(0, 31).join("-"))),
          zone: name(() => new Intl.DateTimeFormat("en", { timeZone: "A".repeat(4 << 20) })),
          offsets: ["UTC+1", "GMT-5", "utc0", "GMT+0", "Etc/GMT+5"].map((timeZone) =>
            name(() => new Intl.DateTimeFormat("en", { timeZone }))),
          style: (() => { try { new Intl.DateTimeFormat("en", { dateStyle: "full", fractionalSecondDigits: 2, timeZoneName: "short" }); }
            catch (e) { return e.message; } })(),
        };
    "#;
    let mut small: Budget = roomy();
    small.max_memory = 32 << 20;
    let outcome = run_with(program, small).await;
    let got = value(&outcome);
    let want = node_json(&format!(
        "{IN_UTC} process.stdout.write(JSON.stringify((() => {{ {program} }})()));"
    ));
    // Each refused, as a calendar the sandbox does not have (V8 throws a
    // RangeError for one this long), and none of them kept.
    assert_eq!(got["kept"], json!(["TypeError"]), "{:?}", outcome.result);
    for key in ["variants", "thirty", "zone", "style"] {
        assert_eq!(got[key], want[key], "{key}");
    }
    // Etc/GMT+5 is a real zone the sandbox has no data for.
    assert_eq!(
        got["offsets"],
        json!([
            "RangeError",
            "RangeError",
            "RangeError",
            "answered",
            "TypeError"
        ])
    );
    assert_eq!(
        want["offsets"],
        json!([
            "RangeError",
            "RangeError",
            "RangeError",
            "answered",
            "answered"
        ])
    );
}

/// A date's `toLocale*String` and a number's `toLocaleString` with a
/// locale given as a string and no options keep a formatter for that
/// locale (one was made at each call: 50-70 µs a value). Locales
/// alternated, refused between, and V8's reuse of the last one for `""`
/// answer as in Node.
#[tokio::test]
async fn formatters_kept_for_a_locale_answer_as_new_ones() {
    let program = r#"
        const out = [];
        const d = new Date(Date.UTC(2024, 2, 10, 15, 4, 5));
        for (const locale of ["en-US", "en", "en-US", "en_US", "en-US", "", "en", undefined, "en-us"]) {
            for (const f of [() => d.toLocaleDateString(locale), () => d.toLocaleTimeString(locale),
                             () => d.toLocaleString(locale), () => (1234.5678).toLocaleString(locale),
                             () => (-0.5).toLocaleString(locale), () => (10n ** 20n).toLocaleString(locale)]) {
                try { out.push(f()); } catch (e) { out.push(e.name); }
            }
        }
        return out;
    "#;
    let outcome = run(program).await;
    let want = node_json(&format!(
        "process.env.TZ = \"UTC\"; (async () => {{ {program} }})().then((v) => process.stdout.write(JSON.stringify(v.map((x) => x === 'RangeError' || x === 'TypeError' ? 'refused' : x))));"
    ));
    let got: Vec<serde_json::Value> = value(&outcome)
        .as_array()
        .expect("an array")
        .iter()
        .map(|x| match x.as_str() {
            Some("RangeError" | "TypeError") => serde_json::json!("refused"),
            _ => x.clone(),
        })
        .collect();
    assert_eq!(serde_json::Value::Array(got), want);
}
