// The thrown error's `stack` and `message` are getters that spin: the
// guest reads them to report the error, inside the wall clock.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
const e = new Error("x");
Object.defineProperty(e, "stack", { get() { for (;;) {} } });
Object.defineProperty(e, "message", { get() { for (;;) {} } });
throw e;
