// structuredClone of a large graph, kept, again and again: the memory cap
// ends it, not the parent.
// expect: limit
// error: memory
const big = Array.from({ length: 100000 }, (_, i) => ({ i, s: "x" + i, m: new Map([[i, [i]]]) }));
const keep = [];
for (;;) keep.push(structuredClone(big));
