// A promise chain that requeues itself forever: the job queue never drains.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
function again() { return Promise.resolve().then(again); }
again();
await new Promise(() => {});
