// A return value over the 16 MiB frame maximum.
// expect: limit
// error: does not fit in a frame
// budget: max_memory_mib=128
return "y".repeat(20 * 1024 * 1024);
