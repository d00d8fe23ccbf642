// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
for (;;) {}
