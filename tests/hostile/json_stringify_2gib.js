// JSON text of 2 GiB from 1 MiB of strings: the text outgrows memory long
// before QuickJS's longest string.
// expect: limit
// error: memory limit
const s = "x".repeat(1 << 20);
return JSON.stringify(new Array(2048).fill(s)).length;
