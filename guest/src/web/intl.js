// Locale formatting is absent, never silently wrong. The guest has no
// locale data (ICU would more than double its size), so `Intl` stays
// undefined and every method whose answer depends on a locale throws a
// TypeError that says so and names what to use instead, with or without
// arguments: QuickJS's own versions answer as if there were no locale
// (1234567.891 for (1234567.891).toLocaleString()), which a reader would
// take for en-US and be misled. toLocaleUpperCase/toLocaleLowerCase keep
// their locale-independent Unicode mapping without an argument and throw
// with one. localeCompare is collate.js's: exact where it answers.
(function (native, shared) {
  "use strict";
  const { defineProperty, getPrototypeOf } = Object;
  const toUpperCase = String.prototype.toUpperCase;
  const toLowerCase = String.prototype.toLowerCase;
  const apply = Reflect.apply;

  const WHY = "this sandbox has no Intl (no locale data)";
  function refuse(owner, name, instead) {
    const message = `${name} is not available: ${WHY}. ${instead}`;
    const f = { [name.split(".").pop()]() { throw new TypeError(message); } }[name.split(".").pop()];
    defineProperty(owner, name.split(".").pop(), { value: f, writable: true, enumerable: false, configurable: true });
  }
  refuse(Number.prototype, "Number.prototype.toLocaleString",
    "Format numbers yourself: toFixed(n), toString(), or insert thousands separators by hand.");
  refuse(BigInt.prototype, "BigInt.prototype.toLocaleString", "Use toString().");
  refuse(Date.prototype, "Date.prototype.toLocaleString",
    "Use toISOString(), toUTCString(), or getFullYear()/getMonth()/... and format by hand.");
  refuse(Date.prototype, "Date.prototype.toLocaleDateString",
    "Use toISOString().slice(0, 10), or getFullYear()/getMonth()/getDate() and format by hand.");
  refuse(Date.prototype, "Date.prototype.toLocaleTimeString",
    "Use toISOString().slice(11, 19), or getHours()/getMinutes()/getSeconds() and format by hand.");
  refuse(Array.prototype, "Array.prototype.toLocaleString", "Use join() or JSON.stringify().");
  refuse(getPrototypeOf(Uint8Array.prototype), "TypedArray.prototype.toLocaleString", "Use join().");

  for (const [name, plain] of [["toLocaleUpperCase", toUpperCase], ["toLocaleLowerCase", toLowerCase]]) {
    const f = {
      [name](locales) {
        if (locales !== undefined)
          throw new TypeError(`String.prototype.${name} with a locale is not available: ${WHY}. Use ${plain.name}().`);
        return apply(plain, this, []);
      },
    }[name];
    defineProperty(String.prototype, name, { value: f, writable: true, enumerable: false, configurable: true });
  }
  // QuickJS may define Intl partly in some builds: never half of it.
  if ("Intl" in globalThis) delete globalThis.Intl;
})
