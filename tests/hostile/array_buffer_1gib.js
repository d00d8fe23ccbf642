// A valid ArrayBuffer length far past the memory cap: the allocation itself
// is refused (2 ** 31 is refused earlier, as a length; see array_buffer_2gib).
// expect: limit
// error: memory
// budget: max_memory_mib=64
return new ArrayBuffer(2 ** 30).byteLength;
