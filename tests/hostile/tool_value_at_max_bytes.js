// A tool value of exactly max_bytes is delivered whole; after it, not one
// byte more: the next value (2 bytes, the least a JSON string takes) is
// refused with limit. `bytes(n)`'s JSON text is n bytes: n - 2 characters.
// expect: ok
// value: [999998, "limit"]
// budget: max_bytes=1000000
const a = await bytes(1000000);
let b;
try { await bytes(2); b = "delivered"; } catch (e) { b = e.kind; }
return [a.length, b];
