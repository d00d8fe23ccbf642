// An error's stack as a program reads it: `Name: message`, then the frames,
// each place the author's own line and column (in characters), as V8
// writes a stack. QuickJS's own text has the frames alone, at places in
// the text the child was sent (which the parent may have edited: a last
// expression returned, TypeScript transformed) with columns in bytes;
// `native.mapPlace(line, column)` gives the author's place for one
// (`[line, column]`, or undefined for a place that is not the program's).
// The frames are read here, as text, so that no function name (which may
// hold anything, a lone surrogate or a fake place) is ever converted or
// taken for a place: a frame's place is where QuickJS writes it, at the
// end of the line, `(<program>:L:C)`, or a whole line `at <program>:L:C`.
//
// Replaced here, before any program: `Error.prototype.stack`'s getter (its
// setter is QuickJS's), `Error.captureStackTrace` (the stack it gives an
// object), a CallSite's `getLineNumber` and `getColumnNumber`, and
// `Error.prepareStackTrace`'s accessor, which hands QuickJS a wrapper of
// the program's function: a stack that function makes is the program's
// own, left as it made it (its CallSites' numbers are already the
// author's), and the wrapper keeps QuickJS's own text of the frames for
// the evaluator.
//
// `shared.rawStack(error)` hands the evaluator QuickJS's own text, to
// place an uncaught error (it maps the place itself): what
// `captureStackTrace` or the program's `prepareStackTrace` was given, else
// the stack the error was made with; undefined when there is none.
// `shared.stackFrames(error)`, the frames as a program reads them, is for
// the console, which writes the error's `Name: message` itself.
(function (native, shared) {
  "use strict";
  const { mapPlace, classId } = native;
  const apply = Reflect.apply;
  const { getOwnPropertyDescriptor: gopd, defineProperty, getPrototypeOf } = Object;
  const ErrorCtor = Error, ErrorProto = Error.prototype;
  const errorToString = ErrorProto.toString;
  const NumberCtor = Number;
  const strSlice = String.prototype.slice, strIndexOf = String.prototype.indexOf;
  const strLastIndexOf = String.prototype.lastIndexOf, strSplit = String.prototype.split;
  const strCharCodeAt = String.prototype.charCodeAt;
  const arrayJoin = Array.prototype.join;
  const wmGet = WeakMap.prototype.get, wmSet = WeakMap.prototype.set;
  const wsHas = WeakSet.prototype.has, wsAdd = WeakSet.prototype.add;
  const wsDelete = WeakSet.prototype.delete;
  const MapCtor = Map, mapGet = Map.prototype.get, mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete, mapKeys = Map.prototype.keys;
  const mapSize = gopd(Map.prototype, "size").get;
  const mapIteratorNext = getPrototypeOf(new Map().keys()).next;
  const strStartsWith = String.prototype.startsWith;
  const SetCtor = Set, setAdd = Set.prototype.add, setHas = Set.prototype.has;
  const DOM_EXCEPTION = typeof DOMException === "function" ? classId(new DOMException()) : -1;
  const accessor = gopd(ErrorProto, "stack");
  const rawGet = accessor.get;
  const prepare = gopd(ErrorCtor, "prepareStackTrace");
  const capture = ErrorCtor.captureStackTrace;
  const FILE = "<program>";
  const OPEN = "(" + FILE + ":", AT = "at " + FILE + ":";

  // QuickJS's own text of the frames of what `captureStackTrace` was
  // given, or the CallSites the program's `prepareStackTrace` was handed
  // (made text only when it is asked for: a stack is made at every tool
  // call's site, and few are ever read).
  const captured = new WeakMap();
  // What the program's `prepareStackTrace` made the stack of.
  const madeByProgram = new WeakSet();
  // The last error the program's `prepareStackTrace` was handed.
  let lastPrepared;
  // The last texts the program's `prepareStackTrace` made, with their
  // CallSites: QuickJS keeps such a text as where a value that is not an
  // Error was thrown, and the evaluator must not read it as QuickJS's own.
  const products = new MapCtor();
  const MAX_PRODUCTS = 64;
  // Whether the program has set a `prepareStackTrace` function in this run.
  let formats = false;

  const isObject = (v) => (typeof v === "object" && v !== null) || typeof v === "function";

  // `Name: message`, as V8 heads a stack (Error.prototype.toString's).
  function header(e) {
    try {
      return apply(errorToString, e, []);
    } catch {
      return "Error";
    }
  }

  // Whether `text` from `from` to `to` is one or more ASCII digits.
  function digits(text, from, to) {
    if (from >= to) return false;
    for (let i = from; i < to; i++) {
      const c = apply(strCharCodeAt, text, [i]);
      if (c < 48 || c > 57) return false;
    }
    return true;
  }

  // One line of QuickJS's text with the author's place, if it is a frame
  // of the program's; `first`: the text's first line, the only one that
  // can be a syntax error's place `at <program>:L:C`.
  function mapFrame(line, first) {
    let start, end;
    if (line.length > 0 && line[line.length - 1] === ")") {
      const open = apply(strLastIndexOf, line, [OPEN]);
      if (open < 0) return line;
      start = open + OPEN.length;
      end = line.length - 1;
    } else {
      if (!first) return line;
      const at = apply(strIndexOf, line, [AT]);
      if (at < 0) return line;
      for (let i = 0; i < at; i++) if (line[i] !== " ") return line;
      start = at + AT.length;
      end = line.length;
    }
    const colon = apply(strIndexOf, line, [":", start]);
    if (colon < 0 || colon > end || !digits(line, start, colon) || !digits(line, colon + 1, end)) return line;
    const place = mapPlace(
      NumberCtor(apply(strSlice, line, [start, colon])),
      NumberCtor(apply(strSlice, line, [colon + 1, end])),
    );
    if (place === undefined) return line;
    return apply(strSlice, line, [0, start]) + place[0] + ":" + place[1] + apply(strSlice, line, [end]);
  }

  // QuickJS's frames with the author's places, without the line break
  // after the last.
  function frames(raw) {
    let text = raw;
    if (text.length > 0 && text[text.length - 1] === "\n") text = apply(strSlice, text, [0, -1]);
    if (apply(strIndexOf, text, [FILE + ":"]) < 0) return text;
    const lines = apply(strSplit, text, ["\n"]);
    for (let i = 0; i < lines.length; i++) lines[i] = mapFrame(lines[i], i === 0);
    return apply(arrayJoin, lines, ["\n"]);
  }

  // QuickJS's stack of an instance of an Error subclass starts inside the
  // subclasses' constructors (their `super(...)`), where V8's starts where
  // the program said `new`: a `throw new NotFound(id)` was placed at
  // NotFound's `super` line, the same for every throw of it. Those first
  // frames of the program's, each named after a class on the error's
  // prototype chain, are left out (never every frame). No program code
  // runs: a Proxy on the chain ends the walk, and only data properties
  // are read.
  const ERROR_CLASS = classId(new ErrorCtor());
  const PROXY_CLASS = classId(new Proxy({}, {}));
  const arraySlice = Array.prototype.slice;
  function made(e, raw) {
    if (typeof raw !== "string" || !isObject(e) || classId(e) !== ERROR_CLASS) return raw;
    let names;
    for (let p = getPrototypeOf(e), i = 0; p !== null && i < 32; p = getPrototypeOf(p), i++) {
      if (classId(p) === PROXY_CLASS || p === ErrorProto) break;
      const d = gopd(p, "constructor");
      const c = d !== undefined && "value" in d ? d.value : undefined;
      if (typeof c !== "function" || classId(c) === PROXY_CLASS) continue;
      const n = gopd(c, "name");
      if (n === undefined || typeof n.value !== "string" || n.value === "") continue;
      if (names === undefined) names = new SetCtor();
      apply(setAdd, names, [n.value]);
    }
    if (names === undefined) return raw;
    const lines = apply(strSplit, raw, ["\n"]);
    let skip = 0;
    while (skip < lines.length - 1) {
      const line = lines[skip];
      const open = apply(strIndexOf, line, [" " + OPEN]);
      if (!apply(strStartsWith, line, ["    at "]) || open < 0) break;
      if (!apply(setHas, names, [apply(strSlice, line, [7, open])])) break;
      skip++;
    }
    // A stack of nothing but those frames keeps them: they are all it has.
    const rest = apply(arraySlice, lines, [skip]);
    if (skip === 0 || (rest.length === 1 && rest[0] === "")) return raw;
    return apply(arrayJoin, rest, ["\n"]);
  }

  function shown(e, raw) {
    const f = frames(raw);
    return f === "" ? header(e) : header(e) + "\n" + f;
  }

  const getter = {
    get stack() {
      const raw = apply(rawGet, this, []);
      return typeof raw !== "string" || apply(wsHas, madeByProgram, [this]) ? raw : shown(this, made(this, raw));
    },
  };
  defineProperty(ErrorProto, "stack", {
    __proto__: null,
    get: gopd(getter, "stack").get,
    set: accessor.set,
    enumerable: accessor.enumerable,
    configurable: accessor.configurable,
  });

  // A CallSite's prototype, from the one place QuickJS hands CallSites out.
  const before = apply(prepare.get, ErrorCtor, []);
  let site;
  apply(prepare.set, ErrorCtor, [(e, sites) => sites[0]]);
  try {
    site = apply(rawGet, new ErrorCtor(), []);
  } finally {
    apply(prepare.set, ErrorCtor, [before]);
  }
  const CallSite = getPrototypeOf(site);
  const rawFile = CallSite.getFileName, rawFunctionName = CallSite.getFunctionName;
  const rawLine = CallSite.getLineNumber, rawColumn = CallSite.getColumnNumber;
  const rawIsNative = CallSite.isNative;

  // QuickJS's own text for `sites`, as it writes a stack.
  function rawText(sites) {
    let text = "";
    for (let i = 0; i < sites.length; i++) {
      const s = sites[i];
      const name = apply(rawFunctionName, s, []);
      text += "    at " + (typeof name === "string" && name !== "" ? name : "<anonymous>");
      text += apply(rawIsNative, s, [])
        ? " (native)\n"
        : " (" + apply(rawFile, s, []) + ":" + apply(rawLine, s, []) + ":" + apply(rawColumn, s, []) + ")\n";
    }
    return text;
  }

  function place(s) {
    return apply(rawFile, s, []) === FILE ? mapPlace(apply(rawLine, s, []), apply(rawColumn, s, [])) : undefined;
  }
  const siteMethods = {
    getLineNumber() {
      const at = place(this);
      return at === undefined ? apply(rawLine, this, []) : at[0];
    },
    getColumnNumber() {
      const at = place(this);
      return at === undefined ? apply(rawColumn, this, []) : at[1];
    },
  };
  for (const name of ["getLineNumber", "getColumnNumber"]) {
    defineProperty(CallSite, name, {
      __proto__: null,
      value: siteMethods[name],
      writable: true,
      configurable: true,
    });
  }

  // `Error.prepareStackTrace`: reads as what the program set; QuickJS is
  // handed a wrapper that notes the error and its CallSites first.
  let programPrepare = before;
  function wrap(fn) {
    return function (error, sites) {
      if (isObject(error)) {
        apply(wmSet, captured, [error, sites]);
        apply(wsAdd, madeByProgram, [error]);
        lastPrepared = error;
      }
      const made = apply(fn, this, [error, sites]);
      if (typeof made === "string") {
        apply(mapDelete, products, [made]);
        apply(mapSet, products, [made, sites]);
        if (apply(mapSize, products, []) > MAX_PRODUCTS) {
          apply(mapDelete, products, [apply(mapIteratorNext, apply(mapKeys, products, []), []).value]);
        }
      }
      return made;
    };
  }
  const prepareAccessor = {
    get prepareStackTrace() {
      return programPrepare;
    },
    set prepareStackTrace(fn) {
      apply(prepare.set, ErrorCtor, [typeof fn === "function" ? wrap(fn) : fn]);
      programPrepare = fn;
      if (typeof fn === "function") formats = true;
    },
  };
  defineProperty(ErrorCtor, "prepareStackTrace", {
    __proto__: null,
    get: gopd(prepareAccessor, "prepareStackTrace").get,
    set: gopd(prepareAccessor, "prepareStackTrace").set,
    enumerable: prepare.enumerable,
    configurable: prepare.configurable,
  });

  const methods = {
    captureStackTrace(target, constructorOpt) {
      // Frames from the caller's up, as QuickJS's own gives them from its
      // caller's: this function's frame is the one skipped (V8 ignores a
      // constructorOpt that is not a function).
      // Inside the program's own `prepareStackTrace` (which may call this),
      // QuickJS makes no stack: what the outer call notes is kept.
      const outer = lastPrepared;
      lastPrepared = undefined;
      try {
        apply(capture, ErrorCtor, [target, typeof constructorOpt === "function" ? constructorOpt : captureStackTrace]);
      } catch (e) {
        lastPrepared = outer;
        throw e;
      }
      const made = lastPrepared === target;
      lastPrepared = outer;
      if (made) return;
      apply(wsDelete, madeByProgram, [target]);
      const d = gopd(target, "stack");
      if (d === undefined || typeof d.value !== "string") return;
      apply(wmSet, captured, [target, d.value]);
      defineProperty(target, "stack", {
        __proto__: null,
        value: shown(target, d.value),
        writable: true,
        configurable: true,
      });
    },
  };
  const captureStackTrace = methods.captureStackTrace;
  defineProperty(ErrorCtor, "captureStackTrace", {
    __proto__: null,
    value: captureStackTrace,
    writable: true,
    configurable: true,
  });

  // QuickJS's text of noted CallSites, or undefined.
  function textOf(noted) {
    if (typeof noted === "string") return noted;
    try {
      return rawText(noted);
    } catch {
      return undefined;
    }
  }

  shared.rawStack = (e) => {
    if (!isObject(e)) return undefined;
    const noted = apply(wmGet, captured, [e]);
    if (noted !== undefined) return textOf(noted);
    if (apply(wsHas, madeByProgram, [e])) return undefined;
    const raw = apply(rawGet, e, []);
    if (typeof raw === "string") return made(e, raw);
    // A DOMException keeps QuickJS's text as an own property, made with
    // it; one the program rewrote (a stack it read is headed) is not.
    if (classId(e) === DOM_EXCEPTION) {
      const d = gopd(e, "stack");
      if (d !== undefined && typeof d.value === "string" && apply(strStartsWith, d.value, ["    at "])) return d.value;
    }
    return undefined;
  };
  // QuickJS's own text for `text`, a place QuickJS kept of a throw: the
  // same, unless the program's `prepareStackTrace` made it (then the text
  // of its CallSites, if it is one of the last made; else undefined).
  shared.thrownText = (text) => {
    if (!formats) return text;
    const sites = apply(mapGet, products, [text]);
    return sites === undefined ? undefined : textOf(sites);
  };
  shared.stackFrames = (e) => {
    const raw = apply(rawGet, e, []);
    if (typeof raw !== "string") return undefined;
    return apply(wsHas, madeByProgram, [e]) ? raw : frames(made(e, raw));
  };
});
