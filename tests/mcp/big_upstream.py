"""An upstream MCP server written line by line whose tools are big:
`TOOLS` tools (`t0`, `t1`, ...; `0`: without end), `PAGE` to a page of
`tools/list`, each with a description of `DESCRIPTION` bytes."""

import json
import os
import sys

TOOLS = int(os.environ.get("TOOLS", "3"))
PAGE = int(os.environ.get("PAGE", "1"))
DESCRIPTION = "d" * int(os.environ.get("DESCRIPTION", "1000"))


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    id, method = message.get("id"), message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "big", "version": "1"},
        }})
    elif method == "tools/list":
        start = int((message.get("params") or {}).get("cursor") or 0)
        stop = start + PAGE if TOOLS == 0 else min(start + PAGE, TOOLS)
        page = {"tools": [{"name": f"t{i}", "description": DESCRIPTION, "inputSchema": {"type": "object"}}
                          for i in range(start, stop)]}
        if TOOLS == 0 or stop < TOOLS:
            page["nextCursor"] = str(stop)
        send({"jsonrpc": "2.0", "id": id, "result": page})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "ok"}]}})
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "result": {}})
