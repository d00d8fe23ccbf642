// A tool value of exactly max_bytes is delivered whole; after it, not one
// byte more: the next value (1 byte) is refused with limit.
// expect: ok
// value: [1000000, "limit"]
// budget: max_bytes=1000000
const a = await bytes(1000000);
let b;
try { await bytes(1); b = "delivered"; } catch (e) { b = e.kind; }
return [a.length, b];
