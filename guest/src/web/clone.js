// structuredClone (HTML's structured serialisation, in one step): plain
// objects, arrays, Map, Set, Date, RegExp, ArrayBuffer, typed arrays,
// DataView, Boolean/Number/String/BigInt wrappers and Error objects, with
// cycles and shared references kept. Anything else that is not a plain
// object (functions, symbols, promises, WeakMap, WeakSet, WeakRef, ...)
// throws a DOMException named DataCloneError. ArrayBuffers may be
// transferred (`{ transfer: [buffer] }`): cloned, then detached.
//
// The walk uses a work list, not recursion: a graph as deep as memory
// allows is cloned without running out of stack.
(function (native, shared) {
  "use strict";
  const { classId, arrayKeys: keysOfArray } = native;
  const DOMExceptionCtor = shared.DOMException;
  const apply = Reflect.apply;
  const { getOwnPropertyDescriptor: gopd, getPrototypeOf, setPrototypeOf, keys, defineProperty, hasOwn } = Object;
  const MapCtor = Map, SetCtor = Set, DateCtor = Date, RegExpCtor = RegExp, ErrorCtor = Error;
  const ArrayCtor = Array, ArrayBufferCtor = ArrayBuffer, DataViewCtor = DataView;
  const BooleanCtor = Boolean, NumberCtor = Number, StringCtor = String, ObjectCtor = Object;
  const memoGet = Map.prototype.get, memoSet = Map.prototype.set, memoHas = Map.prototype.has;
  const mapForEach = Map.prototype.forEach, setForEach = Set.prototype.forEach;
  const mapSetFn = Map.prototype.set, setAddFn = Set.prototype.add;
  const dateValue = Date.prototype.getTime;
  const regexpSource = gopd(RegExp.prototype, "source").get;
  const regexpFlags = gopd(RegExp.prototype, "flags").get;
  const abSlice = ArrayBuffer.prototype.slice, abTransfer = ArrayBuffer.prototype.transfer;
  const abDetached = gopd(ArrayBuffer.prototype, "detached").get;
  const taBuffer = gopd(getPrototypeOf(Uint8Array.prototype), "buffer").get;
  const taOffset = gopd(getPrototypeOf(Uint8Array.prototype), "byteOffset").get;
  const taLength = gopd(getPrototypeOf(Uint8Array.prototype), "length").get;
  const dvBuffer = gopd(DataView.prototype, "buffer").get;
  const dvOffset = gopd(DataView.prototype, "byteOffset").get;
  const dvLength = gopd(DataView.prototype, "byteLength").get;
  const booleanValue = Boolean.prototype.valueOf, numberValue = Number.prototype.valueOf;
  const stringValue = String.prototype.valueOf, bigintValue = BigInt.prototype.valueOf;
  const typedArrays = {
    Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
    Float32Array, Float64Array, BigInt64Array, BigUint64Array,
  };
  if (typeof Float16Array === "function") typedArrays.Float16Array = Float16Array;
  const errorCtors = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };

  // Which QuickJS class id is which class: learnt from one object of
  // each. An id not here (a generator, an iterator, a module namespace,
  // ...) is refused.
  const classNames = [];
  const learn = (name, v) => { classNames[classId(v)] = name; };
  learn("Object", {});
  learn("Arguments", (function () { return arguments; })());
  learn("Array", []);
  learn("Error", new Error());
  learn("Date", new Date(0));
  learn("RegExp", /a/);
  learn("ArrayBuffer", new ArrayBuffer(0));
  learn("DataView", new DataView(new ArrayBuffer(0)));
  learn("Map", new Map());
  learn("Set", new Set());
  learn("Boolean", new Boolean(false));
  learn("Number", new Number(0));
  learn("String", new String(""));
  learn("BigInt", Object(0n));
  for (const name of Object.keys(typedArrays)) learn(name, new typedArrays[name](0));
  // Refused by name (but the last).
  learn("Symbol object", Object(Symbol()));
  learn("Promise", Promise.resolve());
  learn("WeakMap", new WeakMap());
  learn("WeakSet", new WeakSet());
  learn("WeakRef", new WeakRef({}));
  learn("FinalizationRegistry", new FinalizationRegistry(() => {}));
  learn("Proxy", new Proxy({}, {}));
  learn("SharedArrayBuffer", new SharedArrayBuffer(0));
  learn("DOMException", new DOMExceptionCtor());   // cloned by name and message

  function refuse(what) {
    return new DOMExceptionCtor(`structuredClone: ${what} could not be cloned`, "DataCloneError");
  }


  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeError("structuredClone: 1 argument required, but only 0 present");
    // Transferred ArrayBuffers are cloned as any other, then detached once
    // the whole clone is made (so a clone that throws detaches nothing).
    const transfer = setPrototypeOf([], null);
    if (options !== undefined && options !== null && options.transfer !== undefined) {
      for (const item of options.transfer) {
        if (classNames[classId(item)] !== "ArrayBuffer")
          throw refuse("a transfer list member that is not an ArrayBuffer (only ArrayBuffers are transferable here)");
        if (apply(abDetached, item, []))
          throw refuse("a detached ArrayBuffer in the transfer list");
        for (let i = 0; i < transfer.length; i++)
          if (transfer[i] === item) throw refuse("an ArrayBuffer listed twice for transfer");
        transfer[transfer.length] = item;
      }
    }
    const memo = new MapCtor();
    // Objects still to fill in, three slots each (source, target, kind),
    // flat: a list of 200,000 small objects queues 200,000 of them at
    // once, and an array per item cost more than the clone itself. No
    // prototype, so that writing an index reaches no setter of the
    // program's.
    const work = setPrototypeOf([], null);
    let kindMade = null; // the kind of filling `make`'s target needs, or null when it is complete

    // The clone of one value: a primitive as it is, an object's shell
    // (filled in later from the work list), or a throw.
    function shell(v) {
      const type = typeof v;
      if (type === "symbol") throw refuse("a symbol");
      if (type === "function") throw refuse(`the function ${v.name ? v.name : "(anonymous)"}`);
      if (v === null || type !== "object") return v;
      if (apply(memoHas, memo, [v])) return apply(memoGet, memo, [v]);
      const target = make(v), kind = kindMade;
      apply(memoSet, memo, [v, target]);
      if (kind !== null) {
        const n = work.length;
        work[n] = v; work[n + 1] = target; work[n + 2] = kind;
      }
      return target;
    }

    // The target; the kind of filling it needs in `kindMade`.
    function make(v) {
      const cls = classNames[classId(v)];
      switch (cls) {
        case "Object": case "Arguments": { kindMade = "object"; return {}; }
        // Empty, filled in order: QuickJS keeps it a dense array (one
        // made at its full length is a sparse one, a property per index).
        case "Array": { kindMade = "array"; return new ArrayCtor(); }
        case "Error": {
          const name = v.name;
          const Ctor = typeof name === "string" && hasOwn(errorCtors, name) ? errorCtors[name] : ErrorCtor;
          const e = new Ctor();
          const message = gopd(v, "message");
          if (message !== undefined && hasOwn(message, "value")) defineProperty(e, "message", { __proto__: null, value: StringCtor(message.value), writable: true, configurable: true });
          const stack = gopd(v, "stack");
          if (stack !== undefined && hasOwn(stack, "value") && typeof stack.value === "string") defineProperty(e, "stack", { __proto__: null, value: stack.value, writable: true, configurable: true });
          kindMade = "error";
          return e;
        }
        case "Date": { kindMade = null; return new DateCtor(apply(dateValue, v, [])); }
        case "RegExp": { kindMade = null; return new RegExpCtor(apply(regexpSource, v, []), apply(regexpFlags, v, [])); }
        case "ArrayBuffer": { kindMade = null; return apply(abSlice, v, [0]); }
        case "DataView": {
          const buffer = shell(apply(dvBuffer, v, []));
          kindMade = null;
          return new DataViewCtor(buffer, apply(dvOffset, v, []), apply(dvLength, v, []));
        }
        // As browsers do: its name and message (Node 20 made it `{}`).
        case "DOMException": { kindMade = null; return new DOMExceptionCtor(StringCtor(v.message), StringCtor(v.name)); }
        case "Map": { kindMade = "map"; return new MapCtor(); }
        case "Set": { kindMade = "set"; return new SetCtor(); }
        case "Boolean": { kindMade = null; return new BooleanCtor(apply(booleanValue, v, [])); }
        case "Number": { kindMade = null; return new NumberCtor(apply(numberValue, v, [])); }
        case "String": { kindMade = null; return new StringCtor(apply(stringValue, v, [])); }
        case "BigInt": { kindMade = null; return ObjectCtor(apply(bigintValue, v, [])); }
        case undefined: throw refuse("an object of this kind");
        default:
          if (hasOwn(typedArrays, cls)) {
            const buffer = shell(apply(taBuffer, v, []));
            kindMade = null;
            return new typedArrays[cls](buffer, apply(taOffset, v, []), apply(taLength, v, []));
          }
          throw refuse(`a ${cls}`);
      }
    }

    const root = shell(value);
    let arrayKeys;
    while (work.length > 0) {
      const n = work.length - 3;
      const source = work[n], target = work[n + 1], kind = work[n + 2];
      work.length = n;
      if (kind === "map") {
        // Lists without a prototype, written by index: a setter the program
        // put on an index of Array.prototype would see (and could change)
        // what is cloned through `push`.
        const entries = setPrototypeOf([], null);
        apply(mapForEach, source, [(v, k) => { const n = entries.length; entries[n] = k; entries[n + 1] = v; }]);
        for (let i = 0; i < entries.length; i += 2) apply(mapSetFn, target, [shell(entries[i]), shell(entries[i + 1])]);
      } else if (kind === "set") {
        const values = setPrototypeOf([], null);
        apply(setForEach, source, [(v) => { values[values.length] = v; }]);
        for (let i = 0; i < values.length; i++) apply(setAddFn, target, [shell(values[i])]);
      } else if (kind === "error") {
        const cause = gopd(source, "cause");
        if (cause !== undefined && hasOwn(cause, "value")) defineProperty(target, "cause", { __proto__: null, value: shell(cause.value), writable: true, configurable: true });
      } else if (kind === "array" && (arrayKeys = keysOfArray(source)) !== null) {
        // Its indices, holes kept, then its other own enumerable keys: as
        // `keys()` gives them, without a string made for every index, and
        // without counting up a sparse array's length.
        const length = source.length, indices = arrayKeys[0], named = arrayKeys[1];
        const count = indices === null ? length : indices.length;
        for (let j = 0; j < count; j++) {
          const i = indices === null ? j : indices[j];
          defineProperty(target, i, { __proto__: null, value: shell(source[i]), writable: true, enumerable: true, configurable: true });
        }
        if (target.length !== length) defineProperty(target, "length", { __proto__: null, value: length });
        for (let i = 0; i < named.length; i++) {
          defineProperty(target, named[i], { __proto__: null, value: shell(source[named[i]]), writable: true, enumerable: true, configurable: true });
        }
      } else {
        // Own enumerable string keys, each read with [[Get]], as the
        // standard's serialisation does.
        const names = keys(source);
        for (let i = 0; i < names.length; i++) {
          defineProperty(target, names[i], { __proto__: null, value: shell(source[names[i]]), writable: true, enumerable: true, configurable: true });
        }
        if (kind === "array" && target.length !== source.length) defineProperty(target, "length", { __proto__: null, value: source.length });
      }
    }
    for (let i = 0; i < transfer.length; i++) apply(abTransfer, transfer[i], []);
    return root;
  }

  shared.define(globalThis, "structuredClone", structuredClone);
})
