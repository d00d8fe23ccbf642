// One builtin call at a time over a large buffer, forever.
// expect: limit
// budget: wall_clock_ms=500 max_memory_mib=64
const a = new Array(1 << 22).fill(7);
for (;;) { a.copyWithin(1, 0); a.fill(3); }
