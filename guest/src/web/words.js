// Intl.PluralRules, Intl.RelativeTimeFormat and Intl.ListFormat for en-US,
// exactly as ICU writes them (Node 20: V8 11.3, ICU 73): "one" and "other"
// (ordinals "one", "two", "few", "other"), "in 3 days", "yesterday",
// "3 hr. ago", "2d ago", "a, b, and c", "a, b, or c". The words were
// measured in Node for every style and unit, and so was which locales use
// them: `en`, `en-US` and every `en-<region>` whose numbers read as en-US's
// in every style (numberformat.js's tier 1). Any other locale (`en-GB`
// writes "a, b and c") throws a TypeError that says so.
//
// A number is rounded as numberformat.js rounds it before a word is chosen,
// as ICU does: 1.0001 is "one". A relative time's number is rounded half to
// even, ICU's own default (its RelativeDateTimeFormatter does not take
// ECMA-402's half away from zero: "in 1.234 hours" for 1.2345), and
// `numeric: "auto"` takes a word where ICU does: for an offset whose
// hundredfold rounds to -100, 0 or 100, within 0.005 of -1, 0 or 1
// ("tomorrow" for 0.999 and 1.004 days, not for 0.994). Every built-in is
// captured here, before programs run.
(function (native, shared) {
  "use strict";
  const G = globalThis;
  const trunc = Math.trunc;
  const TypeErr = TypeError, RangeErr = RangeError;
  const NumberCtor = Number, StringCtor = String;
  const defProp = Object.defineProperty;
  const setProto = Object.setPrototypeOf;
  const objCreate = Object.create;
  const WeakMapCtor = WeakMap;
  const callOf = (f) => Reflect.apply(Function.prototype.bind, Function.prototype.call, [f]);
  const wmGet = callOf(WeakMap.prototype.get), wmSet = callOf(WeakMap.prototype.set);
  const slice = callOf(String.prototype.slice);
  const symIterator = Symbol.iterator, symToStringTag = Symbol.toStringTag;
  const canonicalizeLocaleList = shared.canonicalizeLocaleList;
  const resolveLocale = shared.resolveLocale;
  const isDefaultTag = shared.isDefaultTag;
  const getOption = shared.getOption;
  const isTypeSequence = shared.isTypeSequence;
  const coerceOptions = shared.coerceOptions;
  const makeArray = shared.makeArray;
  const numberFormatter = shared.numberFormatter;
  const numberDigits = shared.numberDigits;
  const numberParts = shared.numberParts;

  const list = () => setProto([], null);
  const push = (a, v) => { a[a.length] = v; };
  const L = (...a) => { const r = list(); for (let i = 0; i < a.length; i++) r[i] = a[i]; return r; };
  const inList = (v, arr) => { for (let i = 0; i < arr.length; i++) if (arr[i] === v) return true; return false; };
  const indexIn = (v, arr) => { for (let i = 0; i < arr.length; i++) if (arr[i] === v) return i; return -1; };
  const method = (o, name, f) => defProp(o, name, { __proto__: null, value: f, writable: true, enumerable: false, configurable: true });
  const setLen = (f, n) => defProp(f, "length", { __proto__: null, value: n, writable: false, enumerable: false, configurable: true });
  const put = (o, k, v) => defProp(o, k, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
  const toStr = (v) => {
    if (typeof v === "symbol") throw new TypeErr("Cannot convert a Symbol value to a string");
    return typeof v === "string" ? v : StringCtor(v);
  };
  // ToNumber, in V8's words for a BigInt.
  const toNum = (v) => {
    if (typeof v === "bigint") throw new TypeErr("Cannot convert a BigInt value to a number");
    return NumberCtor(v);
  };
  const quoted = (t) => "\"" + (t.length > 40 ? slice(t, 0, 40) + "..." : t) + "\"";
  const MATCHERS = L("lookup", "best fit");

  // The locale an en-US service resolves to, as V8 reports it; a TypeError for one whose words differ.
  const localeOf = (name, req) => {
    const loc = resolveLocale(req);
    if (loc === null || loc.tier !== 1)
      throw new TypeErr("Intl." + name + ": locale " + quoted(req[0].raw) + " is not available: this sandbox has only " +
        "en-US's words (use undefined, \"en\" or \"en-US\")");
    return loc;
  };
  // What each constructor does first, in V8's order: `new` required, the
  // prototype from new.target, the locale list, the options and their
  // localeMatcher. `args` is the constructor's `arguments`.
  const opening = (name, nt, args, fallback) => {
    if (nt === undefined) throw new TypeErr("Constructor Intl." + name + " requires 'new'");
    const p = nt.prototype;
    const proto = (typeof p === "object" && p !== null) || typeof p === "function" ? p : fallback;
    const req = canonicalizeLocaleList(args.length > 0 ? args[0] : undefined);
    const options = coerceOptions(args.length > 1 ? args[1] : undefined);
    getOption(options, "localeMatcher", MATCHERS, "best fit", "Intl." + name);
    return { __proto__: null, proto, req, options };
  };
  const receiver = (slots, name) => (o, m) => {
    const s = (typeof o === "object" && o !== null) ? wmGet(slots, o) : undefined;
    if (s === undefined) throw new TypeErr("Method Intl." + name + ".prototype." + m + " called on incompatible receiver " +
      (typeof o === "object" && o !== null ? "#<Object>" : typeof o === "symbol" ? "Symbol()" : toStr(o)));
    return s;
  };
  const supportedLocalesOf = (name) => ({
    supportedLocalesOf(locales) {
      const options = arguments.length > 1 ? arguments[1] : undefined;
      const req = canonicalizeLocaleList(locales);
      getOption(coerceOptions(options), "localeMatcher", MATCHERS, "best fit", "Intl." + name + ".supportedLocalesOf");
      const out = list();
      for (let i = 0; i < req.length; i++) {
        const loc = resolveLocale(L(req[i]));
        if (loc !== null && loc.tier === 1 && !inList(loc.canon, out)) push(out, loc.canon);
      }
      return makeArray(out);
    },
  }.supportedLocalesOf);
  const finish = (name, Ctor, methods) => {
    const proto = Ctor.prototype;
    const keys = Reflect.ownKeys(methods);
    for (let i = 0; i < keys.length; i++) {
      const d = Reflect.getOwnPropertyDescriptor(methods, keys[i]);
      d.enumerable = false;
      defProp(proto, keys[i], d);
    }
    setLen(Ctor, 0);
    defProp(Ctor, "prototype", { __proto__: null, writable: false, enumerable: false, configurable: false });
    defProp(proto, symToStringTag, { __proto__: null, value: "Intl." + name, writable: false, enumerable: false, configurable: true });
    method(Ctor, "supportedLocalesOf", supportedLocalesOf(name));
    method(G.Intl, name, Ctor);
  };
  // A number's digits as the formatter `nf` rounds them: the integer part (no padding), and whether a
  // fraction other than zeros is left.
  const roundedOf = (nf, x) => {
    const d = numberDigits(nf, x < 0 ? -x : x);
    let int = d.int, j = 0;
    while (j < int.length - 1 && int[j] === "0") j++;
    if (j > 0) int = slice(int, j);
    let fraction = false;
    for (let i = 0; i < d.frac.length; i++) if (d.frac[i] !== "0") fraction = true;
    return { __proto__: null, int, visibleFraction: d.frac.length > 0, fraction };
  };

  // ---------- PluralRules ----------
  const PR = "Intl.PluralRules";
  const prSlots = new WeakMapCtor();
  const prOf = receiver(prSlots, "PluralRules");
  function PluralRules() {
    const { proto, req, options } = opening("PluralRules", new.target, arguments, PRProto);
    const type = getOption(options, "type", L("cardinal", "ordinal"), "cardinal", PR);
    // The digit options, read in V8's order, rounded as Intl.NumberFormat rounds (with its errors).
    const bag = { __proto__: null };
    const names = L("minimumIntegerDigits", "minimumFractionDigits", "maximumFractionDigits", "minimumSignificantDigits", "maximumSignificantDigits");
    for (let i = 0; i < names.length; i++) { const v = options[names[i]]; if (v !== undefined) bag[names[i]] = v; }
    const nf = numberFormatter(bag);
    localeOf("PluralRules", req);
    // V8 reports the default locale as en-US, and any en tag as en.
    const pr = { __proto__: null, locale: req.length === 0 || isDefaultTag(req[0]) ? "en-US" : "en", type, nf };
    const obj = objCreate(proto);
    wmSet(prSlots, obj, pr);
    return obj;
  }
  const PRProto = PluralRules.prototype;
  // CLDR's English rules. Cardinal: "one" for 1 with no visible fraction digits. Ordinal, on the value:
  // 1, 21, 31, ... "one"; 2, 22, ... "two"; 3, 23, ... "few"; the teens and the rest "other".
  const select = (pr, n) => {
    if (n !== n || n === Infinity || n === -Infinity) return "other";
    const r = roundedOf(pr.nf, n);
    if (pr.type === "cardinal") return r.int === "1" && !r.visibleFraction ? "one" : "other";
    if (r.fraction) return "other";
    const last = +slice(r.int, r.int.length - 1), tens = r.int.length > 1 ? +slice(r.int, r.int.length - 2, r.int.length - 1) : 0;
    if (tens === 1) return "other";
    return last === 1 ? "one" : last === 2 ? "two" : last === 3 ? "few" : "other";
  };
  finish("PluralRules", PluralRules, {
    resolvedOptions() {
      const pr = prOf(this, "resolvedOptions");
      const o = {};
      put(o, "locale", pr.locale); put(o, "type", pr.type); put(o, "minimumIntegerDigits", pr.nf.mnid);
      if (pr.nf.roundingType === "sd") { put(o, "minimumSignificantDigits", pr.nf.mnsd); put(o, "maximumSignificantDigits", pr.nf.mxsd); }
      else { put(o, "minimumFractionDigits", pr.nf.mnfd); put(o, "maximumFractionDigits", pr.nf.mxfd); }
      put(o, "pluralCategories", makeArray(pr.type === "cardinal" ? L("one", "other") : L("few", "one", "two", "other")));
      return o;
    },
    select(n) {
      const pr = prOf(this, "select");
      return select(pr, toNum(n));
    },
    selectRange(start, end) {
      prOf(this, "selectRange");
      if (start === undefined) throw new TypeErr("Invalid startRange : undefined");
      if (end === undefined) throw new TypeErr("Invalid endRange : undefined");
      const a = toNum(start), b = toNum(end);
      if (a !== a) throw new RangeErr("Invalid startRange : NaN");
      if (b !== b) throw new RangeErr("Invalid endRange : NaN");
      // CLDR's English ranges end in "other" whatever the two ends are.
      return "other";
    },
  });

  // ---------- RelativeTimeFormat ----------
  const RTF = "Intl.RelativeTimeFormat";
  const rtfSlots = new WeakMapCtor();
  const rtfOf = receiver(rtfSlots, "RelativeTimeFormat");
  const UNITS = L("second", "minute", "hour", "day", "week", "month", "quarter", "year");
  // Per style: each unit's name for one and for the rest, joined "one/other" ("" for a narrow unit written
  // onto the number: "2d").
  const NAMES = {
    __proto__: null,
    long: L(" second/ seconds", " minute/ minutes", " hour/ hours", " day/ days", " week/ weeks", " month/ months", " quarter/ quarters", " year/ years"),
    short: L(" sec./ sec.", " min./ min.", " hr./ hr.", " day/ days", " wk./ wk.", " mo./ mo.", " qtr./ qtrs.", " yr./ yr."),
    narrow: L("s/s", "m/m", "h/h", "d/d", "w/w", "mo/mo", "q/q", "y/y"),
  };
  // numeric: "auto": last / this / next, per style and unit ("" where the unit has none: -1 second is "1s ago").
  const AUTO = {
    __proto__: null,
    long: L("/now/", "/this minute/", "/this hour/", "yesterday/today/tomorrow", "last week/this week/next week",
      "last month/this month/next month", "last quarter/this quarter/next quarter", "last year/this year/next year"),
    short: L("/now/", "/this minute/", "/this hour/", "yesterday/today/tomorrow", "last wk./this wk./next wk.",
      "last mo./this mo./next mo.", "last qtr./this qtr./next qtr.", "last yr./this yr./next yr."),
  };
  AUTO.narrow = AUTO.short;
  const splitSlash = (s) => { const a = list(); let cur = ""; for (let i = 0; i < s.length; i++) { if (s[i] === "/") { push(a, cur); cur = ""; } else cur += s[i]; } push(a, cur); return a; };
  function RelativeTimeFormat() {
    const { proto, req, options } = opening("RelativeTimeFormat", new.target, arguments, RTFProto);
    const ns = getOption(options, "numberingSystem", null, undefined, RTF);
    if (ns !== undefined && !isTypeSequence(ns)) throw new RangeErr("Invalid numberingSystem : " + ns);
    const style = getOption(options, "style", L("long", "short", "narrow"), "long", RTF);
    const numeric = getOption(options, "numeric", L("always", "auto"), "always", RTF);
    const loc = localeOf("RelativeTimeFormat", req);
    if (ns !== undefined && ns !== "latn")
      throw new TypeErr("Intl.RelativeTimeFormat: numberingSystem \"" + ns + "\" is not available in this sandbox; only \"latn\" (0-9)");
    const obj = objCreate(proto);
    wmSet(rtfSlots, obj, { __proto__: null, locale: loc.nf, style, numeric, nf: numberFormatter({ __proto__: null, roundingMode: "halfEven" }) });
    return obj;
  }
  const RTFProto = RelativeTimeFormat.prototype;
  // -> null-proto list of [type, value, unit?]
  const relativeParts = (rtf, value, unit, m) => {
    const v = toNum(value);
    let u = toStr(unit);
    const where = "Intl.RelativeTimeFormat.prototype." + m + "()";
    if (v !== v || v === Infinity || v === -Infinity) throw new RangeErr("Value need to be finite number for " + where);
    let k = indexIn(u, UNITS);
    if (k < 0 && u.length > 1 && u[u.length - 1] === "s") k = indexIn(slice(u, 0, u.length - 1), UNITS);
    if (k < 0) throw new RangeErr("Invalid unit argument for " + where + " '" + u + "'");
    u = UNITS[k];
    const past = v < 0 || (v === 0 && 1 / v < 0);
    const nf = rtf.nf;
    const parts = list();
    // ICU's RelativeDateTimeFormatter::formatRelativeImpl: the offset times 100, rounded half away from zero
    // in doubles, picks the word at -100, 0 or 100; -200 and 200 have none in English.
    if (rtf.numeric === "auto" && v > -2.1 && v < 2.1) {
      const x = v * 100, at = x < 0 ? trunc(x - 0.5) : trunc(x + 0.5);
      if (at === -100 || at === 0 || at === 100) {
        const words = splitSlash(AUTO[rtf.style][k]);
        const word = at === 0 ? words[1] : at < 0 ? words[0] : words[2];
        if (word !== "") { push(parts, L("literal", word)); return parts; }
      }
    }
    const r = roundedOf(nf, v);
    const names = splitSlash(NAMES[rtf.style][k]);
    const name = r.int === "1" && !r.visibleFraction ? names[0] : names[1];
    const digits = numberParts(nf, past ? -v : v);
    if (!past) push(parts, L("literal", "in "));
    for (let i = 0; i < digits.length; i++) push(parts, L(digits[i][0], digits[i][1], u));
    push(parts, L("literal", past ? name + " ago" : name));
    return parts;
  };
  finish("RelativeTimeFormat", RelativeTimeFormat, {
    resolvedOptions() {
      const rtf = rtfOf(this, "resolvedOptions");
      const o = {};
      put(o, "locale", rtf.locale); put(o, "style", rtf.style); put(o, "numeric", rtf.numeric); put(o, "numberingSystem", "latn");
      return o;
    },
    format(value, unit) {
      const parts = relativeParts(rtfOf(this, "format"), value, unit, "format");
      let s = "";
      for (let i = 0; i < parts.length; i++) s += parts[i][1];
      return s;
    },
    formatToParts(value, unit) {
      const parts = relativeParts(rtfOf(this, "formatToParts"), value, unit, "formatToParts");
      const out = list();
      for (let i = 0; i < parts.length; i++) {
        const p = { type: parts[i][0], value: parts[i][1] };
        if (parts[i].length > 2) put(p, "unit", parts[i][2]);
        push(out, p);
      }
      return makeArray(out);
    },
  });

  // ---------- ListFormat ----------
  const LF = "Intl.ListFormat";
  const lfSlots = new WeakMapCtor();
  const lfOf = receiver(lfSlots, "ListFormat");
  // Per type and style: [between two, between the first ones of more, before the last of more].
  const JOINERS = {
    __proto__: null,
    conjunction: { __proto__: null, long: L(" and ", ", ", ", and "), short: L(" & ", ", ", ", & "), narrow: L(", ", ", ", ", ") },
    disjunction: { __proto__: null, long: L(" or ", ", ", ", or "), short: L(" or ", ", ", ", or "), narrow: L(" or ", ", ", ", or ") },
    unit: { __proto__: null, long: L(", ", ", ", ", "), short: L(", ", ", ", ", "), narrow: L(" ", " ", " ") },
  };
  function ListFormat() {
    const { proto, req, options } = opening("ListFormat", new.target, arguments, LFProto);
    const type = getOption(options, "type", L("conjunction", "disjunction", "unit"), "conjunction", LF);
    const style = getOption(options, "style", L("long", "short", "narrow"), "long", LF);
    const loc = localeOf("ListFormat", req);
    const obj = objCreate(proto);
    wmSet(lfSlots, obj, { __proto__: null, locale: loc.nf, type, style });
    return obj;
  }
  const LFProto = ListFormat.prototype;
  // StringListFromIterable: every element a string, in V8's words otherwise.
  const stringsOf = (iterable) => {
    const out = list();
    if (iterable === undefined) return out;
    if (iterable === null || iterable[symIterator] === undefined || iterable[symIterator] === null) {
      const what = iterable === null ? "object null" : typeof iterable === "object" ? "object" : typeof iterable + " " + toStr(iterable);
      throw new TypeErr(what + " is not iterable (cannot read property Symbol(Symbol.iterator))");
    }
    for (const item of iterable) {
      if (typeof item !== "string") throw new TypeErr("Iterable yielded " + (typeof item === "symbol" ? "Symbol()" : toStr(item)) + " which is not a string");
      push(out, item);
    }
    return out;
  };
  const listParts = (lf, iterable) => {
    const items = stringsOf(iterable);
    const j = JOINERS[lf.type][lf.style];
    const parts = list();
    for (let i = 0; i < items.length; i++) {
      if (i > 0) push(parts, L("literal", items.length === 2 ? j[0] : i === items.length - 1 ? j[2] : j[1]));
      push(parts, L("element", items[i]));
    }
    return parts;
  };
  finish("ListFormat", ListFormat, {
    resolvedOptions() {
      const lf = lfOf(this, "resolvedOptions");
      const o = {};
      put(o, "locale", lf.locale); put(o, "type", lf.type); put(o, "style", lf.style);
      return o;
    },
    format(items) {
      const parts = listParts(lfOf(this, "format"), items);
      let s = "";
      for (let i = 0; i < parts.length; i++) s += parts[i][1];
      return s;
    },
    formatToParts(items) {
      const parts = listParts(lfOf(this, "formatToParts"), items);
      // As ICU gives them: an empty element is no part, and the literals
      // around it are one ([a][", , and "][b] for ["a", "", "b"]).
      const out = list();
      let literal = "";
      for (let i = 0; i < parts.length; i++) {
        if (parts[i][0] === "literal") { literal += parts[i][1]; continue; }
        if (parts[i][1] === "") continue;
        if (literal !== "") { push(out, { type: "literal", value: literal }); literal = ""; }
        push(out, { type: "element", value: parts[i][1] });
      }
      if (literal !== "") push(out, { type: "literal", value: literal });
      return makeArray(out);
    },
  });
})
