// Not a web API: the evaluator's look at a value the program returned.
// JSON.stringify writes some objects that hold data as `{}` (a Map, a Set,
// an Error, a RegExp, an un-awaited Promise, an ArrayBuffer...), so a
// program that returns `{ error: e }` or a Map of results hands its host an
// empty object with `ok: true`. `shared.lossy(value)` finds the first such
// object, for the console to warn of: "an Error at .error", or undefined.
//
// It walks as JSON.stringify does (arrays by index, objects by their own
// enumerable string keys; an object with a `toJSON` is whatever that
// gives, so it is not looked into), without running a getter, a `toJSON`
// or a Proxy's trap, and gives up quietly after LOOKS properties: the
// warning is a help, never a cost a large result must pay in full.
(function (native, shared) {
  "use strict";
  const { classId } = native;
  const { getOwnPropertyDescriptor: gopd, getPrototypeOf, keys } = Object;
  const isArray = Array.isArray;
  const apply = Reflect.apply;
  const arrayPush = Array.prototype.push, arrayPop = Array.prototype.pop;
  const stringify = JSON.stringify;
  const charCodeAt = String.prototype.charCodeAt;
  const LOOKS = 20000;

  // What each class is, learnt from one object of each (no id is written
  // down); a class not here is walked as JSON.stringify walks it.
  const lost = [];
  const learn = (what, v) => { lost[classId(v)] = what; };
  learn("a Map", new Map());
  learn("a Set", new Set());
  learn("a WeakMap", new WeakMap());
  learn("a WeakSet", new WeakSet());
  learn("an Error", new Error());
  learn("a RegExp", /x/);
  learn("a Promise (not awaited?)", Promise.resolve());
  learn("an ArrayBuffer", new ArrayBuffer(0));
  learn("a DataView", new DataView(new ArrayBuffer(0)));
  learn("a generator", (function* () {})());
  const proxy = classId(new Proxy({}, {}));
  // Typed arrays are numbers by index: nothing in them to find.
  const numbers = [];
  for (const T of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
    Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]) {
    numbers[classId(new T(0))] = true;
  }

  // A data property's value, own or inherited; undefined for an accessor.
  function dataOrInherited(o, k) {
    for (let p = o, i = 0; p !== null && i < 64; p = getPrototypeOf(p), i++) {
      const d = gopd(p, k);
      if (d !== undefined) return "value" in d ? d.value : undefined;
    }
    return undefined;
  }

  // No regular expression: a program may have replaced RegExp's methods.
  function identifier(k) {
    if (k.length === 0) return false;
    for (let i = 0; i < k.length; i++) {
      const c = apply(charCodeAt, k, [i]);
      const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
      if (!letter && !(i > 0 && c >= 48 && c <= 57)) return false;
    }
    return true;
  }

  function step(path, k) {
    return typeof k === "number" ? path + "[" + k + "]"
      : identifier(k) ? path + "." + k
      : path + "[" + stringify(k) + "]";
  }

  shared.lossy = function lossy(value) {
    const work = [value], paths = [""];
    let looks = 0;
    while (work.length > 0 && looks < LOOKS) {
      const o = apply(arrayPop, work, []), path = apply(arrayPop, paths, []);
      const id = classId(o);
      if (id === proxy) continue;
      if (typeof dataOrInherited(o, "toJSON") === "function") continue;
      if (lost[id] !== undefined) return lost[id] + (path === "" ? "" : " at " + path);
      if (numbers[id]) continue;
      const list = isArray(o);
      const ks = list ? undefined : keys(o);
      const n = list ? o.length : ks.length;
      // Last first, so that the first found is the first JSON writes.
      for (let i = n - 1; i >= 0 && looks < LOOKS; i--, looks++) {
        const k = list ? i : ks[i];
        const d = gopd(o, list ? "" + i : k);
        if (d === undefined || !("value" in d)) continue;
        const v = d.value;
        if (typeof v === "object" && v !== null) {
          apply(arrayPush, work, [v]);
          apply(arrayPush, paths, [step(path, k)]);
        }
      }
    }
    return undefined;
  };
});
