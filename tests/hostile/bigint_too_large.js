// A BigInt past QuickJS's largest: a size cap, like the longest string.
// expect: limit
// error: size limit: RangeError: BigInt is too large
return String(2n ** 100000000n).length;
