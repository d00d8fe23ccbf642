// The returned value's toJSON spins while the Result is being written:
// serialising the value is inside the wall clock.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
return { toJSON() { for (;;) {} } };
