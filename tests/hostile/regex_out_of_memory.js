// A backtracking regexp whose backtrack stack outgrows a small heap: out of
// memory, so `limit`, like every other way of running out.
// expect: limit
// error: memory limit: InternalError: out of memory in regexp execution
// budget: max_memory_mib=16
return /(?:a|b|ab)*c/.test("ab".repeat(1e6));
