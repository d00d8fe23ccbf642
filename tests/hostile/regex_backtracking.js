// Catastrophic backtracking inside the regex engine (C code, no JS loop).
// expect: limit
// error: wall clock
// budget: wall_clock_ms=500
return /^(a+)+$/.test("a".repeat(40) + "b");
