// 100,000 closures, each calling the one before: no function recurses into
// itself, but the stack is as deep.
// expect: limit
// error: stack overflow
let f = () => 1;
for (let i = 0; i < 1e5; i++) { const g = f; f = () => g() + 1; }
return f();
