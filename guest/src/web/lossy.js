// Not a web API: the evaluator's look at a value the program returned.
// JSON.stringify writes some objects that hold data as `{}` (a Map, a Set,
// an Error, a RegExp, an un-awaited Promise, an ArrayBuffer...), so a
// program that returns `{ error: e }` or a Map of results hands its host an
// empty object with `ok: true`. `shared.lossy(value)` finds the first such
// object, for the console to warn of: `["an Error", ".error"]` (the path
// empty for the value itself), or undefined.
//
// It walks as JSON.stringify does (arrays by index, objects by their own
// enumerable string keys; an object with a `toJSON` is whatever that
// gives, so it is not looked into), breadth first, without running a
// getter, a `toJSON` or a Proxy's trap, and gives up quietly after LOOKS
// properties: the warning is a help, never a cost a large result must pay
// in full.
(function (native, shared) {
  "use strict";
  const { classId } = native;
  const { getOwnPropertyDescriptor: gopd, getPrototypeOf, keys } = Object;
  const isArray = Array.isArray;
  const apply = Reflect.apply;
  const arrayPush = Array.prototype.push;
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
  const mapId = classId(new Map()), setId = classId(new Set());
  const mapSize = gopd(Map.prototype, "size").get, setSize = gopd(Set.prototype, "size").get;
  // Typed arrays are numbers by index: nothing in them to find.
  const numbers = [];
  for (const T of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
    Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]) {
    numbers[classId(new T(0))] = true;
  }

  // Whether `o` may have a `toJSON` (own or inherited, a data property
  // or a getter): then JSON writes whatever it gives, and `o` is not
  // looked into. A Proxy on the way is not asked (that would run its
  // traps): it may.
  function mayHaveToJSON(o) {
    for (let p = o, i = 0; p !== null && i < 64; p = getPrototypeOf(p), i++) {
      if (classId(p) === proxy) return true;
      const d = gopd(p, "toJSON");
      if (d !== undefined) return !("value" in d) || typeof d.value === "function";
    }
    return false;
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

  // Breadth first, so that a long array at the top spends the budget on
  // its first items, not on listing all of them.
  shared.lossy = function lossy(value) {
    const work = [value], paths = [""];
    let looks = 0;
    // At most LOOKS properties are listed, and so at most LOOKS objects
    // queued; each queued one is still looked at.
    for (let next = 0; next < work.length; next++) {
      const o = work[next], path = paths[next];
      work[next] = undefined;
      const id = classId(o);
      if (id === proxy) continue;
      if (mayHaveToJSON(o)) continue;
      if (lost[id] !== undefined) {
        // An empty Map or Set loses nothing.
        if (id === mapId && apply(mapSize, o, []) === 0) continue;
        if (id === setId && apply(setSize, o, []) === 0) continue;
        return [lost[id], path];
      }
      if (numbers[id] || looks >= LOOKS) continue;
      const list = isArray(o);
      const ks = list ? undefined : keys(o);
      const n = list ? o.length : ks.length;
      for (let i = 0; i < n && looks < LOOKS; i++, looks++) {
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
