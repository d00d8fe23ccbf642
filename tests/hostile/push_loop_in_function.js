// Memory runs out in a function whose locals hold it all: QuickJS throws
// null (no memory is left for an error), and by the time the program ends
// the function's array is freed. Still memory, so `limit`.
// expect: limit
// error: memory limit
// budget: max_memory_mib=32
function fill() {
  const a = [];
  for (;;) a.push({ i: a.length, s: "item " + a.length });
}
fill();
