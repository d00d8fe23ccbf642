// performance.now() and performance.timeOrigin as the standard has them:
// milliseconds since this execution's start, never negative, and that
// start as a time since the epoch, so that `timeOrigin + now()` is the
// wall-clock time. QuickJS's own `now` counts from a clock reading taken
// when the context was made, in the snapshot, on another clock's base: an
// execution could read a negative `now`, and every one read the same fixed
// `timeOrigin` (a property that cannot be changed, so `performance` is
// made anew). The start is the run's own (`sinceStart`, from the evaluator);
// `timeOrigin` is read off the wall clock at its first use in a run.
// Set up first: `shared.now` is the other files' clock (Event.timeStamp).
(function (native, shared) {
  "use strict";
  const { sinceStart } = native;
  const dateNow = Date.now;
  const apply = Reflect.apply;
  const { defineProperty } = Object;
  const now = sinceStart;
  let origin;
  function timeOrigin() {
    // Read once: each execution is a fresh instance of the snapshot, whose
    // `origin` is unset.
    if (origin === undefined) origin = apply(dateNow, Date, []) - sinceStart();
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
