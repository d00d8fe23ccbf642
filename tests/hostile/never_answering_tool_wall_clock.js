// A tool that never answers and no per-call deadline: the wall clock ends it.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
await never();
