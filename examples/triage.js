// Incident triage: one program instead of a dozen tool calls.
// Fetch the recent logs of every host at once, count the errors per host,
// and page on-call about the worst one. Runs in the wasm sandbox; it can
// reach nothing but the three tools the command line gives it.
const hosts = await list_hosts();
console.log(`checking ${hosts.length} hosts`);

const logs = await Promise.all(hosts.map((h) => get_logs(h, 200)));
const errors = hosts.map((host, i) => ({
  host,
  errors: logs[i].filter((line) => line.level === "ERROR").length,
}));
errors.sort((a, b) => b.errors - a.errors);

// A tool failure is a ToolError the program can branch on.
try {
  await get_logs("db9", 10);
} catch (e) {
  console.warn(`expected: ${e.kind} (${e.message.trim()})`);
}

const worst = errors[0];
const page = worst.errors > 0
  ? await page_oncall(`${worst.host}: ${worst.errors} errors in the last 200 lines`)
  : null;
return { worst, page, by_host: errors };
