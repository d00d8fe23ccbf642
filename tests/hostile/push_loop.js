// expect: limit
// error: memory
// budget: max_memory_mib=32
const a = [];
for (;;) a.push({ i: a.length, s: "item " + a.length });
