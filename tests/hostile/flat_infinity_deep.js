// Array.prototype.flat(Infinity) over arrays nested 200,000 deep: flattening
// recurses in C.
// expect: limit
// error: stack overflow
let a = [];
for (let i = 0; i < 2e5; i++) a = [a];
return a.flat(Infinity).length;
