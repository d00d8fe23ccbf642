// The console: what Node's has that a program writes for its reader, each
// call one line of output (`table` one per row), with values shown as
// Node's `util.inspect` shows them on one line. `native.write(level,
// text)` writes one line at a level (0 log, 1 info, 2 warn, 3 error,
// 4 debug); the Rust side labels it and keeps it on one line.
//
// Showing a value runs none of the program's code: getters are shown as
// `[Getter]`, a Proxy as its target, a Promise by its state, names are read
// only as data properties; only `%j` (JSON.stringify, `toJSON` and all) and
// `%s` of a primitive run what the program asked for. What is used here is
// captured when this file runs, before any program, and no regular
// expression is used (their methods are the program's to replace).
(function (native, shared) {
  "use strict";
  const { write, classId, promiseState, promiseResult, proxyTarget } = native;
  const apply = Reflect.apply;
  const ownKeys = Reflect.ownKeys;
  const { getOwnPropertyDescriptor: gopd, getPrototypeOf, setPrototypeOf, defineProperty, is } = Object;
  // The walks' own lists: with no prototype, so that a setter the program
  // put on `Array.prototype` (an index, `length`) never runs when one
  // grows.
  const bare = (...items) => setPrototypeOf(items, null);
  const StringCtor = String, NumberCtor = Number, MapCtor = Map;
  const arrayPush = Array.prototype.push, arrayJoin = Array.prototype.join;
  const isArray = Array.isArray, objectKeys = Object.keys;
  const mapForEach = Map.prototype.forEach, setForEach = Set.prototype.forEach;
  const mapEntries = Map.prototype.entries, setValues = Set.prototype.values;
  const mapIteratorNext = getPrototypeOf(new Map().entries()).next;
  const setIteratorNext = getPrototypeOf(new Set().values()).next;
  const mapSize = gopd(Map.prototype, "size").get, setSize = gopd(Set.prototype, "size").get;
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapHas = Map.prototype.has;
  const mapDelete = Map.prototype.delete;
  const dateToISO = Date.prototype.toISOString, dateValue = Date.prototype.getTime;
  const regexpToString = RegExp.prototype.toString;
  const fnToString = Function.prototype.toString;
  const symbolToString = Symbol.prototype.toString;
  const numberValue = Number.prototype.valueOf, stringValue = String.prototype.valueOf;
  const booleanValue = Boolean.prototype.valueOf, bigintValue = BigInt.prototype.valueOf;
  const symbolValue = Symbol.prototype.valueOf;
  const strSlice = String.prototype.slice;
  const strIndexOf = String.prototype.indexOf, strStartsWith = String.prototype.startsWith;
  const strIncludes = String.prototype.includes, strRepeat = String.prototype.repeat;
  const strCharCodeAt = String.prototype.charCodeAt, strPadEnd = String.prototype.padEnd;
  const numToFixed = Number.prototype.toFixed, numToString = Number.prototype.toString;
  const stringify = JSON.stringify;
  const trunc = Math.trunc;
  const typedArrayProto = getPrototypeOf(Uint8Array.prototype);
  const taLength = gopd(typedArrayProto, "length").get;
  const taTag = gopd(typedArrayProto, Symbol.toStringTag).get;
  const abByteLength = gopd(ArrayBuffer.prototype, "byteLength").get;
  const abDetached = gopd(ArrayBuffer.prototype, "detached").get;
  const sabByteLength = gopd(SharedArrayBuffer.prototype, "byteLength").get;
  const dvByteLength = gopd(DataView.prototype, "byteLength").get;
  const dvByteOffset = gopd(DataView.prototype, "byteOffset").get;
  const dvBuffer = gopd(DataView.prototype, "buffer").get;
  const construct = Reflect.construct, Uint8ArrayCtor = Uint8Array;
  const toStringTag = Symbol.toStringTag;
  const now = performance.now, perf = performance;
  // The web classes shown by their contents, known by their prototypes
  // (any object can carry their toStringTag).
  const SearchParamsProto = URLSearchParams.prototype;
  const searchParamsForEach = URLSearchParams.prototype.forEach;
  // The web classes whose state is in their getters (private fields), each
  // shown by the getters Node shows for it, in its order: their prototype,
  // then name and getter by turns. The getters are taken now, so a program
  // that replaces one later runs nothing here.
  const gettersShown = new MapCtor();
  const showGetters = (proto, names) => {
    const list = bare();
    for (let i = 0; i < names.length; i++) apply(arrayPush, list, [names[i], gopd(proto, names[i]).get]);
    apply(mapSet, gettersShown, [proto, list]);
  };
  showGetters(URL.prototype, ["href", "origin", "protocol", "username", "password", "host", "hostname",
    "port", "pathname", "search", "searchParams", "hash"]);
  showGetters(Event.prototype, ["type", "defaultPrevented", "cancelable", "timeStamp"]);
  showGetters(AbortController.prototype, ["signal"]);
  showGetters(AbortSignal.prototype, ["aborted"]);
  showGetters(TextEncoder.prototype, ["encoding"]);
  showGetters(TextDecoder.prototype, ["encoding", "fatal", "ignoreBOM"]);
  showGetters(EventTarget.prototype, []);
  const ErrorCtor = Error, ErrorProto = Error.prototype, ObjectProto = Object.prototype, ArrayProto = Array.prototype;
  // An error's frames as a program reads them (`stack.js`), without the
  // `Name: message` this file writes itself; taken before any program.
  const stackFrames = shared.stackFrames;
  // A DOMException's name and message are getters of its prototype
  // (QuickJS's own, native: no program code runs in them).
  const DOMProto = DOMException.prototype;
  const domName = gopd(DOMProto, "name").get, domMessage = gopd(DOMProto, "message").get;
  // Frames of the guest's own JavaScript (`<wasmwire:events>`...): where a
  // DOMException or an abort's reason was made for the program, nothing
  // its author wrote.
  const OWN_FRAME = "(<wasmwire:";

  // How deep objects are shown, and how much of each (Node's defaults).
  const DEPTH = 2, DIR_DEPTH = 64, ARRAY_ITEMS = 100, STRING_CHARS = 10000, MAX_LOOKS = 10000;
  // How much text one call builds before it stops showing more: the
  // console's own cap bounds what is written; this bounds the work.
  const BUDGET = 1 << 20;

  // QuickJS's class id of each kind: what an object really is, which no
  // prototype trick changes.
  const kinds = { __proto__: null };
  const learn = (kind, v) => { kinds[classId(v)] = kind; };
  learn("Array", []);
  learn("Error", new Error());
  learn("DOMException", new DOMException());
  learn("Date", new Date(0));
  learn("RegExp", /a/);
  learn("Map", new Map());
  learn("Set", new Set());
  learn("WeakMap", new WeakMap());
  learn("WeakSet", new WeakSet());
  learn("WeakRef", new WeakRef({}));
  learn("ArrayBuffer", new ArrayBuffer(0));
  learn("SharedArrayBuffer", new SharedArrayBuffer(0));
  learn("DataView", new DataView(new ArrayBuffer(0)));
  learn("Promise", Promise.resolve());
  learn("Number", new Number(0));
  learn("String", new String(""));
  learn("Boolean", new Boolean(false));
  learn("BigInt", Object(0n));
  learn("Symbol", Object(Symbol()));
  learn("Arguments", (function () { return arguments; })());
  learn("Proxy", new Proxy({}, {}));
  for (const T of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
    Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]) learn("TypedArray", new T(0));
  if (typeof Float16Array === "function") learn("TypedArray", new Float16Array(0));

  // One call's text, and how much room it has left.
  // QuickJS joins strings as ropes: appending is cheap.
  // Made as literals without a prototype: a program's setters or getters
  // on Object.prototype never meet them.
  function newOut() { return { __proto__: null, s: "", full: false }; }
  function put(out, text) {
    if (out.full) return;
    if (out.s.length + text.length > BUDGET) {
      out.s += apply(strSlice, text, [0, BUDGET - out.s.length]) + " ...";
      out.full = true;
      return;
    }
    out.s += text;
  }
  function text(out) { return out.s; }

  // No regular expressions here: their methods are the program's to
  // replace (`RegExp.prototype.exec`, `[Symbol.replace]`).
  function needsEscape(c) {
    return c < 0x20 || c === 0x7f || c === 0x5c || c === 0x27 || c === 0x2028 || c === 0x2029;
  }
  function isPlain(s) {
    for (let i = 0; i < s.length; i++) if (needsEscape(apply(strCharCodeAt, s, [i]))) return false;
    return true;
  }
  function quote(s) {
    if (s.length <= STRING_CHARS && isPlain(s)) return "'" + s + "'";
    if (s.length > STRING_CHARS) {
      const more = s.length - STRING_CHARS;
      return quote(apply(strSlice, s, [0, STRING_CHARS])) + `... ${more} more character${more > 1 ? "s" : ""}`;
    }
    const q = !apply(strIncludes, s, ["'"]) ? "'" : !apply(strIncludes, s, ['"']) ? '"' : "`";
    let out = q, from = 0;
    for (let i = 0; i < s.length; i++) {
      const c = apply(strCharCodeAt, s, [i]);
      const ch = s[i];
      let escaped;
      if (ch === q || c === 0x5c) escaped = "\\" + ch;
      else if (c === 0x0a) escaped = "\\n";
      else if (c === 0x0d) escaped = "\\r";
      else if (c === 0x09) escaped = "\\t";
      else if (c === 0x08) escaped = "\\b";
      else if (c === 0x0c) escaped = "\\f";
      else if (c === 0x0b) escaped = "\\v";
      else if (c === 0x2028 || c === 0x2029) escaped = "\\u" + apply(numToString, c, [16]);
      else if (c < 0x20 || c === 0x7f) escaped = "\\x" + (c < 16 ? "0" : "") + apply(numToString, c, [16]);
      else continue;
      out += apply(strSlice, s, [from, i]) + escaped;
      from = i + 1;
    }
    return out + apply(strSlice, s, [from]) + q;
  }

  function isIdentifier(k) {
    if (k.length === 0) return false;
    for (let i = 0; i < k.length; i++) {
      const c = apply(strCharCodeAt, k, [i]);
      // Node's rule (util.inspect's keyStrRegExp): letters, `_` and digits;
      // a `$` is quoted (`{ '$d': 4 }`).
      const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
      if (!letter && (i === 0 || c < 0x30 || c > 0x39)) return false;
    }
    return true;
  }
  function key(k) {
    if (typeof k === "symbol") return "[" + apply(symbolToString, k, []) + "]";
    return isIdentifier(k) ? k : quote(k);
  }

  function primitive(v, top) {
    switch (typeof v) {
      case "string": return top ? v : quote(v);
      case "number": return is(v, -0) ? "-0" : StringCtor(v);
      case "bigint": return StringCtor(v) + "n";
      case "symbol": return apply(symbolToString, v, []);
      default: return StringCtor(v);   // undefined, null, boolean
    }
  }

  // The name an own or inherited `name` data property gives (never a getter).
  function nameOf(f) {
    for (let o = plain(f), i = 0; o !== null && i < 8; o = protoOf(o), i++) {
      const d = gopd(o, "name");
      if (d !== undefined) return "value" in d && typeof d.value === "string" ? d.value : "";
    }
    return "";
  }

  function functionText(f) {
    const name = nameOf(f);
    let source = "";
    try { source = apply(fnToString, f, []); } catch { /* a revoked proxy's */ }
    if (apply(strSlice, source, [0, 6]) === "class " || source === "class{" || apply(strSlice, source, [0, 6]) === "class{") {
      const base = protoOf(f);
      const extendsText = typeof base === "function" && base !== Function.prototype && nameOf(base) ? ` extends ${nameOf(base)}` : "";
      return `[class ${name || "(anonymous)"}${extendsText}]`;
    }
    const kind = apply(strSlice, source, [0, 5]) === "async"
      ? (apply(strIncludes, apply(strSlice, source, [0, 16]), ["*"]) ? "AsyncGeneratorFunction" : "AsyncFunction")
      : (apply(strSlice, source, [0, 9]) === "function*" ? "GeneratorFunction" : "Function");
    return name ? `[${kind}: ${name}]` : `[${kind} (anonymous)]`;
  }

  // The constructor's name an object's prototype chain gives, or null for
  // an object with no prototype.
  function constructorName(o) {
    for (let p = o, i = 0; p !== null && i < 64; i++) {
      p = protoOf(p);
      if (p === null) return i === 0 ? null : "";
      const d = gopd(p, "constructor");
      if (d !== undefined && "value" in d && typeof d.value === "function") {
        const name = nameOf(d.value);
        if (name) return name;
      }
    }
    return "";
  }

  function isError(o) {
    if (kinds[classId(o)] === "Error" || kinds[classId(o)] === "DOMException") return true;
    for (let p = protoOf(o), i = 0; p !== null && i < 64; p = protoOf(p), i++) {
      if (p === ErrorProto) return true;
    }
    return false;
  }

  function dataOf(o, k) {
    const d = gopd(o, k);
    return d !== undefined && "value" in d ? d.value : undefined;
  }

  // The own enumerable properties of `o` (string keys but array indices
  // when `skipIndices`, then symbols), each as `key: value`.
  function properties(out, o, depth, state, skipIndices, first) {
    let any = !first;
    const keys = ownKeys(o);
    for (let i = 0; i < keys.length && !out.full; i++) {
      const k = keys[i];
      if (skipIndices && typeof k === "string" && isIndex(k)) continue;
      const d = gopd(o, k);
      if (d === undefined || !d.enumerable) continue;
      put(out, any ? ", " : " ");
      any = true;
      put(out, key(k) + ": ");
      if ("value" in d) value(out, d.value, depth + 1, state);
      else put(out, d.get && d.set ? "[Getter/Setter]" : d.get ? "[Getter]" : "[Setter]");
    }
    return any;
  }
  function isIndex(k) {
    const n = NumberCtor(k);
    return n >= 0 && n < 4294967295 && StringCtor(n >>> 0) === k;
  }

  // The walks up a prototype chain ask no Proxy (that would run its
  // traps): one is read as its target, and a revoked one, or a chain of
  // proxies past 64, as the chain's end (null).
  function plain(o) {
    for (let i = 0; o !== null && kinds[classId(o)] === "Proxy"; i++) {
      if (i === 64) return null;
      o = proxyTarget(o);
      if (o === undefined) return null;
    }
    return o;
  }
  function protoOf(o) {
    o = plain(o);
    return o === null ? null : plain(getPrototypeOf(o));
  }

  // A whole object: `Name { ... }`, `[ ... ]`, `Map(2) { ... }`, ...
  function object(out, o, depth, state) {
    const kind = kinds[classId(o)];
    if (kind === "Proxy") {
      // A chain of proxies is walked, not recursed.
      let target = o;
      for (let i = 0; i < 1e6 && kinds[classId(target)] === "Proxy"; i++) {
        target = proxyTarget(target);
        if (target === undefined) return put(out, "[Proxy]");
      }
      if (kinds[classId(target)] === "Proxy") return put(out, "[Proxy]");
      return object(out, target, depth, state);
    }
    const seen = state.seen;
    for (let i = 0; i < seen.length; i++) {
      if (seen[i] === o) {
        if (state.refs === null) state.refs = new MapCtor();
        let id = apply(mapGet, state.refs, [o]);
        if (id === undefined) { id = apply(mapSize, state.refs, []) + 1; apply(mapSet, state.refs, [o, id]); }
        return put(out, `[Circular *${id}]`);
      }
    }
    if (typeof o === "function") {
      put(out, functionText(o));
      return;
    }
    switch (kind) {
      case "Date": {
        const t = apply(dateValue, o, []);
        return put(out, t === t ? apply(dateToISO, o, []) : "Invalid Date");
      }
      case "RegExp": return put(out, apply(regexpToString, o, []));
      case "Number": return put(out, `[Number: ${primitive(apply(numberValue, o, []))}]`);
      case "String": return put(out, `[String: ${quote(apply(stringValue, o, []))}]`);
      case "Boolean": return put(out, `[Boolean: ${apply(booleanValue, o, [])}]`);
      case "BigInt": return put(out, `[BigInt: ${apply(bigintValue, o, [])}n]`);
      case "Symbol": return put(out, `[Symbol: ${apply(symbolToString, apply(symbolValue, o, []), [])}]`);
      case "WeakMap": case "WeakSet": return put(out, `${kind} { <items unknown> }`);
      case "WeakRef": return put(out, "WeakRef { <target unknown> }");
    }
    // Plain objects and arrays (most of what is shown) skip the walks up
    // their prototypes.
    const proto = protoOf(o);
    const common = proto === ObjectProto || proto === ArrayProto;
    if (kind === "Error" || kind === "DOMException" || (!common && isError(o))) return error(out, o, depth, state);
    const name = proto === ObjectProto ? "Object" : proto === ArrayProto ? "Array" : constructorName(o);
    const own = dataOf(o, toStringTag);
    const tagged = own !== undefined || common ? own : tagOf(o);
    if (depth > state.depth) {
      const label = kind === "Array" ? "Array" : kind === "TypedArray" ? apply(taTag, o, []) : name || (name === null ? "Object: null prototype" : "Object");
      return put(out, `[${label}]`);
    }
    apply(arrayPush, seen, [o]);
    const mark = out.s.length;
    try {
      if (kind === "Array" || kind === "TypedArray" || kind === "Arguments") {
        list(out, o, depth, state, kind);
      } else if (kind === "Map" || kind === "Set") {
        const size = kind === "Map" ? apply(mapSize, o, []) : apply(setSize, o, []);
        put(out, `${name && name !== kind ? name + " [" + kind + "]" : kind}(${size}) {`);
        let any = false, shown = 0;
        // An iterator, stopped after what is shown: a forEach walked all
        // of a large Map at every log.
        const it = kind === "Map" ? apply(mapEntries, o, []) : apply(setValues, o, []);
        const next = kind === "Map" ? mapIteratorNext : setIteratorNext;
        for (;;) {
          if (out.full) break;
          const step = apply(next, it, []);
          if (step.done) break;
          if (shown === ARRAY_ITEMS) { put(out, `, ... ${size - ARRAY_ITEMS} more item${size - ARRAY_ITEMS > 1 ? "s" : ""}`); break; }
          shown++;
          put(out, any ? ", " : " ");
          any = true;
          if (kind === "Map") { value(out, step.value[0], depth + 1, state); put(out, " => "); value(out, step.value[1], depth + 1, state); }
          else value(out, step.value, depth + 1, state);
        }
        any = properties(out, o, depth, state, false, !any);
        put(out, any ? " }" : "}");
      } else if (kind === "Promise") {
        const s = promiseState(o);
        put(out, "Promise { ");
        if (s === 0) put(out, "<pending>");
        else {
          if (s === 2) put(out, "<rejected> ");
          value(out, promiseResult(o), depth + 1, state);
        }
        properties(out, o, depth, state, false, false);
        put(out, " }");
      } else if (proto === SearchParamsProto) {
        // The real class's own method: its brand check refuses an impostor.
        put(out, "URLSearchParams {");
        let any = false;
        apply(searchParamsForEach, o, [(v, k) => { put(out, (any ? ", " : " ") + quote(k) + " => " + quote(v)); any = true; }]);
        put(out, any ? " }" : "}");
      } else if (kind === "ArrayBuffer" || kind === "SharedArrayBuffer" || kind === "DataView") {
        put(out, `${name && name !== kind ? name + " [" + kind + "]" : kind} {`);
        if (kind === "DataView") view(out, o, depth, state);
        else put(out, " " + bytes(o, kind));
        properties(out, o, depth, state, false, false);
        put(out, " }");
      } else {
        // An instance of a web class (or of a program's class extending
        // one) is named without the class's tag, as Node names it.
        const shown = common ? undefined : getterValues(o);
        let prefix = name === null ? "[Object: null prototype] " : name && name !== "Object" ? name + " " : "";
        if (typeof tagged === "string" && tagged !== "" && tagged !== name && shown === undefined) prefix = `${prefix || "Object "}[${tagged}] `;
        put(out, prefix + "{");
        let any = false;
        for (let i = 0; shown !== undefined && i < shown.length && !out.full; i += 2) {
          put(out, (any ? ", " : " ") + shown[i] + ": ");
          value(out, shown[i + 1], depth + 1, state);
          any = true;
        }
        any = properties(out, o, depth, state, false, !any);
        put(out, any ? " }" : "}");
      }
    } finally {
      seen.length--;
    }
    const id = state.refs === null ? undefined : apply(mapGet, state.refs, [o]);
    if (id !== undefined) out.s = apply(strSlice, out.s, [0, mark]) + `<ref *${id}> ` + apply(strSlice, out.s, [mark]);
  }

  // `[Uint8Contents]: <00 ff>, byteLength: 2`: a buffer's first bytes
  // (as many as an array shows items) and its length.
  function bytes(o, kind) {
    if (kind === "ArrayBuffer" && apply(abDetached, o, [])) return "(detached), byteLength: 0";
    const length = apply(kind === "ArrayBuffer" ? abByteLength : sabByteLength, o, []);
    const shown = length < ARRAY_ITEMS ? length : ARRAY_ITEMS;
    const view = construct(Uint8ArrayCtor, [o, 0, shown]);
    let s = "[Uint8Contents]: <";
    for (let i = 0; i < shown; i++) s += (i === 0 ? "" : " ") + (view[i] < 16 ? "0" : "") + apply(numToString, view[i], [16]);
    if (length > shown) s += ` ... ${length - shown} more byte${length - shown > 1 ? "s" : ""}`;
    return s + `>, byteLength: ${length}`;
  }

  // A DataView's place in its buffer, then the buffer; a view whose
  // buffer was detached (or shrunk from under it) has no place to show.
  function view(out, o, depth, state) {
    const buffer = apply(dvBuffer, o, []);
    let place;
    try {
      place = `byteLength: ${apply(dvByteLength, o, [])}, byteOffset: ${apply(dvByteOffset, o, [])}`;
    } catch {
      place = kinds[classId(buffer)] === "ArrayBuffer" && apply(abDetached, buffer, []) ? "(detached)" : "(out of bounds)";
    }
    put(out, ` ${place}, buffer: `);
    value(out, buffer, depth + 1, state);
  }

  // The names and values of the getters shown for one of the web classes
  // (`gettersShown`), found by its prototype chain; undefined for any other
  // object, or one that only has such a prototype (a getter refuses it).
  function getterValues(o) {
    let list;
    for (let p = protoOf(o), i = 0; p !== null && i < 8 && list === undefined; p = protoOf(p), i++) {
      list = apply(mapGet, gettersShown, [p]);
    }
    if (list === undefined) return undefined;
    const values = bare();
    try {
      for (let i = 0; i < list.length; i += 2) apply(arrayPush, values, [list[i], apply(list[i + 1], o, [])]);
    } catch {
      return undefined;
    }
    return values;
  }

  function tagOf(o) {
    // An inherited toStringTag as a data property (the web classes').
    for (let p = protoOf(o), i = 0; p !== null && i < 8; p = protoOf(p), i++) {
      const d = gopd(p, toStringTag);
      if (d !== undefined) return "value" in d ? d.value : undefined;
    }
    return undefined;
  }

  function list(out, a, depth, state, kind) {
    const length = kind === "TypedArray" ? apply(taLength, a, []) : dataOf(a, "length") ?? 0;
    const prefix = kind === "TypedArray" ? `${apply(taTag, a, [])}(${length}) `
      : kind === "Arguments" ? "[Arguments] " : "";
    put(out, prefix + "[");
    let any = false, shown = 0, holes = 0;
    const flushHoles = () => {
      if (holes === 0) return;
      put(out, (any ? ", " : " ") + `<${holes} empty item${holes > 1 ? "s" : ""}>`);
      any = true; shown++; holes = 0;
    };
    // Holes cost a look each: past MAX_LOOKS the rest is counted, not
    // walked (`new Array(1e8)` took half a minute, index by index).
    let i = 0;
    for (; i < length && shown < ARRAY_ITEMS && !out.full && i < MAX_LOOKS; i++) {
      const d = kind === "TypedArray" ? { __proto__: null, value: a[i] } : gopd(a, StringCtor(i));
      if (d === undefined) { holes++; continue; }
      flushHoles();
      put(out, any ? ", " : " ");
      any = true; shown++;
      if ("value" in d) value(out, d.value, depth + 1, state);
      else put(out, d.get && d.set ? "[Getter/Setter]" : d.get ? "[Getter]" : "[Setter]");
    }
    flushHoles();
    if (i < length && !out.full) {
      put(out, `, ... ${length - i} more item${length - i > 1 ? "s" : ""}`);
      any = true;
    }
    // Its other properties, but for a long array, whose keys (every
    // index) would have to be listed to find them.
    if (kind !== "TypedArray" && length <= MAX_LOOKS) any = properties(out, a, depth, state, true, !any);
    put(out, any ? " ]" : "]");
  }

  // `Name: message`, then its own properties and its cause, then (for an
  // error logged itself, not one inside a value) its stack, as Node shows
  // an error: where it was made is what `catch (e) { console.error(e) }`
  // is for. `fieldsOnly`: the properties alone, past what a headline
  // already says (name, message, cause), for the Result.
  function error(out, e, depth, state, fieldsOnly = false) {
    let name = dataOrInherited(e, "name");
    let message = dataOrInherited(e, "message");
    if (kinds[classId(e)] === "DOMException") {
      try {
        if (name === undefined) name = apply(domName, e, []);
        if (message === undefined) message = apply(domMessage, e, []);
      } catch {}
    }
    const head = (typeof name === "string" && name !== "" ? name : "Error") +
      (typeof message === "string" && message !== "" ? ": " + message : "");
    if (!fieldsOnly) put(out, depth === 0 ? head : "[" + head + "]");
    if (depth > state.depth) return;
    apply(arrayPush, state.seen, [e]);
    try {
      let any = false;
      const keys = ownKeys(e);
      for (let i = 0; i < keys.length && !out.full; i++) {
        const k = keys[i];
        const d = gopd(e, k);
        // An AggregateError's `errors`, like a `cause`, is not enumerable
        // and is shown all the same, as Node shows it.
        const shown = k === "cause" || k === "errors";
        if (d === undefined || (!d.enumerable && !shown) || k === "stack" || k === "message") continue;
        if (fieldsOnly && (shown || k === "name")) continue;
        put(out, any ? ", " : " { ");
        any = true;
        put(out, (shown && !d.enumerable ? "[" + k + "]" : key(k)) + ": ");
        if ("value" in d) value(out, d.value, depth + 1, state);
        else put(out, d.get ? "[Getter]" : "[Setter]");
      }
      if (any) put(out, " }");
    } finally {
      state.seen.length--;
    }
    if (depth === 0 && !fieldsOnly && !state.noStack) {
      // An own stack as data, else QuickJS's: no getter of the program's
      // runs. A stack's first line that is the `Name: message` written
      // above (as `Error.captureStackTrace`, or a program's own
      // `Error.prepareStackTrace`, heads it) is not written twice.
      const d = gopd(e, "stack");
      let stack = d !== undefined && "value" in d ? d.value : undefined;
      if (d === undefined) {
        try { stack = stackFrames(e); } catch { stack = undefined; }
      }
      if (typeof stack !== "string") stack = "";
      stack = ownFramesLeftOut(stack);
      if (apply(strStartsWith, stack, [head + "\n"])) stack = apply(strSlice, stack, [head.length + 1]);
      else if (stack === head) stack = "";
      while (stack.length > 0 && (stack[stack.length - 1] === "\n" || stack[stack.length - 1] === " "))
        stack = apply(strSlice, stack, [0, -1]);
      if (stack !== "") put(out, "\n" + stack);
    }
  }
  // `stack` without the frames of the guest's own JavaScript.
  function ownFramesLeftOut(stack) {
    if (!apply(strIncludes, stack, [OWN_FRAME])) return stack;
    let kept = "";
    let from = 0;
    while (from <= stack.length) {
      let end = apply(strIndexOf, stack, ["\n", from]);
      if (end < 0) end = stack.length;
      const line = apply(strSlice, stack, [from, end]);
      if (!apply(strIncludes, line, [OWN_FRAME])) kept += (kept === "" ? "" : "\n") + line;
      from = end + 1;
    }
    return kept;
  }
  function dataOrInherited(o, k) {
    for (let p = plain(o), i = 0; p !== null && i < 64; p = protoOf(p), i++) {
      const d = gopd(p, k);
      if (d !== undefined) return "value" in d ? d.value : undefined;
    }
    return undefined;
  }

  function value(out, v, depth, state, top = false) {
    if ((typeof v !== "object" || v === null) && typeof v !== "function") return put(out, primitive(v, top));
    try {
      object(out, v, depth, state);
    } catch {
      // A revoked proxy, a getter on the way that throws, no memory for a
      // part: what was shown stays, and the rest is marked.
      put(out, "[object]");
    }
  }

  // ` { status: 404 }`: an uncaught error's own fields, shown as the
  // console shows them (no getter, toJSON or trap run), for the Result's
  // message; "" when it has none.
  shared.errorFields = function errorFields(e) {
    const out = newOut();
    try {
      e = plain(e);
      if (e === null) return "";
      error(out, e, 0, { __proto__: null, seen: bare(), refs: null, depth: DEPTH }, true);
    } catch {
      return "";
    }
    return text(out);
  };

  // A value as the report of what a program left behind tells it, once
  // the program has ended: as the console shows it, an error without its
  // stack. No getter, toJSON or trap of the program's runs: a getter that
  // spun there ran out the wall clock after the program had returned, and
  // its value was lost.
  shared.quietly = (v) => inspect(v, true, DEPTH, true);
  // An error's `message` if it is data (its own or inherited), else "".
  shared.quietMessage = function quietMessage(e) {
    try {
      const m = dataOrInherited(e, "message");
      return typeof m === "string" ? m : "";
    } catch {
      return "";
    }
  };

  // The evaluator's look at a value the program returned. JSON.stringify
  // writes some objects that hold data as `{}` (a Map, a Set, an Error, a
  // RegExp, an un-awaited Promise, an ArrayBuffer...), so a program that
  // returns `{ error: e }` or a Map of results handed its host an empty
  // object with `ok: true`. `shared.lossy(value)` finds the first such
  // object, for a console warning: `["an Error", ".error"]` (the path
  // empty for the value itself), or undefined. It walks as JSON.stringify
  // does (arrays by index, objects by their own enumerable string keys; an
  // object that may have a `toJSON` is whatever that gives, so it is not
  // looked into), breadth first, so that a long array at the top spends the
  // budget on its first items, running no getter, `toJSON` or trap; it
  // lists at most MAX_LOSSY_LOOKS properties, and the warning is a help,
  // never a cost a large result pays in full.
  const MAX_LOSSY_LOOKS = 20000;
  const LOST = {
    __proto__: null, Map: "a Map", Set: "a Set", WeakMap: "a WeakMap", WeakSet: "a WeakSet",
    Error: "an Error", DOMException: "a DOMException", RegExp: "a RegExp", Promise: "a Promise (not awaited?)",
    ArrayBuffer: "an ArrayBuffer", DataView: "a DataView",
  };
  // Iterators and generators hold their items until they are walked:
  // JSON writes every one as `{}` (`map.values()`, `arr.entries()`, a
  // generator's result).
  const ITERATORS = { __proto__: null };
  {
    const iterators = [new Map().values(), new Set().values(), [].values(), ""[Symbol.iterator](),
      apply(String.prototype.matchAll, "", [/a/g])];
    if (typeof Iterator === "function" && typeof Iterator.prototype.map === "function") {
      apply(arrayPush, iterators, [apply(Iterator.prototype.map, [].values(), [(x) => x])]);
    }
    for (const it of iterators) ITERATORS[classId(it)] = "an iterator";
    ITERATORS[classId((function* () {})())] = "a generator";
    ITERATORS[classId((async function* () {})())] = "an async generator";
  }
  // A class's data behind getters on its prototype (`get total()`): JSON
  // writes only own fields. The first getter of `o`'s prototype chain (up
  // to Object.prototype) that no own field of `o` shadows, or undefined;
  // no getter is run, a Proxy on the chain is not asked. `seen` remembers
  // each prototype's getters, for a list of many instances of one class.
  const getOwnPropertyNames = Object.getOwnPropertyNames;
  const mapGetProto = Map.prototype.get;
  function hiddenGetter(o, seen) {
    const first = getPrototypeOf(o);
    if (first === null || first === ObjectProto || first === ArrayProto) return undefined;
    let getters = apply(mapGetProto, seen, [first]);
    if (getters === undefined) {
      getters = bare();
      for (let p = first, i = 0; p !== null && p !== ObjectProto && i < 16; p = getPrototypeOf(p), i++) {
        if (kinds[classId(p)] === "Proxy") break;
        const names = getOwnPropertyNames(p);
        for (let j = 0; j < names.length && j < 256; j++) {
          const d = gopd(p, names[j]);
          if (d !== undefined && d.get !== undefined) apply(arrayPush, getters, [names[j]]);
        }
      }
      apply(mapSet, seen, [first, getters]);
    }
    for (let i = 0; i < getters.length; i++) {
      if (gopd(o, getters[i]) === undefined) return getters[i];
    }
    return undefined;
  }
  function mayHaveToJSON(o) {
    for (let p = o, i = 0; p !== null && i < 64; p = getPrototypeOf(p), i++) {
      // A Proxy on the way is not asked (that would run its traps): it may.
      if (kinds[classId(p)] === "Proxy") return true;
      const d = gopd(p, "toJSON");
      if (d !== undefined) return !("value" in d) || typeof d.value === "function";
    }
    return false;
  }
  shared.lossy = function lossy(value) {
    const work = bare(value), paths = bare(""), seen = new MapCtor();
    let looks = 0;
    // Each object queued is looked at; at most MAX_LOSSY_LOOKS properties
    // are listed, so at most that many are queued.
    for (let next = 0; next < work.length; next++) {
      const o = work[next], path = paths[next];
      work[next] = undefined;
      const kind = kinds[classId(o)];
      if (kind === "Proxy" || mayHaveToJSON(o)) continue;
      const lost = LOST[kind];
      if (lost !== undefined) {
        // An empty Map or Set loses nothing.
        if (kind === "Map" && apply(mapSize, o, []) === 0) continue;
        if (kind === "Set" && apply(setSize, o, []) === 0) continue;
        return [lost, path];
      }
      const iterator = ITERATORS[classId(o)];
      if (iterator !== undefined) return [iterator, path];
      if (kind === "TypedArray" || looks >= MAX_LOSSY_LOOKS) continue;
      const list = isArray(o);
      if (!list) {
        const getter = hiddenGetter(o, seen);
        if (getter !== undefined) {
          const name = isIdentifier(getter) ? getter : stringify(getter);
          return ["an object whose `" + name + "` is a getter", path];
        }
      }
      const names = list ? undefined : objectKeys(o);
      const n = list ? o.length : names.length;
      for (let i = 0; i < n && looks < MAX_LOSSY_LOOKS; i++, looks++) {
        const k = list ? i : names[i];
        const d = gopd(o, list ? "" + i : k);
        if (d === undefined || !("value" in d)) continue;
        const v = d.value;
        if (typeof v === "object" && v !== null) {
          apply(arrayPush, work, [v]);
          apply(arrayPush, paths, [list ? path + "[" + k + "]" : isIdentifier(k) ? path + "." + k : path + "[" + stringify(k) + "]"]);
        }
      }
    }
    return undefined;
  };

  // `noStack`: an error without its stack.
  function inspect(v, top, depth = DEPTH, noStack = false) {
    // A primitive needs none of the walk's state (most of what is logged).
    if ((typeof v !== "object" || v === null) && typeof v !== "function") return primitive(v, top);
    const out = newOut();
    value(out, v, 0, { __proto__: null, seen: bare(), refs: null, depth, noStack }, top);
    return text(out);
  }

  // The arguments of a log call: `%` directives in a first string, then
  // every other argument shown, separated by spaces.
  function format(args) {
    if (args.length === 1 && typeof args[0] === "string") return args[0];
    const out = [];
    let i = 0;
    if (typeof args[0] === "string" && args.length > 1 && apply(strIncludes, args[0], ["%"])) {
      const f = args[0];
      let s = "", last = 0;
      i = 1;
      for (let j = 0; j < f.length - 1; j++) {
        if (f[j] !== "%") continue;
        const c = f[j + 1];
        let piece;
        if (c === "%") piece = "%";
        else if (i >= args.length) continue;
        else if (c === "s") {
          const a = args[i++];
          piece = typeof a === "string" ? a : typeof a === "bigint" ? a + "n"
            : typeof a === "symbol" ? apply(symbolToString, a, []) : typeof a === "object" && a !== null ? inspect(a, false) : primitive(a, true);
        } else if (c === "d" || c === "i" || c === "f") {
          // Numbers of primitives only: an object's valueOf is not run.
          const a = args[i++];
          const n = typeof a === "bigint" || typeof a === "symbol" || typeof a === "function" ||
            (typeof a === "object" && a !== null) ? NaN : NumberCtor(a);
          piece = typeof a === "bigint" && c !== "f" ? a + "n"
            : primitive(c === "i" ? trunc(n) : n, true);
        } else if (c === "j") {
          try { piece = stringify(args[i++]); } catch { piece = "[Circular]"; }
          if (piece === undefined) piece = "undefined";
        } else if (c === "o" || c === "O") piece = inspect(args[i++], false);
        else if (c === "c") { i++; piece = ""; }
        else continue;
        s += apply(strSlice, f, [last, j]) + piece;
        last = j + 2;
        j++;
      }
      apply(arrayPush, out, [s + apply(strSlice, f, [last])]);
    }
    for (; i < args.length; i++) apply(arrayPush, out, [inspect(args[i], true)]);
    return apply(arrayJoin, out, [" "]);
  }

  // Per run (each execution is a fresh instance; this file runs before the
  // snapshot, with nothing in them).
  let indent = "";
  const counts = new Map(), timers = new Map();
  function emit(level, line) { write(level, indent === "" ? line : indent + line); }

  const LOG = 0, INFO = 1, WARN = 2, ERROR = 3, DEBUG = 4;
  function label(l) { return l === undefined ? "default" : StringCtor(l); }
  // As Node writes a time: "0.06ms", "1.500s", "1:02.345 (m:ss.mmm)".
  function elapsed(start) {
    let ms = apply(now, perf, []) - start;
    let hours = 0, minutes = 0, seconds = 0;
    if (ms >= 1000) {
      if (ms >= 60000) {
        if (ms >= 3600000) {
          hours = trunc(ms / 3600000);
          ms %= 3600000;
        }
        minutes = trunc(ms / 60000);
        ms %= 60000;
      }
      seconds = ms / 1000;
    }
    const two = (n) => (n < 10 ? "0" : "") + n;
    if (hours !== 0 || minutes !== 0) {
      const fixed = apply(numToFixed, seconds, [3]);
      const dot = apply(strIndexOf, fixed, ["."]);
      const whole = apply(strSlice, fixed, [0, dot]);
      const head = hours !== 0 ? `${hours}:${two(minutes)}` : `${minutes}`;
      return `${head}:${whole.length < 2 ? "0" + whole : whole}.${apply(strSlice, fixed, [dot + 1])} (${hours !== 0 ? "h:m" : ""}m:ss.mmm)`;
    }
    if (seconds !== 0) return apply(numToFixed, seconds, [3]) + "s";
    // Trailing zeros dropped: `Number` of the fixed text.
    return +apply(numToFixed, ms, [3]) + "ms";
  }

  const methods = {
    log(...args) { emit(LOG, format(args)); },
    info(...args) { emit(INFO, format(args)); },
    warn(...args) { emit(WARN, format(args)); },
    error(...args) { emit(ERROR, format(args)); },
    debug(...args) { emit(DEBUG, format(args)); },
    trace(...args) {
      let stack = "";
      try {
        const s = stackFrames(new ErrorCtor());
        if (typeof s === "string") {
          // After the first line (this method's own frame).
          const first = apply(strIndexOf, s, ["\n"]);
          stack = first < 0 ? "" : apply(strSlice, s, [first + 1]);
          while (stack.length > 0 && stack[stack.length - 1] === "\n") stack = apply(strSlice, stack, [0, -1]);
        }
      } catch { /* no stack */ }
      emit(ERROR, "Trace" + (args.length > 0 ? ": " + format(args) : "") + (stack ? "\n" + stack : ""));
    },
    // `console.dir(v, { depth })`, as Node reads it: `null` or Infinity
    // is every level (up to DIR_DEPTH, so a deep chain cannot take the
    // stack), a number that many past the first.
    dir(v, options) {
      let depth = DEPTH;
      if (typeof options === "object" && options !== null) {
        const asked = dataOf(options, "depth");
        if (asked === null) depth = DIR_DEPTH;
        else if (typeof asked === "number" && asked >= 0) depth = asked > DIR_DEPTH ? DIR_DEPTH : asked - (asked % 1);
      }
      emit(LOG, inspect(v, false, depth));
    },
    dirxml(...args) { emit(LOG, format(args)); },
    assert(condition, ...args) {
      if (condition) return;
      emit(ERROR, "Assertion failed" + (args.length > 0 ? ": " + format(args) : ""));
    },
    count(l) {
      const k = label(l);
      const n = (apply(mapGet, counts, [k]) ?? 0) + 1;
      apply(mapSet, counts, [k, n]);
      emit(LOG, `${k}: ${n}`);
    },
    countReset(l) {
      const k = label(l);
      // Gone, as in Node: a label counted once and reset holds nothing.
      if (apply(mapHas, counts, [k])) apply(mapDelete, counts, [k]);
      else emit(WARN, `Count for '${k}' does not exist`);
    },
    time(l) {
      const k = label(l);
      if (apply(mapHas, timers, [k])) return emit(WARN, `Label '${k}' already exists for console.time()`);
      apply(mapSet, timers, [k, apply(now, perf, [])]);
    },
    timeLog(l, ...args) {
      const k = label(l);
      const start = apply(mapGet, timers, [k]);
      if (start === undefined) return emit(WARN, `No such label '${k}' for console.timeLog()`);
      emit(LOG, `${k}: ${elapsed(start)}` + (args.length > 0 ? " " + format(args) : ""));
    },
    timeEnd(l) {
      const k = label(l);
      const start = apply(mapGet, timers, [k]);
      if (start === undefined) return emit(WARN, `No such label '${k}' for console.timeEnd()`);
      apply(mapDelete, timers, [k]);
      emit(LOG, `${k}: ${elapsed(start)}`);
    },
    group(...args) {
      if (args.length > 0) emit(LOG, format(args));
      indent += "  ";
    },
    groupCollapsed(...args) {
      if (args.length > 0) emit(LOG, format(args));
      indent += "  ";
    },
    groupEnd() { indent = apply(strSlice, indent, [0, -2]); },
    table(data, columns) {
      if (typeof data !== "object" || data === null) return emit(LOG, format([data]));
      const rows = table(data, columns);
      if (rows === null) return emit(LOG, format([data]));
      for (let i = 0; i < rows.length; i++) emit(LOG, rows[i]);
    },
    clear() {},
  };

  // console.table's lines: a box of the rows (index, then each column, then
  // `Values` for rows that are not objects), or null when there is nothing
  // tabular to show.
  const MAX_ROWS = 1000;
  function table(data, columns) {
    const seenColumn = new MapCtor();
    const rowKeys = [], rowValues = [];
    const kind = kinds[classId(data)];
    // Rows past MAX_ROWS are counted, not shown.
    let total = 0;
    if (kind === "Map") {
      apply(mapForEach, data, [(v, k) => { if (total++ < MAX_ROWS) { apply(arrayPush, rowKeys, [inspect(k, false)]); apply(arrayPush, rowValues, [v]); } }]);
    } else if (kind === "Set") {
      apply(setForEach, data, [(v) => { if (total < MAX_ROWS) { apply(arrayPush, rowKeys, [StringCtor(total)]); apply(arrayPush, rowValues, [v]); } total++; }]);
    } else {
      const keys = ownKeys(data);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        if (typeof k !== "string") continue;
        const d = gopd(data, k);
        if (d === undefined || !d.enumerable || !("value" in d)) continue;
        if (total++ >= MAX_ROWS) continue;
        apply(arrayPush, rowKeys, [k]);
        apply(arrayPush, rowValues, [d.value]);
      }
    }
    const header = [kind === "Map" ? "(iteration index)" : "(index)"];
    const columnKeys = [];
    let values = false;
    const wanted = isArray(columns) ? columns : null;
    if (wanted !== null) for (let i = 0; i < wanted.length; i++) apply(arrayPush, columnKeys, [StringCtor(wanted[i])]);
    const cells = [];
    for (let r = 0; r < rowValues.length; r++) {
      const v = rowValues[r];
      const row = new MapCtor();
      if ((typeof v === "object" && v !== null) || typeof v === "function") {
        const keys = ownKeys(v);
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          if (typeof k !== "string") continue;
          const d = gopd(v, k);
          if (d === undefined || !d.enumerable) continue;
          if (wanted === null && !apply(mapHas, seenColumn, [k])) { apply(mapSet, seenColumn, [k, true]); apply(arrayPush, columnKeys, [k]); }
          apply(mapSet, row, [k, "value" in d ? inspectCell(d.value) : "[Getter]"]);
        }
      } else {
        values = true;
        apply(mapSet, row, [VALUES, inspectCell(v)]);
      }
      apply(arrayPush, cells, [row]);
    }
    if (rowKeys.length === 0) return null;
    for (let i = 0; i < columnKeys.length; i++) apply(arrayPush, header, [columnKeys[i]]);
    if (values) apply(arrayPush, header, ["Values"]);
    const grid = [header];
    for (let r = 0; r < cells.length; r++) {
      const line = [rowKeys[r]];
      for (let i = 0; i < columnKeys.length; i++) apply(arrayPush, line, [apply(mapGet, cells[r], [columnKeys[i]]) ?? ""]);
      if (values) apply(arrayPush, line, [apply(mapGet, cells[r], [VALUES]) ?? ""]);
      apply(arrayPush, grid, [line]);
    }
    const widths = [];
    for (let c = 0; c < header.length; c++) {
      let w = 0;
      for (let r = 0; r < grid.length; r++) if (grid[r][c].length > w) w = grid[r][c].length;
      apply(arrayPush, widths, [w + 2]);
    }
    const rule = (l, m, r) => {
      let text = l;
      for (let i = 0; i < widths.length; i++) text += (i > 0 ? m : "") + apply(strRepeat, "─", [widths[i]]);
      return text + r;
    };
    const line = (cellsOfRow) => {
      let text = "│";
      for (let i = 0; i < cellsOfRow.length; i++) text += " " + apply(strPadEnd, cellsOfRow[i], [widths[i] - 1]) + "│";
      return text;
    };
    const out = [rule("┌", "┬", "┐"), line(grid[0]), rule("├", "┼", "┤")];
    for (let r = 1; r < grid.length; r++) apply(arrayPush, out, [line(grid[r])]);
    apply(arrayPush, out, [rule("└", "┴", "┘")]);
    if (total > rowValues.length) apply(arrayPush, out, [`... ${total - rowValues.length} more rows`]);
    return out;
  }
  const VALUES = Symbol("values");
  function inspectCell(v) {
    const out = newOut();
    value(out, v, 1, { __proto__: null, seen: bare(), refs: null, depth: DEPTH }, false);
    return text(out);
  }

  const console = {};
  for (const name of ownKeys(methods)) {
    defineProperty(console, name, { value: methods[name], writable: true, enumerable: true, configurable: true });
  }
  defineProperty(console, toStringTag, { value: "console", configurable: true });
  return console;
})
