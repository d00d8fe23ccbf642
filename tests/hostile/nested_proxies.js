// Array.isArray and a property read through a chain of 100,000 proxies.
// expect: limit
// error: stack
let p = [];
for (let i = 0; i < 1e5; i++) p = new Proxy(p, {});
return [Array.isArray(p), p.length];
