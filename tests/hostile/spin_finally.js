// An endless loop whose finally block loops again: the interrupt must not run
// (or be swallowed by) program code on its way out.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
for (;;) { try { for (;;) {} } finally { for (;;) {} } }
