// expect: limit
// error: size limit
// budget: max_memory_mib=64
const b = new ArrayBuffer(2 ** 31);
return b.byteLength;
