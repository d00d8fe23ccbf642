// A value of 10 MB of JSON whose Result, its quotes escaped, does not fit
// in a frame: said so. The child once checked that by encoding the frame,
// in a buffer grown by doubling, and ran out of memory doing it ("memory
// limit reached", and Rust's "memory allocation of 33554432 bytes failed"
// on the console).
// expect: limit
// error: does not fit in a frame
return '"'.repeat(5_000_000);
