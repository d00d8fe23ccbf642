// A recursion that catches QuickJS's stack RangeError at its deepest frame
// and, as near it as there is room, calls what runs in the guest's own C
// and Rust (whose own recursion the quarter of the shadow stack kept below
// QuickJS's limit holds): a tool call (its call site's stack), JSON, a
// regexp, a sort with a comparator, the console, a URL, a clone, a
// formatter. Whatever has no room throws the same catchable RangeError and
// is tried again a frame higher; nothing may crash, all of it runs within
// 100 frames of the deepest, and three descents do exactly the same.
// expect: ok
// value: [true, true, true]
const data = { a: [1, { b: "x".repeat(100) }], n: 12345.678 };
const work = [
  () => { echo("deep"); return "call"; },
  () => JSON.stringify(data).length,
  () => /(\w+)@(\w+)\.com/.exec("me@example.com")[2],
  () => [3, 1, 2].sort((x, y) => x - y).join(""),
  () => { console.log("at the limit", data); return "logged"; },
  () => new URL("https://example.com/?c=d").searchParams.get("c"),
  () => structuredClone(data).n,
  () => new Intl.NumberFormat("en-US", { notation: "compact" }).format(data.n),
];
const descents = [];
const attempt = () => work.map((f) => { try { return f(); } catch (e) { return e.name; } });
function down(d, seen) {
  let deepest;
  try {
    deepest = down(d + 1, seen);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    deepest = d;
  }
  // Near the deepest frame the attempt, or some of its work, has no room
  // and throws: each frame above tries again, until all of it runs.
  if (seen.done === undefined || seen.done.includes("RangeError")) {
    seen.at = d;
    seen.done = attempt();
  }
  return deepest;
}
for (let i = 0; i < 3; i++) { const seen = {}; seen.depth = down(0, seen); descents.push(seen); }
await echo("after");
const [first] = descents;
return [
  first.depth > 5000 && first.depth - first.at < 100 && !first.done.includes("RangeError"),
  descents.every((s) => s.depth === first.depth),
  descents.every((s) => JSON.stringify(s.done) === JSON.stringify(first.done)),
];
