// queueMicrotask requeuing itself: the job queue never drains, so the
// program's return is never reached as a Result, and no allocation grows:
// only the wall clock ends it.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
function again() { queueMicrotask(again); }
again();
return 1;
