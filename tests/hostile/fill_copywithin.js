// Builtins that each walk a large buffer in C (Array and Uint8Array fill and
// copyWithin), called forever. The buffers fit the memory cap, so only the
// wall clock can end it.
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500 max_memory_mib=64
const a = new Array(1 << 20).fill(7);
const b = new Uint8Array(16 << 20);
for (;;) { a.copyWithin(1, 0); a.fill(3); b.copyWithin(1, 0); b.fill(5); }
