// structuredClone (HTML's structured serialisation, in one step): plain
// objects, arrays, Map, Set, Date, RegExp, ArrayBuffer, typed arrays,
// DataView, Boolean/Number/String/BigInt wrappers and Error objects, with
// cycles and shared references kept. Anything else that is not a plain
// object (functions, symbols, promises, WeakMap, WeakSet, WeakRef, ...)
// throws a DOMException named DataCloneError. `transfer` is refused.
//
// The walk uses a work list, not recursion: a graph as deep as memory
// allows is cloned without running out of stack.
(function (native, shared) {
  "use strict";
  const { classOf } = native;
  const DOMExceptionCtor = shared.DOMException;
  const apply = Reflect.apply;
  const { getOwnPropertyDescriptor: gopd, getPrototypeOf, keys, defineProperty } = Object;
  const MapCtor = Map, SetCtor = Set, DateCtor = Date, RegExpCtor = RegExp, ErrorCtor = Error;
  const ArrayCtor = Array, ArrayBufferCtor = ArrayBuffer, DataViewCtor = DataView;
  const BooleanCtor = Boolean, NumberCtor = Number, StringCtor = String, ObjectCtor = Object;
  const memoGet = Map.prototype.get, memoSet = Map.prototype.set, memoHas = Map.prototype.has;
  const mapForEach = Map.prototype.forEach, setForEach = Set.prototype.forEach;
  const mapSetFn = Map.prototype.set, setAddFn = Set.prototype.add;
  const arrayPush = Array.prototype.push, arrayPop = Array.prototype.pop;
  const mapSize = gopd(Map.prototype, "size").get;
  const setSize = gopd(Set.prototype, "size").get;
  const dateValue = Date.prototype.getTime;
  const regexpSource = gopd(RegExp.prototype, "source").get;
  const regexpFlags = gopd(RegExp.prototype, "flags").get;
  const abByteLength = gopd(ArrayBuffer.prototype, "byteLength").get;
  const abSlice = ArrayBuffer.prototype.slice;
  const typedArrayTag = gopd(getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;
  const taBuffer = gopd(getPrototypeOf(Uint8Array.prototype), "buffer").get;
  const taOffset = gopd(getPrototypeOf(Uint8Array.prototype), "byteOffset").get;
  const taLength = gopd(getPrototypeOf(Uint8Array.prototype), "length").get;
  const dvBuffer = gopd(DataView.prototype, "buffer").get;
  const dvOffset = gopd(DataView.prototype, "byteOffset").get;
  const dvLength = gopd(DataView.prototype, "byteLength").get;
  const booleanValue = Boolean.prototype.valueOf, numberValue = Number.prototype.valueOf;
  const stringValue = String.prototype.valueOf, bigintValue = BigInt.prototype.valueOf;
  const symbolValue = Symbol.prototype.valueOf;
  const weakMapHas = WeakMap.prototype.has, weakSetHas = WeakSet.prototype.has;
  const weakRefDeref = WeakRef.prototype.deref;
  const typedArrays = {
    Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
    Float32Array, Float64Array, BigInt64Array, BigUint64Array,
  };
  if (typeof Float16Array === "function") typedArrays.Float16Array = Float16Array;
  const errorCtors = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };

  function refuse(what) {
    return new DOMExceptionCtor(`structuredClone: ${what} could not be cloned`, "DataCloneError");
  }

  // Whether `f` accepts `value` as its receiver (a brand check).
  function has(f, value, args = []) {
    try { apply(f, value, args); return true; } catch { return false; }
  }

  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeError("structuredClone: 1 argument required, but only 0 present");
    if (options !== undefined && options !== null && options.transfer !== undefined) {
      const list = [...options.transfer];
      if (list.length > 0) throw refuse("a transfer list (nothing is transferable here)");
    }
    const memo = new MapCtor();
    const work = [];   // [source, target, kind] still to fill in

    // The clone of one value: a primitive as it is, an object's shell
    // (filled in later from the work list), or a throw.
    function shell(v) {
      const type = typeof v;
      if (type === "symbol") throw refuse("a symbol");
      if (type === "function") throw refuse(`the function ${v.name ? v.name : "(anonymous)"}`);
      if (v === null || type !== "object") return v;
      if (apply(memoHas, memo, [v])) return apply(memoGet, memo, [v]);
      const out = make(v);
      apply(memoSet, memo, [v, out[0]]);
      if (out[1] !== null) apply(arrayPush, work, [[v, out[0], out[1]]]);
      return out[0];
    }

    // [target, kind of filling it needs, or null when it is complete].
    function make(v) {
      const cls = classOf(v);
      if (cls === "function") throw refuse("a function");
      if (cls === "promise") throw refuse("a Promise");
      if (cls === "array") return [new ArrayCtor(v.length), "object"];
      if (cls === "error") {
        const name = v.name;
        const Ctor = typeof name === "string" && Object.hasOwn(errorCtors, name) ? errorCtors[name] : ErrorCtor;
        const e = new Ctor();
        const message = gopd(v, "message");
        if (message !== undefined && "value" in message) defineProperty(e, "message", { value: StringCtor(message.value), writable: true, configurable: true });
        const stack = gopd(v, "stack");
        if (stack !== undefined && "value" in stack && typeof stack.value === "string") defineProperty(e, "stack", { value: stack.value, writable: true, configurable: true });
        return [e, "error"];
      }
      if (has(dateValue, v)) return [new DateCtor(apply(dateValue, v, [])), null];
      // (The source getter also answers for RegExp.prototype, a plain object.)
      if (v !== RegExpCtor.prototype && has(regexpSource, v)) {
        return [new RegExpCtor(apply(regexpSource, v, []), apply(regexpFlags, v, [])), null];
      }
      if (has(abByteLength, v)) return [apply(abSlice, v, [0]), null];
      const tag = apply(typedArrayTag, v, []);
      if (tag !== undefined) {
        const buffer = shell(apply(taBuffer, v, []));
        return [new typedArrays[tag](buffer, apply(taOffset, v, []), apply(taLength, v, [])), null];
      }
      if (has(dvLength, v)) {
        const buffer = shell(apply(dvBuffer, v, []));
        return [new DataViewCtor(buffer, apply(dvOffset, v, []), apply(dvLength, v, [])), null];
      }
      if (has(mapSize, v)) return [new MapCtor(), "map"];
      if (has(setSize, v)) return [new SetCtor(), "set"];
      if (has(booleanValue, v)) return [new BooleanCtor(apply(booleanValue, v, [])), null];
      if (has(numberValue, v)) return [new NumberCtor(apply(numberValue, v, [])), null];
      if (has(stringValue, v)) return [new StringCtor(apply(stringValue, v, [])), null];
      if (has(bigintValue, v)) return [ObjectCtor(apply(bigintValue, v, [])), null];
      if (has(symbolValue, v)) throw refuse("a Symbol object");
      if (has(weakMapHas, v, [{}])) throw refuse("a WeakMap");
      if (has(weakSetHas, v, [{}])) throw refuse("a WeakSet");
      if (has(weakRefDeref, v)) throw refuse("a WeakRef");
      return [{}, "object"];
    }

    const root = shell(value);
    while (work.length > 0) {
      const [source, target, kind] = apply(arrayPop, work, []);
      if (kind === "map") {
        const entries = [];
        apply(mapForEach, source, [(v, k) => apply(arrayPush, entries, [k, v])]);
        for (let i = 0; i < entries.length; i += 2) apply(mapSetFn, target, [shell(entries[i]), shell(entries[i + 1])]);
      } else if (kind === "set") {
        const values = [];
        apply(setForEach, source, [(v) => apply(arrayPush, values, [v])]);
        for (let i = 0; i < values.length; i++) apply(setAddFn, target, [shell(values[i])]);
      } else if (kind === "error") {
        const cause = gopd(source, "cause");
        if (cause !== undefined && "value" in cause) defineProperty(target, "cause", { value: shell(cause.value), writable: true, configurable: true });
      } else {
        const names = keys(source);
        for (let i = 0; i < names.length; i++) {
          const d = gopd(source, names[i]);
          if (d === undefined || !d.enumerable) continue;
          defineProperty(target, names[i], { value: shell(source[names[i]]), writable: true, enumerable: true, configurable: true });
        }
      }
    }
    return root;
  }

  shared.define(globalThis, "structuredClone", structuredClone);
})
