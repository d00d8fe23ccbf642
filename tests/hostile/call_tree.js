// A deep call tree without a single loop.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
function f(n) { return n === 0 ? 0 : f(n - 1) + f(n - 1) + 1; }
return f(60);
