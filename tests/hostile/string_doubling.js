// expect: limit
// error: size limit
// budget: max_memory_mib=32
let s = "x";
for (;;) s = s + s;
