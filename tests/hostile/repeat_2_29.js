// A valid string length (2 ** 29) far past the memory cap: refused as memory
// (2 ** 30 is refused earlier, as a length; see repeat_2_30).
// expect: limit
// error: memory
// budget: max_memory_mib=64
return "x".repeat(2 ** 29).length;
