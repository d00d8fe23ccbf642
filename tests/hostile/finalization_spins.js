// A FinalizationRegistry callback that spins once its target is collected:
// code the program never calls directly is still under the wall clock.
// (With a callback that only notes it ran, the same program returns true.)
// expect: limit
// error: wall clock
// budget: wall_clock_ms=1000
const registry = new FinalizationRegistry(() => { for (;;) {} });
for (let i = 0; i < 100000; i++) registry.register({ i }, i);
for (let i = 0; i < 200; i++) { new Array(10000).fill(i); await null; }
return "no finalizer ran";
