"""Tool: get_logs(host, count) -> the host's last `count` log lines, as JSON.

Reads the call's args ({"host": ..., "count": ...}) on stdin. The logs are
generated deterministically from the host name, so the example's output is
the same on every run. An unknown host exits 66 (not_found); a bad count
exits 64 (invalid).
"""
import json
import sys
import zlib

HOSTS = {"db1", "db2", "web1", "web2", "cache1"}
LEVELS = ["INFO", "INFO", "INFO", "WARN", "ERROR"]

args = json.load(sys.stdin)
host, count = args.get("host"), args.get("count")
if host not in HOSTS:
    print(f"no host named {host!r}", file=sys.stderr)
    sys.exit(66)
if not isinstance(count, int) or not 0 < count <= 1000:
    print(f"count must be an integer in 1..1000, not {count!r}", file=sys.stderr)
    sys.exit(64)

seed = zlib.crc32(host.encode())
lines = []
for i in range(count):
    seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
    level = LEVELS[seed % len(LEVELS)] if host.startswith("db") else LEVELS[seed % 4]
    lines.append({"host": host, "seq": i, "level": level, "msg": f"request {seed % 9973} took {seed % 700} ms"})
print(json.dumps(lines))
