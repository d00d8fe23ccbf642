// JSON.stringify of arrays nested 200,000 deep: the serializer recurses in C.
// expect: limit
// error: stack overflow
let a = [];
for (let i = 0; i < 2e5; i++) a = [a];
return JSON.stringify(a).length;
