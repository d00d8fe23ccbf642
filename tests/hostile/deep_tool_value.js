// A tool value nested 100,000 deep (the program's own string, echoed back):
// parsing it as JSON must not crash anything. It ends as the stack limit,
// which a program cannot catch.
// expect: limit
// error: stack
try { await echo("[".repeat(100000) + "]".repeat(100000)); } catch (e) { return "caught"; }
return "parsed";
