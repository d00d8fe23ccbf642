// String() of arrays nested 200,000 deep: Array.prototype.join calls
// toString on each element, C calling JavaScript calling C.
// expect: limit
// error: stack overflow
let a = [];
for (let i = 0; i < 2e5; i++) a = [a];
return String(a).length;
