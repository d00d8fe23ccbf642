// A tool that never answers, with a per-call deadline: transient at the deadline.
// expect: transient
// error: deadline
// budget: wall_clock_ms=5000
await host.call("never", {}, { deadlineMs: 200 });
