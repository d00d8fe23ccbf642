// An error's stack as a program reads it: `Name: message`, then the frames,
// each place the author's own line and column (in characters), as V8
// writes a stack. QuickJS's own text has the frames alone, at places in
// the text the child was sent (which the parent may have edited: a last
// expression returned, TypeScript transformed) with columns in bytes;
// `native.mapStack(text)` puts the author's places in it, and
// `native.mapPlace(line, column)` maps one (`[line, column]`, or undefined
// for a place that is not the program's).
//
// Replaced here, before any program: `Error.prototype.stack`'s getter (its
// setter is QuickJS's), `Error.captureStackTrace` (the stack it gives an
// object), and a CallSite's `getLineNumber` and `getColumnNumber` (what
// `Error.prepareStackTrace` is handed). A stack made by the program's own
// `Error.prepareStackTrace` is its own, left as it made it.
//
// `shared.rawStack(error)` hands the evaluator QuickJS's own text, to
// place an uncaught error (it maps the place itself): the stack
// `captureStackTrace` gave the object, else the one it was made with.
// `shared.stackFrames(error)`, the frames as a program reads them, is for
// the console, which writes the error's `Name: message` itself.
(function (native, shared) {
  "use strict";
  const { mapStack, mapPlace } = native;
  const apply = Reflect.apply;
  const { getOwnPropertyDescriptor: gopd, defineProperty, getPrototypeOf } = Object;
  const ErrorCtor = Error, ErrorProto = Error.prototype;
  const errorToString = ErrorProto.toString;
  const strSlice = String.prototype.slice;
  const wmGet = WeakMap.prototype.get, wmSet = WeakMap.prototype.set;
  const accessor = gopd(ErrorProto, "stack");
  const rawGet = accessor.get;
  const prepare = gopd(ErrorCtor, "prepareStackTrace");
  const capture = ErrorCtor.captureStackTrace;
  const FILE = "<program>";

  // The objects `captureStackTrace` gave a stack, with QuickJS's text.
  const captured = new WeakMap();

  // Whether the program formats stacks itself.
  const prepared = () => typeof apply(prepare.get, ErrorCtor, []) === "function";

  // `Name: message`, as V8 heads a stack (Error.prototype.toString's).
  function header(e) {
    try {
      return apply(errorToString, e, []);
    } catch {
      return "Error";
    }
  }

  // The frames, mapped, without QuickJS's line break after the last.
  function frames(raw) {
    const text = mapStack(raw);
    return text.length > 0 && text[text.length - 1] === "\n" ? apply(strSlice, text, [0, -1]) : text;
  }

  function shown(e, raw) {
    const f = frames(raw);
    return f === "" ? header(e) : header(e) + "\n" + f;
  }

  const getter = {
    get stack() {
      const raw = apply(rawGet, this, []);
      return typeof raw !== "string" || prepared() ? raw : shown(this, raw);
    },
  };
  defineProperty(ErrorProto, "stack", {
    __proto__: null,
    get: gopd(getter, "stack").get,
    set: accessor.set,
    enumerable: accessor.enumerable,
    configurable: accessor.configurable,
  });

  const methods = {
    captureStackTrace(target, constructorOpt) {
      // Frames from the caller's up, as QuickJS's own gives them from
      // its caller's: this function's frame is the one skipped.
      apply(capture, ErrorCtor, [target, constructorOpt === undefined ? captureStackTrace : constructorOpt]);
      if (prepared()) return;
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
  const rawFile = CallSite.getFileName;
  const rawLine = CallSite.getLineNumber, rawColumn = CallSite.getColumnNumber;
  function place(site) {
    return apply(rawFile, site, []) === FILE
      ? mapPlace(apply(rawLine, site, []), apply(rawColumn, site, []))
      : undefined;
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

  shared.rawStack = (e) => {
    if ((typeof e !== "object" && typeof e !== "function") || e === null) return undefined;
    const text = apply(wmGet, captured, [e]);
    if (text !== undefined) return text;
    const raw = apply(rawGet, e, []);
    return typeof raw === "string" ? raw : undefined;
  };
  shared.stackFrames = (e) => {
    const raw = apply(rawGet, e, []);
    return typeof raw === "string" ? frames(raw) : undefined;
  };
});
