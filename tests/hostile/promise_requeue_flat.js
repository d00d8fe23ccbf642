// A job that queues one more job, forever: the job queue never drains and
// nothing grows, so only the wall clock can end it.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
function again() { Promise.resolve().then(again); }
again();
await new Promise(() => {});
