// Locale formatting is exact or absent, never silently wrong. The guest has
// no locale data (ICU would more than double its size): numbers are
// formatted as en-US, exactly as ICU does (numberformat.js, which also
// makes `Intl`), dates as en-US in UTC, the sandbox's only time zone
// (datetimeformat.js), strings compare in English order (collate.js), and
// every other method whose answer depends on a locale throws a TypeError
// that says so and names what to use instead, with or without arguments:
// QuickJS's own versions answer as if there were no locale, which a reader
// would take for a locale's and be misled. toLocaleUpperCase/
// toLocaleLowerCase keep their locale-independent Unicode mapping, which
// is every locale's but those of Turkish, Azeri, Lithuanian and (upper
// case) Greek: with one of those they throw.
(function (native, shared) {
  "use strict";
  const { defineProperty, getPrototypeOf } = Object;
  const toUpperCase = String.prototype.toUpperCase;
  const toLowerCase = String.prototype.toLowerCase;
  const apply = Reflect.apply;

  const WHY = "this sandbox has no locale or time-zone data for it";
  function refuse(owner, name, instead) {
    const message = `${name} is not available: ${WHY}. ${instead}`;
    const f = { [name.split(".").pop()]() { throw new TypeError(message); } }[name.split(".").pop()];
    defineProperty(owner, name.split(".").pop(), { value: f, writable: true, enumerable: false, configurable: true });
  }
  refuse(getPrototypeOf(Uint8Array.prototype), "TypedArray.prototype.toLocaleString", "Use join().");

  // The languages whose case rules ICU applies beyond Unicode's own, for
  // each direction (Greek drops its accents in upper case only).
  const OWN_UPPER = { __proto__: null, tr: true, az: true, lt: true, el: true };
  const OWN_LOWER = { __proto__: null, tr: true, az: true, lt: true };
  const isArray = Array.isArray, charCodeAt = String.prototype.charCodeAt, slice = String.prototype.slice;
  // Whether `locales` (a tag, or a list whose first tag counts) names a
  // language whose case mapping is Unicode's: two or three letters, then
  // the end or a subtag.
  function plainCase(locales, own) {
    const tag = isArray(locales) ? locales[0] : locales;
    if (tag === undefined) return true;
    if (typeof tag !== "string") return false;
    let end = 0;
    for (; end < tag.length; end++) {
      const c = apply(charCodeAt, tag, [end]) | 0x20;
      if (c < 0x61 || c > 0x7a) break;
    }
    if (end < 2 || end > 3 || (end < tag.length && tag[end] !== "-")) return false;
    return !(apply(toLowerCase, apply(slice, tag, [0, end]), []) in own);
  }
  for (const [name, plain, own] of [["toLocaleUpperCase", toUpperCase, OWN_UPPER], ["toLocaleLowerCase", toLowerCase, OWN_LOWER]]) {
    const f = {
      [name](locales) {
        if (locales !== undefined && !plainCase(locales, own))
          throw new TypeError(`String.prototype.${name} with this locale is not available: ${WHY}. Use ${plain.name}().`);
        return apply(plain, this, []);
      },
    }[name];
    defineProperty(String.prototype, name, { value: f, writable: true, enumerable: false, configurable: true });
  }
  // QuickJS may define Intl partly in some builds: numberformat.js makes
  // the whole of it.
  if ("Intl" in globalThis) delete globalThis.Intl;
})
