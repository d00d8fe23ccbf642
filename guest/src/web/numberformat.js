// Numbers formatted as en-US, exactly as ICU formats them (Node 20: V8
// 11.3, ICU 73), and the `Intl` object: Number.prototype.toLocaleString,
// BigInt.prototype.toLocaleString, Array.prototype.toLocaleString,
// Intl.NumberFormat (decimal, percent, currency and unit styles; standard,
// scientific, engineering and compact notation; every digit, rounding,
// grouping and sign option) and Intl.Collator (over collate.js's
// localeCompare). It is exact or it throws: a locale whose numbers read
// otherwise, roundingIncrement with a notation other than the standard
// one, and a few roundingIncrement cases where ICU is itself inexact throw
// a TypeError that says so; bad arguments throw V8's RangeError or TypeError.
// Intl's other constructors (Locale, ...) throw a TypeError that names
// what to use instead; the stubs of DateTimeFormat, PluralRules,
// RelativeTimeFormat and ListFormat keep their places among Intl's
// properties, and datetimeformat.js and words.js replace them.
//
// How: a double's digits are its shortest round-trip decimal digits (what
// ICU rounds, so 1.005 to two places is "1.01"), a BigInt's or a numeric
// string's are exact; rounding, padding and grouping work on those digits,
// never in floating point (a percent is the digits shifted by two). The
// currency table (digits, symbols and names of every currency ICU lists
// for en-US) and the en-<region> tags whose numbers read as en-US's were
// measured in Node; options are read in V8's order, so getters see what
// they would see there. Every built-in is captured here, before programs
// run.
(function (native, shared) {
  "use strict";
  const G = globalThis;
  const apply = Reflect.apply;
  const lengthOf = shared.lengthOf; // sort.js
  const callOf = (f) => apply(Function.prototype.bind, Function.prototype.call, [f]);
  const defProp = Object.defineProperty;
  const setProto = Object.setPrototypeOf;
  const ObjectCtor = Object;
  const NumberCtor = Number;
  const BigIntCtor = BigInt;
  const TypeErr = TypeError, RangeErr = RangeError;
  const WeakMapCtor = WeakMap;
  const objCreate = Object.create;
  const wmGet = callOf(WeakMap.prototype.get), wmSet = callOf(WeakMap.prototype.set);
  const slice = callOf(String.prototype.slice);
  const charCode = callOf(String.prototype.charCodeAt);
  const trim = callOf(String.prototype.trim);
  const repeat = callOf(String.prototype.repeat);
  const numValueOf = callOf(Number.prototype.valueOf);
  const bigValueOf = callOf(BigInt.prototype.valueOf);
  const localeCompare = callOf(String.prototype.localeCompare);
  const collate = shared.collate, collateOptions = shared.collateOptions; // collate.js
  const symToPrimitive = Symbol.toPrimitive, symToStringTag = Symbol.toStringTag;
  const ArrayProto = Array.prototype;

  const list = () => setProto([], null);
  const push = (a, v) => { a[a.length] = v; };
  const method = (o, name, f) => defProp(o, name, { __proto__: null, value: f, writable: true, enumerable: false, configurable: true });
  const setLen = (f, n) => defProp(f, "length", { __proto__: null, value: n, writable: false, enumerable: false, configurable: true });
  const setName = (f, n) => defProp(f, "name", { __proto__: null, value: n, writable: false, enumerable: false, configurable: true });
  const unsupported = (what) => new TypeErr(what);
  // ToString. Not a template literal: QuickJS compiles `${v}` to a call of
  // String.prototype.concat, which a program can replace.
  const StringCtor = String;
  const toStr = (v) => {
    if (typeof v === "symbol") throw new TypeErr("Cannot convert a Symbol value to a string");
    return typeof v === "string" ? v : StringCtor(v);
  };
  const toObj = (v) => { if (v === undefined || v === null) throw new TypeErr("Cannot convert undefined or null to object"); return ObjectCtor(v); };
  const makeArray = (items) => {        // a real Array (realm's %Array.prototype%), filled without [[Set]]
    const a = [];
    for (let i = 0; i < items.length; i++) defProp(a, i, { __proto__: null, value: items[i], writable: true, enumerable: true, configurable: true });
    return a;
  };
  const isAlpha = (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const isDigit = (c) => c >= 48 && c <= 57;
  const isAlnum = (c) => isAlpha(c) || isDigit(c);
  const fromCC = String.fromCharCode;
  const lowerA = (s) => { let r = ""; for (let i = 0; i < s.length; i++) { const c = charCode(s, i); r += (c >= 65 && c <= 90) ? fromCC(c + 32) : s[i]; } return r; };
  const upperA = (s) => { let r = ""; for (let i = 0; i < s.length; i++) { const c = charCode(s, i); r += (c >= 97 && c <= 122) ? fromCC(c - 32) : s[i]; } return r; };
  const splitDash = (s) => { const a = list(); let cur = ""; for (let i = 0; i < s.length; i++) { if (s[i] === "-") { push(a, cur); cur = ""; } else cur += s[i]; } push(a, cur); return a; };
  const allOf = (s, pred, lo, hi) => { if (s.length < lo || s.length > hi) return false; for (let i = 0; i < s.length; i++) if (!pred(charCode(s, i))) return false; return true; };
  const inList = (v, arr) => { for (let i = 0; i < arr.length; i++) if (arr[i] === v) return true; return false; };

  // ---------- locales ----------
  // en-<region> tags measured against en-US in Node 20 (decimal, percent, every currency in every display).
  // Tier 1 (identical in all styles): every 2-letter region except those in EXCL/TIER2, plus 419. Tier 2 (identical
  // except currency symbols: currency style refused): TIER2, 001, 150. NF resolves to the tag itself for SELF and
  // TIER2 regions and to "en" for the others (ICU has no data for them); Collator resolves to "en" (en-US: "en-US").
  const SELF = "AEASGUJPMHMPPHPRUMUSVI", TIER2 = "AGAIAUBBBIBMBSBWBZCACCCKCMCXCYDGDMERFJFKFMGBGDGGGHGIGMGSGYHKIEILIMIOJEJMKEKIKNKYLCLRLSMGMOMSMTMUMVMWMYNANFNGNRNUNZPGPKPNPWRWSBSCSDSGSHSLSSSXSZTCTKTOTTTVTZUGVCVGVUWSZMZW", EXCL = "ANATBEBUCHCSCTCZDDDEDKDYEEESFIFQFRFXGEHUHVIDINITJTLTLVMINHNLNONQNTPCPLPTPUPZQURHROSESISKSUTPUAUKVDWKYDYUZAZR";
  const inPairs = (s, r) => { for (let i = 0; i < s.length; i += 2) if (s[i] === r[0] && s[i + 1] === r[1]) return true; return false; };
  const regionInfo = (r) => {          // -> [tier, nfSelf] or undefined
    if (r.length === 3) return r === "419" ? L(1, false) : (r === "001" || r === "150") ? L(2, true) : undefined;
    if (inPairs(EXCL, r)) return undefined;
    if (inPairs(TIER2, r)) return L(2, true);
    return L(1, inPairs(SELF, r));
  };
  const splitOn = (s, ch) => { const a = list(); let cur = ""; for (let i = 0; i < s.length; i++) { if (s[i] === ch) { push(a, cur); cur = ""; } else cur += s[i]; } push(a, cur); return a; };
  const splitSemi = (s) => splitOn(s, ";");

  // IsStructurallyValidLanguageTag (UTS 35 unicode_locale_id as ECMA-402 requires) + canonical casing.
  // Returns { tag, lang, region, plain } or null when malformed.
  const parseTag = (tag) => {
    const st = splitDash(tag);
    for (let i = 0; i < st.length; i++) if (!allOf(st[i], isAlnum, 1, 8)) return null;
    let i = 0;
    const lang = st[0];
    if (!(allOf(lang, isAlpha, 2, 3) || allOf(lang, isAlpha, 5, 8))) return null;
    i = 1;
    let script = null, region = null;
    if (i < st.length && allOf(st[i], isAlpha, 4, 4)) script = st[i++];
    if (i < st.length && (allOf(st[i], isAlpha, 2, 2) || allOf(st[i], isDigit, 3, 3))) region = st[i++];
    const variants = list();
    while (i < st.length) {
      const v = st[i];
      if ((v.length >= 5 && v.length <= 8) || (v.length === 4 && isDigit(charCode(v, 0)))) {
        const lv = lowerA(v);
        // V8 takes at most 30 (and each is checked against the others).
        if (variants.length === 30 || inList(lv, variants)) return null;
        push(variants, lv); i++;
      } else break;
    }
    const singletons = list();
    let ext = false;
    while (i < st.length) {
      const s = lowerA(st[i]);
      if (s.length !== 1) return null;
      if (s === "x") {
        i++; if (i >= st.length) return null;
        ext = true; i = st.length; break;
      }
      if (inList(s, singletons)) return null;
      push(singletons, s); ext = true; i++;
      const start = i;
      if (s === "u") {
        while (i < st.length && st[i].length >= 3) i++;               // attributes
        while (i < st.length && st[i].length === 2 && isAlpha(charCode(st[i], 1))) {
          i++;
          while (i < st.length && st[i].length >= 3) i++;
        }
      } else if (s === "t") {
        if (i < st.length && (allOf(st[i], isAlpha, 2, 3) || allOf(st[i], isAlpha, 5, 8))) {
          i++;
          if (i < st.length && allOf(st[i], isAlpha, 4, 4)) i++;
          if (i < st.length && (allOf(st[i], isAlpha, 2, 2) || allOf(st[i], isDigit, 3, 3))) i++;
          const tv = list();
          while (i < st.length && ((st[i].length >= 5) || (st[i].length === 4 && isDigit(charCode(st[i], 0))))) {
            const lv = lowerA(st[i]); if (inList(lv, tv)) return null; push(tv, lv); i++;
          }
        }
        while (i < st.length && st[i].length === 2 && isAlpha(charCode(st[i], 0)) && isDigit(charCode(st[i], 1))) {
          i++;
          const vs = i;
          while (i < st.length && st[i].length >= 3) i++;
          if (i === vs) return null;
        }
      } else {
        while (i < st.length && st[i].length >= 2) i++;
      }
      if (i === start) return null;
    }
    const plain = script === null && variants.length === 0 && !ext;
    return { __proto__: null, lang: lowerA(lang), region: region === null ? null : upperA(region), plain };
  };

  // CanonicalizeLocaleList, then the first tag decides. Returns [nfLocale, collatorLocale] or a TypeError to throw later.
  const canonicalizeLocaleList = (locales) => {
    const seen = list();
    if (locales === undefined) return seen;
    let O;
    if (typeof locales === "string") { O = list(); push(O, locales); }
    else O = toObj(locales);
    const len = lengthOf(O);
    for (let k = 0; k < len; k++) {
      const Pk = toStr(k);
      if (Pk in O) {
        const kValue = O[Pk];
        if (typeof kValue !== "string" && (typeof kValue !== "object" || kValue === null) && typeof kValue !== "function")
          throw new TypeErr("Language ID should be string or object.");
        const tag = toStr(kValue);
        const p = parseTag(tag);
        if (p === null) throw new RangeErr("Incorrect locale information provided");
        p.raw = tag;
        push(seen, p);
      }
    }
    return seen;
  };
  // -> { __proto__: null, nf, col, canon } for a supported tag, else null
  const supportedInfo = (p) => {
    if (!p.plain || p.lang !== "en") return null;
    if (p.region === null) return { __proto__: null, nf: "en", col: "en", canon: "en", tier: 1 };
    const r = regionInfo(p.region);
    if (r === undefined) return null;
    const canon = "en-" + p.region;
    return { __proto__: null, nf: r[1] ? canon : "en", col: p.region === "US" ? canon : "en", canon, tier: r[0] };
  };
  // "default", which V8 resolves (as any language it lacks) to its default
  // locale, en-US: `toLocaleString("default", { month: "short" })` is a
  // common way to ask for the default with options.
  const isDefaultTag = (p) => p.plain && p.lang === "default" && p.region === null;
  shared.isDefaultTag = isDefaultTag;
  const resolveLocale = (req) => {
    if (req.length === 0 || isDefaultTag(req[0])) return { __proto__: null, nf: "en-US", col: "en-US", canon: "en-US", tier: 1 };
    const p = req[0];
    return supportedInfo(p);
  };
  // What a message quotes of a program's string: enough to recognize it.
  const quoted = (t) => "\"" + (t.length > 40 ? slice(t, 0, 40) + "..." : t) + "\"";
  const localeError = (req) => {
    return unsupported("Intl: locale " + quoted(req[0].raw) + " is not available: this sandbox has no locale data and formats numbers " +
      "and compares strings as en-US only (use undefined, \"en\" or \"en-US\")");
  };
  // For datetimeformat.js: the same locale-list checks and errors.
  shared.canonicalizeLocaleList = canonicalizeLocaleList;
  const canonicalTag = (p) => {            // only for supported tags
    const info = supportedInfo(p);
    return info === null ? null : info.canon;
  };

  const coerceOptions = (options) => options === undefined ? { __proto__: null } : toObj(options);
  const getOption = (options, prop, values, fallback, ctor) => {
    let value = options[prop];
    if (value === undefined) return fallback;
    value = toStr(value);
    if (values !== null && !inList(value, values))
      throw new RangeErr("Value " + (value.length > 40 ? slice(value, 0, 40) + "..." : value) + " out of range for " + ctor + " options property " + prop);
    return value;
  };
  const getBoolOption = (options, prop) => { const v = options[prop]; return v === undefined ? undefined : !!v; };
  const defaultNumberOption = (value, min, max, fallback, prop) => {
    if (value === undefined) return fallback;
    value = +value;
    if (value !== value || value < min || value > max) throw new RangeErr(prop + " value is out of range.");
    return value - (value % 1) + 0;      // floor for non-negative values
  };
  const isTypeSequence = (s) => {         // (3*8alphanum) *("-" (3*8alphanum))
    const parts = splitDash(s);
    for (let i = 0; i < parts.length; i++) if (!allOf(parts[i], isAlnum, 3, 8)) return false;
    return true;
  };
  const L = (...a) => { const r = list(); for (let i = 0; i < a.length; i++) r[i] = a[i]; return r; };
  const MATCHERS = L("lookup", "best fit");

  // ---------- currencies (measured in Node 20 for en-US) ----------
  // "CODE<digits>|symbol|narrowSymbol|name one|name other" ; "" symbol = the code, "" narrow = symbol, "" other = one+"s"
  const CURRENCIES = "AED2|||UAE dirham|;AFN0||؋|Afghan Afghani|;ALL0|||Albanian lek|Albanian lekë;AMD2||֏|Armenian dram|;ANG2|||Netherlands Antillean guilder|;AOA2||Kz~|Angolan kwanza|;ARS2||$|Argentine peso|;AUD2|A$|$|Australian dollar|;AWG2|||Aruban florin|Aruban florin;AZN2||₼|Azerbaijani manat|;BAM2||KM~|Bosnia-Herzegovina convertible mark|;BBD2||$|Barbadian dollar|;BDT2||৳|Bangladeshi taka|;BGN2|||Bulgarian lev|Bulgarian leva;BHD3|||Bahraini dinar|;BIF0|||Burundian franc|;BMD2||$|Bermudan dollar|;BND2||$|Brunei dollar|;BOB2||Bs~|Bolivian boliviano|;BRL2|R$||Brazilian real|;BSD2||$|Bahamian dollar|;BTN2|||Bhutanese ngultrum|;BWP2||P~|Botswanan pula|;BYN2|||Belarusian ruble|;BZD2||$|Belize dollar|;CAD2|CA$|$|Canadian dollar|;CDF2|||Congolese franc|;CHF2|||Swiss franc|;CLP0||$|Chilean peso|;CNY2|CN¥|¥|Chinese yuan|Chinese yuan;COP0||$|Colombian peso|;CRC2||₡|Costa Rican colón|;CUC2||$|Cuban convertible peso|;CUP2||$|Cuban peso|;CVE2|||Cape Verdean escudo|;CZK2||Kč~|Czech koruna|;DJF0|||Djiboutian franc|;DKK2||kr~|Danish krone|Danish kroner;DOP2||$|Dominican peso|;DZD2|||Algerian dinar|;EGP2||E£|Egyptian pound|;ERN2|||Eritrean nakfa|;ETB2|||Ethiopian birr|;EUR2|€||euro|;FJD2||$|Fijian dollar|;FKP2||£|Falkland Islands pound|;GBP2|£||British pound|;GEL2||₾|Georgian lari|;GHS2||GH₵|Ghanaian cedi|;GIP2||£|Gibraltar pound|;GMD2|||Gambian dalasi|;GNF0||FG~|Guinean franc|;GTQ2||Q~|Guatemalan quetzal|;GYD2||$|Guyanaese dollar|;HKD2|HK$|$|Hong Kong dollar|;HNL2||L~|Honduran lempira|;HRK2||kn~|Croatian kuna|;HTG2|||Haitian gourde|;HUF0||Ft~|Hungarian forint|;IDR0||Rp~|Indonesian rupiah|;ILS2|₪||Israeli new shekel|;INR2|₹||Indian rupee|;IQD0|||Iraqi dinar|;IRR0|||Iranian rial|;ISK0||kr~|Icelandic króna|Icelandic krónur;JMD2||$|Jamaican dollar|;JOD3|||Jordanian dinar|;JPY0|¥||Japanese yen|Japanese yen;KES2|||Kenyan shilling|;KGS2||⃀|Kyrgyz som|;KHR2||៛|Cambodian riel|;KMF0||CF~|Comorian franc|;KPW0||₩|North Korean won|North Korean won;KRW0|₩||South Korean won|South Korean won;KWD3|||Kuwaiti dinar|;KYD2||$|Cayman Islands dollar|;KZT2||₸|Kazakhstani tenge|;LAK0||₭|Laotian kip|;LBP0||L£|Lebanese pound|;LKR2||Rs~|Sri Lankan rupee|;LRD2||$|Liberian dollar|;LSL2|||Lesotho loti|;LYD3|||Libyan dinar|;MAD2|||Moroccan dirham|;MDL2|||Moldovan leu|Moldovan lei;MGA0||Ar~|Malagasy ariary|Malagasy ariaries;MKD2|||Macedonian denar|Macedonian denari;MMK0||K~|Myanmar kyat|;MNT2||₮|Mongolian tugrik|;MOP2|||Macanese pataca|;MRU2|||Mauritanian ouguiya|;MUR2||Rs~|Mauritian rupee|;MVR2|||Maldivian rufiyaa|;MWK2|||Malawian kwacha|;MXN2|MX$|$|Mexican peso|;MYR2||RM~|Malaysian ringgit|;MZN2|||Mozambican metical|;NAD2||$|Namibian dollar|;NGN2||₦|Nigerian naira|;NIO2||C$|Nicaraguan córdoba|;NOK2||kr~|Norwegian krone|Norwegian kroner;NPR2||Rs~|Nepalese rupee|;NZD2|NZ$|$|New Zealand dollar|;OMR3|||Omani rial|;PAB2|||Panamanian balboa|;PEN2|||Peruvian sol|Peruvian soles;PGK2|||Papua New Guinean kina|Papua New Guinean kina;PHP2|₱||Philippine peso|;PKR0||Rs~|Pakistani rupee|;PLN2||zł~|Polish zloty|;PYG0||₲|Paraguayan guarani|;QAR2|||Qatari riyal|;RON2||lei~|Romanian leu|Romanian lei;RSD2|||Serbian dinar|;RUB2||₽|Russian ruble|;RWF0||RF~|Rwandan franc|;SAR2|||Saudi riyal|;SBD2||$|Solomon Islands dollar|;SCR2|||Seychellois rupee|;SDG2|||Sudanese pound|;SEK2||kr~|Swedish krona|Swedish kronor;SGD2||$|Singapore dollar|;SHP2||£|St. Helena pound|;SLE2|||Sierra Leonean leone|;SLL0|||Sierra Leonean leone (1964—2022)|Sierra Leonean leones (1964—2022);SOS0|||Somali shilling|;SRD2||$|Surinamese dollar|;SSP2||£|South Sudanese pound|;STN2||Db~|São Tomé & Príncipe dobra|;SVC2|||Salvadoran colón|Salvadoran colones;SYP0||£|Syrian pound|;SZL2|||Swazi lilangeni|Swazi emalangeni;THB2||฿|Thai baht|Thai baht;TJS2|||Tajikistani somoni|;TMT2|||Turkmenistani manat|Turkmenistani manat;TND3|||Tunisian dinar|;TOP2||T$|Tongan paʻanga|Tongan paʻanga;TRY2||₺|Turkish lira|Turkish Lira;TTD2||$|Trinidad & Tobago dollar|;TWD2|NT$|$|New Taiwan dollar|;TZS2|||Tanzanian shilling|;UAH2||₴|Ukrainian hryvnia|;UGX0|||Ugandan shilling|;USD2|$||US dollar|;UYU2||$|Uruguayan peso|;UZS2|||Uzbekistani som|Uzbekistani som;VES2|||Venezuelan bolívar|;VND0|₫||Vietnamese dong|Vietnamese dong;VUV0|||Vanuatu vatu|;WST2|||Samoan tala|Samoan tala;XAF0|FCFA~||Central African CFA franc|;XCD2|EC$|$|East Caribbean dollar|;XCG2|Cg.~||Caribbean guilder|;XDR2|||special drawing rights|special drawing rights;XOF0|F CFA~||West African CFA franc|;XPF0|CFPF~||CFP franc|;XSU2|||Sucre|;YER0|||Yemeni rial|;ZAR2||R~|South African rand|South African rand;ZMW2||ZK~|Zambian kwacha|;ZWG2|||Zimbabwean gold|Zimbabwean gold;ZWL2|||Zimbabwean dollar (2009–2024)|Zimbabwean dollars (2009–2024)";
  let curMap = null;
  const currencyInfo = (code) => {
    if (curMap === null) {
      curMap = { __proto__: null };
      const rows = splitSemi(CURRENCIES);
      for (let i = 0; i < rows.length; i++) {
        const f = splitOn(rows[i], "|");
        const c = slice(f[0], 0, 3);
        const sym = f[1] === "" ? c + "~" : f[1];
        const nar = f[2] === "" ? sym : f[2];
        const sp = (t) => t[t.length - 1] === "~";
        curMap[c] = { __proto__: null, digits: +slice(f[0], 3), sym: sp(sym) ? slice(sym, 0, sym.length - 1) : sym, symSp: sp(sym),
          narrow: sp(nar) ? slice(nar, 0, nar.length - 1) : nar, narrowSp: sp(nar), one: f[3], other: f[4] === "" ? f[3] + "s" : f[4] };
      }
    }
    return curMap[code];
  };
  // Each sanctioned unit's words for en-US (measured in Node 20): "unit|-|short one|short other|long one|long other|narrow one|
  // narrow other|per-unit short|per-unit narrow", "-" when the short form has no space before it (°C, %), an empty
  // "other" the same as "one", an empty per-unit form "/" and the one form. Long forms always take a space, narrow ones
  // never; a compound X-per-Y is X's words and Y's per-unit form (" per " and Y's long one, when long), but for ICU's
  // own mph, mpg and a percent per anything, which is "%" in short and narrow (but "%/s" in compact notation).
  const UNIT_WORDS = "acre||ac||acre|acres|ac|||;bit||bit||bit|bits|bit|||;byte||byte||byte|bytes|B|||;celsius|-|°C||degree Celsius|degrees Celsius|°C|||;centimeter||cm||centimeter|centimeters|cm|||;day||day|days|day|days|d||/d|;degree||deg||degree|degrees|°|||;fahrenheit|-|°F||degree Fahrenheit|degrees Fahrenheit|°|||;fluid-ounce||fl oz||fluid ounce|fluid ounces|fl oz|||;foot||ft||foot|feet|′|||/ft;gallon||gal||gallon|gallons|gal||/gal US|;gigabit||Gb||gigabit|gigabits|Gb|||;gigabyte||GB||gigabyte|gigabytes|GB|||;gram||g||gram|grams|g|||;hectare||ha||hectare|hectares|ha|||;hour||hr||hour|hours|h||/h|;inch||in||inch|inches|″|||/in;kilobit||kb||kilobit|kilobits|kb|||;kilobyte||kB||kilobyte|kilobytes|kB|||;kilogram||kg||kilogram|kilograms|kg|||;kilometer||km||kilometer|kilometers|km|||;liter||L||liter|liters|L|||;megabit||Mb||megabit|megabits|Mb|||;megabyte||MB||megabyte|megabytes|MB|||;meter||m||meter|meters|m|||;microsecond||μs||microsecond|microseconds|μs|||;mile||mi||mile|miles|mi|||;mile-scandinavian||smi||mile-scandinavian|miles-scandinavian|smi|||;milliliter||mL||milliliter|milliliters|mL|||;millimeter||mm||millimeter|millimeters|mm|||;millisecond||ms||millisecond|milliseconds|ms|||;minute||min||minute|minutes|m|||/min;month||mth|mths|month|months|m||/m|;nanosecond||ns||nanosecond|nanoseconds|ns|||;ounce||oz||ounce|ounces|oz|||;percent|-|%||percent||%|||;petabyte||PB||petabyte|petabytes|PB|||;pound||lb||pound|pounds|#|||/lb;second||sec||second|seconds|s||/s|;stone||st||stone|stones|st|||;terabit||Tb||terabit|terabits|Tb|||;terabyte||TB||terabyte|terabytes|TB|||;week||wk|wks|week|weeks|w||/w|;yard||yd||yard|yards|yd|||;year||yr|yrs|year|years|y||/y|";
  let unitWords = null;
  const unitInfo = (u) => {
    if (unitWords === null) {
      unitWords = { __proto__: null };
      const rows = splitSemi(UNIT_WORDS);
      for (let i = 0; i < rows.length; i++) {
        const f = splitOn(rows[i], "|");
        const pair = (one, other) => L(one, other === "" ? one : other);
        unitWords[f[0]] = { __proto__: null, shortSpace: f[1] === "", short: pair(f[2], f[3]), long: pair(f[4], f[5]), narrow: pair(f[6], f[7]),
          perShort: f[8] === "" ? "/" + f[2] : f[8], perNarrow: f[9] === "" ? "/" + f[6] : f[9], perLong: " per " + f[4] };
      }
    }
    return unitWords[u];
  };
  // -> [space before the unit, the unit's words], for `one` or not.
  const unitOf = (nf, one) => {
    const d = nf.unitDisplay, u = nf.unit;
    let num = u, den = null;
    for (let i = 0; i + 5 <= u.length; i++) if (slice(u, i, i + 5) === "-per-") { num = slice(u, 0, i); den = slice(u, i + 5); break; }
    const n = unitInfo(num);
    const space = d === "long" || (d === "short" && n.shortSpace);
    if (den !== null && d !== "long") {
      if (num === "mile" && (den === "hour" || den === "gallon")) return L(d === "short", den === "hour" ? "mph" : "mpg");
      if (num === "percent" && nf.notation !== "compact") return L(false, "%");
    }
    const words = n[d][one ? 0 : 1];
    if (den === null) return L(space, words);
    const p = unitInfo(den);
    return L(space, words + (d === "long" ? p.perLong : d === "short" ? p.perShort : p.perNarrow));
  };
  const UNITS = "acre bit byte celsius centimeter day degree fahrenheit fluid-ounce foot gallon gigabit gigabyte gram hectare hour inch kilobit kilobyte kilogram kilometer liter megabit megabyte meter microsecond mile mile-scandinavian milliliter millimeter millisecond minute month nanosecond ounce percent petabyte pound second stone terabit terabyte week yard year";
  let unitList = null;
  const isSanctionedUnit = (u) => { if (unitList === null) unitList = splitOn(UNITS, " "); return inList(u, unitList); };
  const isWellFormedUnit = (u) => {
    if (isSanctionedUnit(u)) return true;
    // X-per-Y
    for (let i = 0; i + 5 <= u.length; i++) {
      if (slice(u, i, i + 5) === "-per-") return isSanctionedUnit(slice(u, 0, i)) && isSanctionedUnit(slice(u, i + 5));
    }
    return false;
  };

  // ---------- NumberFormat ----------
  const nfSlots = new WeakMapCtor();
  const STYLES = L("decimal", "percent", "currency", "unit");
  const CDISPLAYS = L("code", "symbol", "narrowSymbol", "name");
  const CSIGNS = L("standard", "accounting");
  const UDISPLAYS = L("short", "narrow", "long");
  const NOTATIONS = L("standard", "scientific", "engineering", "compact");
  const INCREMENTS = L(1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000);
  const RMODES = L("ceil", "floor", "expand", "trunc", "halfCeil", "halfFloor", "halfExpand", "halfTrunc", "halfEven");
  const RPRIOS = L("auto", "morePrecision", "lessPrecision");
  const TZDISPLAYS = L("auto", "stripIfInteger");
  const COMPACTDISPLAYS = L("short", "long");
  const GROUPINGS = L("min2", "auto", "always");
  const SIGNDISPLAYS = L("auto", "never", "always", "exceptZero", "negative");
  const NF = "Intl.NumberFormat";

  function NumberFormat() {
    const locales = (arguments.length > 0 ? arguments[0] : undefined), options0 = (arguments.length > 1 ? arguments[1] : undefined);
    const nt = new.target === undefined ? NumberFormat : new.target;
    let proto = nt.prototype;
    if ((typeof proto !== "object" || proto === null) && typeof proto !== "function") proto = NFProto;
    const req = canonicalizeLocaleList(locales);
    const options = coerceOptions(options0);
    let problem = null;
    const nf = { __proto__: null };
    getOption(options, "localeMatcher", MATCHERS, "best fit", NF);
    const ns = getOption(options, "numberingSystem", null, undefined, NF);
    if (ns !== undefined && !isTypeSequence(ns)) throw new RangeErr("Invalid numberingSystem : " + ns);
    const loc = resolveLocale(req);
    if (loc === null) problem = localeError(req);
    else nf.locale = loc.nf;
    if (ns !== undefined && ns !== "latn" && problem === null)
      problem = unsupported("Intl.NumberFormat: numberingSystem \"" + ns + "\" is not available in this sandbox; only \"latn\" (0-9)");
    // SetNumberFormatUnitOptions
    const style = getOption(options, "style", STYLES, "decimal", NF);
    nf.style = style;
    let currency = getOption(options, "currency", null, undefined, NF);
    if (currency === undefined) {
      if (style === "currency") throw new TypeErr("Currency code is required with currency style.");
    } else if (!allOf(currency, isAlpha, 3, 3)) throw new RangeErr("Invalid currency code : " + currency);
    const currencyDisplay = getOption(options, "currencyDisplay", CDISPLAYS, "symbol", NF);
    const currencySign = getOption(options, "currencySign", CSIGNS, "standard", NF);
    const unit = getOption(options, "unit", null, undefined, NF);
    if (unit === undefined) {
      if (style === "unit") throw new TypeErr("Invalid unit argument for Intl.NumberFormat() ''");
    } else if (!isWellFormedUnit(unit)) throw new RangeErr("Invalid unit argument for Intl.NumberFormat() '" + unit + "'");
    const unitDisplay = getOption(options, "unitDisplay", UDISPLAYS, "short", NF);
    let cur = null;
    if (style === "currency") {
      currency = upperA(currency);
      nf.currency = currency; nf.currencyDisplay = currencyDisplay; nf.currencySign = currencySign;
      cur = currencyInfo(currency);
      if (problem === null && loc.tier !== 1)
        problem = unsupported("Intl.NumberFormat: currency formatting for locale \"" + loc.nf + "\" is not available in this sandbox (its currency " +
          "symbols differ from en-US); use \"en-US\" or currencyDisplay with locale \"en-US\"");
      if (cur === undefined && problem === null)
        problem = unsupported("Intl.NumberFormat: currency \"" + currency + "\" is not in this sandbox's table (" +
          "it has the ISO 4217 codes Node 20 knows, e.g. USD, EUR, GBP, JPY)");
    } else if (style === "unit") {
      nf.unit = unit; nf.unitDisplay = unitDisplay;
      if (problem === null && loc.tier !== 1)
        problem = unsupported("Intl.NumberFormat: unit formatting for locale \"" + loc.nf + "\" is not available in this sandbox (its " +
          "unit names differ from en-US); use \"en-US\"");
    }
    // roundingIncrement (V8 11.3 reads it here)
    const roundingIncrement = defaultNumberOption(options.roundingIncrement, 1, 5000, 1, "roundingIncrement");
    if (!inList(roundingIncrement, INCREMENTS)) throw new RangeErr("roundingIncrement value is out of range.");
    const notation = getOption(options, "notation", NOTATIONS, "standard", NF);
    nf.notation = notation;
    // Tier 2 locales write these otherwise (en-GB "1.2k" and "4tn", en-AU "1.2e3").
    if (notation !== "standard" && problem === null && loc.tier !== 1)
      problem = unsupported("Intl.NumberFormat: " + notation + " notation for locale \"" + loc.nf + "\" is not available in this " +
        "sandbox (it differs from en-US's); use \"en-US\"");
    let mnfdDefault, mxfdDefault;
    if (style === "currency") { const d = cur === undefined ? 2 : cur.digits; mnfdDefault = d; mxfdDefault = d; }
    else { mnfdDefault = 0; mxfdDefault = style === "percent" ? 0 : 3; }
    // SetNumberFormatDigitOptions (V8 11.3 order)
    const mnid = defaultNumberOption(options.minimumIntegerDigits, 1, 21, 1, "minimumIntegerDigits");
    let mnfd = options.minimumFractionDigits;
    let mxfd = options.maximumFractionDigits;
    let mnsd = options.minimumSignificantDigits;
    let mxsd = options.maximumSignificantDigits;
    const bothFd = mnfd !== undefined && mxfd !== undefined;
    nf.mnid = mnid;
    const roundingPriority = getOption(options, "roundingPriority", RPRIOS, "auto", "SetNumberFormatDigitOptions");
    if (roundingIncrement !== 1) mxfdDefault = mnfdDefault;
    const hasSd = mnsd !== undefined || mxsd !== undefined;
    const hasFd = mnfd !== undefined || mxfd !== undefined;
    let needSd = true, needFd = true;
    if (roundingPriority === "auto") {
      needSd = hasSd;
      if (needSd || (!hasFd && notation === "compact")) needFd = false;
    }
    if (needSd) {
      if (hasSd) {
        mnsd = defaultNumberOption(mnsd, 1, 21, 1, "minimumSignificantDigits");
        mxsd = defaultNumberOption(mxsd, mnsd, 21, 21, "maximumSignificantDigits");
      } else { mnsd = 1; mxsd = 21; }
      nf.mnsd = mnsd; nf.mxsd = mxsd;
    }
    if (needFd) {
      if (hasFd) {
        mnfd = defaultNumberOption(mnfd, 0, 20, undefined, "minimumFractionDigits");
        mxfd = defaultNumberOption(mxfd, 0, 20, undefined, "maximumFractionDigits");
        if (mnfd === undefined) mnfd = mnfdDefault < mxfd ? mnfdDefault : mxfd;
        else if (mxfd === undefined) mxfd = mxfdDefault > mnfd ? mxfdDefault : mnfd;
        else if (mnfd > mxfd) throw new RangeErr("maximumFractionDigits value is out of range.");
      } else { mnfd = mnfdDefault; mxfd = mxfdDefault; }
      nf.mnfd = mnfd; nf.mxfd = mxfd;
    }
    let roundingType;
    if (!needSd && !needFd) {
      nf.mnfd = 0; nf.mxfd = 0; nf.mnsd = 1; nf.mxsd = 2; roundingType = "morePrecision"; nf.roundingPriority = "morePrecision";
    } else if (roundingPriority === "auto") {
      roundingType = hasSd ? "sd" : "fd"; nf.roundingPriority = "auto";
    } else { roundingType = roundingPriority; nf.roundingPriority = roundingPriority; }
    nf.roundingType = roundingType;
    if (roundingIncrement !== 1) {
      if (roundingType !== "fd") throw new TypeErr("RoundingType is not fractionDigits");
      if (nf.mxfd !== nf.mnfd) {
        // A currency the table lacks has digits this file does not know ("ESP" has 0): unless both were given,
        // ICU may find them equal, so the currency is refused rather than the options called invalid.
        if (style === "currency" && cur === undefined && !bothFd) throw problem;
        throw new RangeErr("maximumFractionDigits not equal to minimumFractionDigits");
      }
    }
    nf.roundingIncrement = roundingIncrement;
    nf.trailingZeroDisplay = getOption(options, "trailingZeroDisplay", TZDISPLAYS, "auto", NF);
    nf.compactDisplay = getOption(options, "compactDisplay", COMPACTDISPLAYS, "short", NF);
    // useGrouping: GetStringOrBooleanOption
    const defaultUseGrouping = notation === "compact" ? "min2" : "auto";
    let ug = options.useGrouping;
    if (ug === undefined) ug = defaultUseGrouping;
    else if (ug === true) ug = "always";
    else if (!ug) ug = false;
    else {
      ug = toStr(ug);
      if (ug === "true" || ug === "false") ug = defaultUseGrouping;
      else if (!inList(ug, GROUPINGS)) throw new RangeErr("Value " + ug + " out of range for Intl.NumberFormat options property useGrouping");
    }
    nf.useGrouping = ug;
    nf.signDisplay = getOption(options, "signDisplay", SIGNDISPLAYS, "auto", NF);
    nf.roundingMode = getOption(options, "roundingMode", RMODES, "halfExpand", NF);
    if (problem !== null) throw problem;
    nf.cur = cur;
    nf.bound = undefined;
    const obj = objCreate(proto);
    wmSet(nfSlots, obj, nf);
    return obj;
  }
  const nfOf = (o, m) => {
    const nf = (typeof o === "object" && o !== null) ? wmGet(nfSlots, o) : undefined;
    if (nf === undefined) throw new TypeErr("Method Intl.NumberFormat.prototype." + m + " called on incompatible receiver " + (typeof o === "symbol" ? "Symbol()" : typeof o === "object" && o !== null ? "#<Object>" : toStr(o)));
    return nf;
  };

  // ToIntlMathematicalValue -> { k: 0 finite | 1 NaN | 2 infinity, neg, n: BigInt >= 0, q } (value = n * 10^q)
  const toPrimitiveNumber = (v) => {
    if ((typeof v !== "object" || v === null) && typeof v !== "function") return v;
    const ex = v[symToPrimitive];
    if (ex !== undefined && ex !== null) {
      if (typeof ex !== "function") throw new TypeErr("Symbol.toPrimitive is not a function");
      const r = apply(ex, v, L("number"));
      if ((typeof r === "object" && r !== null) || typeof r === "function") throw new TypeErr("Cannot convert object to primitive value");
      return r;
    }
    const names = L("valueOf", "toString");
    for (let i = 0; i < 2; i++) {
      const m = v[names[i]];
      if (typeof m === "function") {
        const r = apply(m, v, list());
        if ((typeof r !== "object" || r === null) && typeof r !== "function") return r;
      }
    }
    throw new TypeErr("Cannot convert object to primitive value");
  };
  const mv = (k, neg, n, q) => ({ __proto__: null, k, neg, n, q, raw: undefined });
  const fromDecimalString = (s, neg) => {   // s: digits with optional '.', optional e[+-]digits, no sign
    let digits = "", q = 0, i = 0, seenDot = false;
    for (; i < s.length; i++) {
      const c = s[i];
      if (c === ".") { seenDot = true; continue; }
      if (c === "e" || c === "E") break;
      digits += c;
      if (seenDot) q--;
    }
    if (i < s.length) q += +slice(s, i + 1);
    let j = 0;
    while (j < digits.length - 1 && digits[j] === "0") j++;
    if (j > 0) digits = slice(digits, j);
    const n = BigIntCtor(digits);
    // A zero's exponent says nothing ("0e-100000000" is 0), and would be a string of that many zeros.
    return mv(0, neg, n, n === 0n ? 0 : q);
  };
  const fromNumber = (x) => {
    if (x !== x) return mv(1, false, 0n, 0);
    const neg = x < 0 || (x === 0 && 1 / x < 0);
    if (x === Infinity || x === -Infinity) return mv(2, neg, 0n, 0);
    const s = toStr(neg ? -x : x);       // shortest round-trip digits, as ICU uses
    const r = fromDecimalString(s, neg);
    // ICU's fast double path sees 999999999999999x (15+ leading nines) as the next power of ten when it takes the
    // magnitude (seen: 9.999999999999999e-5 with maximumSignificantDigits 7, trunc); refuse that rare shape
    const d = toStr(r.n);
    if (d.length >= 16) {
      let nines = 0;
      while (nines < d.length && d[nines] === "9") nines++;
      if (nines >= 15)
        throw unsupported("Intl.NumberFormat: " + s + " (15+ leading nines in its 16-17 digit form) is not supported in this sandbox: " +
          "Node's ICU treats it inconsistently; round it first (e.g. Number(x.toPrecision(15)))");
    }
    return r;
  };
  const toIntlMV = (value) => {
    const p = toPrimitiveNumber(value);
    if (typeof p === "bigint") return p < 0n ? mv(0, true, -p, 0) : mv(0, false, p, 0);
    if (typeof p === "string") {
      const rounded = NumberCtor(p);
      if (rounded !== rounded) return mv(1, false, 0n, 0);
      let s = trim(p);
      let neg = false;
      if (s.length > 0 && s[0] === "-") { neg = true; s = slice(s, 1); } else if (s.length > 0 && s[0] === "+") s = slice(s, 1);
      if (s.length === 0) return mv(0, false, 0n, 0);   // V8 keeps underflowing strings exact (only overflow -> infinity)
      const c1 = s.length > 1 ? s[1] : "";
      // A hexadecimal, octal or binary string is an integer, exact at any size (V8 prints all its digits).
      if (s[0] === "0" && (c1 === "x" || c1 === "X" || c1 === "o" || c1 === "O" || c1 === "b" || c1 === "B"))
        return mv(0, false, BigIntCtor(s), 0);
      if (rounded === Infinity || rounded === -Infinity) return mv(2, rounded < 0, 0n, 0);
      // Near the largest double, QuickJS's Number() rounds a long string down to it where V8's rounds up to
      // Infinity (which V8 then prints): which one a string is, is not known here.
      if (rounded === 1.7976931348623157e308 || rounded === -1.7976931348623157e308)
        throw unsupported("Intl.NumberFormat: a numeric string this close to the largest number is not supported in this sandbox");
      if (s.length > 4096)
        throw unsupported("Intl.NumberFormat: numeric strings beyond 1e\u00b11100 or with over 1100 digits are not supported in this sandbox");
      const r = fromDecimalString(s, neg);
      if (r.n !== 0n && (r.q < -1100 || digitCount(r.n) + r.q > 1100 || digitCount(r.n) > 1100))
        throw unsupported("Intl.NumberFormat: numeric strings beyond 1e\u00b11100 or with over 1100 digits are not supported in this sandbox");
      return r;
    }
    const r = fromNumber(+p);
    r.raw = +p;
    return r;
  };

  const pow10 = (k) => 10n ** BigIntCtor(k);
  const digitCount = (n) => toStr(n).length;
  // round n*10^q to a multiple of inc*10^mag
  const roundTo = (n, q, mag, inc, mode, neg) => {
    let num, den;
    if (q < mag && digitCount(n) + q < mag - 1) {      // |value| < unit / 10: no need for huge powers of ten
      const away = mode === "expand" || (mode === "ceil" && !neg) || (mode === "floor" && neg);
      return { __proto__: null, n: away && n !== 0n ? BigIntCtor(inc) : 0n, q: mag };
    }
    if (q >= mag) {
      if (inc === 1) return { __proto__: null, n, q };
      num = n * pow10(q - mag); den = BigIntCtor(inc);
    } else { num = n; den = BigIntCtor(inc) * pow10(mag - q); }
    let Q = num / den;
    const R = num % den;
    if (R !== 0n) {
      let up;
      const r2 = R * 2n;
      switch (mode) {
        case "ceil": up = !neg; break;
        case "floor": up = neg; break;
        case "expand": up = true; break;
        case "trunc": up = false; break;
        default: {
          if (r2 > den) up = true;
          else if (r2 < den) up = false;
          else if (mode === "halfCeil") up = !neg;
          else if (mode === "halfFloor") up = neg;
          else if (mode === "halfExpand") up = true;
          else if (mode === "halfTrunc") up = false;
          else up = (Q % 2n) === 1n;      // halfEven
        }
      }
      if (up) Q += 1n;
    }
    return { __proto__: null, n: Q * BigIntCtor(inc), q: mag };
  };
  const magnitude = (n, q) => digitCount(n) - 1 + q;   // n > 0

  // FormatNumericToString of x * 10^shift: returns { int: digit string (padded), frac: digit string, zero: bool,
  // one: reads "1", mag: the rounded value's magnitude }
  const toDigits = (nf, x, shift) => {
    let n = x.n, q = x.q + shift;
    if (nf.style === "percent") q += 2;
    const mode = nf.roundingMode, neg = x.neg;
    let minFrac, r;
    const rt = nf.roundingType;
    if (rt === "fd") {
      r = roundTo(n, q, -nf.mxfd, nf.roundingIncrement, mode, neg);
      minFrac = nf.roundingIncrement !== 1 ? nf.mnfd : nf.mnfd;
    } else if (rt === "sd") {
      if (n === 0n) { r = { __proto__: null, n, q }; minFrac = nf.mnsd - 1; }
      else {
        r = roundTo(n, q, magnitude(n, q) - nf.mxsd + 1, 1, mode, neg);
        const m2 = r.n === 0n ? 0 : magnitude(r.n, r.q);
        minFrac = nf.mnsd - 1 - m2;
      }
    } else {
      const zero = n === 0n;
      const rm1 = -nf.mxfd;
      let rm2 = (zero ? 0 : magnitude(n, q)) - nf.mxsd + 1;
      const relaxed = rt === "morePrecision";
      const rmag = relaxed ? (rm1 < rm2 ? rm1 : rm2) : (rm1 > rm2 ? rm1 : rm2);
      r = { __proto__: null, n, q };
      if (!zero) {
        const upper = magnitude(n, q);
        r = roundTo(n, q, rmag, 1, mode, neg);
        if (r.n !== 0n && magnitude(r.n, r.q) !== upper && rm1 === rm2) rm2 += 1;
      }
      const dm1 = nf.mnfd === 0 ? 2147483647 : -nf.mnfd;
      const dm2 = (r.n === 0n ? 0 : magnitude(r.n, r.q)) - nf.mnsd + 1;
      let dm;
      if (relaxed) dm = rm2 <= rm1 ? dm2 : dm1;
      else dm = rm2 <= rm1 ? dm1 : dm2;
      minFrac = -dm;
    }
    if (minFrac < 0) minFrac = 0;
    // digits of r (and its magnitude, for the other notations, from the digits already written)
    let s = toStr(r.n), intS, fracS;
    const mag = r.n === 0n ? 0 : s.length - 1 + r.q;
    if (r.q >= 0) { intS = r.n === 0n ? "0" : s + repeat("0", r.q); fracS = ""; }
    else {
      const k = -r.q;
      if (s.length <= k) s = repeat("0", k + 1 - s.length) + s;
      intS = slice(s, 0, s.length - k); fracS = slice(s, s.length - k);
    }
    let e = fracS.length;
    while (e > 0 && fracS[e - 1] === "0") e--;
    const isInt = e === 0;
    if (nf.trailingZeroDisplay === "stripIfInteger" && isInt) minFrac = 0;
    const keep = e > minFrac ? e : minFrac;
    if (keep <= fracS.length) fracS = slice(fracS, 0, keep);
    else fracS += repeat("0", keep - fracS.length);
    let j = 0;
    while (j < intS.length - 1 && intS[j] === "0") j++;
    if (j > 0) intS = slice(intS, j);
    const one = intS === "1" && fracS.length === 0;
    if (intS.length < nf.mnid) intS = repeat("0", nf.mnid - intS.length) + intS;
    return { __proto__: null, int: intS, frac: fracS, zero: r.n === 0n, one, mag, exp: 0 };
  };

  // Scientific, engineering and compact notation, as ICU takes a power of ten out (its `getMultiplier` and
  // `chooseMultiplierAndApply`): the power for the value's magnitude, the value scaled by it rounded, and, when the
  // rounding carried into the next magnitude and that one takes another power (999,999 -> 1,000K -> 1M), rounded
  // again from the start with that power. en-US's compact patterns: 10^3 K (thousand) to 10^12 T (trillion);
  // past 10^14 the value is shown in trillions (1000T).
  const COMPACT_SHORT = L("K", "M", "B", "T"), COMPACT_LONG = L("thousand", "million", "billion", "trillion");
  const powerTaken = (notation, mag) => {
    if (notation === "scientific") return mag;
    if (notation === "engineering") return mag - ((mag % 3) + 3) % 3;
    if (mag < 3) return 0;                        // compact
    const m = mag > 14 ? 14 : mag;
    return m - m % 3;
  };
  const notated = (nf, x) => {
    if (nf.notation === "standard" || x.n === 0n) return toDigits(nf, x, 0);
    const mag = magnitude(x.n, x.q) + (nf.style === "percent" ? 2 : 0);
    let exp = powerTaken(nf.notation, mag);
    let d = toDigits(nf, x, -exp);
    if (!d.zero && d.mag !== mag - exp) {
      const again = powerTaken(nf.notation, mag + 1);
      if (again !== exp) { exp = again; d = toDigits(nf, x, -exp); }
    }
    d.exp = exp;
    return d;
  };

  // parts: null-proto list of [type, value]
  const partsFor = (nf, x) => {
    const parts = list();
    const add = (t, v) => { const p = list(); p[0] = t; p[1] = v; push(parts, p); };
    let numParts = list(), isZero = false, one = false, digitStart = true, compacted = false;
    if (x.k === 1) push(numParts, L("nan", "NaN"));
    else if (x.k === 2) push(numParts, L("infinity", "\u221e"));
    if (x.k !== 0) digitStart = false;
    else {
      const d = notated(nf, x);
      isZero = d.zero; one = d.one && d.exp === 0;
      const ip = d.int, ug = nf.useGrouping;
      // Under compact notation ICU's "auto" is "min2" ("9441T"); resolvedOptions still says "auto".
      const min2 = ug === "min2" || (ug === "auto" && nf.notation === "compact");
      const grp = ug === false ? false : min2 ? ip.length >= 5 : ip.length >= 4;
      if (!grp) push(numParts, L("integer", ip));
      else {
        let first = ip.length % 3; if (first === 0) first = 3;
        push(numParts, L("integer", slice(ip, 0, first)));
        for (let i = first; i < ip.length; i += 3) { push(numParts, L("group", ",")); push(numParts, L("integer", slice(ip, i, i + 3))); }
      }
      if (d.frac.length > 0) { push(numParts, L("decimal", ".")); push(numParts, L("fraction", d.frac)); }
      if (nf.notation === "scientific" || nf.notation === "engineering") {
        push(numParts, L("exponentSeparator", "E"));
        if (d.exp < 0) push(numParts, L("exponentMinusSign", "-"));
        push(numParts, L("exponentInteger", toStr(d.exp < 0 ? -d.exp : d.exp)));
      } else if (d.exp !== 0) {
        // Long names only where no currency symbol or code stands before the number ("$1.2K", as ICU).
        const i = d.exp / 3 - 1;
        const long = nf.compactDisplay === "long" && (nf.style !== "currency" || nf.currencyDisplay === "name");
        if (long) { push(numParts, L("literal", " ")); push(numParts, L("compact", COMPACT_LONG[i])); }
        else push(numParts, L("compact", COMPACT_SHORT[i]));
        compacted = true;
      }
    }
    // sign
    let sign = 0;                       // -1 minus, 1 plus, 0 none
    const sd = nf.signDisplay, neg = x.neg && x.k !== 1;
    if (sd === "auto") sign = neg ? -1 : 0;
    else if (sd === "always") sign = neg ? -1 : 1;
    else if (sd === "exceptZero") sign = (x.k === 0 && isZero) ? 0 : x.k === 1 ? 0 : neg ? -1 : 1;
    else if (sd === "negative") sign = (neg && !(x.k === 0 && isZero)) ? -1 : 0;
    const style = nf.style;
    const pushNum = () => { for (let i = 0; i < numParts.length; i++) add(numParts[i][0], numParts[i][1]); };
    if (style === "currency" && nf.currencyDisplay === "name") {
      if (sign < 0) add("minusSign", "-"); else if (sign > 0) add("plusSign", "+");
      pushNum();
      add("literal", " ");
      add("currency", one ? nf.cur.one : nf.cur.other);
      return parts;
    }
    if (style === "currency") {
      const cd = nf.currencyDisplay;
      const sym = cd === "code" ? nf.currency : cd === "narrowSymbol" ? nf.cur.narrow : nf.cur.sym;
      // A compacted number shows no accounting parentheses ("-$1.2K" but "($5)", as ICU).
      const acc = nf.currencySign === "accounting" && sign < 0 && !compacted;
      if (acc) add("literal", "(");
      else if (sign < 0) add("minusSign", "-"); else if (sign > 0) add("plusSign", "+");
      add("currency", sym);
      if (digitStart && (cd === "code" || (cd === "narrowSymbol" ? nf.cur.narrowSp : nf.cur.symSp))) add("literal", "\u00a0");
      pushNum();
      if (acc) add("literal", ")");
      return parts;
    }
    if (sign < 0) add("minusSign", "-"); else if (sign > 0) add("plusSign", "+");
    pushNum();
    if (style === "unit") {
      const w = unitOf(nf, one);
      if (w[0]) add("literal", " ");
      add("unit", w[1]);
      return parts;
    }
    // ICU names the sign of a compact percent a unit.
    if (style === "percent") add(nf.notation === "compact" ? "unit" : "percentSign", "%");
    return parts;
  };
  // ICU rounds to an increment (other than 1) on its approximate double expansion, which differs from the exact
  // digits for large values, and fails on BigInts; only doubles below 1e15 in magnitude were proven identical.
  const INC_DIGITS = 13;
  const checkIncrement = (nf, x, raw) => {
    const m = nf.roundingMode;
    if (nf.roundingIncrement !== 1 && x.k === 0 && nf.notation !== "standard")
      throw unsupported("Intl.NumberFormat: roundingIncrement with notation \"" + nf.notation + "\" is not supported in this sandbox; " +
        "use it with the standard notation, or maximumFractionDigits alone");
    if (nf.roundingIncrement !== 1 && x.k === 0 && (m === "ceil" || m === "floor" || m === "expand" || m === "trunc"))
      throw unsupported("Intl.NumberFormat: roundingIncrement with roundingMode \"" + m + "\" is not supported in this sandbox " +
        "(Node's ICU rounds the binary value there, not the decimal one); use a half* roundingMode");
    if (nf.roundingIncrement !== 1 && x.k === 0 && !(typeof raw === "number" && raw < 1e15 && raw > -1e15 &&
        (x.n === 0n || (digitCount(x.n) <= 14 && magnitude(x.n, x.q) + (nf.style === "percent" ? 2 : 0) + nf.mxfd + 1 <= INC_DIGITS))))
      throw unsupported("Intl.NumberFormat: roundingIncrement " + nf.roundingIncrement + " is supported in this sandbox only for Number values " +
        "below 1e15 with at most 14 significant digits and at most " + INC_DIGITS + " digits down to the rounding position (Node's ICU is inexact beyond that)");
    if (nf.roundingIncrement !== 1 && x.k === 0 && x.n !== 0n) {     // exact ties: ICU decides them on the binary value
      const q = x.q + (nf.style === "percent" ? 2 : 0), mag = -nf.mxfd;
      const inc = BigIntCtor(nf.roundingIncrement);
      const num = q >= mag ? x.n * pow10(q - mag) : x.n, den = q >= mag ? inc : inc * pow10(mag - q);
      if ((num % den) * 2n === den)
        throw unsupported("Intl.NumberFormat: this value lies exactly halfway between two roundingIncrement steps; Node's ICU " +
          "decides such ties on the binary value, which this sandbox does not reproduce. Round it yourself first");
    }
  };
  const formatToString = (nf, x) => {
    const parts = partsFor(nf, x);
    let s = "";
    for (let i = 0; i < parts.length; i++) s += parts[i][1];
    return s;
  };

  const nfMethods = {
    resolvedOptions() {
      const nf = nfOf(this, "resolvedOptions");
      const o = {};
      const put = (k, v) => defProp(o, k, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
      put("locale", nf.locale); put("numberingSystem", "latn"); put("style", nf.style);
      if (nf.style === "unit") { put("unit", nf.unit); put("unitDisplay", nf.unitDisplay); }
      if (nf.style === "currency") { put("currency", nf.currency); put("currencyDisplay", nf.currencyDisplay);
        // V8 11.3 reads this back from the ICU skeleton: accounting + signDisplay "never" shows as "standard"
        put("currencySign", nf.signDisplay === "never" ? "standard" : nf.currencySign); }
      put("minimumIntegerDigits", nf.mnid);
      if (nf.mnsd !== undefined) { put("minimumSignificantDigits", nf.mnsd); put("maximumSignificantDigits", nf.mxsd); }
      if (nf.mnfd !== undefined) { put("minimumFractionDigits", nf.mnfd); put("maximumFractionDigits", nf.mxfd); }
      put("useGrouping", nf.useGrouping); put("notation", nf.notation);
      if (nf.notation === "compact") put("compactDisplay", nf.compactDisplay); put("signDisplay", nf.signDisplay);
      put("roundingMode", nf.roundingMode); put("roundingIncrement", nf.roundingIncrement);
      // V8 11.3 quirk: with trailingZeroDisplay "stripIfInteger" it reports roundingPriority "auto" (formatting is unaffected)
      put("trailingZeroDisplay", nf.trailingZeroDisplay); put("roundingPriority", nf.trailingZeroDisplay === "stripIfInteger" ? "auto" : nf.roundingPriority);
      return o;
    },
    formatToParts(value) {
      const nf = nfOf(this, "formatToParts");
      const x = toIntlMV(value);
      checkIncrement(nf, x, x.raw);
      const parts = partsFor(nf, x);
      const out = list();
      for (let i = 0; i < parts.length; i++) push(out, { type: parts[i][0], value: parts[i][1] });
      return makeArray(out);
    },
    get format() {
      const nf = nfOf(this, "format");
      if (nf.bound === undefined) {
        nf.bound = (value) => { const x = toIntlMV(value); checkIncrement(nf, x, x.raw); return formatToString(nf, x); };
      }
      return nf.bound;
    },
    formatRange(start, end) {
      nfOf(this, "formatRange");
      throw unsupported("Intl.NumberFormat.prototype.formatRange is not supported in this sandbox; format both ends with format() and join them yourself");
    },
    formatRangeToParts(start, end) {
      nfOf(this, "formatRangeToParts");
      throw unsupported("Intl.NumberFormat.prototype.formatRangeToParts is not supported in this sandbox; use formatToParts() on both ends");
    },
  };

  const supportedLocalesOf = (ctorName) => {
    const f = {
      supportedLocalesOf(locales) {
        const options = arguments.length > 1 ? (arguments.length > 1 ? arguments[1] : undefined) : undefined;
        const req = canonicalizeLocaleList(locales);
        const opts = coerceOptions(options);
        getOption(opts, "localeMatcher", MATCHERS, "best fit", ctorName + ".supportedLocalesOf");
        const out = list();
        for (let i = 0; i < req.length; i++) {
          const t = canonicalTag(req[i]);
          if (t !== null && !inList(t, out)) push(out, t);
        }
        return makeArray(out);
      },
    }.supportedLocalesOf;
    return f;
  };

  const NFProto = NumberFormat.prototype;
  setLen(NumberFormat, 0);
  defProp(NumberFormat, "prototype", { __proto__: null, writable: false, enumerable: false, configurable: false });
  const copyMethods = (src, dst) => {
    const keys = Reflect.ownKeys(src);
    for (let i = 0; i < keys.length; i++) {
      const d = Reflect.getOwnPropertyDescriptor(src, keys[i]);
      d.enumerable = false;
      defProp(dst, keys[i], d);
    }
  };
  copyMethods(nfMethods, NFProto);
  // V8 order of prototype keys: constructor, resolvedOptions, formatToParts, format, formatRange, formatRangeToParts
  defProp(NFProto, symToStringTag, { __proto__: null, value: "Intl.NumberFormat", writable: false, enumerable: false, configurable: true });
  method(NumberFormat, "supportedLocalesOf", supportedLocalesOf(NF));

  // ---------- Collator ----------
  // Its locale as ICU resolves it: the language alone, but for the tags ICU
  // has a collation of their own for (measured in Node 20, over every
  // region of the languages localeCompare answers for). Which tags compare
  // at all is localeCompare's to say: the constructor calls it once, with
  // the tag asked for.
  const collatorLocale = (req) => {
    if (req.length === 0 || isDefaultTag(req[0])) return "en-US";
    const p = req[0];
    const tag = p.region === null || !p.plain ? p.lang : p.lang + "-" + p.region;
    return tag === "en-US" || tag === "de-AT" || tag === "id-ID" || tag === "fr-CA" ? tag : p.lang;
  };
  const colSlots = new WeakMapCtor();
  const CL = "Intl.Collator";
  function Collator() {
    const locales = (arguments.length > 0 ? arguments[0] : undefined), options0 = (arguments.length > 1 ? arguments[1] : undefined);
    const nt = new.target === undefined ? Collator : new.target;
    let proto = nt.prototype;
    if ((typeof proto !== "object" || proto === null) && typeof proto !== "function") proto = ColProto;
    const req = canonicalizeLocaleList(locales);
    const options = coerceOptions(options0);
    let problem = null;
    const usage = getOption(options, "usage", L("sort", "search"), "sort", CL);
    getOption(options, "localeMatcher", MATCHERS, "best fit", CL);
    const collation = getOption(options, "collation", null, undefined, CL);
    if (collation !== undefined && !isTypeSequence(collation)) throw new RangeErr("Invalid collation : " + collation);
    let numeric = getBoolOption(options, "numeric");
    const caseFirst = getOption(options, "caseFirst", L("upper", "lower", "false"), undefined, CL);
    const locale = collatorLocale(req), requested = req.length === 0 ? undefined : req[0].raw;
    if (collation !== undefined)
      problem = unsupported("Intl.Collator: the collation option is not supported in this sandbox (only the default English order)");
    const sensitivity = getOption(options, "sensitivity", L("base", "accent", "case", "variant"), "variant", CL);
    const ip = getBoolOption(options, "ignorePunctuation");
    if (problem !== null) throw problem;
    const c = {
      __proto__: null, locale, requested, usage, sensitivity, ignorePunctuation: ip === undefined ? false : ip,
      numeric: numeric === undefined ? false : numeric, caseFirst: caseFirst === undefined ? "false" : caseFirst, bound: undefined,
    };
    c.bag = { __proto__: null, usage, sensitivity, ignorePunctuation: c.ignorePunctuation, numeric: c.numeric, caseFirst: c.caseFirst };
    localeCompare("a", "b", requested, c.bag);   // lets the collation engine refuse what it cannot do, now
    const obj = objCreate(proto);
    wmSet(colSlots, obj, c);
    return obj;
  }
  const ColProto = Collator.prototype;
  const colOf = (o, m) => {
    const c = (typeof o === "object" && o !== null) ? wmGet(colSlots, o) : undefined;
    if (c === undefined) throw new TypeErr("Method Intl.Collator.prototype." + m + " called on incompatible receiver");
    return c;
  };
  copyMethods({
    resolvedOptions() {
      const c = colOf(this, "resolvedOptions");
      const o = {};
      const put = (k, v) => defProp(o, k, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
      put("locale", c.locale); put("usage", c.usage); put("sensitivity", c.sensitivity); put("ignorePunctuation", c.ignorePunctuation);
      put("collation", "default"); put("numeric", c.numeric); put("caseFirst", c.caseFirst);
      return o;
    },
    get compare() {
      const c = colOf(this, "compare");
      if (c.bound === undefined) {
        // The options as localeCompare read them when the collator was made.
        const read = collateOptions(c.sensitivity, c.caseFirst);
        const sensitivity = read[0], caseFirst = read[1], numeric = c.numeric, shifted = c.ignorePunctuation;
        c.bound = (x, y) => collate(toStr(x), toStr(y), sensitivity, caseFirst, numeric, shifted);
      }
      return c.bound;
    },
  }, ColProto);
  setLen(Collator, 0);
  defProp(Collator, "prototype", { __proto__: null, writable: false, enumerable: false, configurable: false });
  defProp(ColProto, symToStringTag, { __proto__: null, value: "Intl.Collator", writable: false, enumerable: false, configurable: true });
  // The tags localeCompare answers for (collate.js's LANGUAGES; not fr-CA, whose order differs).
  const COLLATED = L("en", "de", "fr", "it", "pt", "nl", "ca", "id", "ms", "ga", "sw");
  method(Collator, "supportedLocalesOf", {
    supportedLocalesOf(locales) {
      const options = arguments.length > 1 ? arguments[1] : undefined;
      const req = canonicalizeLocaleList(locales);
      getOption(coerceOptions(options), "localeMatcher", MATCHERS, "best fit", CL + ".supportedLocalesOf");
      const out = list();
      for (let i = 0; i < req.length; i++) {
        const p = req[i];
        if (!p.plain || !inList(p.lang, COLLATED)) continue;
        const t = p.region === null ? p.lang : p.lang + "-" + p.region;
        if (t !== "fr-CA" && !inList(t, out)) push(out, t);
      }
      return makeArray(out);
    },
  }.supportedLocalesOf);

  // For words.js (PluralRules, RelativeTimeFormat, ListFormat): the locale and option readers, and a
  // formatter's digits and parts for a Number.
  shared.resolveLocale = resolveLocale;
  shared.getOption = getOption;
  shared.isTypeSequence = isTypeSequence;
  shared.coerceOptions = coerceOptions;
  shared.makeArray = makeArray;
  shared.numberFormatter = (bag) => wmGet(nfSlots, new NumberFormat("en-US", bag));
  shared.numberDigits = (nf, x) => toDigits(nf, fromNumber(x), 0);
  shared.numberParts = (nf, x) => partsFor(nf, fromNumber(x));

  // ---------- Intl ----------
  const Intl = {};
  const refuse = (name, len, advice) => {
    const f = {
      [name]: function () { throw new TypeErr("Intl." + name + " is not available: this sandbox has no locale/time-zone data for it. " + advice); },
    }[name];
    setLen(f, len);
    return f;
  };
  const stubs = L(
    L("DateTimeFormat", 0, "Use toISOString(), toUTCString(), or getUTCFullYear()/getUTCMonth()/getUTCDate()/getUTCHours()... and format by hand; times are UTC."),
    L("PluralRules", 0, "Choose the plural form yourself (English: n === 1 ? 'item' : 'items')."),
    L("RelativeTimeFormat", 0, "Build the phrase yourself, e.g. `${n} days ago`."),
    L("ListFormat", 0, "Join the items yourself, e.g. items.slice(0, -1).join(', ') + ' and ' + items.at(-1)."),
    L("Locale", 1, "Locale strings are used as plain strings; only en-US formatting is available."),
    L("DisplayNames", 2, "Keep your own table of names."),
    L("Segmenter", 0, "Split with Array.from(str) (code points), str.split(/\\s+/) (words) or a regular expression.")
  );
  method(Intl, "getCanonicalLocales", {
    getCanonicalLocales(locales) {
      const req = canonicalizeLocaleList(locales);
      const out = list();
      for (let i = 0; i < req.length; i++) {
        const t = canonicalTag(req[i]);
        if (t === null) throw unsupported("Intl.getCanonicalLocales: " + quoted(req[i].raw) + " cannot be canonicalized here (no locale data); only en and en-<region> tags are known");
        if (!inList(t, out)) push(out, t);
      }
      return makeArray(out);
    },
  }.getCanonicalLocales);
  method(Intl, "supportedValuesOf", {
    supportedValuesOf(key) {
      key = toStr(key);
      if (key === "currency") {
        currencyInfo("USD");
        const out = list();
        const rows = splitSemi(CURRENCIES);
        for (let i = 0; i < rows.length; i++) push(out, slice(rows[i], 0, 3));
        return makeArray(out);
      }
      if (key === "unit") { isSanctionedUnit("x"); const out = list(); for (let i = 0; i < unitList.length; i++) push(out, unitList[i]); return makeArray(out); }
      if (key === "calendar" || key === "collation" || key === "numberingSystem" || key === "timeZone")
        throw unsupported("Intl.supportedValuesOf(\"" + key + "\") is not available: this sandbox has no locale/time-zone data");
      throw new RangeErr("Invalid key : " + key);
    },
  }.supportedValuesOf);
  const order = L("DateTimeFormat", "NumberFormat", "Collator", "PluralRules", "RelativeTimeFormat", "ListFormat", "Locale", "DisplayNames", "Segmenter");
  for (let k = 0; k < order.length; k++) {
    const nm = order[k];
    if (nm === "NumberFormat") method(Intl, nm, NumberFormat);
    else if (nm === "Collator") method(Intl, nm, Collator);
    else for (let i = 0; i < stubs.length; i++) if (stubs[i][0] === nm) method(Intl, nm, refuse(nm, stubs[i][1], stubs[i][2]));
  }
  defProp(Intl, symToStringTag, { __proto__: null, value: "Intl", writable: false, enumerable: false, configurable: true });
  method(G, "Intl", Intl);

  // ---------- toLocaleString ----------
  // An integer's digits with en's group separator, as the default formatter groups them (from four digits).
  const grouped = (digits) => {
    if (digits.length < 4) return digits;
    let first = digits.length % 3;
    if (first === 0) first = 3;
    let out = slice(digits, 0, first);
    for (let i = first; i < digits.length; i += 3) out += "," + slice(digits, i, i + 3);
    return out;
  };
  // toLocaleString() with neither locales nor options (as an array's does for each element) reads no option:
  // its formatter is made once a run. So is one for a locale given as a string without options
  // (`n.toLocaleString("en-US")`, which made a formatter at each call: 70 µs a number), for the first few
  // such locales; options are read at every call, as the standard says (their getters run each time).
  let plainFormatter = null;
  const localeFormatters = { __proto__: null };
  let localeFormatterCount = 0;
  const formatterOf = (locales, options) => {
    if (typeof locales === "string" && options === undefined) {
      const kept = localeFormatters[locales];
      if (kept !== undefined) return kept;
      const made = wmGet(nfSlots, new NumberFormat(locales));
      if (localeFormatterCount < 16) { localeFormatters[locales] = made; localeFormatterCount++; }
      return made;
    }
    if (locales !== undefined || options !== undefined) return wmGet(nfSlots, new NumberFormat(locales, options));
    if (plainFormatter === null) plainFormatter = wmGet(nfSlots, new NumberFormat());
    return plainFormatter;
  };
  method(Number.prototype, "toLocaleString", {
    toLocaleString() {
      const x = numValueOf(this);
      const locales = arguments.length > 0 ? arguments[0] : undefined, options = arguments.length > 1 ? arguments[1] : undefined;
      // The commonest call, a whole number with neither locales nor options, needs no rounding: its digits, grouped.
      if (locales === undefined && options === undefined && x % 1 === 0 && x < 9007199254740992 && x > -9007199254740992 &&
          (x !== 0 || 1 / x > 0))
        return x < 0 ? "-" + grouped(toStr(-x)) : grouped(toStr(x));
      const nf = formatterOf(locales, options);
      const v = fromNumber(x);
      checkIncrement(nf, v, x);
      return formatToString(nf, v);
    },
  }.toLocaleString);
  method(BigInt.prototype, "toLocaleString", {
    toLocaleString() {
      const x = bigValueOf(this);
      const nf = formatterOf(arguments.length > 0 ? arguments[0] : undefined, arguments.length > 1 ? arguments[1] : undefined);
      const v = x < 0n ? mv(0, true, -x, 0) : mv(0, false, x, 0);
      checkIncrement(nf, v, x);
      return formatToString(nf, v);
    },
  }.toLocaleString);
  const joinStack = list();
  method(ArrayProto, "toLocaleString", {
    toLocaleString() {
      const locales = (arguments.length > 0 ? arguments[0] : undefined), options = (arguments.length > 1 ? arguments[1] : undefined);
      const array = toObj(this);
      for (let i = 0; i < joinStack.length; i++) if (joinStack[i] === array) return "";   // V8's cycle detection
      push(joinStack, array);
      try {
        const len = lengthOf(array);
        let R = "";
        for (let k = 0; k < len; k++) {
          if (k > 0) R += ",";
          const next = array[k];
          if (next !== undefined && next !== null) {
            const f = next.toLocaleString;
            if (typeof f !== "function") throw new TypeErr("toLocaleString is not a function");
            R += toStr(apply(f, next, L(locales, options)));
          }
        }
        return R;
      } finally { joinStack.length = joinStack.length - 1; }
    },
  }.toLocaleString);
});
