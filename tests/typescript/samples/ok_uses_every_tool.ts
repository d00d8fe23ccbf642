// A program as a model writes it against the sample tools: every form of
// call, the typed results, and a ToolError narrowed by instanceof.
const moved = await move_shape({
  name: "square",
  corners: [{ x: 0, y: 0 }, { x: 2, y: 2 }],
  motion: { shift: { by: { x: 1, y: 1 } } },
  label: null,
});
const cx: number = moved.centre.x;
const still = await move_shape({ name: "dot", corners: [{ x: 0, y: 0 }], motion: "still" });

const lines: string[] = await get_logs("db1", 50);
const fewer = await get_logs("db2");
const viaHost = await host.call("get_logs", { host: "db1" }, { deadlineMs: 500 });

const page = await query({
  table: "hosts",
  filter: { field: "load", op: ">", value: 0.5 },
  limit: null,
  tags: { env: "prod" },
  window: ["2026-01-01", "2026-02-01"],
});
const next: string | null = page.next;
const rows = page.rows.map((r) => r["name"]);

const docs = await host["search-docs"]({ q: "retries" });
await host.call("search-docs", { q: "limits" });
await ping();
await ping("anything");
await host.ping({ any: ["thing"] });

let errors: string[] = [];
try {
  await get_logs("nope");
} catch (e) {
  if (e instanceof ToolError) {
    const kind: ToolErrorKind = e.kind;
    if (e.retryable || kind === "not_found") errors.push(`${e.tool}: ${e.message}`);
  }
}
console.log(lines.length, fewer.length, errors);
const timer = setTimeout(() => console.warn("late"), 10);
clearTimeout(timer);
({ cx, still: still.shape.name, viaHost, next, rows, docs });
