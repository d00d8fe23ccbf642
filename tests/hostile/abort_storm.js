// 2,000 calls that never answer, each with a signal, all aborted (the 64
// on the wire are withdrawn from the parent, the rest never sent), plus
// 2,000 AbortSignal.timeout timers: the program goes on at once and the
// parent's calls in flight go back to zero (a later call gets through).
// expect: ok
// value: [2000, "AbortError", 7]
const controller = new AbortController();
const calls = Array.from({ length: 2000 }, () => host.call("never", undefined, { signal: controller.signal }));
for (let i = 0; i < 2000; i++) AbortSignal.timeout(1e6);
await new Promise((r) => setTimeout(r, 0));
controller.abort();
const settled = await Promise.allSettled(calls);
const rejected = settled.filter((s) => s.status === "rejected");
return [rejected.length, rejected[0].reason.name, (await echo({ n: 7 })).n];
