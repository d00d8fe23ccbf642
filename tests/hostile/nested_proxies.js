// Array.isArray walks a chain of a million proxies.
// expect: limit
// error: stack
let p = [];
for (let i = 0; i < 1e6; i++) p = new Proxy(p, {});
return Array.isArray(p);
