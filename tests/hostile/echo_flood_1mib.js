// A hundred 1 MiB echo calls in flight at once. The parent stops reading
// Requests while its answers wait unread; a child that only writes (and
// reads nothing until its last Request is out) deadlocked with it, and the
// run ended at the wall clock after 32 calls. Every call must settle with
// its own value: the child paces the hundred to the parent's in-flight cap
// of 64 (a `limit` refusal still counts as settled, for a child that
// does not pace).
// expect: ok
// value: [100, 0]
// budget: wall_clock_ms=8000 max_memory_mib=512
const settled = await Promise.allSettled(
  Array.from({ length: 100 }, () => echo("x".repeat(1 << 20))),
);
const wrong = settled.filter((s) =>
  s.status === "fulfilled" ? s.value.length !== 1 << 20 : s.reason.kind !== "limit",
);
console.log(`${settled.filter((s) => s.status === "fulfilled").length} echoed`);
return [settled.length, wrong.length];
