// TextEncoder and TextDecoder (WHATWG Encoding Standard), UTF-8 only:
// `fatal`, `ignoreBOM`, `decode(input, {stream})` and `encodeInto`. Other
// encodings are refused with a RangeError that says so. Also `atob` and
// `btoa`'s argument check.
(function (native, shared) {
  "use strict";
  const { utf8Encode, utf8Decode } = native;
  const toWellFormed = String.prototype.toWellFormed;
  const apply = Reflect.apply;
  const { defineProperty } = Object;
  const U8 = Uint8Array;
  const isView = ArrayBuffer.isView;
  const abByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const typedArrayTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;
  const u8Set = Object.getPrototypeOf(Uint8Array.prototype).set;
  const codePointAt = String.prototype.codePointAt;
  const StringCtor = String, stringify = JSON.stringify;
  const trim = String.prototype.trim, toLowerCase = String.prototype.toLowerCase;

  function usv(value) { return apply(toWellFormed, StringCtor(value), []); }

  // The Encoding Standard's labels for UTF-8.
  const UTF8_LABELS = {
    __proto__: null, "unicode-1-1-utf-8": true, "unicode11utf8": true, "unicode20utf8": true,
    "utf-8": true, "utf8": true, "x-unicode20utf8": true,
  };

  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(input = "") { return utf8Encode(usv(input)); }
    encodeInto(source, destination) {
      if (apply(typedArrayTag, destination, []) !== "Uint8Array")
        throw new TypeError("TextEncoder.encodeInto: the destination must be a Uint8Array");
      const text = StringCtor(source);
      let read = 0, written = 0;
      const room = destination.length;
      // Most calls have room for all of it: encoded and copied natively
      // (the loop below costs about 0.4 µs a character).
      const all = text.length <= room ? utf8Encode(usv(text)) : null;
      if (all !== null && all.length <= room) {
        apply(u8Set, destination, [all]);
        return { read: text.length, written: all.length };
      }
      while (read < text.length) {
        let c = apply(codePointAt, text, [read]);
        const units = c > 0xffff ? 2 : 1;
        if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;   // a lone surrogate
        const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (written + size > room) break;
        if (size === 1) destination[written] = c;
        else if (size === 2) {
          destination[written] = 0xc0 | (c >> 6);
          destination[written + 1] = 0x80 | (c & 0x3f);
        } else if (size === 3) {
          destination[written] = 0xe0 | (c >> 12);
          destination[written + 1] = 0x80 | ((c >> 6) & 0x3f);
          destination[written + 2] = 0x80 | (c & 0x3f);
        } else {
          destination[written] = 0xf0 | (c >> 18);
          destination[written + 1] = 0x80 | ((c >> 12) & 0x3f);
          destination[written + 2] = 0x80 | ((c >> 6) & 0x3f);
          destination[written + 3] = 0x80 | (c & 0x3f);
        }
        written += size;
        read += units;
      }
      return { read, written };
    }
  }
  defineProperty(TextEncoder.prototype, Symbol.toStringTag, { value: "TextEncoder", configurable: true });

  // The bytes of a BufferSource, as a Uint8Array over the same memory;
  // `method` names who asked, in the TypeError for anything else. Shared
  // with crypto.js (`shared.bytesOf`).
  function bytesOf(input, method) {
    if (input === undefined) return new U8(0);
    if (isView(input)) return new U8(input.buffer, input.byteOffset, input.byteLength);
    try {
      apply(abByteLength, input, []);
    } catch {
      throw new TypeError(`${method}: the input must be an ArrayBuffer, a typed array or a DataView`);
    }
    return new U8(input);
  }
  shared.bytesOf = bytesOf;

  class TextDecoder {
    #fatal; #ignoreBOM; #pending = new U8(0); #bomSeen = false; #streaming = false;
    constructor(label = "utf-8", options = undefined) {
      const name = apply(toLowerCase, apply(trim, StringCtor(label), []), []);
      if (UTF8_LABELS[name] !== true) {
        throw new RangeError(`TextDecoder: the encoding ${stringify(StringCtor(label))} is not supported here: only UTF-8 is`);
      }
      this.#fatal = !!(options && options.fatal);
      this.#ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() { return "utf-8"; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input = undefined, options = undefined) {
      const stream = !!(options && options.stream);
      let bytes = bytesOf(input, "TextDecoder.decode");
      if (!this.#streaming) { this.#pending = new U8(0); this.#bomSeen = false; }
      if (this.#pending.length) {
        const joined = new U8(this.#pending.length + bytes.length);
        apply(u8Set, joined, [this.#pending]);
        apply(u8Set, joined, [bytes, this.#pending.length]);
        bytes = joined;
      }
      this.#streaming = stream;
      let text, pending;
      try {
        const decoded = utf8Decode(bytes, stream, this.#fatal);
        text = decoded[0]; pending = decoded[1];
      } catch (e) {
        this.#pending = new U8(0); this.#streaming = false;
        throw e;
      }
      this.#pending = pending;
      if (!this.#ignoreBOM && !this.#bomSeen && text.length > 0) {
        this.#bomSeen = true;
        if (text[0] === "\uFEFF") text = text.slice(1);
      }
      return text;
    }
  }
  defineProperty(TextDecoder.prototype, Symbol.toStringTag, { value: "TextDecoder", configurable: true });

  shared.define(globalThis, "TextEncoder", TextEncoder);
  shared.define(globalThis, "TextDecoder", TextDecoder);

  // atob and btoa are QuickJS's own, which called with nothing worked on
  // the text "undefined" (`btoa()` answered "dW5kZWZpbmVk"), where browsers
  // and Node refuse. Method shorthand: named, length 1, not constructors,
  // as the built-ins are.
  const decode64 = atob, encode64 = btoa;
  const base64 = {
    atob(data) {
      if (arguments.length === 0) throw new TypeError("atob: 1 argument required, but only 0 present");
      return decode64(data);
    },
    btoa(data) {
      if (arguments.length === 0) throw new TypeError("btoa: 1 argument required, but only 0 present");
      return encode64(data);
    },
  };
  shared.define(globalThis, "atob", base64.atob);
  shared.define(globalThis, "btoa", base64.btoa);
})
