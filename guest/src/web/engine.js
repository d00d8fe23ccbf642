// Where QuickJS's answer differs from V8's in text a program reads and
// returns, and V8's is as exact here:
// - A date's string names its time zone, as V8's does: the sandbox's is
//   UTC, so `String(date)` and `toTimeString()` end in
//   " (Coordinated Universal Time)" ("Mon Jul 01 2024 12:00:00 GMT+0000
//   (Coordinated Universal Time)"). QuickJS stops at the offset. (`Date()`
//   called without `new` keeps QuickJS's text: it does not go through
//   `toString`.)
// - `Promise.any`'s AggregateError, when every promise rejected, has V8's
//   message, "All promises were rejected", where QuickJS's has none (a
//   program that returns `e.message` answered "").
// - `text.replace(/re/g, "...")` of a long text is made as it goes.
//   QuickJS's keeps every match's result (an array with its index, input
//   and groups: about 150 bytes) until it has them all, so 400,000 matches
//   of `/\s+/g` in 2 MB of text ran out of 64 MiB, which the text and its
//   answer fit many times over. Here each match is replaced as it is
//   found, and the pieces are joined a few thousand at a time. Only where
//   no program code could tell the difference: a RegExp of the standard
//   kind (its prototype's `exec`, `flags` and flag getters the built-in
//   ones, no property of its own but `lastIndex`, which it may write), a
//   global one, a string given as the text and as the replacement; and
//   only for a text of 256K characters or more, where the memory counts:
//   QuickJS's own path is faster (100,000 matches replaced by a string:
//   70 ms there, 108 ms here).
// - `text.split(/re/)` of a text of 1K characters or more searches for
//   each separator, where QuickJS tries every position (below).
(function (native, shared) {
  "use strict";
  const { defineProperty, getPrototypeOf, setPrototypeOf } = Object;
  const hasOwn = Object.hasOwn;
  const apply = Reflect.apply;
  const DateProto = Date.prototype;
  const ZONE = " (Coordinated Universal Time)";
  const method = (owner, name, f) =>
    defineProperty(owner, name, { __proto__: null, value: f, writable: true, enumerable: false, configurable: true });

  for (const name of ["toString", "toTimeString"]) {
    const plain = DateProto[name];
    const f = {
      [name]() {
        const text = apply(plain, this, []);
        return text === "Invalid Date" ? text : text + ZONE;
      },
    }[name];
    method(DateProto, name, f);
  }

  const PromiseCtor = Promise;
  const any = PromiseCtor.any, then = PromiseCtor.prototype.then;
  const AggregateProto = AggregateError.prototype;
  const named = (e) => {
    if (typeof e === "object" && e !== null && getPrototypeOf(e) === AggregateProto && !hasOwn(e, "message")) {
      defineProperty(e, "message", {
        __proto__: null,
        value: "All promises were rejected",
        writable: true,
        enumerable: false,
        configurable: true,
      });
    }
    throw e;
  };
  method(PromiseCtor, "any", {
    any(iterable) {
      return apply(then, apply(any, this, [iterable]), [undefined, named]);
    },
  }.any);

  const gopd = Object.getOwnPropertyDescriptor, ownKeys = Reflect.ownKeys;
  const RegExpProto = RegExp.prototype;
  const symReplace = Symbol.replace;
  const nativeReplace = RegExpProto[symReplace], nativeExec = RegExpProto.exec;
  const REGEXP_CLASS = native.classId(/a/);
  // The getters the `flags` getter reads, and it: all must be the built-ins.
  const FLAG_GETTERS = ["flags", "hasIndices", "global", "ignoreCase", "multiline", "dotAll", "unicode",
    "unicodeSets", "sticky"];
  const builtins = setPrototypeOf(FLAG_GETTERS.map((name) => gopd(RegExpProto, name).get), null);
  const globalOf = builtins[2], unicodeOf = builtins[6], unicodeSetsOf = builtins[7];
  const strSlice = String.prototype.slice, strIndexOf = String.prototype.indexOf;
  const strCharCodeAt = String.prototype.charCodeAt, arrayJoin = Array.prototype.join;
  const LONG = 262144, PIECES = 4096;

  function standard(rx) {
    if (native.classId(rx) !== REGEXP_CLASS || getPrototypeOf(rx) !== RegExpProto) return false;
    const own = ownKeys(rx);
    if (own.length !== 1 || own[0] !== "lastIndex" || !gopd(rx, "lastIndex").writable) return false;
    const exec = gopd(RegExpProto, "exec");
    if (exec === undefined || exec.value !== nativeExec) return false;
    for (let i = 0; i < FLAG_GETTERS.length; i++) {
      const d = gopd(RegExpProto, FLAG_GETTERS[i]);
      if (d === undefined || d.get !== builtins[i]) return false;
    }
    return true;
  }

  // A replacement text with `$` (GetSubstitution), read once into parts
  // (kind, value by turns): 0 text as written, 1 a capture by number, 2 the
  // match (`$&`), 3 the text before it (`` $` ``), 4 the text after it
  // (`$'`), 5 a named group (`$<name>`). `$$` is a `$`; `$0`, a capture
  // past the last, and `$<` without groups or a `>` are written as they are.
  function parts(template, captures, named) {
    const out = setPrototypeOf([], null);
    const literal = (text) => {
      if (text === "") return;
      if (out.length > 0 && out[out.length - 2] === 0) out[out.length - 1] += text;
      else { out[out.length] = 0; out[out.length] = text; }
    };
    let from = 0, i = apply(strIndexOf, template, ["$"]);
    while (i >= 0 && i < template.length - 1) {
      const c = template[i + 1];
      let kind = -1, value, width = 2;
      if (c === "$") { kind = 0; value = "$"; }
      else if (c === "&") kind = 2;
      else if (c === "`") kind = 3;
      else if (c === "'") kind = 4;
      else if (c >= "0" && c <= "9") {
        // Two digits if they name a capture, else one.
        const one = apply(strCharCodeAt, template, [i + 1]) - 48;
        const second = i + 2 < template.length ? apply(strCharCodeAt, template, [i + 2]) - 48 : -1;
        const two = second >= 0 && second <= 9 ? one * 10 + second : -1;
        if (two >= 1 && two <= captures) { kind = 1; value = two; width = 3; }
        else if (one >= 1 && one <= captures) { kind = 1; value = one; }
      } else if (c === "<" && named) {
        const close = apply(strIndexOf, template, [">", i + 2]);
        if (close >= 0) { kind = 5; value = apply(strSlice, template, [i + 2, close]); width = close - i + 1; }
      }
      if (kind < 0) {
        i = apply(strIndexOf, template, ["$", i + 1]);
        continue;
      }
      literal(apply(strSlice, template, [from, i]));
      if (kind === 0) literal(value);
      else { out[out.length] = kind; out[out.length] = value; }
      from = i + width;
      i = apply(strIndexOf, template, ["$", from]);
    }
    literal(apply(strSlice, template, [from]));
    return out;
  }

  // One match's replacement, from `parts`.
  function replacement(parts, matched, text, position, match) {
    let out = "";
    for (let k = 0; k < parts.length; k += 2) {
      const kind = parts[k], value = parts[k + 1];
      let piece;
      if (kind === 0) piece = value;
      else if (kind === 1) piece = match[value];
      else if (kind === 2) piece = matched;
      else if (kind === 3) piece = apply(strSlice, text, [0, position]);
      else if (kind === 4) piece = apply(strSlice, text, [position + matched.length]);
      else piece = match.groups[value];
      if (piece !== undefined) out += piece;
    }
    return out;
  }

  method(RegExpProto, symReplace, {
    [symReplace](string, replaceValue) {
      if (typeof string !== "string" || string.length < LONG || typeof replaceValue !== "string" ||
          replaceValue === "" || !standard(this) || apply(globalOf, this, []) !== true) {
        return apply(nativeReplace, this, arguments);
      }
      const rx = this, text = string;
      const fullUnicode = apply(unicodeOf, rx, []) || apply(unicodeSetsOf, rx, []);
      const plain = apply(strIndexOf, replaceValue, ["$"]) < 0;
      // Read at the first match: how many captures and whether groups are
      // named is the same for every match of one RegExp.
      let template = null;
      rx.lastIndex = 0;
      const pieces = setPrototypeOf([], null), joined = setPrototypeOf([], null);
      let next = 0;
      for (;;) {
        const match = apply(nativeExec, rx, [text]);
        if (match === null) break;
        const matched = match[0], position = match.index;
        if (matched.length === 0) {
          // Always a character further (a code point with `u` or `v`).
          const at = rx.lastIndex;
          const c = apply(strCharCodeAt, text, [at]);
          rx.lastIndex = at + (fullUnicode && c >= 0xd800 && c <= 0xdbff &&
            (apply(strCharCodeAt, text, [at + 1]) & 0xfc00) === 0xdc00 ? 2 : 1);
        }
        if (position < next) continue;
        pieces[pieces.length] = apply(strSlice, text, [next, position]);
        if (plain) pieces[pieces.length] = replaceValue;
        else {
          if (template === null) template = parts(replaceValue, match.length - 1, match.groups !== undefined);
          pieces[pieces.length] = replacement(template, matched, text, position, match);
        }
        next = position + matched.length;
        if (pieces.length >= PIECES) {
          joined[joined.length] = apply(arrayJoin, pieces, [""]);
          pieces.length = 0;
        }
      }
      pieces[pieces.length] = apply(strSlice, text, [next]);
      joined[joined.length] = apply(arrayJoin, pieces, [""]);
      return joined.length === 1 ? joined[0] : apply(arrayJoin, joined, [""]);
    },
  }[symReplace]);

  // `text.split(/re/)` searches for each separator. The standard's
  // splitter is a sticky copy of the RegExp, tried at every position in
  // turn, and QuickJS does just that, a call of `exec` a character: 3.3
  // MB split by `/\r?\n/` took 350 ms (V8: 13). A search from a position
  // finds the first match at or after it, which is where those tries
  // first succeed, so a global copy searched from each position gives
  // the same pieces with one call a separator: 3.3 MB by `/\r?\n/` in
  // 160 ms, by `/,/` (no match) 44 ms (290 before). A separator every few
  // characters costs a little more than QuickJS's way (1 MB of words by
  // `/\s+/`: 168 against 150 ms), and with one every character or two
  // twice as much: so when the first 64 pieces took less than 12
  // characters each, the split is handed to QuickJS's way, from the
  // start (nothing of this one has been seen). Only for a RegExp of the
  // standard kind whose species is RegExp (so no program code runs to
  // make or use the copy), a string, and a limit that is absent or a
  // number; other calls take QuickJS's own path.
  const symSplit = Symbol.split, symSpecies = Symbol.species;
  const nativeSplit = RegExpProto[symSplit];
  const RegExpCtor = RegExp, speciesOf = gopd(RegExpCtor, symSpecies).get;
  const sourceOf = gopd(RegExpProto, "source").get, flagsOf = builtins[0];
  const strReplaceAll = String.prototype.replaceAll;
  const SPLIT_LONG = 1024, DENSE_CHECK = 64, DENSE_CHARS = 12;
  const ArrayProto = Array.prototype;
  // The standard's copy is made by the RegExp's species from the RegExp
  // itself, which reads its `constructor`, the species getter and (to
  // tell it is a RegExp) its `Symbol.match`: none may be the program's.
  const symMatch = Symbol.match;
  function plainSpecies() {
    const c = gopd(RegExpProto, "constructor"), s = gopd(RegExpCtor, symSpecies);
    const source = gopd(RegExpProto, "source"), match = gopd(RegExpProto, symMatch);
    return c !== undefined && c.value === RegExpCtor && s !== undefined && s.get === speciesOf &&
      source !== undefined && source.get === sourceOf && match !== undefined && "value" in match;
  }
  method(RegExpProto, symSplit, {
    [symSplit](string, limit) {
      if (typeof string !== "string" || string.length < SPLIT_LONG ||
          (limit !== undefined && typeof limit !== "number") || !standard(this) || !plainSpecies()) {
        return apply(nativeSplit, this, arguments);
      }
      const text = string, size = text.length;
      const lim = limit === undefined ? 4294967295 : limit >>> 0;
      // Without a prototype while it is filled (a setter the program put
      // on `Array.prototype` must not see the pieces), an Array's after.
      const out = setPrototypeOf([], null);
      if (lim === 0) return setPrototypeOf(out, ArrayProto);
      const flags = apply(flagsOf, this, []);
      const fullUnicode = apply(unicodeOf, this, []) || apply(unicodeSetsOf, this, []);
      // The copy: global, not sticky (the standard's is sticky).
      const finder = new RegExpCtor(apply(sourceOf, this, []),
        apply(strReplaceAll, apply(strReplaceAll, flags, ["y", ""]), ["g", ""]) + "g");
      const advance = (at) => {
        const c = apply(strCharCodeAt, text, [at]);
        return at + (fullUnicode && c >= 0xd800 && c <= 0xdbff &&
          (apply(strCharCodeAt, text, [at + 1]) & 0xfc00) === 0xdc00 ? 2 : 1);
      };
      let p = 0, q = 0;
      while (q < size) {
        finder.lastIndex = q;
        // The copy's own `exec` is the built-in (checked above, and no
        // program code runs in this loop).
        const match = finder.exec(text);
        if (match === null) break;
        const at = match.index;
        if (at >= size) break;
        let e = finder.lastIndex;
        if (e > size) e = size;
        if (e === p) {
          q = advance(at);
          continue;
        }
        out[out.length] = apply(strSlice, text, [p, at]);
        if (out.length === lim) return setPrototypeOf(out, ArrayProto);
        p = e;
        for (let i = 1; i < match.length; i++) {
          out[out.length] = match[i];
          if (out.length === lim) return setPrototypeOf(out, ArrayProto);
        }
        q = p;
        // Separators every few characters: QuickJS's way is the faster
        // there (a call a separator costs more than its tries between
        // them), and nothing of this one has been seen.
        if (out.length === DENSE_CHECK && p < DENSE_CHECK * DENSE_CHARS) return apply(nativeSplit, this, arguments);
      }
      out[out.length] = apply(strSlice, text, [p, size]);
      return setPrototypeOf(out, ArrayProto);
    },
  }[symSplit]);
})
