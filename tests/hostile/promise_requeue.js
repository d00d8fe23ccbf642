// A promise chain that requeues itself forever: the job queue never drains,
// and the chain grows until memory runs out (or the wall clock, if first).
// expect: limit
// budget: wall_clock_ms=2000
function again() { return Promise.resolve().then(again); }
again();
await new Promise(() => {});
