// URL and URLSearchParams (WHATWG URL Standard). Parsing, serialising and
// the setters are the `url` crate's (natives.rs); this file gives them the
// standard's class shape and keeps a URL and its searchParams in step.
(function (native, shared) {
  "use strict";
  const StringCtor = String;
  const stringSlice = String.prototype.slice;
  // urlParse and urlSet answer undefined for what does not parse.
  const { urlParse, urlSet, formParse, formSerialize } = native;
  const toWellFormed = String.prototype.toWellFormed;
  const apply = Reflect.apply;
  const { defineProperty } = Object;
  const iteratorSymbol = Symbol.iterator;
  const arrayPush = Array.prototype.push;
  const arraySplice = Array.prototype.splice;
  const arraySort = Array.prototype.sort;
  const arrayFlat = Array.prototype.flat;

  // USVString: a string with lone surrogates made U+FFFD.
  function usv(value) { return apply(toWellFormed, StringCtor(value), []); }

  const HREF = 0, ORIGIN = 1, PROTOCOL = 2, USERNAME = 3, PASSWORD = 4, HOST = 5,
    HOSTNAME = 6, PORT = 7, PATHNAME = 8, SEARCH = 9, HASH = 10;

  const internal = Symbol("internal");

  class URLSearchParams {
    #list = [];     // [[name, value], ...]
    #url = null;    // the URL whose query this is, if any
    constructor(init = undefined) {
      if (init === internal) return;
      if (init === undefined || init === null) return;
      if (typeof init === "object" || typeof init === "function") {
        const method = init[iteratorSymbol];
        if (method !== undefined && method !== null) {
          if (typeof method !== "function") throw new TypeError("URLSearchParams: init is not iterable");
          for (const pair of init) {
            if (typeof pair !== "object" || pair === null || typeof pair[iteratorSymbol] !== "function")
              throw new TypeError("URLSearchParams: each pair must be a sequence");
            const items = [...pair];
            if (items.length !== 2) throw new TypeError("URLSearchParams: each pair must have exactly two items");
            apply(arrayPush, this.#list, [[usv(items[0]), usv(items[1])]]);
          }
        } else {
          for (const key of Reflect.ownKeys(init)) {
            if (typeof key !== "string") continue;
            const d = Reflect.getOwnPropertyDescriptor(init, key);
            if (d !== undefined && d.enumerable) apply(arrayPush, this.#list, [[usv(key), usv(init[key])]]);
          }
        }
        return;
      }
      let text = usv(init);
      if (text[0] === "?") text = apply(stringSlice, text, [1]);
      this.#list = pairs(formParse(text));
    }
    get size() { return this.#list.length; }
    append(name, value) {
      needs(arguments.length, 2, "append");
      apply(arrayPush, this.#list, [[usv(name), usv(value)]]);
      this.#update();
    }
    // Index loops over the pairs, never destructuring, `filter` or
    // `findIndex`: QuickJS's iterator protocol made each look at a pair cost
    // about 350 ns, and `set` rebuilt the whole list; a query of a few
    // thousand parameters set or read in a loop took seconds.
    delete(name, value = undefined) {
      needs(arguments.length, 1, "delete");
      name = usv(name);
      const v = value === undefined ? undefined : usv(value);
      const list = this.#list;
      let kept = 0;
      for (let i = 0; i < list.length; i++) {
        const pair = list[i];
        if (!(pair[0] === name && (v === undefined || pair[1] === v))) list[kept++] = pair;
      }
      list.length = kept;
      this.#update();
    }
    get(name) {
      needs(arguments.length, 1, "get");
      name = usv(name);
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) return list[i][1];
      return null;
    }
    getAll(name) {
      needs(arguments.length, 1, "getAll");
      name = usv(name);
      const list = this.#list, out = [];
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) apply(arrayPush, out, [list[i][1]]);
      return out;
    }
    has(name, value = undefined) {
      needs(arguments.length, 1, "has");
      name = usv(name);
      const v = value === undefined ? undefined : usv(value);
      const list = this.#list;
      for (let i = 0; i < list.length; i++) {
        if (list[i][0] === name && (v === undefined || list[i][1] === v)) return true;
      }
      return false;
    }
    set(name, value) {
      needs(arguments.length, 2, "set");
      name = usv(name); value = usv(value);
      // The first pair of that name takes the value, the others go, in one pass.
      const list = this.#list;
      let first = -1, kept = 0;
      for (let i = 0; i < list.length; i++) {
        const pair = list[i];
        if (pair[0] === name) {
          if (first >= 0) continue;
          first = kept;
          pair[1] = value;
        }
        list[kept++] = pair;
      }
      list.length = kept;
      if (first < 0) apply(arrayPush, list, [[name, value]]);
      this.#update();
    }
    sort() {
      // Stable, by code units of the names.
      apply(arraySort, this.#list, [(x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)]);
      this.#update();
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== "function") throw new TypeError("URLSearchParams.forEach: callback is not a function");
      for (let i = 0; i < this.#list.length; i++) {
        const pair = this.#list[i];
        apply(callback, thisArg, [pair[1], pair[0], this]);
      }
    }
    *entries() { for (let i = 0; i < this.#list.length; i++) { const pair = this.#list[i]; yield [pair[0], pair[1]]; } }
    *keys() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][0]; }
    *values() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][1]; }
    toString() { return formSerialize(apply(arrayFlat, this.#list, [])); }
    // The URL's query is made again when the URL is next read, not at each
    // change: a query built a parameter at a time (`append` in a loop) was
    // re-serialised and re-parsed whole at every step, quadratic in its size.
    #update() {
      if (this.#url !== null) queryChanged(this.#url);
    }
    static _attach(params, url) { params.#url = url; }
    static _serialize(params) { return formSerialize(apply(arrayFlat, params.#list, [])); }
    static _reset(params, query) { params.#list = query ? pairs(formParse(query)) : []; }
  }
  const attach = URLSearchParams._attach, reset = URLSearchParams._reset,
    serialize = URLSearchParams._serialize;
  delete URLSearchParams._attach; delete URLSearchParams._reset; delete URLSearchParams._serialize;
  defineProperty(URLSearchParams.prototype, iteratorSymbol, {
    value: URLSearchParams.prototype.entries, writable: true, configurable: true,
  });
  defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: "URLSearchParams", configurable: true });

  function pairs(flat) {
    const out = [];
    for (let i = 0; i + 1 < flat.length; i += 2) apply(arrayPush, out, [[flat[i], flat[i + 1]]]);
    return out;
  }
  function needs(got, want, method) {
    if (got < want) throw new TypeError(`URLSearchParams.${method}: ${want} argument${want > 1 ? "s" : ""} required, but only ${got} present`);
  }

  let queryChanged;

  class URL {
    #parts;
    #params;
    #queryChanged = false;   // searchParams changed since #parts was made
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeError("URL: 1 argument required, but only 0 present");
      const input = usv(url);
      const parts = base === undefined ? urlParse(input) : urlParse(input, usv(base));
      if (parts == null) {
        throw new TypeError(base === undefined
          ? `Invalid URL: ${JSON.stringify(input)}`
          : `Invalid URL: ${JSON.stringify(input)} against base ${JSON.stringify(usv(base))}`);
      }
      this.#parts = parts;
      this.#params = new URLSearchParams(internal);
      attach(this.#params, this);
      reset(this.#params, apply(stringSlice, parts[SEARCH], [1]));
    }
    static canParse(url, base = undefined) {
      if (arguments.length === 0) throw new TypeError("URL.canParse: 1 argument required, but only 0 present");
      return (base === undefined ? urlParse(usv(url)) : urlParse(usv(url), usv(base))) != null;
    }
    static parse(url, base = undefined) {
      if (arguments.length === 0) throw new TypeError("URL.parse: 1 argument required, but only 0 present");
      try { return base === undefined ? new URL(url) : new URL(url, base); } catch { return null; }
    }
    static createObjectURL() { throw new TypeError("URL.createObjectURL is not available in this sandbox (no Blob)"); }
    static revokeObjectURL() {}
    #set(which, value) {
      const parts = urlSet(this.#now()[HREF], which, usv(value));
      if (parts == null) throw new TypeError(`Invalid URL: ${JSON.stringify(usv(value))}`);
      this.#parts = parts;
      if (which === "href" || which === "search") reset(this.#params, apply(stringSlice, parts[SEARCH], [1]));
    }
    // The parts, with the query as searchParams serialises it if it changed.
    #now() {
      if (this.#queryChanged) {
        this.#queryChanged = false;
        this.#parts = urlSet(this.#parts[HREF], "search", serialize(this.#params)) ?? this.#parts;
      }
      return this.#parts;
    }
    static _queryChanged(url) { url.#queryChanged = true; }
    get href() { return this.#now()[HREF]; }
    set href(v) { this.#set("href", v); }
    get origin() { return this.#now()[ORIGIN]; }
    get protocol() { return this.#now()[PROTOCOL]; }
    set protocol(v) { this.#set("protocol", v); }
    get username() { return this.#now()[USERNAME]; }
    set username(v) { this.#set("username", v); }
    get password() { return this.#now()[PASSWORD]; }
    set password(v) { this.#set("password", v); }
    get host() { return this.#now()[HOST]; }
    set host(v) { this.#set("host", v); }
    get hostname() { return this.#now()[HOSTNAME]; }
    set hostname(v) { this.#set("hostname", v); }
    get port() { return this.#now()[PORT]; }
    set port(v) { this.#set("port", v); }
    get pathname() { return this.#now()[PATHNAME]; }
    set pathname(v) { this.#set("pathname", v); }
    get search() { return this.#now()[SEARCH]; }
    set search(v) { this.#set("search", v); }
    get searchParams() { return this.#params; }
    get hash() { return this.#now()[HASH]; }
    set hash(v) { this.#set("hash", v); }
    toString() { return this.#now()[HREF]; }
    toJSON() { return this.#now()[HREF]; }
  }
  queryChanged = URL._queryChanged;
  delete URL._queryChanged;
  defineProperty(URL.prototype, Symbol.toStringTag, { value: "URL", configurable: true });
  // WebIDL: attributes and operations are enumerable.
  for (const proto of [URL.prototype, URLSearchParams.prototype]) {
    for (const name of Reflect.ownKeys(proto)) {
      if (typeof name !== "string" || name === "constructor") continue;
      const d = Reflect.getOwnPropertyDescriptor(proto, name);
      if (d.enumerable === false) { d.enumerable = true; defineProperty(proto, name, d); }
    }
  }

  shared.define(globalThis, "URL", URL);
  shared.define(globalThis, "URLSearchParams", URLSearchParams);
})
