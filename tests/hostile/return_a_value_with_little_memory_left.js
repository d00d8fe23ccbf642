// A value whose Result fits in a frame (15.6 MB) but not in the memory the
// child has left: the Result that says so, where the child's allocation
// of the frame aborted (Rust's "memory allocation of 16777216 bytes failed"
// on the console, and "memory limit reached" from the parent).
// expect: limit
// error: memory limit: the Result could not be written
// budget: max_memory_mib=32
return '"'.repeat(3_900_000);
