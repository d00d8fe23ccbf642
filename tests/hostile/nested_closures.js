// 100,000 closures, each calling the one before: no function recurses into
// itself, but the stack is as deep. It ends `limit` either way a recursion
// can end: at the guest's guard on its shadow stack ("stack limit: the
// program recursed too deeply", with the program's place), or at the
// parent's 8 MiB `max_wasm_stack` ("stack overflow: the child recursed too
// deeply"). Which comes first is not the program's doing: the guard looks
// only when QuickJS calls its interrupt handler, every 10,000 ticks (a
// call is one), and a plain recursion fills the native stack in about
// 9,300 calls; where the count stands when the recursion starts depends on
// everything the snapshot's set-up ran. Adding a set-up script moved it,
// and this case moved from the guard to the native stack.
// expect: limit
// error: recursed too deeply
let f = () => 1;
for (let i = 0; i < 1e5; i++) { const g = f; f = () => g() + 1; }
return f();
