"""An upstream MCP server written line by line, for answers the SDK's own
servers never write but others do: `tools/call` of `odd` answers with the
line its `mode` names, each one JSON text serde_json does not read into
values, or JSON that is no JSON-RPC answer, or its last words before it
exits (`LAST_WORDS`). With `--flood`, once its tools
are listed it sends `ping` requests as fast as it can, and reads the
answers only when it reads a call. With `--big`, its tools are big
instead: `TOOLS` tools (`t0`, `t1`, ...; `0`: without end), `PAGE` to a
page of `tools/list`, each with a description of `DESCRIPTION` bytes.
"""

import json
import os
import sys
import threading

FLOOD = "--flood" in sys.argv
BIG = "--big" in sys.argv
TOOLS = int(os.environ.get("TOOLS", "3"))
PAGE = int(os.environ.get("PAGE", "1"))
DESCRIPTION = "d" * int(os.environ.get("DESCRIPTION", "1000"))


def big_page(params):
    start = int((params or {}).get("cursor") or 0)
    stop = start + PAGE if TOOLS == 0 else min(start + PAGE, TOOLS)
    page = {"tools": [{"name": f"t{i}", "description": DESCRIPTION, "inputSchema": {"type": "object"}}
                      for i in range(start, stop)]}
    if TOOLS == 0 or stop < TOOLS:
        page["nextCursor"] = str(stop)
    return page


def flood():
    n = 0
    while True:
        n += 1
        send({"jsonrpc": "2.0", "id": f"ping{n}", "method": "ping"})

# {id} is the call's id.
ANSWERS = {
    # What JavaScript's JSON.stringify and Python's json.dumps write for a
    # string cut through an emoji.
    "lone_surrogate": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"caf\\ud83d"}}]}}}}',
    # What Python's json.dumps writes for float("nan").
    "nan": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"a":NaN}}}}}}',
    "past_a_double": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"a":1e400}}}}}}',
    "error_not_an_error": '{{"jsonrpc":"2.0","id":{id},"error":{{"code":"x","message":5}}}}',
    "fine": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"caf\\ud83d\\ude00"}}]}}}}',
}

# Written without a newline just before the server exits: an answer cut
# short (it died while writing it), and a whole one (it exited right after).
LAST_WORDS = {
    "cut_then_exit": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"te',
    "whole_then_exit": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"last"}}]}}}}',
}


WRITING = threading.Lock()


def send(message):
    write(json.dumps(message))


def write(line):
    with WRITING:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    id, method = message.get("id"), message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }})
    elif method == "tools/list" and BIG:
        send({"jsonrpc": "2.0", "id": id, "result": big_page(message.get("params"))})
    elif method == "tools/call" and BIG:
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "ok"}]}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
            "name": "odd",
            "inputSchema": {"type": "object", "properties": {"mode": {"type": "string"}}},
        }]}})
        if FLOOD:
            FLOOD = False
            threading.Thread(target=flood, daemon=True).start()
    elif method == "tools/call" and message["params"]["arguments"]["mode"] in LAST_WORDS:
        with WRITING:
            sys.stdout.write(LAST_WORDS[message["params"]["arguments"]["mode"]].format(id=json.dumps(id)))
            sys.stdout.flush()
        os._exit(1)
    elif method == "tools/call":
        mode = message["params"]["arguments"]["mode"]
        write(ANSWERS[mode].format(id=json.dumps(id)))
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "result": {}})
