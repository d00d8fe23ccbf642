"""Tool: page_oncall(summary) -> a (pretend) page id. Refuses an empty summary."""
import json
import sys
import zlib

summary = json.load(sys.stdin).get("summary")
if not summary:
    print("kind: invalid\na page needs a summary", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"page": f"P-{zlib.crc32(summary.encode()) % 100000:05d}", "summary": summary}))
