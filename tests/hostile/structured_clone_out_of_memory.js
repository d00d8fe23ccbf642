// A structuredClone too large for the heap: its memo and half-made copy
// are freed as the `null` QuickJS throws unwinds. Still memory, so `limit`
// (was `invalid`, "uncaught exception: null").
// expect: limit
// error: memory limit
// budget: max_memory_mib=64
const rows = Array.from({ length: 200000 }, (_, i) => ({ id: i, name: "n" + i, tags: ["a", "b"] }));
const copy = structuredClone(rows);
return copy.length;
