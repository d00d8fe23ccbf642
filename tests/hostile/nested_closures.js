// 100,000 closures, each calling the one before: no function recurses into
// itself, but the stack is as deep. QuickJS's stack check, at every call,
// throws V8's RangeError at the same depth every time; nothing catches it,
// so the run ends `limit` with the program's place. (Before that check was
// restored on wasm, the guest's guard looked every 10,000 ticks, and whether
// it or the 8 MiB wasm stack ended this case moved with the set-up scripts.)
// expect: limit
// error: RangeError: Maximum call stack size exceeded at line 10
let f = () => 1;
for (let i = 0; i < 1e5; i++) { const g = f; f = () => g() + 1; }
return f();
