// performance.now() and performance.timeOrigin as the standard has them:
// milliseconds since this execution's time origin, never negative, and
// that origin as a time since the epoch, so that `timeOrigin + now()` is
// the wall-clock time. QuickJS's own `now` counts from a clock reading taken
// when the context was made, in the snapshot, on another clock's base: an
// execution could read a negative `now`, and every one read the same fixed
// `timeOrigin` (a property that cannot be changed, so `performance` is
// made anew). The origin is taken at the first use in an execution; every
// execution is a fresh instance of the snapshot, so each takes its own.
// Set up first: `shared.now` is the other files' clock (Event.timeStamp).
(function (native, shared) {
  "use strict";
  const clock = performance.now, dateNow = Date.now;
  const apply = Reflect.apply;
  const { defineProperty } = Object;
  let base, origin;
  function now() {
    const t = apply(clock, undefined, []);
    if (base === undefined) {
      base = t;
      origin = apply(dateNow, Date, []);
    }
    return t - base;
  }
  function timeOrigin() {
    if (base === undefined) now();
    return origin;
  }
  class Performance {
    now() { return now(); }
    get timeOrigin() { return timeOrigin(); }
    toJSON() { return { timeOrigin: timeOrigin() }; }
  }
  for (const name of ["now", "timeOrigin", "toJSON"]) {
    const d = Object.getOwnPropertyDescriptor(Performance.prototype, name);
    d.enumerable = true;
    defineProperty(Performance.prototype, name, d);
  }
  defineProperty(Performance.prototype, Symbol.toStringTag, { value: "Performance", configurable: true });
  shared.now = now;
  defineProperty(globalThis, "Performance", { value: Performance, writable: true, enumerable: false, configurable: true });
  defineProperty(globalThis, "performance", {
    value: new Performance(), writable: true, enumerable: true, configurable: true,
  });
})
