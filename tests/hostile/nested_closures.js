// 100,000 closures, each calling the one before: no function recurses into
// itself, but the stack is as deep. A JavaScript recursion ends at the
// guest's guard on its shadow stack (`stack limit`), with the program's
// place, before the parent's 8 MiB `max_wasm_stack` (`stack overflow`).
// expect: limit
// error: stack limit: the program recursed too deeply
let f = () => 1;
for (let i = 0; i < 1e5; i++) { const g = f; f = () => g() + 1; }
return f();
