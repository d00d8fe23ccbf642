// Tool args nested 100,000 deep: serialising them must not crash anything.
// expect: limit
// error: stack
let a = [];
for (let i = 0; i < 100000; i++) a = [a];
return await echo(a);
