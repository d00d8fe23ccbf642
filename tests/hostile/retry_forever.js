// A program that catches every per-call deadline and retries forever: each
// call ends transient, and the wall clock ends the whole.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
for (;;) { try { await host.call("never", {}, { deadlineMs: 20 }); } catch (e) {} }
