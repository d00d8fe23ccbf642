// Twenty thousand `once` listeners, one per item as a program may wire
// them. Adding each scanned every listener of its type for a duplicate,
// and dispatching removed each `once` one with another scan and a splice,
// so 20,000 of them took about 20 s (Node: under 1 s). Adding and removing
// are now a map lookup.
// expect: ok
// value: [20000,20000]
const target = new EventTarget();
let fired = 0;
for (let i = 0; i < 20000; i++) target.addEventListener("item", () => fired++, { once: true });
target.dispatchEvent(new Event("item"));
target.dispatchEvent(new Event("item"));
const controller = new AbortController();
let aborted = 0;
for (let i = 0; i < 20000; i++) controller.signal.addEventListener("abort", () => aborted++);
controller.abort();
return [fired, aborted];
