// String doubling that really copies (join builds a flat string each time,
// where s + s may build a rope): memory runs out before the length limit.
// expect: limit
// error: memory
// budget: max_memory_mib=32
let s = "x";
for (;;) s = [s, s].join("");
