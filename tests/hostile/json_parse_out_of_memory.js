// JSON.parse of a large text runs out of memory inside native code, where
// no interrupt samples the heap, and the half-built value is freed as the
// `null` QuickJS throws unwinds: by the end the heap is far from its limit.
// Still memory, so `limit` (was `invalid`, "uncaught exception: null").
// expect: limit
// error: memory limit
// budget: max_memory_mib=64
const text = "[" + '{"a":1},'.repeat(3e6) + "1]";
const value = JSON.parse(text);
return value.length;
