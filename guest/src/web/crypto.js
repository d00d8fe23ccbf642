// crypto.getRandomValues and crypto.randomUUID (WebCrypto), drawn from the
// system's random source at each call: nothing is fixed in the snapshot.
// crypto.subtle has `digest` (SHA-1, SHA-256, SHA-384, SHA-512); its other
// methods reject with a NotSupportedError that says so.
(function (native, shared) {
  "use strict";
  const StringCtor = String;
  const { randomBytes, digest } = native;
  const bytesOf = shared.bytesOf;   // copied out by the native digest at once
  const PromiseCtor = Promise;
  const promiseResolve = Promise.resolve, promiseReject = Promise.reject;
  const toUpperCase = String.prototype.toUpperCase;
  const stringify = JSON.stringify;
  const apply = Reflect.apply;
  const { defineProperty } = Object;
  const DOMExceptionCtor = shared.DOMException;
  const U8 = Uint8Array;
  // %TypedArray%'s own accessors, read once: an array's `byteLength` can be
  // an accessor of the program's, which answered 4 to the quota's check
  // and 2**30 to the draw.
  const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
  const accessor = (name) => Object.getOwnPropertyDescriptor(typedArrayProto, name).get;
  const typedArrayTag = accessor(Symbol.toStringTag);
  const bufferOf = accessor("buffer"), byteOffsetOf = accessor("byteOffset"), byteLengthOf = accessor("byteLength");
  const u8Set = typedArrayProto.set;
  const numberToString = Number.prototype.toString;
  const padStart = String.prototype.padStart;

  // WebCrypto's quota: at most this many bytes per call.
  const QUOTA = 65536;
  const INTEGER_ARRAYS = {
    __proto__: null, Int8Array: true, Uint8Array: true, Uint8ClampedArray: true, Int16Array: true,
    Uint16Array: true, Int32Array: true, Uint32Array: true, BigInt64Array: true, BigUint64Array: true,
  };

  const internal = Symbol("internal");
  class Crypto {
    constructor(key) { if (key !== internal) throw new TypeError("Illegal constructor"); }
    getRandomValues(array) {
      if (arguments.length === 0) throw new TypeError("Crypto.getRandomValues: 1 argument required, but only 0 present");
      const tag = apply(typedArrayTag, array, []);
      if (INTEGER_ARRAYS[tag] !== true) {
        throw new DOMExceptionCtor(
          "Crypto.getRandomValues: the argument must be an integer-typed array (Int8Array ... BigUint64Array)",
          "TypeMismatchError");
      }
      const length = apply(byteLengthOf, array, []);
      if (length > QUOTA) {
        throw new DOMExceptionCtor(
          `Crypto.getRandomValues: ${length} bytes asked for, more than the ${QUOTA} allowed per call`,
          "QuotaExceededError");
      }
      const view = new U8(apply(bufferOf, array, []), apply(byteOffsetOf, array, []), length);
      apply(u8Set, view, [randomBytes(length)]);
      return array;
    }
    randomUUID() {
      const b = randomBytes(16);
      b[6] = (b[6] & 0x0f) | 0x40;   // version 4
      b[8] = (b[8] & 0x3f) | 0x80;   // variant 10
      let hex = "";
      for (let i = 0; i < 16; i++) {
        hex += apply(padStart, apply(numberToString, b[i], [16]), [2, "0"]);
        if (i === 3 || i === 5 || i === 7 || i === 9) hex += "-";
      }
      return hex;
    }
    get subtle() { return subtle; }
  }

  class SubtleCrypto {
    constructor(key) { if (key !== internal) throw new TypeError("Illegal constructor"); }
    digest(algorithm, data) {
      try {
        if (arguments.length < 2) throw new TypeError(`SubtleCrypto.digest: 2 arguments required, but only ${arguments.length} present`);
        const name = typeof algorithm === "object" && algorithm !== null ? algorithm.name : algorithm;
        const hash = digest(apply(toUpperCase, StringCtor(name), []), bytesOf(data, "SubtleCrypto.digest"));
        if (hash === undefined || hash === null) {
          throw new DOMExceptionCtor(
            `SubtleCrypto.digest: the algorithm ${stringify(StringCtor(name))} is not supported: SHA-1, SHA-256, SHA-384 and SHA-512 are`,
            "NotSupportedError");
        }
        return apply(promiseResolve, PromiseCtor, [hash]);
      } catch (e) {
        return apply(promiseReject, PromiseCtor, [e]);
      }
    }
  }
  for (const method of ["encrypt", "decrypt", "sign", "verify", "generateKey", "deriveKey", "deriveBits",
    "importKey", "exportKey", "wrapKey", "unwrapKey"]) {
    defineProperty(SubtleCrypto.prototype, method, {
      value: {
        [method]() {
          return apply(promiseReject, PromiseCtor, [new DOMExceptionCtor(
            `SubtleCrypto.${method} is not available in this sandbox: crypto.subtle has only digest`,
            "NotSupportedError")]);
        },
      }[method],
      writable: true, enumerable: true, configurable: true,
    });
  }
  defineProperty(SubtleCrypto.prototype, Symbol.toStringTag, { value: "SubtleCrypto", configurable: true });
  const subtle = new SubtleCrypto(internal);
  defineProperty(Crypto.prototype, Symbol.toStringTag, { value: "Crypto", configurable: true });
  const crypto = new Crypto(internal);
  shared.define(globalThis, "Crypto", Crypto);
  shared.define(globalThis, "SubtleCrypto", SubtleCrypto);
  shared.define(globalThis, "crypto", crypto);
})
