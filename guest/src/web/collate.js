// String.prototype.localeCompare in the order ICU gives English: the
// Unicode Collation Algorithm's root order as CLDR tailors it (the same for
// every language in LANGUAGES), with the options `sensitivity`, `numeric`,
// `caseFirst` and `ignorePunctuation`. It is exact or it throws: the tables
// below cover the characters in REPERTOIRE (Latin, Greek, Cyrillic, Hangul,
// digits, punctuation, currency, ...), measured against ICU on millions of
// pairs; a string with a character outside them, a run of more than 254
// digits under `numeric`, a locale whose order differs and `usage:
// "search"` throw a TypeError that says so, rather than answer an order a
// reader would take for a locale's.
//
// How: each string becomes collation elements (CEs), packed as primary << 16
// | secondary << 8 | tertiary, from one table per code point built at the
// first call of a run (about 25 ms; nothing is built for a run that never
// compares). Its sort key (primary weights, then secondary ones) compares as
// a plain string and is kept for the run, so a sort costs two lookups per
// comparison; a tertiary or case-level key is made and kept only for
// strings whose keys tie. Before any key, a native compares the primary
// weights of two strings whose characters all have V >= 0 (most text),
// and answers when they differ: the keys are made only for what that
// leaves undecided.
(function (native, shared) {
  "use strict";
  const apply = Reflect.apply;
  const lengthOf = shared.lengthOf; // sort.js
  const { collationTable, comparePrimaries } = native;
  const callOf = (f) => apply(Function.prototype.bind, Function.prototype.call, [f]);
  const charCodeAt = callOf(String.prototype.charCodeAt);
  const normalize = callOf(String.prototype.normalize);
  const toUpperCase = callOf(String.prototype.toUpperCase);
  const toLowerCase = callOf(String.prototype.toLowerCase);
  const slice = callOf(String.prototype.slice);
  const mapGet = callOf(Map.prototype.get), mapSet = callOf(Map.prototype.set);
  const regexpExec = callOf(RegExp.prototype.exec), LETTER = /\p{L}/u;
  const parseIntOf = parseInt, fromCharCode = String.fromCharCode, fromCodePoint = String.fromCodePoint, ObjectCtor = Object;
  const MapCtor = Map, Int32ArrayCtor = Int32Array, Uint8ArrayCtor = Uint8Array;
  const { create, defineProperty, setPrototypeOf } = Object;
  const subarray = callOf(Object.getPrototypeOf(Uint16Array.prototype).subarray), Uint16ArrayCtor = Uint16Array;
  const hexOf = callOf(Number.prototype.toString), join = callOf(Array.prototype.join), arraySlice = callOf(Array.prototype.slice);
  // An array no index accessor of Array.prototype or Object.prototype can
  // reach: every list this file writes by index is one.
  const list = () => setPrototypeOf([], null);
  const stringify = JSON.stringify;
  const TypeErrorCtor = TypeError, RangeErrorCtor = RangeError, StringCtor = String;

  // Languages whose order ICU gives as English's for every string of the
  // characters below and every option (compared pair by pair against ICU);
  // of their regions, fr-CA's differs (its accents compare from the end).
  const LANGUAGES = {
    __proto__: null, en: true, de: true, fr: true, it: true, pt: true, nl: true, ca: true, id: true, ms: true, ga: true, sw: true,
  };
  // The characters whose order is known exact, as [first, last] code points
  // in pairs: where the tables below agreed with ICU on every comparison of
  // some 75 million (random strings, sorted lists checked pair by pair,
  // realistic names, titles, files and dates, under every option). Left
  // out, for want of such agreement: combining marks (but where checkMarks
  // lets U+0300-0362 be), a few digraphs, ligatures and lookalike letters
  // (ǆ, ĳ, ſ, №, ℕ, Ⅻ), the typographic spaces, subscripts, Thai's vowels
  // and tone marks, and every other script and symbol block (Hebrew,
  // Arabic, kana, Han, emoji, arrows).
  const REPERTOIRE = [
    0x0000, 0x0131, 0x0134, 0x017E, 0x0180, 0x018C, 0x018E, 0x01BD, 0x01BF, 0x01C3, 0x01CD, 0x01F0, 0x01F4, 0x0237,
    0x023A, 0x02A2, 0x02AC, 0x02CF, 0x02D2, 0x02FF, 0x0370, 0x0377, 0x037A, 0x037F, 0x0385, 0x038A, 0x038C, 0x038C,
    0x038E, 0x03A1, 0x03A3, 0x03CE, 0x03D0, 0x03D6, 0x03D8, 0x03EF, 0x03F1, 0x0482, 0x048A, 0x04FF, 0x0E01, 0x0E37,
    0x0E45, 0x0E45, 0x1E00, 0x1E9A, 0x1E9E, 0x1EF9, 0x1EFC, 0x1F15, 0x1F18, 0x1F1D, 0x1F20, 0x1F45, 0x1F48, 0x1F4D,
    0x1F50, 0x1F57, 0x1F59, 0x1F59, 0x1F5B, 0x1F5B, 0x1F5D, 0x1F5D, 0x1F5F, 0x1F7D, 0x1F80, 0x1FB4, 0x1FB6, 0x1FBC,
    0x1FBE, 0x1FC4, 0x1FC6, 0x1FD3, 0x1FD6, 0x1FDB, 0x1FDD, 0x1FEF, 0x1FF2, 0x1FF4, 0x1FF6, 0x1FFE, 0x200B, 0x2023,
    0x2026, 0x202E, 0x2030, 0x203B, 0x203D, 0x2043, 0x2045, 0x2046, 0x204A, 0x205E, 0x2060, 0x2064, 0x2066, 0x2071,
    0x2074, 0x207F, 0x20A0, 0x20A6, 0x20A9, 0x20C0, 0x2103, 0x2104, 0x2107, 0x2109, 0x2114, 0x2114, 0x2117, 0x2118,
    0x211E, 0x2120, 0x2122, 0x2123, 0x2125, 0x2125, 0x2127, 0x2127, 0x2129, 0x2129, 0x212B, 0x212B, 0x212E, 0x212E,
    0x2132, 0x2132, 0x213A, 0x213A, 0x2141, 0x2144, 0x214A, 0x214C, 0x214E, 0x215E, 0x2500, 0x257F, 0xAC00, 0xD7A3,
    0xFEFF, 0xFEFF, 0xFF01, 0xFF0D, 0xFF0F, 0xFF5E,
  ];

  // Calls each(word) for each space-separated word of a constant (without
  // split and for-of, which a program can change before the first call).
  function eachWord(text, each) {
    let from = 0;
    for (let i = 0; i <= text.length; i++) {
      if (i === text.length || charCodeAt(text, i) === 32) {
        if (i > from) each(slice(text, from, i));
        from = i + 1;
      }
    }
  }

  let T = null; // this run's tables, built at the first comparison that needs them

  function build() {
    // Primaries in order; the uppercase form of each is added as a tertiary variant. Gaps are left
    // before '¤' (symbols without a table entry), before '0' (the lengths of digit runs, numeric)
    // and after the letters (letters without a table entry).
    const ORDER = "\t\n\v\f\r\u0085\u2028\u2029 ‾_‗-‐‒–—―⁓,;⁏:!¡?¿‽.·⁕⁖⁘⁙⁚⁛⁜⁝⁞'‹›\"«»()[]{}⁅⁆‖§¶⁋@*⁎⁑/\\&⁊#%‰‱" +
      "†‡•‣‧⁃⁌⁍′‵‸※‿⁔⁀⁐⁁⁂`´˜^¯˘˙¨˚˝¸˛᾿῾῀ʹ͵ʺ˂˃˄˅ˆˇˈˉˊˋˌˍˎˏ˒˓˔˕˖˗˞˟˥˦˧˨˩˪˫ˬ˭˯˰˱˲˳˴˵˶˷˸˹˺˻˼˽˾˿°҂©®" +
      "℄℈℔℗℘℞℟℣℥℧℩℮℺⅁⅂⅃⅄⅊⅌⅏←→↑↓϶+±÷×<=>¬|¦~−⁒⁄√∞≈≤≥⅋■□▪▶►◆◇○●★☆♥✓✔✗✘ːˑ" +
      "¤¢$£¥₠₡₢₣₤₥₦₩₪₫€₭₮₯₰₱₲₳₴₵₶₷₸₹₺₻₼₽₾₿⃀0123456789" +
      "aⱥɐɑɒbʙƀɓƃcȼƈɕdɖɗƌȡẟeɇǝəɛɘɚɜɝɞʚɤfƒⅎgɡɢǥɠʛɣƣhʜƕɦɧʻʽiıɪɨɩjȷɉʝɟʄkƙʞlʟƚɫɬɭȴɮƛʎmɱ" +
      "nɴɲƞɳȵŋoɶɔɵɷȣp₧ƥɸqʠɋĸrʀɍɹɺɻɼɽɾɿʁsʂȿẜẝʃƪʅʆtŧⱦƫƭʈȶʇuʉɥʮʯɯɰʊvʋỽʌwʍxyʏɏƴỿȝzƍƶȥʐʑɀʒƹƺʓ" +
      "þƿƻƨƽƅʔɂˀʼˮʾʕʿˁʡʢʖǀǁǂǃʗʘʬʭ" +
      "αβγδεϝͷϛζͱηθιϳκϗλμνξοπϻϟϙρϼσͼͻͽτυφχψωϡͳϸϣϥϧϩϫϭϯ" +
      "аәӕбвгғӻҕӷдђҙеєжҗзѕӡиҋійјкқӄҡҟҝлӆљмӎнӊңӈҥњоөпҧҁрҏсҫтҭћуүұѹфхӽӿҳһѡѿѽѻцҵчҷӌҹҽҿџ" +
      "шщъыьҍѣэюяѥѧѫѩѭѯѱѳѵҩӏ";
    // Combining marks in secondary order ('=': equal weights); e000-e005 stand in for the
    // secondaries ICU gives ð ſ ŀ ґ, the quote variants, æ œ and ß (U+0363..036F are letters).
    const MARKS = "332 313=343=486 314=485 301=341 300=340 306 302 30c 30a 342 308 344 30b 303 307 338 327 328 304 " +
      "30d=30e=312=315=31a=33d=33e=33f=346=34a=34b=34c=350=351=352=357=35b=35d=35e=484=487 " +
      "316=317=318=319=31c=31d=31e=31f=320=329=32a=32b=32c=32f=333=33a=33b=33c=347=348=349=34d=34e=353=354=355=356=359=35a=35c=35f=362 " +
      "336=337 335 305 309 30f 310 311 31b 321 322 323 324 325 326 32d 32e 330 331 334 339 345 358 360 361 483 " +
      "e000 e001 e002 e003 e004 e005";
    // Characters ICU treats as base letter(s) + a secondary difference.
    const DECOMP = ("đd\u0335 Đd\u0335 ħh\u0335 Ħh\u0335 łl\u0335 Łl\u0335 øo\u0338 Øo\u0338 ðd\ue000 Ðd\ue000 " +
      "ſs\ue000 ŀl\ue000 Ŀl\ue000 ґг\ue000 Ґг\ue000 ‘'\ue000 ’'\ue001 ‚'\ue002 ‛'\ue003 “\"\ue000 ”\"\ue001 " +
      "„\"\ue002 ‟\"\ue003 æa\ue004e Æa\ue004e œo\ue004e Œo\ue004e ßs\ue005s ẞs\ue005s");
    const IGNORE = [0, 8, 0xE, 0x1F, 0x7F, 0x84, 0x86, 0x9F, 0xAD, 0xAD, 0x34F, 0x34F, 0x488, 0x489, 0x200B, 0x200F,
      0x202A, 0x202E, 0x2060, 0x206F, 0xFE00, 0xFE0F, 0xFEFF, 0xFEFF, 0xFFF9, 0xFFFB];
    // Tertiary variants of letter sequences that have no Unicode compatibility decomposition.
    const EXPAND = create(null);
    eachWord("ʣdz ʤdʒ ʥdʑ ʦts ʧtʃ ʨtɕ ʩfŋ ʪls ʫlz ȸdb ȹqp ƾts ỻll ỺLL ⅍a/s", (e) => { EXPAND[e[0]] = slice(e, 1); });
    const SPACING = { __proto__: null, "\u0308": "¨", "\u0301": "´", "\u0313": "᾿", "\u0314": "῾", "\u0342": "῀", "\u0345": "ι" };
    const SUPER = [0xAA, 0xAA, 0xB2, 0xB3, 0xB9, 0xBA, 0x2B0, 0x2B8, 0x2E0, 0x2E4, 0x1D2C, 0x1D6A, 0x2070, 0x209C,
      0x2120, 0x2120, 0x2122, 0x2122];
    const LOWER = 1, COMPAT = 2, UPPER = 0x13, COMPAT_UP = 0x14, SUP = 5, SUP_UP = 0x16, FINAL = 7; // tertiary ranks
    // K: a CE per code point below TBL (M above): 0 ignorable, -1 unknown, < -1 an expansion into X.
    const TBL = 0x2800, K = new Int32ArrayCtor(TBL), M = new MapCtor(), XL = list();
    for (let c = 0; c < TBL; c++) K[c] = -1;
    // Primaries above CONT are the second CE of a character without a
    // table entry (Hangul, box drawing): CONT + its low 12 bits + 1.
    const CONT = 20000;
    let VARTOP = 0, NUMCE = 0, SYMFB = 0, LETFB = 0, p = 1;

    function get(c) { const v = c < TBL ? K[c] : mapGet(M, c); return v === undefined ? -1 : v; }
    function set(c, v) { if (c < TBL) K[c] = v; else mapSet(M, c, v); }
    function setSeq(c, ces) {
      if (ces.length === 1) set(c, ces[0]);
      else {
        set(c, -(XL.length * 16 + ces.length));
        for (let i = 0; i < ces.length; i++) XL[XL.length] = ces[i];
      }
    }
    function cesOf(str) { // the CEs of a string, or null if something in it is unknown
      const out = list();
      for (let i = 0; i < str.length; i++) {
        const v = get(charCodeAt(str, i));
        if (v === -1) return null;
        if (v > 0) out[out.length] = v;
        else if (v < 0) for (let j = -v >> 4, e = j + (-v & 15); j < e; j++) out[out.length] = XL[j];
      }
      return out;
    }
    // Sort keys spell primary p as W[p]: one UTF-16 unit for tab..CR, space, 0-9, a-z (their own
    // code), otherwise the previous such unit followed by a unit >= 0x2000 ("a" + anything < "ɐ" < "b").
    const W = list();
    let anchor = "", rank = 0;
    function prim(single) {
      if (single) { anchor = single; rank = 0; }
      W[p] = single || anchor + fromCharCode(0x2000 + ++rank);
      return p++;
    }
    for (let k = 0; k < ORDER.length; k++) {
      const ch = ORDER[k], code = charCodeAt(ORDER, k);
      if (ch === "`") VARTOP = p - 1; // spaces and punctuation are "variable" (ignorePunctuation)
      if (ch === "¤") { SYMFB = p; for (let i = 0; i < 300; i++) prim(); }
      if (ch === "0") { NUMCE = (p << 16) | 0x101; for (let i = 0; i < 260; i++) prim(); }
      const own = code >= 9 && code <= 13 || code === 32 || code >= 48 && code <= 57 || code >= 97 && code <= 122;
      const c = prim(own && ch);
      set(code, (c << 16) | 0x100 | LOWER);
      const s = toUpperCase(ch);
      if (s.length === 1 && s !== ch && get(charCodeAt(s, 0)) === -1) set(charCodeAt(s, 0), (c << 16) | 0x100 | UPPER);
    }
    LETFB = p;
    for (let i = 0; i < 300; i++) prim();
    let w = 2;
    eachWord(MARKS, (group) => {
      let from = 0;
      for (let i = 0; i <= group.length; i++) {
        if (i === group.length || group[i] === "=") { set(parseIntOf(slice(group, from, i), 16), (w << 8) | LOWER); from = i + 1; }
      }
      w++;
    });
    for (let i = 0; i < IGNORE.length; i += 2) for (let c = IGNORE[i]; c <= IGNORE[i + 1]; c++) set(c, 0);
    eachWord(DECOMP, (d) => {
      const ces = cesOf(slice(d, 1));
      if (d[0] !== toLowerCase(d[0])) for (let i = 0; i < ces.length; i++) if (ces[i] >>> 16) ces[i] = (ces[i] & ~0xFF) | UPPER;
      setSeq(charCodeAt(d, 0), ces);
    });
    set(0x3C2, (get(0x3C3) & ~0xFF) | FINAL); // final sigma
    for (let i = 0; i < 13; i++) set(0x363 + i, (get(charCodeAt("aeioucdhmrtvx", i)) & ~0xFF) | COMPAT);
    // Everything else: canonical (pass 0), then compatibility decompositions (pass 1, tertiary variants).
    const R = [0xA0, 0x4FF, 0x1D00, 0x27FF, 0x3000, 0x3000, 0xFB00, 0xFB06, 0xFF01, 0xFF5E];
    for (let pass = 0; pass < 2; pass++) for (let r = 0; r < R.length; r += 2) for (let c = R[r]; c <= R[r + 1]; c++) {
      if (get(c) !== -1) continue;
      const s = fromCharCode(c);
      let n = pass ? EXPAND[s] || normalize(s, "NFKD") : normalize(s, "NFD");
      if (n[0] === " " && n.length > 1) n = (SPACING[n[1]] || " " + n[1]) + slice(n, 2); // spacing accents
      let ces;
      if (n === s || !(ces = cesOf(n))) continue;
      if (pass) for (let j = 0; j < ces.length; j++) if (ces[j] >>> 16) {
        let sup = false;
        for (let k = 0; k < SUPER.length; k += 2) if (c >= SUPER[k] && c <= SUPER[k + 1]) sup = true;
        const t = sup ? (ces[j] & 0x10 && c < 0x2000 ? SUP_UP : SUP) : ces[j] & 0x10 ? COMPAT_UP : COMPAT;
        ces[j] = (ces[j] & ~0xFF) | t;
      }
      setSeq(c, ces);
    }
    const X = new Int32ArrayCtor(XL.length);
    for (let i = 0; i < XL.length; i++) X[i] = XL[i];
    // Tertiary keys for caseFirst false / upper / lower; case-level keys lower-first / upper-first.
    const TK = [list(), list(), list()], CK = [list(), list()];
    TK[0][0] = TK[1][0] = TK[2][0] = CK[0][0] = CK[1][0] = 0;
    for (let t = 1; t < 32; t++) {
      TK[0][t] = t & 15; TK[1][t] = (t & 0x10 ? 16 : 32) | t & 15; TK[2][t] = (t & 0x10 ? 32 : 16) | t & 15;
      CK[0][t] = t & 0x10 ? 2 : 1; CK[1][t] = t & 0x10 ? 1 : 2;
    }
    // Which code points REPERTOIRE covers, one bit each, for the whole BMP (8 KiB).
    const known = new Uint8ArrayCtor(0x2000);
    for (let r = 0; r < REPERTOIRE.length; r += 2)
      for (let c = REPERTOIRE[r]; c <= REPERTOIRE[r + 1]; c++) known[c >> 3] |= 1 << (c & 7);
    for (let c = 0x300; c <= 0x362; c++) known[c >> 3] |= 1 << (c & 7); // where checkMarks lets them be
    // Characters below FAST use V: > 0 packs the first primary unit (7 bits), second unit - 0x1FFF
    // (11 bits), an extra secondary unit (8 bits) and VAR / DIGIT flags; 0 = ignorable; -1 = use
    // the strings PKEY / SKEY; -2 = needs the CE iterator (combining marks, contraction parts).
    const FAST = 0x500, V = new Int32ArrayCtor(FAST), PKEY = list(), SKEY = list(), VAR = 1 << 26, DIGIT = 1 << 27, NUMW = list();
    for (let c = 0; c < FAST; c++) {
      const t = K[c];
      let ces = null;
      if (t >= 0) { ces = list(); if (t) ces[0] = t; }
      else if (t < -1) { ces = list(); for (let j = -t >> 4, e = j + (-t & 15); j < e; j++) ces[ces.length] = XL[j]; }
      if (!ces || ces.length && !(ces[0] >>> 16) || c === 0xB7 || c === 0x387 || c >= 0x300 && c <= 0x36F ||
          !(known[c >> 3] & (1 << (c & 7)))) { V[c] = -2; continue; }
      let pk = "", sk = "", variable = false;
      for (let i = 0; i < ces.length; i++) {
        if (ces[i] >>> 16) pk += W[ces[i] >>> 16];
        if (ces[i] & 0xFF00) sk += fromCharCode(((ces[i] >> 8) & 0xFF) + 1);
        if (ces[i] >>> 16 && ces[i] >>> 16 <= VARTOP) variable = true;
      }
      PKEY[c] = pk; SKEY[c] = sk;
      const first = ces.length ? ces[0] >>> 16 : 0;
      if (!pk) V[c] = 0;
      else if (charCodeAt(pk, 0) < 0x80 && (pk.length === 1 || pk.length === 2 && charCodeAt(pk, 1) >= 0x2000) &&
          sk.length <= 2 && charCodeAt(sk, 0) === 2)
        V[c] = charCodeAt(pk, 0) | (pk.length > 1 ? charCodeAt(pk, 1) - 0x1FFF : 0) << 7 | (sk.length > 1 ? charCodeAt(sk, 1) : 0) << 18 |
          (ces.length === 1 && first <= VARTOP ? VAR : 0) | (c >= 48 && c <= 57 ? DIGIT : 0);
      else V[c] = variable ? -2 : -1;
    }
    for (let i = 1; i < 256; i++) {
      const u = W[(NUMCE >>> 16) + i];
      NUMW[i] = charCodeAt(u, 0) | charCodeAt(u, 1) << 16;
    }
    return { K, M, X, W, V, PKEY, SKEY, NUMW, TK, CK, known, TBL, CONT, VARTOP, NUMCE, SYMFB, LETFB, FAST, VAR, DIGIT };
  }

  // ---- the CEs of a string, one at a time (no allocation) ----
  // The string (`start`), where in it, an expansion being read out of X
  // (xi up to xn), a CE that comes next (pend), digits of a run left
  // (nd), and whether the last CE that counted was variable (av).
  let str = "", pos = 0, xi = 0, xn = 0, pend = 0, nd = 0, av = 0;
  let numeric = false, shifted = false;

  function hasMark(s) { // a combining mark (U+0300-036F), which NFD may reorder
    for (let i = 0; i < s.length; i++) {
      const c = charCodeAt(s, i);
      if (c >= 0x300 && c <= 0x36F) return true;
    }
    return false;
  }
  // Throws for a combining mark whose order is not known exact: one past
  // U+0362, at the start, after anything but a Latin, Greek or Cyrillic
  // letter, after й or Й (ICU's contraction of и + breve takes marks after
  // it), after и or И unless it is one breve (NFD's й), or in a string
  // with Hangul (whose syllables NFD would take apart). Measured: 0
  // mismatches with ICU in 57 million comparisons of strings with marks
  // placed so, where each other placement mismatched.
  function checkMarks(s) {
    let hangul = false;
    for (let i = 0; i < s.length; i++) {
      const c = charCodeAt(s, i);
      if (c >= 0xAC00 && c <= 0xD7A3) hangul = true;
    }
    let base = 0, run = 0;
    for (let i = 0; i < s.length; i++) {
      const c = charCodeAt(s, i);
      if (c < 0x300 || c > 0x36F) { base = c; run = 0; continue; }
      run++;
      const cyrillicI = base === 0x418 || base === 0x438;
      const placed = c <= 0x362 && !hangul && (cyrillicI ? c === 0x306 && run === 1 :
        base !== 0x419 && base !== 0x439 && isLetter(base));
      if (!placed) throw unknown(c);
    }
  }
  function isLetter(c) { // a Latin, Greek or Cyrillic letter
    return (c >= 65 && c <= 90 || c >= 97 && c <= 122 || c >= 0xC0 && c <= 0x24F || c >= 0x370 && c <= 0x4FF ||
      c >= 0x1E00 && c <= 0x1FFF) && regexpExec(LETTER, fromCharCode(c)) !== null;
  }
  function digit(c) { // the value of a decimal digit (ASCII or fullwidth), else -1
    return c >= 48 && c <= 57 ? c - 48 : c >= 0xFF10 && c <= 0xFF19 ? c - 0xFF10 : -1;
  }
  function unknown(c) {
    const hex = (c < 0x10000 ? "000" : "") + hexOf(c, 16);
    const name = "U+" + toUpperCase(slice(hex, hex.length - (c < 0x10000 ? 4 : 5)));
    const shown = c >= 0x20 && c !== 0x7F && !(c >= 0xD800 && c < 0xE000) ? stringify(fromCodePoint(c)) + " " : "";
    return new TypeErrorCtor(`String.prototype.localeCompare: ${shown}(${name}) is a character whose place in the order ` +
      "is not known here: this sandbox collates Latin, Greek, Cyrillic and Hangul letters, digits, punctuation and " +
      "currency signs in English's order" + (c >= 0x300 && c <= 0x36F ? ", and a combining mark only after a Latin, " +
      "Greek or Cyrillic letter: compose it with its letter first (s.normalize(\"NFC\"))" : "") +
      ". For code-unit order compare with < and >: (a, b) => (a < b ? -1 : a > b ? 1 : 0).");
  }
  function nextCE() { // the next CE: 0 for an ignorable, -1 at the end
    let v = pend, i = pos, c, d, j, e;
    const t = str;
    if (v) { pend = 0; return v; }
    if (xi < xn) return T.X[xi++];
    if (nd) { nd--; pos = i + 1; return T.K[48 + digit(charCodeAt(t, i))]; }
    if (i >= t.length) return -1;
    c = charCodeAt(t, i++);
    if (c >= 0xD800 && c < 0xDC00) {
      d = charCodeAt(t, i);
      if (d >= 0xDC00 && d < 0xE000) { c = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00); i++; }
    }
    if (c >= 0x10000 || !(T.known[c >> 3] & (1 << (c & 7)))) throw unknown(c);
    if (numeric && digit(c) >= 0) { // a digit run: a length CE, then the digits without leading zeros
      for (j = i - 1; digit(charCodeAt(t, j)) === 0 && digit(charCodeAt(t, j + 1)) >= 0; j++);
      for (e = j; digit(charCodeAt(t, e)) >= 0; e++);
      if (e - (i - 1) > 254) throw tooManyDigits();
      pos = j; nd = e - j;
      return T.NUMCE + ((e - j) << 16);
    } else if (i < t.length) { // contractions: и + breve = й, l + middle dot = ŀ
      d = charCodeAt(t, i);
      if (d === 0x306 && (c === 0x438 || c === 0x418)) { c++; i++; }
      else if ((d === 0xB7 || d === 0x387) && (c === 0x6C || c === 0x4C)) { c = c === 0x6C ? 0x140 : 0x13F; i++; }
    }
    pos = i;
    v = c < T.TBL ? T.K[c] : mapGet(T.M, c);
    if (v === undefined || v === -1) { // implicit weights: two CEs, in code point order
      const symbol = c >= 0x2190 && c < 0x2C00 || c >= 0x3000 && c < 0x3040;
      pend = (T.CONT + (c & 0xFFF) + 1) << 16;
      return (((symbol ? T.SYMFB : T.LETFB) + (c >> 12)) << 16) | 0x101;
    }
    if (v >= 0) return v;
    v = -v; xi = (v >> 4) + 1; xn = (v >> 4) + (v & 15);
    return T.X[v >> 4];
  }
  function nextLive() { // the next CE that counts (ignorePunctuation drops variable CEs and the marks after them)
    for (;;) {
      const ce = nextCE(), p = ce >>> 16;
      if (ce <= 0) { if (ce < 0) return -1; continue; }
      if (shifted) {
        if (p === 0) { if (av) continue; }
        else if (p <= T.VARTOP) { av = 1; continue; }
        else av = 0;
      }
      return ce;
    }
  }
  function start(text) { str = text; pos = xi = xn = pend = nd = av = 0; }
  function tooManyDigits() {
    return new TypeErrorCtor("String.prototype.localeCompare: with numeric, a run of more than 254 digits is not " +
      "ordered here (ICU splits it into pieces of 254). Compare such numbers as BigInt or by length, then as text.");
  }

  // ---- keys: primary weights [+ U+0001 + secondary weights], and for a tie the tertiary or case level ----
  // Scratch for a key being made. Lists (which no accessor a program sets
  // on Array.prototype reaches, and which QuickJS writes fastest) up to
  // LISTED units; past it typed, 2 bytes a unit rather than 8, so that a
  // long string's key fits where the string does. Given back after a key
  // that made it large.
  const LISTED = 16384;
  let P = list(), S = list(), pRoom = LISTED, sRoom = LISTED;
  function grown(units, room, n) {
    const into = new Uint16ArrayCtor(room);
    for (let i = 0; i < n; i++) into[i] = units[i];
    return into;
  }
  function growP(n) { // room past P[0..n), which is kept
    const room = pRoom * 2 > n + 64 ? pRoom * 2 : n + 64;
    P = grown(P, room, n); pRoom = room;
  }
  function growS(n) {
    const room = sRoom * 2 > n + 64 ? sRoom * 2 : n + 64;
    S = grown(S, room, n); sRoom = room;
  }
  function push(n, text) { // P[n..] = text's units
    if (n + text.length > pRoom) growP(n);
    for (let i = 0; i < text.length; i++) P[n++] = charCodeAt(text, i);
    return n;
  }
  function text(n) { // String.fromCharCode of P[0..n), in pieces apply can take
    let out;
    if (pRoom === LISTED) {
      P.length = n;
      if (n <= 8192) out = apply(fromCharCode, null, P);
      else {
        const pieces = list();
        for (let i = 0; i < n; i += 8192) pieces[pieces.length] = apply(fromCharCode, null, arraySlice(P, i, i + 8192));
        out = join(pieces, "");
      }
    } else {
      const pieces = list();
      for (let i = 0; i < n; i += 8192) pieces[pieces.length] = apply(fromCharCode, null, subarray(P, i, i + 8192 < n ? i + 8192 : n));
      out = join(pieces, "");
      P = list(); pRoom = LISTED;
    }
    if (sRoom !== LISTED) { S = list(); sRoom = LISTED; }
    return out;
  }
  function keyOf(a, withSecondary) {
    const { V, PKEY, SKEY, NUMW, W, FAST, VAR, DIGIT, CONT } = T;
    let np = 0, ns = 0, i, j, e, c, v, ce;
    const n = a.length;
    for (i = 0; i < n; i++) { // table lookups while the characters need no context
      c = charCodeAt(a, i);
      if (c >= FAST) break;
      if (np + 64 > pRoom) growP(np);
      if (ns + 64 > sRoom) growS(ns);
      v = V[c];
      if (v > 0) {
        if (v & VAR && shifted) continue;
        if (v & DIGIT && numeric) { // a digit run: a length weight, then the digits without leading zeros
          for (e = i; (c = charCodeAt(a, e)) >= 48 && c <= 57; e++);
          if (e - i > 254) throw tooManyDigits();
          if (c >= FAST) break; // a fullwidth digit next: the general way
          for (j = i; j < e - 1 && charCodeAt(a, j) === 48; j++); // leading zeros, but one of all zeros
          v = NUMW[e - j];
          P[np++] = v & 0xFFFF; P[np++] = v >>> 16; S[ns++] = 2;
          for (; j < e; j++) { P[np++] = charCodeAt(a, j); S[ns++] = 2; }
          i = e - 1;
          continue;
        }
        P[np++] = v & 0x7F;
        if (v & 0x3FF80) P[np++] = 0x1FFF + (v >> 7 & 0x7FF);
        S[ns++] = 2;
        if (v & 0x3FC0000) S[ns++] = v >> 18 & 0xFF;
      } else if (v === -1) {
        np = push(np, PKEY[c]);
        for (let k = 0, sk = SKEY[c]; k < sk.length; k++) S[ns++] = charCodeAt(sk, k);
      } else if (v) break;
    }
    if (i < n) { // the general way, with the CE iterator
      if (hasMark(a)) { checkMarks(a); a = normalize(a, "NFD"); } // combining marks in canonical order
      start(a); np = ns = 0;
      while ((ce = nextLive()) > 0) {
        if (np + 8 > pRoom) growP(np);
        if (ns + 8 > sRoom) growS(ns);
        if (ce >>> 16 > CONT) P[np++] = 0x100 + (ce >>> 16) - CONT;
        else if (ce >>> 16) np = push(np, W[ce >>> 16]);
        if (ce & 0xFF00) S[ns++] = ((ce >> 8) & 0xFF) + 1;
      }
    }
    if (withSecondary) {
      if (np + ns + 1 > pRoom) growP(np + ns + 1);
      P[np++] = 1;
      for (let k = 0; k < ns; k++) P[np++] = S[k];
    }
    return text(np);
  }
  // The tertiary (level 3) or case level (4) of a string whose keys tie,
  // through `table` (caseFirst's weights), a unit per weight that counts.
  function tieKey(a, level, table) {
    if (hasMark(a)) a = normalize(a, "NFD"); // keyOf has checked its marks
    start(a);
    let n = 0, x;
    for (;;) {
      do x = nextLive(); while (x > 0 && !(level === 3 ? x & 0xFF : x >>> 16));
      if (x < 0) break;
      if (n + 8 > pRoom) growP(n);
      P[n++] = table[x & 0xFF];
    }
    return text(n);
  }

  // ---- the keys of this run, per option set: at most KEPT strings, KEPT_UNITS units of keys ----
  const KEPT = 20000, KEPT_UNITS = 1 << 21;
  let caches = null, ties = null, cached = 0, units = 0;
  function forget() {
    cached = units = 0;
    caches = [create(null), create(null), create(null), create(null), create(null), create(null), create(null), create(null)];
    ties = list();
  }
  function kept(cache, a, key) {
    if (key.length < KEPT_UNITS >> 4) { cache[a] = key; cached++; units += key.length; }
    return key;
  }

  function compare(a, b, sensitivity, caseFirst) {
    // sensitivity: 0 case, 1 base, 2 accent, 3 variant; caseFirst: 0 false, 1 upper, 2 lower
    if (T === null) { T = build(); forget(); collationTable(T.V); }
    if (cached > KEPT || units > KEPT_UNITS) forget();
    const options = (numeric ? 2 : 0) + (shifted ? 1 : 0);
    const cache = caches[(sensitivity >= 2 ? 4 : 0) + options];
    let ka = cache[a], kb = cache[b];
    if (ka === undefined) ka = kept(cache, a, keyOf(a, sensitivity >= 2));
    if (kb === undefined) kb = kept(cache, b, keyOf(b, sensitivity >= 2));
    if (ka !== kb) return ka < kb ? -1 : 1;
    if (sensitivity === 1 || sensitivity === 2) return 0;
    const level = sensitivity === 3 ? 3 : 4, which = level === 3 ? caseFirst : 3 + (caseFirst === 1 ? 1 : 0);
    const table = which < 3 ? T.TK[which] : T.CK[which - 3];
    const tie = ties[which * 4 + options] || (ties[which * 4 + options] = create(null));
    let ta = tie[a], tb = tie[b];
    if (ta === undefined) ta = kept(tie, a, tieKey(a, level, table));
    if (tb === undefined) tb = kept(tie, b, tieKey(b, level, table));
    return ta === tb ? 0 : ta < tb ? -1 : 1;
  }

  // ---- the locale and the options, as Intl.Collator reads them ----
  // ToString: a Symbol throws, as it does for the built-in. Not a template
  // literal: QuickJS compiles one to a call of String.prototype.concat,
  // which a program can replace.
  function toText(value) {
    if (typeof value === "symbol") throw new TypeErrorCtor("Cannot convert a Symbol value to a string");
    return typeof value === "string" ? value : StringCtor(value);
  }
  function isAlpha(part) {
    for (let k = 0; k < part.length; k++) {
      const c = charCodeAt(part, k) | 0x20;
      if (c < 97 || c > 122) return false;
    }
    return true;
  }
  function isDigits(part) {
    for (let k = 0; k < part.length; k++) {
      const c = charCodeAt(part, k);
      if (c < 48 || c > 57) return false;
    }
    return true;
  }
  // The subtags of a well-formed language tag (BCP 47: a language, then a
  // script, a region, variants and extensions, each of its own shape),
  // lowercased; null if it is not one.
  function subtags(tag) {
    const parts = list();
    let from = 0;
    for (let i = 0; i <= tag.length; i++) {
      if (i < tag.length && tag[i] !== "-") continue;
      const part = toLowerCase(slice(tag, from, i));
      if (part.length < 1 || part.length > 8) return null;
      for (let k = 0; k < part.length; k++) {
        const c = charCodeAt(part, k);
        if (!(c >= 97 && c <= 122 || c >= 48 && c <= 57)) return null;
      }
      parts[parts.length] = part;
      from = i + 1;
    }
    const first = parts[0];
    if (!isAlpha(first) || !(first.length >= 2 && first.length <= 3 || first.length >= 5)) return null;
    let at = 1;
    if (at < parts.length && parts[at].length === 4 && isAlpha(parts[at])) at++; // script
    if (at < parts.length && (parts[at].length === 2 && isAlpha(parts[at]) || parts[at].length === 3 && isDigits(parts[at]))) at++; // region
    for (; at < parts.length && parts[at].length > 1; at++) // variants
      if (!(parts[at].length >= 5 || parts[at].length === 4 && isDigits(slice(parts[at], 0, 1)))) return null;
    while (at < parts.length) { // extensions and private use: a singleton, then subtags of 2 to 8 (1 to 8 after x)
      const singleton = parts[at++];
      if (singleton.length !== 1) return null;
      const from2 = at;
      while (at < parts.length && parts[at].length > 1 || singleton === "x" && at < parts.length) at++;
      if (at === from2) return null;
    }
    return parts;
  }
  function checkLocales(locales) {
    let tags;
    if (typeof locales === "string") { tags = list(); tags[0] = locales; }
    else if (locales === null) throw new TypeErrorCtor("String.prototype.localeCompare: locales must be a string, an array of strings or undefined, not null");
    else {
      const o = ObjectCtor(locales);
      const length = lengthOf(o);
      tags = list();
      for (let i = 0; i < length; i++) if (i in o) {
        const tag = o[i];
        if (typeof tag !== "string" && (typeof tag !== "object" || tag === null))
          throw new TypeErrorCtor(`String.prototype.localeCompare: a locale must be a string, not ${tag === null ? "null" : typeof tag}`);
        tags[tags.length] = toText(tag);
      }
    }
    if (tags.length === 0) return;
    let parts = null;
    for (let i = tags.length - 1; i >= 0; i--)
      if ((parts = subtags(tags[i])) === null) throw new RangeErrorCtor(`Incorrect locale information provided: ${stringify(tags[i])}`);
    // "default" is V8's default locale, en-US (see numberformat.js).
    if (parts.length === 1 && parts[0] === "default") return;
    // The first locale (whose subtags `parts` are) decides, as ICU's lookup
    // would if it had them all: a language, a script (Latn) and a region at most.
    const tag = tags[0];
    let at = 1;
    if (at < parts.length && parts[at] === "latn") at++;
    const region = at < parts.length && (parts[at].length === 2 || parts[at].length === 3 && isDigits(parts[at])) ? parts[at++] : "";
    if (!LANGUAGES[parts[0]] || parts[0] === "fr" && region === "ca")
      throw new TypeErrorCtor(`String.prototype.localeCompare: the order of the locale ${stringify(tag)} is not ` +
        "available: this sandbox has no locale data and collates in English's order, which it gives for undefined and " +
        "for en, de, fr (not fr-CA), it, pt, nl, ca, id, ms, ga and sw. For code-unit order compare with < and >.");
    if (at < parts.length)
      throw new TypeErrorCtor(`String.prototype.localeCompare: the locale ${stringify(tag)} has ` +
        (parts[at].length === 1 ? `an extension (-${parts[at]}-), which this sandbox does not read: pass options such as { numeric: true } instead` :
          `a subtag (-${parts[at]}) whose order is not available here`));
  }
  function option(options, name, allowed) {
    const value = options[name];
    if (value === undefined) return undefined;
    const s = toText(value);
    for (let i = 0; i < allowed.length; i++) if (allowed[i] === s) return s;
    throw new RangeErrorCtor(`Value ${s} out of range for Intl.Collator options property ${name}`);
  }

  // The options' values as `compare` takes them (an option left out reads
  // as undefined: the default).
  const CASE_FIRST = { __proto__: null, upper: 1, lower: 2, false: 0, undefined: 0 };
  const SENSITIVITY = { __proto__: null, case: 0, base: 1, accent: 2, variant: 3, undefined: 3 };
  const localeCompare = {
    localeCompare(that, locales, options) {
      // The commonest call, `a.localeCompare(b)` in a sort's comparator,
      // answered by the primary weights where they differ: no option to
      // read, no call more.
      if (T !== null && locales === undefined && options === undefined && typeof this === "string" && typeof that === "string") {
        if (this === that) return 0;
        const order = comparePrimaries(this, that, false);
        if (order !== 0) return order;
      }
      if (this === undefined || this === null)
        throw new TypeErrorCtor("String.prototype.localeCompare called on null or undefined");
      const a = typeof this === "string" ? this : toText(this), b = typeof that === "string" ? that : toText(that);
      if (locales !== undefined) checkLocales(locales);
      // Read into locals: a getter may compare strings itself.
      let sensitivity = 3, caseFirst = 0, numericOn = false, shiftedOn = false;
      if (options !== undefined) {
        if (options === null) throw new TypeErrorCtor("String.prototype.localeCompare: options must be an object or undefined, not null");
        const o = ObjectCtor(options);
        if (option(o, "usage", ["sort", "search"]) === "search")
          throw new TypeErrorCtor("String.prototype.localeCompare: usage \"search\" is not available here; only \"sort\"");
        option(o, "localeMatcher", ["lookup", "best fit"]);
        const collation = o.collation;
        if (collation !== undefined && toText(collation) !== "default")
          throw new TypeErrorCtor(`String.prototype.localeCompare: the collation ${stringify(toText(collation))} is not available here`);
        numericOn = o.numeric !== undefined && !!o.numeric;
        caseFirst = CASE_FIRST[option(o, "caseFirst", ["upper", "lower", "false"])];
        sensitivity = SENSITIVITY[option(o, "sensitivity", ["base", "accent", "case", "variant"])];
        shiftedOn = o.ignorePunctuation !== undefined && !!o.ignorePunctuation;
      }
      return ordered(a, b, sensitivity, caseFirst, numericOn, shiftedOn);
    },
  }.localeCompare;
  // The order of a and b under options already read. Most pairs differ in
  // a primary weight, which the native finds without a key for strings of
  // characters V gives alone (web/collate.rs); the keys decide the rest.
  function ordered(a, b, sensitivity, caseFirst, numericOn, shiftedOn) {
    if (a === b) return 0;
    if (T !== null && !numericOn) {
      const order = comparePrimaries(a, b, shiftedOn);
      if (order !== 0) return order;
    }
    numeric = numericOn; shifted = shiftedOn;
    return compare(a, b, sensitivity, caseFirst);
  }
  // For Intl.Collator (numberformat.js), whose options are read once, when
  // it is made (through localeCompare, which refuses what it cannot do):
  // its compare calls this with their values as localeCompare reads them.
  shared.collate = ordered;
  shared.collateOptions = (sensitivity, caseFirst) => [SENSITIVITY[sensitivity], CASE_FIRST[caseFirst]];
  defineProperty(localeCompare, "length", { value: 1 });
  defineProperty(String.prototype, "localeCompare", { value: localeCompare, writable: true, enumerable: false, configurable: true });
})
