// Fetches logs from eight hosts at once and keeps only the errors.
const hosts = Array.from({ length: 8 }, (_, i) => `db${i}`);
const logs = await Promise.all(hosts.map((host) => get_logs(host, 10)));
console.log(`fetched ${logs.length} hosts`);
const errors = logs.flat().filter((line) => line.level === "error");
return { hosts: logs.length, errors: errors.length };
