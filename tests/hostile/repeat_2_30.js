// A string of 2^30 characters: past QuickJS's longest string and the memory cap.
// expect: limit
// error: size limit
// budget: max_memory_mib=64
return "x".repeat(2 ** 30).length;
