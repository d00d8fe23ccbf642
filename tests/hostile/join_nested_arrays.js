// String() of arrays nested 200,000 deep: Array.prototype.join calls
// toString on each element, C calling JavaScript calling C: each JavaScript
// call is checked, so it ends at QuickJS's stack limit, uncaught, `limit`.
// expect: limit
// error: RangeError: Maximum call stack size exceeded
let a = [];
for (let i = 0; i < 2e5; i++) a = [a];
return String(a).length;
