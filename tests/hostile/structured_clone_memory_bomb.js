// structuredClone of a graph of 20,000 objects, kept, again and again: the memory cap
// ends it, not the parent.
// expect: limit
// error: memory
// budget: max_memory_mib=16
const big = Array.from({ length: 20000 }, (_, i) => ({ i, s: "x" + i, m: new Map([[i, [i]]]) }));
const keep = [];
for (;;) keep.push(structuredClone(big));
