// performance.timeOrigin as the standard has it: the time since the epoch,
// in milliseconds, that performance.now() counts from, so that
// `timeOrigin + now()` is the wall-clock time. QuickJS's own is a reading of
// its monotonic clock taken when the context was made: in a snapshot, one
// small fixed number for every execution, and a property that cannot be
// changed, so `performance` is made anew around QuickJS's `now`. The origin
// is read on first use; every execution is a fresh instance of the
// snapshot, so each reads its own.
(function (native, shared) {
  "use strict";
  const now = performance.now, dateNow = Date.now;
  const apply = Reflect.apply;
  const { defineProperty } = Object;
  let origin;
  function timeOrigin() {
    if (origin === undefined) origin = apply(dateNow, Date, []) - apply(now, undefined, []);
    return origin;
  }
  class Performance {
    now() { return apply(now, undefined, []); }
    get timeOrigin() { return timeOrigin(); }
    toJSON() { return { timeOrigin: timeOrigin() }; }
  }
  for (const name of ["now", "timeOrigin", "toJSON"]) {
    const d = Object.getOwnPropertyDescriptor(Performance.prototype, name);
    d.enumerable = true;
    defineProperty(Performance.prototype, name, d);
  }
  defineProperty(Performance.prototype, Symbol.toStringTag, { value: "Performance", configurable: true });
  const performanceObject = new Performance();
  shared.define(globalThis, "Performance", Performance);
  defineProperty(globalThis, "performance", {
    value: performanceObject, writable: true, enumerable: true, configurable: true,
  });
})
