// Where QuickJS's answer differs from V8's in text a program reads and
// returns, and V8's is as exact here:
// - A date's string names its time zone, as V8's does: the sandbox's is
//   UTC, so `String(date)` and `toTimeString()` end in
//   " (Coordinated Universal Time)" ("Mon Jul 01 2024 12:00:00 GMT+0000
//   (Coordinated Universal Time)"). QuickJS stops at the offset. (`Date()`
//   called without `new` keeps QuickJS's text: it does not go through
//   `toString`.)
// - `Promise.any`'s AggregateError, when every promise rejected, has V8's
//   message, "All promises were rejected", where QuickJS's has none (a
//   program that returns `e.message` answered "").
(function (native, shared) {
  "use strict";
  const { defineProperty, getPrototypeOf } = Object;
  const hasOwn = Object.hasOwn;
  const apply = Reflect.apply;
  const DateProto = Date.prototype;
  const ZONE = " (Coordinated Universal Time)";
  const method = (owner, name, f) =>
    defineProperty(owner, name, { __proto__: null, value: f, writable: true, enumerable: false, configurable: true });

  for (const name of ["toString", "toTimeString"]) {
    const plain = DateProto[name];
    const f = {
      [name]() {
        const text = apply(plain, this, []);
        return text === "Invalid Date" ? text : text + ZONE;
      },
    }[name];
    method(DateProto, name, f);
  }

  const PromiseCtor = Promise;
  const any = PromiseCtor.any, then = PromiseCtor.prototype.then;
  const AggregateProto = AggregateError.prototype;
  const named = (e) => {
    if (typeof e === "object" && e !== null && getPrototypeOf(e) === AggregateProto && !hasOwn(e, "message")) {
      defineProperty(e, "message", {
        __proto__: null,
        value: "All promises were rejected",
        writable: true,
        enumerable: false,
        configurable: true,
      });
    }
    throw e;
  };
  method(PromiseCtor, "any", {
    any(iterable) {
      return apply(then, apply(any, this, [iterable]), [undefined, named]);
    },
  }.any);
})
